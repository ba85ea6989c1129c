import FareCore
import Foundation
import GRDB
import Signatures
import Testing

@testable import TrustStore

/// A fresh directory per test, removed afterwards.
final class TemporaryDirectory {
    let path: String
    init() {
        path =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-store-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
}

@Suite("Trust store")
struct TrustStoreTests {
    let directory = TemporaryDirectory()

    func key(_ id: String, issuer: String = "demo-transit", notAfter: Date? = nil) throws -> KeyRecord {
        let privateKey = try PrivateKey.generate(.ed25519)
        return KeyRecord(
            family: .fc1, issuer: IssuerID(issuer), keyID: KeyID(id), algorithm: "EdDSA",
            spki: privateKey.publicKey.spkiDER,
            notAfter: notAfter, source: "test")
    }

    @Test("a missing store is created with its directory, in WAL mode, and keeps what is saved")
    func createAndReopen() throws {
        let path = directory.path + "/nested/dir/store.sqlite"
        do {
            let store = try TrustStore(path: path)
            try store.saveKey(try key("0a0b"))
            try store.saveKey(try key("0c0d", notAfter: Date(timeIntervalSince1970: 2_000_000_000)))
            try store.revokeTicket(
                TicketRevocationRecord(issuer: "demo-transit", ticketID: [1, 2, 3], reason: "stolen"))
        }
        let reopened = try TrustStore(path: path)
        let keys = try reopened.keys()
        #expect(keys.map(\.keyID) == ["0a0b", "0c0d"])
        #expect(keys[1].notAfterDate == Date(timeIntervalSince1970: 2_000_000_000))
        #expect(try reopened.ticketRevocations().map(\.reason) == ["stolen"])
        let mode = try DatabaseQueue(path: path).read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "wal")
    }

    @Test("keys and ticket ids are stored as SQLite blobs holding the DER and id bytes, readable by other tools")
    func blobs() throws {
        let path = directory.path + "/s.sqlite"
        let record = try key("0a0b")
        do {
            let store = try TrustStore(path: path)
            try store.saveKey(record)
            try store.revokeTicket(TicketRevocationRecord(issuer: "demo-transit", ticketID: [0xDE, 0xAD], reason: nil))
        }
        let row = try DatabaseQueue(path: path).read { db in
            try Row.fetchOne(
                db, sql: "SELECT typeof(spki) AS t, spki, (SELECT hex(ticket_id) FROM revoked_ticket) AS id FROM key")
        }
        let found = try #require(row)
        #expect(found["t"] as String == "blob")
        #expect(Array(found["spki"] as Data) == record.spki)
        #expect(found["id"] as String == "DEAD")
    }

    @Test("saving a key with the same format, issuer and id replaces it; remove removes it")
    func replaceAndRemove() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        try store.saveKey(try key("0a0b"))
        let replacement = try key("0a0b")
        try store.saveKey(replacement)
        #expect(try store.keys() == [replacement])
        try store.saveKey(try key("0a0b", issuer: "other-transit"))
        #expect(try store.keys(withID: "0a0b").count == 2)
        #expect(try store.removeKeys(withID: "0a0b", issuer: "other-transit") == 1)
        #expect(try store.removeKeys(withID: "0a0b") == 1)
        #expect(try store.removeKeys(withID: "0a0b") == 0)
        #expect(try store.keys().isEmpty)
    }

    @Test("the snapshot holds keys and revocations for the verifier")
    func snapshot() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        try store.saveKey(try key("0a0b"))
        try store.revokeTicket(TicketRevocationRecord(issuer: "demo-transit", ticketID: [9], reason: nil))
        try store.revokeKey(KeyRevocationRecord(family: .fc1, issuer: "demo-transit", keyID: "0a0b", reason: "leaked"))
        let (trust, skipped) = try store.snapshot()
        #expect(skipped.isEmpty)
        let found = try #require(trust.key(family: .fc1, issuer: nil, keyID: "0a0b"))
        #expect(found.issuer == "demo-transit")
        #expect(trust.revocation(ofTicket: [9], issuer: "demo-transit") != nil)
        #expect(trust.revocation(ofTicket: [9], issuer: "other") == nil)
        #expect(trust.revocation(ofKey: found)?.reason == "leaked")
    }

    @Test("live look-ups see what another connection revokes, adds or removes at the next scan; none after close")
    func liveLookups() throws {
        let path = directory.path + "/s.sqlite"
        let store = try TrustStore(path: path)
        try store.saveKey(try key("0a0b"))
        let trust = StoreTrust(store: store)
        let found = try #require(try trust.key(family: .fc1, issuer: nil, keyID: "0a0b"))
        #expect(try trust.revocation(ofTicket: [9, 0], issuer: "demo-transit") == nil)
        #expect(try trust.revocation(ofKey: found) == nil)
        // Another store on the same file (as `farecheck sync` in another process) revokes both.
        let other = try TrustStore(path: path)
        try other.revokeTicket(
            TicketRevocationRecord(
                issuer: "demo-transit", ticketID: [9, 0], reason: "stolen",
                revokedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        try other.revokeTicket(TicketRevocationRecord(issuer: "demo-transit", ticketID: [], reason: nil))
        try other.revokeKey(KeyRevocationRecord(family: .fc1, issuer: "demo-transit", keyID: "0a0b", reason: "leaked"))
        let ticket = try #require(try trust.revocation(ofTicket: [9, 0], issuer: "demo-transit"))
        #expect(ticket.reason == "stolen" && ticket.revokedAt == Date(timeIntervalSince1970: 1_800_000_000))
        // An empty id is an id of its own, without a reason; a prefix of a revoked id is not revoked.
        #expect(try trust.revocation(ofTicket: [], issuer: "demo-transit")?.reason == nil)
        #expect(try trust.revocation(ofTicket: [], issuer: "demo-transit") != nil)
        #expect(try trust.revocation(ofTicket: [9], issuer: "demo-transit") == nil)
        #expect(try trust.revocation(ofTicket: [9, 0], issuer: "other") == nil)
        #expect(try trust.revocation(ofKey: found)?.reason == "leaked")
        // Keys found before are kept only while the store is unchanged: one the other store adds, replaces or
        // removes is seen at the next look-up.
        #expect(try trust.key(family: .fc1, issuer: nil, keyID: "0c0d") == nil)
        #expect(try trust.keys(family: .fc1, issuer: "demo-transit").map(\.keyID) == ["0a0b"])
        try other.saveKey(try key("0c0d"))
        #expect(try trust.key(family: .fc1, issuer: nil, keyID: "0c0d")?.keyID == "0c0d")
        #expect(try trust.keys(family: .fc1, issuer: "demo-transit").map(\.keyID) == ["0a0b", "0c0d"])
        #expect(try other.removeKeys(withID: "0a0b") == 1)
        #expect(try trust.key(family: .fc1, issuer: nil, keyID: "0a0b") == nil)
        #expect(try trust.keys(family: .fc1, issuer: "demo-transit", keyID: "0a0b").isEmpty)
        #expect(try trust.keys(family: .fc1, issuer: "demo-transit").map(\.keyID) == ["0c0d"])
        try other.close()
        try store.close()
        #expect(throws: StoreError.self) { try trust.revocation(ofTicket: [9, 0], issuer: "demo-transit") }
    }

    @Test("a file that is not SQLite is refused and left byte for byte as it was")
    func notSQLite() throws {
        let path = directory.path + "/notes.txt"
        let content = Data("these are my notes, not a database\n".utf8)
        _ = FileManager.default.createFile(atPath: path, contents: content)
        #expect { try TrustStore(path: path) } throws: { ($0 as? StoreError)?.code == .notAStore }
        #expect(FileManager.default.contents(atPath: path) == content)
    }

    @Test("a refusal's log line says what is wrong, then which file")
    func refusalLogLine() throws {
        let path = directory.path + "/notes.txt"
        _ = FileManager.default.createFile(atPath: path, contents: Data("these are my notes\n".utf8))
        let error = #expect(throws: StoreError.self) { try TrustStore(path: path) }
        #expect(error?.path == path)
        #expect(error?.description == "The file is not a SQLite database; refusing to touch it (\(path))")
    }

    @Test("a damaged store is refused and left as it was")
    func corrupt() throws {
        let path = directory.path + "/s.sqlite"
        do {
            let store = try TrustStore(path: path)
            try store.saveKey(try key("0a0b"))
        }
        var bytes = try #require(FileManager.default.contents(atPath: path))
        // Keep the SQLite header, destroy the rest of the first page (the schema).
        for index in 100..<min(bytes.count, 4096) { bytes[index] = 0xA5 }
        _ = FileManager.default.createFile(atPath: path, contents: bytes)
        try? FileManager.default.removeItem(atPath: path + "-wal")
        try? FileManager.default.removeItem(atPath: path + "-shm")
        #expect { try TrustStore(path: path) } throws: { ($0 as? StoreError)?.code == .notAStore }
        #expect(FileManager.default.contents(atPath: path) == bytes)
    }

    @Test("a SQLite database of another program is refused and not migrated")
    func foreignDatabase() throws {
        let path = directory.path + "/other.sqlite"
        try DatabaseQueue(path: path).write { db in try db.execute(sql: "CREATE TABLE photos (id INTEGER)") }
        #expect { try TrustStore(path: path) } throws: { ($0 as? StoreError)?.code == .notAStore }
        let tables = try DatabaseQueue(path: path).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type='table'")
        }
        #expect(tables == ["photos"])
    }

    @Test("a store written by a newer farecheck is refused with a clear message")
    func newerSchema() throws {
        let path = directory.path + "/s.sqlite"
        _ = try TrustStore(path: path)
        try DatabaseQueue(path: path).write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        #expect { try TrustStore(path: path) } throws: { error in
            guard let error = error as? StoreError else { return false }
            return error.code == .newerSchema && error.message.contains("newer farecheck")
        }
    }

    @Test("a store that cannot be read is a clear error")
    func unreadable() throws {
        #expect { try TrustStore(path: "/proc/farecheck/store.sqlite") } throws: {
            ($0 as? StoreError)?.code == .cannotOpen
        }
    }

    @Test("the store path: --db, then $FARECHECK_DB, then the XDG data directory")
    func pathResolution() {
        #expect(
            TrustStore.resolvePath(explicit: "/a.sqlite", environment: ["FARECHECK_DB": "/b.sqlite"]) == "/a.sqlite")
        #expect(TrustStore.resolvePath(explicit: nil, environment: ["FARECHECK_DB": "/b.sqlite"]) == "/b.sqlite")
        #expect(
            TrustStore.resolvePath(explicit: nil, environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"])
                == "/x/farecheck/farecheck.sqlite")
        #expect(
            TrustStore.resolvePath(explicit: nil, environment: ["HOME": "/h"])
                == "/h/.local/share/farecheck/farecheck.sqlite")
    }
}
