import FareCore
import Foundation
import GRDB
import TestSupport
import Testing
import Verification

@testable import TrustStore

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`) in the fixture tree.
private let blocklistFixtures = Fixtures.path("blocklists")

@Suite("Blocklists in the store")
struct BlocklistStoreTests {
    let directory = TemporaryDirectory()

    static let vdv1 = BlocklistVersion.timestamp(Date(timeIntervalSince1970: 1_748_746_800))  // 2025-06-01T03:00Z
    static let vdv2 = BlocklistVersion.timestamp(Date(timeIntervalSince1970: 1_748_833_200))  // 2025-06-02T03:00Z

    func store() throws -> TrustStore { try TrustStore(path: directory.path + "/store.sqlite") }

    /// Imports a fixture file as `farecheck revoke --vdv-blocklist/--dtvg-blocklist` does.
    @discardableResult
    func importFile(
        _ name: String, _ list: BlocklistKind, _ version: BlocklistVersion, into store: TrustStore, force: Bool = false
    ) throws(StoreError) -> BlocklistImportOutcome {
        try store.importBlocklist(list, version: version, force: force) { add in
            try BlocklistFile.read(list, path: blocklistFixtures + "/" + name, entry: add)
        }
    }

    static let vrr = BlocklistKey.vdvEntitlement(organisation: 57, number: 2_099_643)

    @Test("the VDV-KA file is imported with the highest instance of each number, and found by the live lookup")
    func vdvImport() throws {
        let store = try store()
        let outcome = try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
        #expect(outcome == .imported(entries: 24, replaced: nil))
        let trust = StoreTrust(store: store)
        let found = try #require(try trust.blocklistRevocation(for: Self.vrr))
        #expect(found.version == "2025-06-01T03:00:00Z")
        #expect(
            found.entry
                == .vdv(
                    VDVBlocklistEntry(
                        item: .entitlement, organisation: 57, number: 2_099_643, instance: 3, lockMode: .confiscate)))
        #expect(
            try trust.blocklistRevocation(for: .vdvEntitlement(organisation: 57, number: 2_099_644))?.action == .checkID
        )
        #expect(try trust.blocklistRevocation(for: .vdvEntitlement(organisation: 57, number: 1)) == nil)
        // The user medium 118017 of organisation 57 is kept, but no entitlement lookup finds it.
        #expect(try trust.blocklistRevocation(for: .vdvEntitlement(organisation: 57, number: 118_017)) == nil)
        let entries = try store.blocklistEntries(.vdvKA, origin: .local)
        #expect(entries.contains { if case .vdv(let entry) = $0 { entry.item == .userMedium } else { false } })
        #expect(try store.blocklists().map(\.entryCount) == [24])
    }

    @Test("the DTVG file: RICS as numbers, ticket ids byte for byte")
    func dtvgImport() throws {
        let store = try store()
        #expect(
            try importFile("dtvg-blocklist.zip", .dtvgUIC, .number(42), into: store)
                == .imported(entries: 24, replaced: nil))
        let trust = StoreTrust(store: store)
        let key = BlocklistKey.dtvgTicket(rics: 80, ticketID: Array("RPEX4F-4".utf8))
        #expect(try trust.blocklistRevocation(for: key)?.version == "42")
        #expect(try trust.blocklistRevocation(for: .dtvgTicket(rics: 1080, ticketID: Array("QWXY3BTA".utf8))) != nil)
        #expect(try trust.blocklistRevocation(for: .dtvgTicket(rics: 1080, ticketID: Array("qwxy3bta".utf8))) == nil)
        #expect(try trust.blocklistRevocation(for: .dtvgTicket(rics: 1180, ticketID: Array("QWXY3BTA".utf8))) == nil)
    }

    @Test("versions: a newer one replaces the list, the same one is a no-op, an older one is refused unless forced")
    func versions() throws {
        let store = try store()
        try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
        #expect(
            try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
                == .unchanged(version: "2025-06-01T03:00:00Z"))
        let newer = try importFile("vdv-blocklist-v2.db", .vdvKA, Self.vdv2, into: store)
        #expect(newer == .imported(entries: 24, replaced: "2025-06-01T03:00:00Z"))
        let trust = StoreTrust(store: store)
        let found = try #require(try trust.blocklistRevocation(for: Self.vrr))
        #expect(found.version == "2025-06-02T03:00:00Z")
        #expect(found.lockMode == .suspicious)
        #expect(try trust.blocklistRevocation(for: .vdvEntitlement(organisation: 57, number: 2_099_644)) == nil)
        #expect(try trust.blocklistRevocation(for: .vdvEntitlement(organisation: 57, number: 3_000_000)) != nil)

        #expect {
            try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
        } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .outOfSequence && error.message.contains("--force")
        }
        #expect(try trust.blocklistRevocation(for: Self.vrr)?.version == "2025-06-02T03:00:00Z")
        let forced = try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store, force: true)
        #expect(forced == .imported(entries: 24, replaced: "2025-06-02T03:00:00Z"))
        #expect(try trust.blocklistRevocation(for: Self.vrr)?.lockMode == .confiscate)
    }

    @Test("a bad file is refused with its message, and the store keeps the list it held")
    func badFiles() throws {
        let store = try store()
        try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
        try importFile("dtvg-blocklist.zip", .dtvgUIC, .number(42), into: store)
        let before = (
            try store.blocklistEntries(.vdvKA, origin: .local), try store.blocklistEntries(.dtvgUIC, origin: .local),
            try store.blocklists().map(\.version)
        )
        let cases: [(String, BlocklistKind, String)] = [
            ("vdv-not-sqlite.db", .vdvKA, "not an SQLite database"),
            ("vdv-no-table.db", .vdvKA, "has no table blacklist"),
            ("vdv-missing-column.db", .vdvKA, "lacks the column lockMode"),
            ("vdv-bad-lockmode.db", .vdvKA, "lockMode is 7"),
            ("vdv-duplicate.db", .vdvKA, "are duplicates"),
            ("vdv-text-number.db", .vdvKA, "number is \"20x9643\""),
            ("vdv-truncated.db", .vdvKA, "damaged"),
            ("dtvg-blocklist.zip", .vdvKA, "not an SQLite database"),
            ("dtvg-truncated.zip", .dtvgUIC, "no zip end of central directory record"),
            ("dtvg-wrong-columns.zip", .dtvgUIC, "rics and ticketId"),
            ("dtvg-no-bom.zip", .dtvgUIC, "byte order mark"),
            ("dtvg-extra-bom.zip", .dtvgUIC, "two byte order marks"),
            ("dtvg-rics-not-numeric.zip", .dtvgUIC, "not a RICS code"),
            ("dtvg-duplicate.zip", .dtvgUIC, "line 26 names ticket RPEX4F-4 of RICS 80 again"),
            ("dtvg-bad-crc.zip", .dtvgUIC, "CRC-32"),
            ("missing-file.zip", .dtvgUIC, "cannot read the file"),
            ("vdv-blocklist.db", .dtvgUIC, "no zip end of central directory record"),
        ]
        for (name, list, expected) in cases {
            let version: BlocklistVersion = list == .vdvKA ? Self.vdv2 : .number(43)
            #expect("\(name)") {
                try importFile(name, list, version, into: store)
            } throws: { error in
                guard let error = error as? StoreError else { return false }
                return error.code == .invalidRequest && error.message.contains(expected)
            }
        }
        #expect(try store.blocklistEntries(.vdvKA, origin: .local) == before.0)
        #expect(try store.blocklistEntries(.dtvgUIC, origin: .local) == before.1)
        #expect(try store.blocklists().map(\.version) == before.2)
    }

    @Test("lists brought by sync are kept apart from local ones; the highest instance of either applies")
    func syncOrigin() throws {
        let store = try store()
        try importFile("vdv-blocklist.db", .vdvKA, Self.vdv1, into: store)
        let synced = VDVBlocklistEntry(
            item: .entitlement, organisation: 57, number: 2_099_643, instance: 9, lockMode: .block)
        let dtvg = DTVGBlocklistEntry(rics: 1080, ticketID: "SYNCED01")
        try store.applyRevocations(
            from: 0, next: 5, full: true, addedTickets: [], addedKeys: [], removed: [],
            blocklists: [(.vdvKA, "2025-07-01T00:00:00Z"), (.dtvgUIC, "50")],
            addedBlocklistEntries: [.vdv(synced), .dtvg(dtvg)])
        let trust = StoreTrust(store: store)
        let found = try #require(try trust.blocklistRevocation(for: Self.vrr))
        #expect(found.version == "2025-07-01T00:00:00Z")
        #expect(found.lockMode == .block)
        #expect(
            try trust.blocklistRevocation(for: .dtvgTicket(rics: 1080, ticketID: Array("SYNCED01".utf8)))?.version
                == "50")
        // A local import of a newer version does not touch what sync brought.
        try importFile("vdv-blocklist-v2.db", .vdvKA, Self.vdv2, into: store)
        #expect(try store.blocklistEntries(.vdvKA, origin: .sync) == [.vdv(synced)])
        // A delta removes a synced entry; the local one applies again.
        try store.applyRevocations(
            from: 5, next: 6, full: false, addedTickets: [], addedKeys: [], removed: [],
            blocklists: [(.vdvKA, "2025-07-02T00:00:00Z")], removedBlocklistEntries: [.vdv(synced)])
        #expect(try trust.blocklistRevocation(for: Self.vrr)?.lockMode == .suspicious)
        // A full snapshot replaces what sync brought, and only that.
        try store.applyRevocations(from: 0, next: 7, full: true, addedTickets: [], addedKeys: [], removed: [])
        #expect(try store.blocklistEntries(.dtvgUIC, origin: .sync).isEmpty)
        #expect(try store.blocklists().map { "\($0.list) \($0.origin)" } == ["vdv-ka local"])
    }

    @Test("the store reopens with its lists: migration v14 and the tables kept in their keys' order")
    func reopen() throws {
        let path = directory.path + "/store.sqlite"
        do {
            let store = try TrustStore(path: path)
            try importFile("dtvg-blocklist.zip", .dtvgUIC, .number(42), into: store)
            try store.close()
        }
        let reopened = try TrustStore(path: path)
        #expect(try reopened.blocklists().map(\.version) == ["42"])
        let withoutRowID = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE name LIKE '%blocklist_entry'")
        }
        #expect(withoutRowID.count == 2 && withoutRowID.allSatisfy { $0.contains("WITHOUT ROWID") })
    }
}
