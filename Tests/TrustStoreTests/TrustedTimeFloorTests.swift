import FareCore
import Foundation
import GRDB
import Testing
import ValidationAPI

@testable import TrustStore

@Suite("The trusted-time floor in the store")
struct TrustedTimeFloorTests {
    let directory = TemporaryDirectory()
    var path: String { directory.path + "/store.sqlite" }

    /// An instant after the release date, so that the store's floor is what a test sets.
    static let base = FarecheckRelease.date.addingTimeInterval(30 * 86_400)

    func at(_ seconds: TimeInterval) -> Date { Self.base.addingTimeInterval(seconds) }

    @Test("a new store's floor is the release date; sync times raise it, and it never goes back")
    func neverGoesBack() throws {
        let store = try TrustStore(path: path)
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor.release)
        #expect(try store.storedTimeFloor() == nil)

        let now = at(10_000)
        #expect(
            try store.raiseTrustedTimeFloor(to: at(100), source: .keyBundle, wallClock: now, tolerance: 300) == .raised)
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(100), source: .keyBundle))
        // Older times, or the same one again, leave it where it is, whatever their source.
        #expect(
            try store.raiseTrustedTimeFloor(to: at(50), source: .revocations, wallClock: now, tolerance: 300)
                == .notNewer)
        #expect(
            try store.raiseTrustedTimeFloor(to: at(100), source: .serverReply, wallClock: now, tolerance: 300)
                == .notNewer)
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(100), source: .keyBundle))
        #expect(
            try store.raiseTrustedTimeFloor(to: at(200.5), source: .revocations, wallClock: now, tolerance: 300)
                == .raised)
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(200.5), source: .revocations))
        // A release date, earlier than the floor, never lowers it either.
        #expect(try store.trustedTimeFloor()?.instant ?? .distantPast > FarecheckRelease.date)
    }

    @Test("a time ahead of the device clock beyond the tolerance is refused, and the floor stays")
    func futureRefused() throws {
        let store = try TrustStore(path: path)
        let now = at(0)
        try store.raiseTrustedTimeFloor(to: at(-60), source: .keyBundle, wallClock: now, tolerance: 300)
        let outcome = try store.raiseTrustedTimeFloor(
            to: at(3600), source: .serverReply, wallClock: now, tolerance: 300)
        #expect(outcome == .refusedAhead(by: 3600))
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(-60), source: .keyBundle))
        // Within the tolerance it is taken: two clocks a little apart are not a wrong clock.
        #expect(
            try store.raiseTrustedTimeFloor(to: at(299), source: .serverReply, wallClock: now, tolerance: 300)
                == .raised)
        #expect(
            try store.raiseTrustedTimeFloor(to: at(1000), source: .revocations, wallClock: now, tolerance: 0)
                == .refusedAhead(by: 1000))
    }

    @Test("the floor is kept across a reopen, and a raise by another process counts within a second")
    func persistedAndShared() async throws {
        let now = at(10_000)
        do {
            let store = try TrustStore(path: path)
            try store.raiseTrustedTimeFloor(to: at(500), source: .keyBundle, wallClock: now, tolerance: 300)
            try store.close()
        }
        let daemon = try TrustStore(path: path)
        #expect(try daemon.trustedTimeFloor() == TrustedTimeFloor(instant: at(500), source: .keyBundle))
        // `farecheck sync` beside the daemon: another connection to the same file raises it.
        let cli = try TrustStore(path: path)
        try cli.raiseTrustedTimeFloor(to: at(900), source: .revocations, wallClock: now, tolerance: 300)
        #expect(try cli.trustedTimeFloor() == TrustedTimeFloor(instant: at(900), source: .revocations))
        // The daemon reads the store again once its copy is a second old.
        try await Task.sleep(for: TrustStore.floorRecheckInterval + .milliseconds(100))
        #expect(try daemon.trustedTimeFloor() == TrustedTimeFloor(instant: at(900), source: .revocations))
        // A raise by the daemon itself counts at once.
        try daemon.raiseTrustedTimeFloor(to: at(950), source: .serverReply, wallClock: now, tolerance: 300)
        #expect(try daemon.trustedTimeFloor() == TrustedTimeFloor(instant: at(950), source: .serverReply))
        // Kept as text a person can read in the meta table.
        let reader = try DatabaseQueue(path: path)
        let row = try await reader.read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'clock_floor'")
        }
        let millis = Int64(at(950).timeIntervalSince1970 * 1000)
        #expect(row == "\(millis) server-reply")
    }

    @Test("the newest journal entry counts, from the journal file at start and from each append")
    func journalCounts() throws {
        let floorVerdict = Verdict(kind: .valid, reason: "ok", signature: .valid, inspectedAt: at(1000))
        do {
            let store = try TrustStore(path: path)
            try store.raiseTrustedTimeFloor(to: at(100), source: .keyBundle, wallClock: at(2000), tolerance: 300)
            #expect(
                store.inspectionJournal.append(
                    InspectionRecord(verdict: floorVerdict, device: "gate", symbology: .qr, payloadDigest: [1]))
                    == .journaled)
            #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(1000), source: .journal))
            // An older inspection (a clock stepped back) does not lower it.
            var older = floorVerdict
            older.inspectedAt = at(10)
            _ = store.inspectionJournal.append(
                InspectionRecord(verdict: older, device: "gate", symbology: .qr, payloadDigest: [2]))
            #expect(try store.trustedTimeFloor()?.instant == at(1000))
            try store.close()
        }
        // A restart (the RTC reset at boot): the journal on disk still says how late it was.
        let reopened = try TrustStore(path: path)
        #expect(try reopened.trustedTimeFloor() == TrustedTimeFloor(instant: at(1000), source: .journal))
        #expect(reopened.inspectionJournal.newestInspectedAt == at(1000))
    }

    @Test("each journal record keeps the device clock and the floor it was judged against")
    func journalKeepsBoth() throws {
        let store = try TrustStore(path: path)
        var verdict = Verdict(
            kind: .clockUntrusted, reason: "The device clock reads 1970…", signature: .valid,
            inspectedAt: Date(timeIntervalSince1970: 12))
        verdict.clockFloor = TrustedTimeFloor(instant: at(0), source: .revocations)
        let record = InspectionRecord(verdict: verdict, device: "gate", symbology: .aztec, payloadDigest: [9])
        try store.inspectionJournal.write(record)
        let stored = try #require(try store.inspectionJournal.allInspections().first)
        #expect(stored.inspectedAt == 12_000)
        #expect(stored.clockFloor == Int64(at(0).timeIntervalSince1970 * 1000))
        #expect(stored.clockFloorSource == "revocations")
        #expect(stored.verdict == "clock-untrusted")
        // Verdicts for an explicit instant keep no floor.
        let plain = InspectionRecord(
            verdict: Verdict(kind: .valid, reason: "ok", signature: .valid, inspectedAt: at(5)), device: "gate",
            symbology: .qr, payloadDigest: [8])
        #expect(plain.clockFloor == nil && plain.clockFloorSource == nil)
    }

    @Test("a journal of the first schema is upgraded in place: its records kept, its newest one counted")
    func upgradedJournal() throws {
        // The journal file as farecheck wrote it before the clock floor: migration v1 only.
        let journalPath = directory.path + "/store.journal.sqlite"
        let old = try DatabaseQueue(path: journalPath)
        try old.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                    INSERT INTO grdb_migrations VALUES ('v1-inspection');
                    CREATE TABLE inspection (id TEXT PRIMARY KEY, inspected_at INTEGER NOT NULL, device TEXT NOT NULL,
                        symbology TEXT, payload_digest BLOB NOT NULL, format TEXT, issuer TEXT, ticket_id BLOB,
                        verdict TEXT NOT NULL, reason TEXT NOT NULL, signature TEXT NOT NULL, warnings TEXT NOT NULL,
                        inspector TEXT, sent_at INTEGER, decided_by TEXT);
                    INSERT INTO inspection (id, inspected_at, device, payload_digest, verdict, reason, signature,
                        warnings) VALUES ('a', ?, 'gate', x'01', 'valid', 'ok', 'valid', ''),
                        ('b', ?, 'gate', x'02', 'expired', 'old', 'valid', '');
                    """,
                arguments: [Int64(at(700).timeIntervalSince1970 * 1000), Int64(at(5).timeIntervalSince1970 * 1000)])
        }
        try old.close()
        let store = try TrustStore(path: path)
        let records = try store.inspectionJournal.allInspections()
        #expect(records.map(\.id) == ["b", "a"])
        #expect(records.allSatisfy { $0.clockFloor == nil && $0.clockFloorSource == nil })
        #expect(try store.trustedTimeFloor() == TrustedTimeFloor(instant: at(700), source: .journal))
        let indexes = try DatabaseQueue(path: journalPath).read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index'")
        }
        #expect(indexes.contains("inspection_by_time"))
    }
}

/// What the cost figures of the trusted-time floor measure (`farecheck-bench formats`: the floor read beside a
/// revocation look-up, which every verdict makes too): both read what the store holds, call after call. Speed is
/// measured by the benchmark, never here.
@Suite("The trusted-time floor: what each verdict reads")
struct TrustedTimeFloorCost {
    @Test(
        "store.trustedTimeFloor() gives the floor raised, every call; StoreTrust's look-up finds the revoked ticket only"
    )
    func floorReadCost() throws {
        let directory = TemporaryDirectory()
        let store = try TrustStore(path: directory.path + "/store.sqlite")
        let raised = FarecheckRelease.date.addingTimeInterval(86_400)
        try store.raiseTrustedTimeFloor(to: raised, source: .keyBundle, wallClock: raised, tolerance: 300)
        try store.revokeTickets(
            (0..<10_000).map {
                TicketRevocationRecord(
                    issuer: "demo-transit", ticketID: TicketID(withUnsafeBytes(of: $0) { Array($0) }), reason: nil)
            })
        let trust = StoreTrust(store: store)
        for _ in 0..<1_000 {
            #expect(try store.trustedTimeFloor()?.instant == raised)
        }
        let revoked = withUnsafeBytes(of: 4_321) { Array($0) }
        for _ in 0..<1_000 {
            #expect(try trust.revocation(ofTicket: [1, 2, 3, 4, 5, 6, 7, 8], issuer: "demo-transit") == nil)
            #expect(try trust.revocation(ofTicket: TicketID(revoked), issuer: "demo-transit") != nil)
        }
    }
}
