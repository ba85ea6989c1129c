import FareCore
import Foundation
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`: Python's sqlite3 and zipfile).
private let blocklists = Fixtures.path("blocklists")

/// The published blocklists on the server: imported by `farecheck-server revoke --vdv-blocklist/--dtvg-blocklist`,
/// served in the signed revocation deltas as the difference between versions.
@Suite("Blocklists on the server", .timeLimit(.minutes(5)))
struct BlocklistServerTests {
    static let vrr = BlocklistEntry.vdv(
        VDVBlocklistEntry(item: .entitlement, organisation: 57, number: 2_099_643, instance: 3, lockMode: .confiscate))

    /// What a validator at `cursor` would receive, as `revocations list --cursor` prints it.
    func delta(_ bench: ServerBench, since cursor: Int64) throws -> RevocationDelta {
        let text = try bench.adminOK(["revocations", "list", "--cursor", String(cursor)])
        return try WireFormat.decode(RevocationDelta.self, from: Array(text.utf8))
    }

    @Test(
        "the VDV-KA list: imported, a newer version sent as removals and additions, the same again a no-op",
        arguments: Backend.available)
    func vdvVersions(backend: Backend) throws {
        let bench = try ServerBench(backend)
        let first = try bench.adminOK([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--version-file",
            "\(blocklists)/vdv-version.txt",
        ])
        #expect(first.contains("imported the VDV-KA blocklist version 2025-06-01T03:00:00Z: 24 entries"))
        #expect(first.contains("(2 lower instances left out)"))
        let snapshot = try delta(bench, since: 0)
        #expect(snapshot.full)
        #expect(snapshot.blocklists == [PublishedBlocklist(list: .vdvKA, version: "2025-06-01T03:00:00Z")])
        #expect(snapshot.addedBlocklistEntries.count == 24)
        #expect(snapshot.addedBlocklistEntries.contains(Self.vrr))
        let cursor = snapshot.next

        let again = try bench.adminOK([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--list-version",
            "2025-06-01T05:00:00+02:00",
        ])
        #expect(again.contains("is imported already; nothing changed"))
        #expect(try delta(bench, since: cursor).next == cursor)

        let newer = try bench.adminOK([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist-v2.db", "--version-file",
            "\(blocklists)/vdv-version-v2.txt",
        ])
        #expect(newer.contains("2 added or changed, 1 removed"), "\(newer)")
        let change = try delta(bench, since: cursor)
        #expect(!change.full)
        #expect(change.blocklists == [PublishedBlocklist(list: .vdvKA, version: "2025-06-02T03:00:00Z")])
        #expect(
            change.removedBlocklistEntries
                == [
                    .vdv(
                        VDVBlocklistEntry(
                            item: .entitlement, organisation: 57, number: 2_099_644, instance: 1, lockMode: .suspicious)
                    )
                ])
        #expect(
            Set(change.addedBlocklistEntries) == [
                .vdv(
                    VDVBlocklistEntry(
                        item: .entitlement, organisation: 57, number: 2_099_643, instance: 4, lockMode: .suspicious)),
                .vdv(
                    VDVBlocklistEntry(
                        item: .entitlement, organisation: 57, number: 3_000_000, instance: 1, lockMode: .block)),
            ])

        let older = try bench.admin([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--version-file",
            "\(blocklists)/vdv-version.txt",
        ])
        #expect(older.status == 2)
        #expect(older.stderr.contains("is older than version 2025-06-02T03:00:00Z held; nothing changed (--force"))
        let latest = try delta(bench, since: 0)
        #expect(latest.addedBlocklistEntries.count == 24)
        #expect(latest.blocklists.first?.version == "2025-06-02T03:00:00Z")
    }

    @Test(
        "bad files are refused with what is wrong, and the server's list stays as it was", arguments: Backend.available)
    func badFiles(backend: Backend) throws {
        let bench = try ServerBench(backend)
        try bench.adminOK([
            "revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip", "--version-file",
            "\(blocklists)/dtvg-version.txt",
        ])
        let before = try delta(bench, since: 0)
        #expect(before.addedBlocklistEntries.count == 24)
        #expect(before.addedBlocklistEntries.contains(.dtvg(DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4"))))
        let cases: [(String, String, String)] = [
            ("--dtvg-blocklist", "dtvg-truncated.zip", "no zip end of central directory record"),
            ("--dtvg-blocklist", "dtvg-duplicate.zip", "twice (duplicate rows)"),
            ("--dtvg-blocklist", "dtvg-extra-bom.zip", "two byte order marks"),
            ("--dtvg-blocklist", "dtvg-rics-not-numeric.zip", "not a RICS code"),
            ("--vdv-blocklist", "vdv-no-table.db", "has no table blacklist"),
            ("--vdv-blocklist", "vdv-not-sqlite.db", "not an SQLite database"),
        ]
        for (option, file, message) in cases {
            let run = try bench.admin([
                "revoke", option, "\(blocklists)/\(file)", "--list-version",
                option == "--vdv-blocklist" ? "2030-01-01T00:00Z" : "99",
            ])
            #expect(run.status == 2, "\(file)")
            #expect(run.stderr.contains(message), "\(file): \(run.stderr)")
        }
        let after = try delta(bench, since: 0)
        #expect(after == before)
        let mixed = try bench.admin([
            "revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip", "--list-version", "50", "--issuer", "80",
        ])
        #expect(mixed.status == 2)
        let noVersion = try bench.admin(["revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip"])
        #expect(noVersion.status == 2)
        #expect(noVersion.stderr.contains("--list-version VERSION or --version-file FILE"))
    }

    @Test(
        "a snapshot pages over blocklist entries, tickets and keys alike; the pages add up to the lists",
        arguments: Backend.available)
    func paging(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try bench.adminOK([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--version-file",
            "\(blocklists)/vdv-version.txt",
        ])
        try bench.adminOK(["revoke", "--issuer", "demo", "--ticket-id", "0a0b"])
        try bench.adminOK([
            "revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip", "--version-file",
            "\(blocklists)/dtvg-version.txt",
        ])
        try await bench.withStore { store in
            var held: Set<BlocklistEntry> = []
            var tickets = 0
            var cursor: Int64 = 0
            var pages = 0
            repeat {
                let page = try await store.revocationDelta(since: cursor, limit: 7)
                #expect(page.from == cursor)
                #expect(page.entryCount <= 7)
                #expect(page.blocklists.map(\.list) == [.dtvgUIC, .vdvKA])
                if page.full { held = [] }
                held.formUnion(page.addedBlocklistEntries)
                held.subtract(page.removedBlocklistEntries)
                tickets += page.addedTickets.count
                cursor = page.next
                pages += 1
                if !page.more { break }
            } while pages < 100
            #expect(pages == 8)
            #expect(held.count == 48)
            #expect(tickets == 1)
            #expect(held.contains(Self.vrr))
        }
    }

    @Test(
        "an online check answers revoked for a ticket on a blocklist imported after the validator's sync",
        arguments: Backend.available)
    func onlineCheck(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer()
        func check(_ format: String, _ issuer: String, _ ticketID: [UInt8]) async throws -> OnlineCheckResponse {
            let request = OnlineCheckRequest(
                payload: [0x23], format: Recorded(text: format), issuer: IssuerID(issuer), ticketID: TicketID(ticketID))
            let answer = try await send(
                .POST, server.baseURL + "/v1/check", token: token, body: try WireFormat.encode(request))
            #expect(answer.status == 200, "\(answer.text)")
            return try answer.decode(OnlineCheckResponse.self)
        }
        let vrr: [UInt8] = [0x00, 0x20, 0x09, 0xBB]
        #expect(try await check("vdv-ka", "57", vrr).verdict == "not-revoked")
        try bench.adminOK([
            "revoke", "--vdv-blocklist", "\(blocklists)/vdv-blocklist.db", "--version-file",
            "\(blocklists)/vdv-version.txt",
        ])
        try bench.adminOK([
            "revoke", "--dtvg-blocklist", "\(blocklists)/dtvg-blocklist.zip", "--version-file",
            "\(blocklists)/dtvg-version.txt",
        ])
        let listed = try await check("vdv-ka", "57", vrr)
        #expect(listed.verdict == "revoked" && listed.revoked == true)
        #expect(listed.reason.hasSuffix("Keep the ticket: it is to be confiscated."))
        #expect(try await check("vdv-ka", "58", vrr).verdict == "not-revoked")
        // A U_HEAD issuer of 0080 is RICS 80 on the list.
        let uic = try await check("uic-918-3", "0080", Array("RPEX4F-4".utf8))
        #expect(uic.reason == "On the DTVG UIC blocklist (version 42): ticket RPEX4F-4 of RICS 80. Refuse the ticket.")
        #expect(try await check("uic-918-9", "1080", Array("QWXY3BTA".utf8)).verdict == "revoked")
        #expect(try await check("fc1", "1080", Array("QWXY3BTA".utf8)).verdict == "not-revoked")
        _ = server.stop()
    }

    @Test("a delta with blocklists reads the same through the fast reader as through JSONDecoder")
    func wireFormat() throws {
        let delta = RevocationDelta(
            from: 3, next: 9, full: false, blocklists: [PublishedBlocklist(list: .dtvgUIC, version: "42")],
            addedBlocklistEntries: [Self.vrr, .dtvg(DTVGBlocklistEntry(rics: 1080, ticketID: "QWXY\"3BTA"))],
            removedBlocklistEntries: [.dtvg(DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4"))])
        let bytes = try WireFormat.encode(delta)
        #expect(try RevocationDelta(wireBytes: bytes) == delta)
        #expect(try WireFormat.decode(RevocationDelta.self, from: bytes) == delta)
        // Without blocklists a delta is written as before: old validators see nothing new.
        let plain = try WireFormat.encode(RevocationDelta(from: 0, next: 1, full: true))
        #expect(!String(decoding: plain, as: UTF8.self).contains("locklist"))
        for bad in [
            #"{"from":0,"next":1,"full":false,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[],"addedBlocklistEntries":[{"list":"vdv-ka","type":"B","orgId":70000,"number":1,"instanceNum":0,"lockMode":0}]}"#,
            #"{"from":0,"next":1,"full":false,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[],"addedBlocklistEntries":[{"list":"vdv-ka","type":"B","orgId":7,"number":1,"instanceNum":0,"lockMode":3}]}"#,
            #"{"from":0,"next":1,"full":false,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[],"addedBlocklistEntries":[{"list":"other","rics":1,"ticketId":"A"}]}"#,
            #"{"from":0,"next":1,"full":false,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[],"blocklists":[{"list":"dtvg-uic"}]}"#,
        ] {
            #expect(throws: (any Error).self) { try RevocationDelta(wireBytes: Array(bad.utf8)) }
            #expect(throws: (any Error).self) { try WireFormat.decode(RevocationDelta.self, from: Array(bad.utf8)) }
        }
    }
}
