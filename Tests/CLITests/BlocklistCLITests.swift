import Foundation
import TestSupport
import Testing

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`: Python's sqlite3 and zipfile).
private let blocklists = Fixtures.path("blocklists")

@Suite("farecheck revoke with the Deutschland-Ticket blocklists")
struct BlocklistCLITests {
    let bench = Workbench()
    var ticket: String { "\(vdvFixtures)/vrr-deutschlandticket-2023-03.bin" }

    /// The VRR ticket's verdict on 15 March 2023, when it is valid, as `verify --json` prints it.
    func verdict() throws -> [String: Any] {
        let run = try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2023-03-15T12:00:00Z", "--json"])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("import with progress, verify shows the action, the same version is a no-op, an older one refused")
    func importAndVerify() throws {
        try bench.farecheck(["keys", "import", "--vdv-root", "\(vdvFixtures)/certs/4555564456100106.vdv-cert"])
        try bench.farecheck([
            "keys", "import", "--trust-unsigned", "--vdv", "\(vdvFixtures)/certs/4445564456110216.vdv-cert",
        ])
        #expect(try verdict()["verdict"] as? String == "valid")

        // --progress: from the start (a list this small is read well within the two quiet seconds).
        let imported = try bench.farecheck([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--version-file",
            "\(blocklists)/vdv-version.txt", "--progress",
        ])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(
            imported.text
                == "imported the VDV-KA blocklist version 2025-06-01T03:00:00Z: 24 entries (2 lower instances left out)\n"
        )
        // Standard error is a pipe here: a line per step, then the totals and the rate.
        #expect(imported.stderr.contains("VDV-KA blocklist: 26 of 26 rows read (100 %)\n"), "\(imported.stderr)")
        #expect(imported.stderr.contains("VDV-KA blocklist: 26 rows in "), "\(imported.stderr)")

        let revoked = try verdict()
        #expect(revoked["verdict"] as? String == "revoked")
        let revocation = try #require(revoked["revocation"] as? [String: Any])
        #expect(revocation["action"] as? String == "keep-ticket")
        let text = try bench.farecheck(["verify", "--payload-file", ticket, "--at", "2023-03-15T12:00:00Z"])
        #expect(text.status == 1)
        #expect(text.text.contains("ACTION     KEEP THE TICKET: IT IS TO BE CONFISCATED."))

        let again = try bench.farecheck([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--list-version", "2025-06-01T03:00:00Z",
        ])
        #expect(again.status == 0)
        #expect(again.text.contains("is imported already; nothing changed"))
        let older = try bench.farecheck([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist-v2.db", "--list-version", "2025-05-01T00:00:00Z",
        ])
        #expect(older.status == 2)
        #expect(older.stderr.contains("older than version 2025-06-01T03:00:00Z held; nothing changed (--force"))
        let forced = try bench.farecheck([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist-v2.db", "--list-version", "2025-05-01T00:00:00Z",
            "--force",
        ])
        #expect(forced.status == 0, "\(forced.stderr)")
        #expect(forced.text.contains("replacing version 2025-06-01T03:00:00Z"))
        let suspicious = try #require(try verdict()["revocation"] as? [String: Any])
        #expect(suspicious["action"] as? String == "check-id")
    }

    @Test("a bad file exits 2 with the file and what is wrong, and the store keeps its list")
    func badFiles() throws {
        #expect(
            try bench.farecheck([
                "revoke", "--create", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip", "--list-version", "42",
            ]).status == 0)
        let cases: [(String, String, String)] = [
            ("--dtvg-blocklist", "dtvg-truncated.zip", "not a zip archive, or it is truncated"),
            ("--dtvg-blocklist", "dtvg-wrong-columns.zip", "it must name the columns rics and ticketId"),
            ("--dtvg-blocklist", "dtvg-no-bom.zip", "does not start with the UTF-8 byte order mark"),
            ("--dtvg-blocklist", "dtvg-duplicate.zip", "line 26 names ticket RPEX4F-4 of RICS 80 again"),
            ("--vdv-blocklist", "vdv-missing-column.db", "lacks the column lockMode"),
            ("--vdv-blocklist", "vdv-not-sqlite.db", "not an SQLite database"),
        ]
        for (option, file, message) in cases {
            let version = option == "--vdv-blocklist" ? "2030-01-01T00:00:00Z" : "99"
            let run = try bench.farecheck(["revoke", option, "\(blocklists)/\(file)", "--list-version", version])
            #expect(run.status == 2, "\(file)")
            #expect(run.stderr.contains("\(blocklists)/\(file): "), "\(file): \(run.stderr)")
            #expect(run.stderr.contains(message) && run.stderr.contains("the store is unchanged"), "\(run.stderr)")
        }
        let listed = try bench.farecheck(["revoke", "--blocklists"])
        #expect(listed.text.hasPrefix("dtvg-uic\tlocal\tversion 42\t24 entries\t"))
        let noVersion = try bench.farecheck(["revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip"])
        #expect(noVersion.status != 0)
        #expect(noVersion.stderr.contains("--list-version VERSION or --version-file FILE"))
        let badVersion = try bench.farecheck([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--list-version", "yesterday",
        ])
        #expect(badVersion.status == 2)
        #expect(badVersion.stderr.contains("is not an ISO 8601 timestamp"))
    }
}
