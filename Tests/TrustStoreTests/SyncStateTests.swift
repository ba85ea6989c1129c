import FareCore
import Foundation
import GRDB
import Signatures
import Testing
import Verification

@testable import TrustStore

@Suite("Applying sync data to the store")
struct SyncStateTests {
    let directory = TemporaryDirectory()

    func key(_ id: String, issuer: String = "agency") throws -> KeyRecord {
        KeyRecord(
            family: .fc1, issuer: IssuerID(issuer), keyID: KeyID(id), algorithm: "ES256",
            spki: try PrivateKey.generate(.ecP256).publicKey.spkiDER, source: "bundle")
    }

    @Test("a key bundle replaces what the previous bundle brought, keeps local keys, and refuses a rollback")
    func keyBundles() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        try store.saveKey(try key("10ca1", issuer: "local"))
        let first = try store.applyKeyBundle(sequence: 5, keys: [try key("aa"), try key("bb")])
        #expect(first.added == 2)
        let second = try store.applyKeyBundle(sequence: 6, keys: [try key("bb"), try key("cc")])
        #expect(second == (added: 1, updated: 1, removed: 1))
        #expect(try store.keys().map(\.keyID).sorted() == ["10ca1", "bb", "cc"])
        #expect(try store.syncState().keyBundleSequence == 6)
        // The verifier sees a bundle key at once, through the live lookups.
        #expect(try StoreTrust(store: store).key(family: .fc1, issuer: nil, keyID: "cc") != nil)

        let error = #expect(throws: StoreError.self) { try store.applyKeyBundle(sequence: 4, keys: [try key("ee")]) }
        #expect(error?.code == .outOfSequence)
        #expect(try store.keys().map(\.keyID).sorted() == ["10ca1", "bb", "cc"])
        #expect(try store.syncState().keyBundleSequence == 6)
    }

    @Test("revocation deltas follow the cursor; a full snapshot replaces only what sync brought")
    func revocationDeltas() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        let trust = StoreTrust(store: store)
        try store.revokeTicket(TicketRevocationRecord(issuer: "agency", ticketID: [0x01], reason: "local"))
        try store.applyRevocations(
            from: 0, next: 3, full: false,
            addedTickets: [
                TicketRevocationRecord(issuer: "agency", ticketID: [0x02], reason: "stolen"),
                TicketRevocationRecord(issuer: "agency", ticketID: [0x03], reason: "refunded"),
            ], addedKeys: [], removed: [])
        #expect(try trust.revocation(ofTicket: [0x02], issuer: "agency")?.reason == "stolen")
        try store.applyRevocations(
            from: 3, next: 4, full: false, addedTickets: [], addedKeys: [],
            removed: [.ticket(issuer: "agency", ticketID: [0x03])])
        #expect(try trust.revocation(ofTicket: [0x03], issuer: "agency") == nil)
        #expect(try store.syncState().revocationCursor == 4)

        // A delta that does not start where the store stands is refused, nothing applied.
        let error = #expect(throws: StoreError.self) {
            try store.applyRevocations(
                from: 9, next: 12, full: false,
                addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0x09], reason: nil)],
                addedKeys: [], removed: [])
        }
        #expect(error?.code == .outOfSequence)
        #expect(try trust.revocation(ofTicket: [0x09], issuer: "agency") == nil)

        try store.applyRevocations(
            from: 0, next: 20, full: true,
            addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0x07], reason: nil)],
            addedKeys: [KeyRevocationRecord(family: .fc1, issuer: "agency", keyID: "bb", reason: "compromised")],
            removed: [])
        #expect(try trust.revocation(ofTicket: [0x02], issuer: "agency") == nil)
        #expect(try trust.revocation(ofTicket: [0x07], issuer: "agency") != nil)
        #expect(try trust.revocation(ofTicket: [0x01], issuer: "agency")?.reason == "local")
        #expect(try store.keyRevocations().map(\.keyID) == ["bb"])
        #expect(try store.syncState().revocationCursor == 20)
    }
}

@Suite("The revocation table's layout")
struct RevocationLayoutTests {
    let directory = TemporaryDirectory()

    @Test("a store made before v8 keeps every revoked ticket when its table becomes WITHOUT ROWID, and its page size")
    func upgradeKeepsRevocations() throws {
        let path = directory.path + "/old.sqlite"
        do {
            // A store as farecheck wrote it before v8: schema up to v7, 4 KiB pages, revocations in a rowid table.
            let queue = try DatabaseQueue(path: path)
            try TrustStore.migrator.migrate(queue, upTo: "v7-decided-by")
            try queue.write { db in
                for index in 0..<500 {
                    try db.execute(
                        sql:
                            "INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, source) VALUES (?, ?, ?, ?, ?)",
                        arguments: [
                            "agency", Data([UInt8(index >> 8), UInt8(index & 0xFF)]), "r\(index)", 1_795_336_200,
                            index % 2 == 0 ? "sync" : nil,
                        ])
                }
            }
        }
        let store = try TrustStore(path: path)
        let trust = StoreTrust(store: store)
        for index in [0, 1, 255, 256, 499] {
            let revocation = try trust.revocation(ofTicket: [UInt8(index >> 8), UInt8(index & 0xFF)], issuer: "agency")
            #expect(revocation?.reason == "r\(index)")
        }
        let (count, synced, sql, pageSize) = try store.read { db in
            (
                try Int.fetchOne(db, sql: "SELECT count(*) FROM revoked_ticket"),
                try Int.fetchOne(db, sql: "SELECT count(*) FROM revoked_ticket WHERE source = 'sync'"),
                try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'revoked_ticket'"),
                try Int.fetchOne(db, sql: "PRAGMA page_size")
            )
        }
        #expect(count == 500)
        #expect(synced == 250)
        #expect(sql?.contains("WITHOUT ROWID") == true)
        #expect(pageSize == 4096, "an existing store keeps its page size")
        // A full snapshot still replaces only what sync brought.
        try store.applyRevocations(
            from: 0, next: 1, full: true,
            addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0xFF], reason: "new")],
            addedKeys: [], removed: [])
        #expect(try store.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM revoked_ticket") } == 251)
    }

    @Test("after a revocation page (committed without an immediate sync) the journal's commits sync again")
    func journalStaysSynced() throws {
        let store = try TrustStore(path: directory.path + "/sync.sqlite")
        try store.applyRevocations(
            from: 0, next: 1, full: true,
            addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0x01], reason: nil)], addedKeys: [],
            removed: [])
        // 2 is FULL: every commit of the writer (a journal append) is synced to disk again.
        #expect(try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try store.syncState().revocationCursor == 1)
    }

    @Test("a new store has 16 KiB pages")
    func newStorePageSize() throws {
        let store = try TrustStore(path: directory.path + "/new.sqlite")
        #expect(try store.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") } == 16_384)
    }
}
