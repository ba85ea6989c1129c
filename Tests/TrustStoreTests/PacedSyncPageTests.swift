import FareCore
import Foundation
import GRDB
import Synchronization
import TestSupport
import Testing

@testable import TrustStore

/// A sync page written back at a pace (`BulkWritePacing`): still one transaction, and on disk in the store file after.
@Suite("Paced revocation pages")
struct PacedSyncPageTests {
    let directory = TemporaryDirectory()

    /// `count` revoked tickets of `issuer`, their ids in no particular order (as a server's page brings them).
    static func tickets(_ count: Int, issuer: String) -> [TicketRevocationRecord] {
        (0..<count).map { index in
            let scrambled = UInt32(truncatingIfNeeded: index &* 2_654_435_761)
            return TicketRevocationRecord(
                issuer: IssuerID(issuer),
                ticketID: TicketID(withUnsafeBytes(of: scrambled.bigEndian, Array.init) + [0x5A, 0xA5]),
                reason: "stolen")
        }
    }

    /// What a reader sees of the sync data: tickets of the first page, of the second, and the cursor.
    struct Seen: Equatable, Sendable {
        var first: Int
        var second: Int
        var cursor: String
    }

    static func seen(_ db: Database) throws -> Seen {
        let row = try Row.fetchOne(
            db,
            sql: """
                SELECT coalesce(sum(issuer = 'first'), 0), coalesce(sum(issuer = 'second'), 0),
                    (SELECT value FROM meta WHERE name = 'revocation_cursor')
                FROM revoked_ticket
                """)
        return Seen(first: row?[0] ?? -1, second: row?[1] ?? -1, cursor: row?[2] ?? "")
    }

    @Test("a snapshot replacing another is seen whole or not at all by a reader while it is written back")
    func wholeOrNothing() throws {
        let count = TrustStore.largePage * 3
        let store = try TrustStore(path: directory.path + "/paced.sqlite", bulkWritePacing: .standard)
        try store.applyRevocations(
            from: 0, next: 1, full: true, addedTickets: Self.tickets(count, issuer: "first"), addedKeys: [],
            removed: [])
        let before = Seen(first: count, second: 0, cursor: "1")
        let after = Seen(first: 0, second: count, cursor: "2")
        #expect(try store.read(Self.seen) == before)

        let reading = Atomic<Bool>(true)
        let observed = Mutex<[Seen]>([])
        let done = DispatchSemaphore(value: 0)
        let reader = Thread {
            var seen: [Seen] = []
            repeat {
                if let state = try? store.read(Self.seen) { seen.append(state) }
            } while reading.load(ordering: .relaxed)
            observed.withLock { $0 = seen }
            done.signal()
        }
        reader.start()
        try store.applyRevocations(
            from: 1, next: 2, full: true, addedTickets: Self.tickets(count, issuer: "second"), addedKeys: [],
            removed: [])
        reading.store(false, ordering: .relaxed)
        done.wait()

        let states = observed.withLock { $0 }
        #expect(!states.isEmpty)
        #expect(states.allSatisfy { $0 == before || $0 == after }, "a reader saw part of a page")
        #expect(try store.read(Self.seen) == after)
    }

    @Test("after a paced page the store file alone holds it, and the writer syncs and checkpoints as before")
    func pageInTheFile() throws {
        let path = directory.path + "/file.sqlite"
        let store = try TrustStore(path: path, bulkWritePacing: BulkWritePacing(stepBytes: 64 << 10))
        let count = TrustStore.largePage * 2
        try store.applyRevocations(
            from: 0, next: 7, full: true, addedTickets: Self.tickets(count, issuer: "second"), addedKeys: [],
            removed: [])

        // The main file copied without its log, as a backup of the file alone would be.
        let copy = directory.path + "/copy.sqlite"
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let queue = try DatabaseQueue(path: copy)
        #expect(try queue.read(Self.seen) == Seen(first: 0, second: count, cursor: "7"))
        try queue.close()

        // The writer's connection is back to syncing every commit and checkpointing by itself.
        let (synchronous, automatic) = try store.write { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA synchronous"),
                try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
            )
        }
        #expect(synchronous == 2)
        #expect(automatic == 1000)
        let revoked = Self.tickets(1, issuer: "second")[0]
        #expect(try StoreTrust(store: store).revocation(ofTicket: revoked.ticketID, issuer: "second") != nil)
    }

    @Test("without pacing the same pages give the same store")
    func unpacedSame() throws {
        let paced = try TrustStore(path: directory.path + "/a.sqlite")
        let unpaced = try TrustStore(path: directory.path + "/b.sqlite", bulkWritePacing: nil)
        for store in [paced, unpaced] {
            try store.applyRevocations(
                from: 0, next: 1, full: true, addedTickets: Self.tickets(3000, issuer: "first"), addedKeys: [],
                removed: [])
            try store.applyRevocations(
                from: 1, next: 2, full: false, addedTickets: Self.tickets(10, issuer: "second"), addedKeys: [],
                removed: [.ticket(issuer: "first", ticketID: Self.tickets(1, issuer: "first")[0].ticketID)])
        }
        #expect(try paced.read(Self.seen) == Seen(first: 2999, second: 10, cursor: "2"))
        #expect(try unpaced.read(Self.seen) == Seen(first: 2999, second: 10, cursor: "2"))
    }

    @Test(
        "on a full disk a paced page is refused whole, the store keeps the page before, and takes it once there is room",
        .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
    func fullDisk() throws {
        let disk = try SmallFilesystem(kibibytes: 16 * 1024)
        let store = try TrustStore(path: disk.path + "/full.sqlite", journalReserveBytes: 64 << 10)
        try store.applyRevocations(
            from: 0, next: 1, full: true, addedTickets: Self.tickets(500, issuer: "first"), addedKeys: [],
            removed: [])
        disk.fill()
        // Larger than the log the first page left: the transaction needs a longer log, which the full disk refuses.
        let second = Self.tickets(TrustStore.largePage * 20, issuer: "second")
        let error = #expect(throws: StoreError.self) {
            try store.applyRevocations(from: 1, next: 2, full: true, addedTickets: second, addedKeys: [], removed: [])
        }
        #expect(error?.code == .ioFailure)
        #expect(try store.read(Self.seen) == Seen(first: 500, second: 0, cursor: "1"))

        disk.free()
        try store.applyRevocations(from: 1, next: 2, full: true, addedTickets: second, addedKeys: [], removed: [])
        #expect(try store.read(Self.seen) == Seen(first: 0, second: second.count, cursor: "2"))
    }

    @Test(
        "on a full disk a page that fits the log is applied, though the store file cannot grow to take it in yet",
        .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
    func fullDiskLogHasRoom() throws {
        let disk = try SmallFilesystem(kibibytes: 16 * 1024)
        let path = disk.path + "/room.sqlite"
        let store = try TrustStore(path: path, journalReserveBytes: 64 << 10)
        // A large page, then a full snapshot replacing it: the log keeps its length, so the second page fits.
        try store.applyRevocations(
            from: 0, next: 1, full: true, addedTickets: Self.tickets(TrustStore.largePage * 5, issuer: "first"),
            addedKeys: [], removed: [])
        disk.fill()
        try store.applyRevocations(
            from: 1, next: 2, full: true, addedTickets: Self.tickets(500, issuer: "second"), addedKeys: [],
            removed: [])
        #expect(try store.read(Self.seen) == Seen(first: 0, second: 500, cursor: "2"))
        disk.free()
        try store.close()
        let reopened = try TrustStore(path: path)
        #expect(try reopened.read(Self.seen) == Seen(first: 0, second: 500, cursor: "2"))
    }
}
