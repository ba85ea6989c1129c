import FareCore
import Foundation
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`: Python's sqlite3 and zipfile).
private let blocklistFiles = Fixtures.path("blocklists")

/// The published blocklists from the agency's server to a validator: imported on the server, carried in the signed
/// revocation deltas to `farecheck sync`, matched by `farecheck verify` against the real fixture tickets.
@Suite("Blocklists through sync", .serialized, .timeLimit(.minutes(5)))
struct BlocklistSyncTests {
    /// `farecheck verify --json` of the VRR Deutschland-Ticket on 15 March 2023, when it is valid.
    func vrrVerdict(_ bench: SyncBench) throws -> [String: Any] {
        let run = try bench.validator.farecheck([
            "verify", "--payload-file", VDVSyncTests.ticket, "--at", "2023-03-15T12:00:00Z", "--json", "--db",
            bench.validator.db,
        ])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("the VDV-KA list: imported on the server, synced, the VRR ticket revoked with the lock mode's action")
    func vdvThroughSync() throws {
        let bench = try SyncBench()
        try bench.server.admin(["keys", "add", "--format", "vdv", "--root", VDVSyncTests.root])
        try bench.server.admin(["keys", "add", "--format", "vdv", "--trust-unsigned", VDVSyncTests.ticketCA])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        try bench.server.admin([
            "revoke", "--vdv-blocklist", "\(blocklistFiles)/vdv-blocklist.db", "--version-file",
            "\(blocklistFiles)/vdv-version.txt",
        ])
        let sync = try bench.syncCommand()
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.text.contains("revocations: 24 added, 0 removed (full snapshot)"), "\(sync.text)")
        #expect(sync.text.contains("blocklists: VDV-KA blocklist version 2025-06-01T03:00:00Z"), "\(sync.text)")

        let revoked = try vrrVerdict(bench)
        #expect(revoked["verdict"] as? String == "revoked")
        let revocation = try #require(revoked["revocation"] as? [String: Any])
        #expect(revocation["list"] as? String == "vdv-ka")
        #expect(revocation["version"] as? String == "2025-06-01T03:00:00Z")
        #expect(revocation["lockMode"] as? String == "confiscate")
        #expect(revocation["action"] as? String == "keep-ticket")
        let entry = try #require(revocation["entry"] as? [String: Any])
        #expect(
            entry["orgId"] as? Int == 57 && entry["number"] as? Int == 2_099_643 && entry["instanceNum"] as? Int == 3)
        #expect((revoked["reason"] as? String)?.hasSuffix("Keep the ticket: it is to be confiscated.") == true)

        // A newer version on the server reaches the validator as the difference: 2099643 is now "suspicious".
        try bench.server.admin([
            "revoke", "--vdv-blocklist", "\(blocklistFiles)/vdv-blocklist-v2.db", "--version-file",
            "\(blocklistFiles)/vdv-version-v2.txt",
        ])
        let second = try bench.syncCommand()
        #expect(second.text.contains("revocations: 2 added, 1 removed;"), "\(second.text)")
        let suspicious = try vrrVerdict(bench)
        let changed = try #require(suspicious["revocation"] as? [String: Any])
        #expect(changed["action"] as? String == "check-id")
        #expect(changed["version"] as? String == "2025-06-02T03:00:00Z")
        let store = try bench.store()
        #expect(try store.blocklistEntries(.vdvKA, origin: .sync).count == 24)
        #expect(try store.blocklists().map { "\($0.origin) \($0.version)" } == ["sync 2025-06-02T03:00:00Z"])
    }

    @Test(
        "the DTVG list: DB's 2025 Deutschland-Ticket revoked by U_HEAD's RICS and key; a version without the entry lifts it"
    )
    func dtvgThroughSync() async throws {
        let bench = try SyncBench()
        let keys = try bench.validator.farecheck([
            "keys", "import", "--uic-xml",
            Fixtures.path("uic/uic-publickeys-snapshot.xml"),
            "--db", bench.validator.db,
        ])
        #expect(keys.status == 0, "\(keys.stderr)")
        try bench.server.admin([
            "revoke", "--dtvg-blocklist", "\(blocklistFiles)/dtvg-blocklist.zip", "--version-file",
            "\(blocklistFiles)/dtvg-version.txt",
        ])
        let report = try await bench.round()
        #expect(report.revocationsAdded == 24)
        #expect(report.blocklists == [PublishedBlocklist(list: .dtvgUIC, version: "42")])

        let ticket = Fixtures.path("uic/db-deutschland-ticket-2025.bin")
        let run = try bench.validator.farecheck([
            "verify", "--payload-file", ticket, "--at", "2025-02-28T12:00:00Z", "--json", "--db", bench.validator.db,
        ])
        let verdict = try #require(run.jsonLines.first, "\(run.stderr)")
        #expect(verdict["verdict"] as? String == "revoked", "\(verdict["reason"] ?? "")")
        #expect(
            verdict["reason"] as? String
                == "On the DTVG UIC blocklist (version 42): ticket QWXY3BTA of RICS 1080. Refuse the ticket.")
        let revocation = try #require(verdict["revocation"] as? [String: Any])
        #expect(revocation["action"] as? String == "refuse" && revocation["lockMode"] as? String == "block")

        // A newer version that no longer names the ticket lifts it at the next round.
        try bench.server.admin([
            "revoke", "--dtvg-blocklist", "\(blocklistFiles)/dtvg-blocklist-v2.zip", "--version-file",
            "\(blocklistFiles)/dtvg-version-v2.txt",
        ])
        let second = try await bench.round()
        #expect(second.revocationsRemoved == 1 && second.revocationsAdded == 1)
        let store = try bench.store()
        #expect(
            try store.blocklistEntries(.dtvgUIC, origin: .sync).contains(
                .dtvg(DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4"))) == false)
        #expect(try store.blocklists().map(\.version) == ["43"])
    }
}
