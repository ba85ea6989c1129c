import FareCore
import Foundation
import GRDB
import Testing
import ValidationAPI
import Verification

@testable import TrustStore

@Suite("Inspection journal")
struct InspectionJournalTests {
    let directory = TemporaryDirectory()

    func verdict(_ kind: VerdictKind, ticket id: [UInt8], at seconds: TimeInterval) -> Verdict {
        Verdict(
            kind: kind, reason: "reason", signature: .valid, format: .fc1, issuer: "demo-transit", keyID: "0a0b",
            ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: TicketID(id)),
            inspectedAt: Date(timeIntervalSince1970: seconds)
        )
    }

    @Test("an inspection written is read back after reopening, once even when written twice")
    func durableAndIdempotent() throws {
        let path = directory.path + "/j.sqlite"
        let record = InspectionRecord(
            id: "inspection-1", verdict: verdict(.valid, ticket: [1, 2], at: 1_800_000_000.25), device: "/dev/ttyACM0",
            symbology: .aztec, payloadDigest: [UInt8](repeating: 0xAB, count: 32), inspector: "staff-7"
        )
        do {
            let store = try TrustStore(path: path)
            try store.inspectionJournal.write(record)
            try store.inspectionJournal.write(record)
        }
        let reopened = try TrustStore(path: path)
        let found = try reopened.inspectionJournal.allInspections()
        #expect(found.map(\.record) == [record])
        #expect(found.first?.inspectedDate == Date(timeIntervalSince1970: 1_800_000_000.25))
        // The journal lives in its own file beside the store.
        let count = try DatabaseQueue(path: directory.path + "/j.journal.sqlite").read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection")
        }
        #expect(count == 1)
    }

    @Test("replay lookup finds a ticket's inspections inside the window only, newest first")
    func replayWindow() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        for (index, seconds) in [1000.0, 2000, 3000].enumerated() {
            try store.inspectionJournal.write(
                InspectionRecord(
                    id: "r\(index)", verdict: verdict(.valid, ticket: [9], at: seconds), device: "d", symbology: .qr,
                    payloadDigest: [1]
                ))
        }
        try store.inspectionJournal.write(
            InspectionRecord(
                id: "other", verdict: verdict(.valid, ticket: [8], at: 2500), device: "d", symbology: .qr,
                payloadDigest: [2]))
        let recent = try store.inspectionJournal.pastInspections(
            ofTicket: [9], issuer: "demo-transit", since: Date(timeIntervalSince1970: 1500))
        #expect(recent.map(\.id) == ["r2", "r1"])
        #expect(recent.map(\.inspectedAt) == [Date(timeIntervalSince1970: 3000), Date(timeIntervalSince1970: 2000)])
        #expect(recent.allSatisfy { $0.device == "d" && $0.verdict == .valid })
        #expect(
            try store.inspectionJournal.pastInspections(ofTicket: [9], issuer: "other-transit", since: .distantPast)
                .isEmpty)
    }

    @Test("replay's look-up sees what another process journals after it opened, and fails clearly once closed")
    func replayLookupLive() throws {
        let path = directory.path + "/live.sqlite"
        let gate = try TrustStore(path: path)
        let since = Date(timeIntervalSince1970: 0)
        // The look-up connection opens with this first read, on a journal without the ticket.
        #expect(try gate.inspectionJournal.pastInspections(ofTicket: [5], issuer: "demo-transit", since: since).isEmpty)
        // Another process (here: another store on the same file, its own connections) journals the ticket.
        let other = try TrustStore(path: path)
        try other.inspectionJournal.write(
            InspectionRecord(
                id: "elsewhere", verdict: verdict(.revoked, ticket: [5], at: 4000), device: "/dev/ttyUSB1",
                symbology: .qr, payloadDigest: [3]))
        let seen = try gate.inspectionJournal.pastInspections(ofTicket: [5], issuer: "demo-transit", since: since)
        #expect(
            seen == [
                PastInspection(
                    id: "elsewhere", inspectedAt: Date(timeIntervalSince1970: 4000), device: "/dev/ttyUSB1",
                    verdict: .revoked)
            ])
        try other.close()
        try gate.close()
        #expect(throws: StoreError.self) {
            try gate.inspectionJournal.pastInspections(ofTicket: [5], issuer: "demo-transit", since: since)
        }
    }

    @Test("records stay unsent until the server acknowledged them")
    func unsent() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        for index in 0..<5 {
            try store.inspectionJournal.write(
                InspectionRecord(
                    id: "u\(index)", verdict: verdict(.expired, ticket: [UInt8(index)], at: Double(100 + index)),
                    device: "d",
                    symbology: nil, payloadDigest: [3]
                ))
        }
        #expect(try store.inspectionJournal.unsentInspections(limit: 3).map(\.id) == ["u0", "u1", "u2"])
        try store.inspectionJournal.markInspectionsSent(["u0", "u1"])
        #expect(try store.inspectionJournal.unsentInspections(limit: 10).map(\.id) == ["u2", "u3", "u4"])
    }

    @Test(
        "a record the server refused keeps its reason, is no longer unsent, and is counted; a sent one is not refused")
    func refused() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        for index in 0..<3 {
            try store.inspectionJournal.write(
                InspectionRecord(
                    id: "r\(index)", verdict: verdict(.valid, ticket: [UInt8(index)], at: Double(100 + index)),
                    device: "d", symbology: nil, payloadDigest: [3]))
        }
        try store.inspectionJournal.markInspectionsSent(["r0"])
        try store.inspectionJournal.markInspectionsRefused([
            (id: "r1", reason: "conflicting-record: verdict differs"), (id: "r0", reason: "too late"),
        ])
        #expect(try store.inspectionJournal.unsentInspections(limit: 10).map(\.id) == ["r2"])
        #expect(try store.inspectionJournal.unsentInspectionCount() == 1)
        #expect(try store.inspectionJournal.refusedInspectionCount() == 1)
        let refused = try #require(try store.inspectionJournal.refusedInspections(limit: 5).first)
        #expect(refused.id == "r1" && refused.refusal == "conflicting-record: verdict differs")
        #expect(refused.sentAt == nil && refused.refusedAt != nil)
        // Reopened, the refusal is still there.
        try store.close()
        #expect(try TrustStore(path: directory.path + "/j.sqlite").inspectionJournal.refusedInspectionCount() == 1)
    }

    @Test(
        "past the horizon the journal forgets what the server acknowledged: never an unsent, a refused or the newest one"
    )
    func deleteSent() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        // 130 inspections a second apart (more than two deleting transactions' worth); p5 unsent, p6 refused.
        for index in 0..<130 {
            try store.inspectionJournal.write(
                InspectionRecord(
                    id: "p\(index)", verdict: verdict(.valid, ticket: [UInt8(index)], at: Double(1000 + index)),
                    device: "d", symbology: nil, payloadDigest: [3]))
        }
        try store.inspectionJournal.markInspectionsSent((0..<130).filter { $0 != 5 && $0 != 6 }.map { "p\($0)" })
        try store.inspectionJournal.markInspectionsRefused([(id: "p6", reason: "conflicting-record")])
        func ids() throws -> Set<InspectionID> { Set(try store.inspectionJournal.allInspections().map(\.id)) }

        // At most `limit`, oldest first.
        #expect(
            try store.inspectionJournal.deleteSentInspections(before: Date(timeIntervalSince1970: 1125), limit: 60)
                == 60)
        #expect(try !ids().contains("p61") && ids().contains("p62"))
        // The rest before the horizon.
        #expect(
            try store.inspectionJournal.deleteSentInspections(before: Date(timeIntervalSince1970: 1125), limit: 1000)
                == 63)
        #expect(try ids() == ["p5", "p6", "p125", "p126", "p127", "p128", "p129"])
        // A horizon past every inspection still keeps the newest (the trusted-time floor reads it on opening).
        #expect(
            try store.inspectionJournal.deleteSentInspections(before: Date(timeIntervalSince1970: 5000), limit: 1000)
                == 4)
        #expect(try ids() == ["p5", "p6", "p129"])
        #expect(try store.inspectionJournal.unsentInspections(limit: 10).map(\.id) == ["p5"])
        #expect(try store.inspectionJournal.refusedInspectionCount() == 1)
        try store.close()
        #expect(
            try Set(TrustStore(path: directory.path + "/j.sqlite").inspectionJournal.allInspections().map(\.id)) == [
                "p5", "p6", "p129",
            ])
    }

    /// One inspection for each name of every vocabulary the journal keeps (verdict kinds, signature statuses,
    /// formats, symbologies, deciders, clock-floor sources), each used at least once.
    static func typedInspections() -> [Inspection] {
        let count = [
            VerdictKind.allCases.count, TicketFormat.allCases.count, Symbology.allCases.count,
            TrustedTimeSource.allCases.count, 5,
        ].max()!
        let signatures: [SignatureStatus] = [.valid, .invalid, .unknownKey, .unsupported, .notChecked]
        return (0..<count).map { index in
            var verdict = Verdict(
                kind: VerdictKind.allCases[index % VerdictKind.allCases.count], reason: "reason \(index)",
                signature: signatures[index % signatures.count],
                format: index == 0 ? nil : TicketFormat.allCases[index % TicketFormat.allCases.count],
                issuer: "issuer-\(index)", inspectedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
            verdict.clockFloor = TrustedTimeFloor(
                instant: Date(timeIntervalSince1970: 1_700_000_000),
                source: TrustedTimeSource.allCases[index % TrustedTimeSource.allCases.count])
            return Inspection(
                id: "typed-\(index)", source: "scanner",
                symbology: Symbology.allCases[index % Symbology.allCases.count],
                payloadByteCount: 10, payloadDigest: [UInt8(index)], verdict: verdict,
                decidedBy: index.isMultiple(of: 2) ? .offline : .online)
        }
    }

    @Test(
        "typed names round-trip the journal: stored as their names, read back as the same cases; others kept as written"
    )
    func typedNamesRoundTrip() throws {
        let journal = try InspectionJournal(
            path: directory.path + "/typed.journal.sqlite", reservePath: directory.path + "/typed.journal.reserve")
        let inspections = Self.typedInspections()
        for inspection in inspections { try journal.write(InspectionRecord(inspection)) }
        let read = try journal.allInspections()
        #expect(read.map(\.record) == inspections.map { InspectionRecord($0) })
        for (record, inspection) in zip(read, inspections) {
            #expect(record.verdict.known == inspection.verdict.kind)
            #expect(record.signature.known == inspection.verdict.signature)
            #expect(record.format?.known == inspection.verdict.format)
            #expect(record.symbology?.known == inspection.symbology)
            #expect(record.decidedBy?.known == inspection.decidedBy)
            #expect(record.clockFloorSource?.known == inspection.verdict.clockFloor?.source)
        }
        // On disk, the same text the columns held as strings: each case's raw value.
        let rows = try DatabaseQueue(path: journal.path).read { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT verdict, signature, format, symbology, decided_by, clock_floor_source FROM inspection
                    ORDER BY inspected_at
                    """)
        }
        #expect(rows.count == inspections.count)
        for (row, inspection) in zip(rows, inspections) {
            #expect(row["verdict"] as String == inspection.verdict.kind.rawValue)
            #expect(row["signature"] as String == inspection.verdict.signature.rawValue)
            #expect(row["format"] as String? == inspection.verdict.format?.rawValue)
            #expect(row["symbology"] as String? == inspection.symbology?.rawValue)
            #expect(row["decided_by"] as String == inspection.decidedBy.rawValue)
            #expect(row["clock_floor_source"] as String? == inspection.verdict.clockFloor?.source.rawValue)
        }

        // A row written by another farecheck version, with names this one does not know: read, kept as written.
        try DatabaseQueue(path: journal.path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO inspection (id, inspected_at, device, symbology, payload_digest, format, verdict,
                        reason, signature, warnings, decided_by)
                    VALUES ('future', 1900000000000, 'd', 'hologram', x'01', 'fc9', 'teleported', '', 'quantum', '',
                        'oracle')
                    """)
        }
        let future = try #require(try journal.allInspections().last)
        #expect(future.id == "future")
        #expect(future.verdict == Recorded(text: "teleported") && future.verdict.known == nil)
        #expect(future.signature.text == "quantum" && future.format?.text == "fc9")
        #expect(future.symbology?.text == "hologram" && future.decidedBy?.text == "oracle")
        // Written again (the reserve's JSON, another journal), the names are the same text.
        let copy = try InspectionJournal(
            path: directory.path + "/copy.journal.sqlite", reservePath: directory.path + "/copy.journal.reserve")
        try copy.write(try JSONDecoder().decode(InspectionRecord.self, from: JSONEncoder().encode(future.record)))
        #expect(try copy.allInspections() == [future])
    }

    @Test("a journal made before refusals were kept gets the columns, its records as they were")
    func refusalMigration() throws {
        let path = directory.path + "/old.journal.sqlite"
        let old = try DatabaseQueue(path: path)
        try InspectionJournal.migrator.migrate(old, upTo: "v1-inspection")
        try old.write { db in
            try db.execute(
                sql: """
                    INSERT INTO inspection (id, inspected_at, device, payload_digest, verdict, reason, signature,
                        warnings, sent_at) VALUES ('sent', 1, 'd', x'01', 'valid', '', 'valid', '', 5),
                        ('waiting', 2, 'd', x'02', 'valid', '', 'valid', '', NULL)
                    """)
        }
        try old.close()
        let journal = try InspectionJournal(path: path, reservePath: directory.path + "/old.journal.reserve")
        #expect(try journal.unsentInspections(limit: 10).map(\.id) == ["waiting"])
        #expect(try journal.refusedInspectionCount() == 0)
        #expect(try journal.allInspections().map(\.sentAt) == [5, nil])
    }

    @Test("warnings are kept as a list with their explanations, and in the columns the version before reads")
    func warningsKeptWhole() throws {
        let journal = try InspectionJournal(
            path: directory.path + "/w.journal.sqlite", reservePath: directory.path + "/w.journal.reserve")
        var judged = verdict(.valid, ticket: [4, 2], at: 1_800_000_000)
        let seen = Date(timeIntervalSince1970: 1_799_999_000)
        judged.warnings = [
            VerdictWarning(code: VerdictWarning.seenBeforeCode, message: "Seen once, last at \(date: seen) on gate."),
            VerdictWarning(code: VerdictWarning.staleTrustDataCode, message: "Keys \("line\nbreak") old."),
        ]
        let record = InspectionRecord(
            Inspection(
                source: "gate", receivedAt: Date(timeIntervalSince1970: 1_799_999_999.5), symbology: .qr,
                payloadByteCount: 10, payloadDigest: [1], verdict: judged))
        try journal.write(record)
        let read = try #require(try journal.allInspections().first)
        // Read back whole: each sentence's template and values, which the page translates.
        #expect(read.warnings == judged.warnings)
        #expect(read.warnings.map(\.explanation.template) == ["Seen once, last at {0} on gate.", "Keys {0} old."])
        #expect(read.scanReceivedAt == 1_799_999_999_500)
        // The codes and the `code: sentence` lines, as the version before wrote and reads them.
        let row = try #require(
            try DatabaseQueue(path: journal.path).read { db in
                try Row.fetchOne(db, sql: "SELECT warnings, warning_messages FROM inspection")
            })
        #expect(row["warnings"] as String == "seen-before,stale-trust-data")
        #expect(
            row["warning_messages"] as String
                == "seen-before: Seen once, last at \(seen.formatted(.iso8601)) on gate.\n"
                + "stale-trust-data: Keys line break old.")
        // A row the version before wrote (no list) reads as its codes with their sentences.
        try DatabaseQueue(path: journal.path).write { db in
            try db.execute(
                sql: """
                    INSERT INTO inspection (id, inspected_at, device, payload_digest, verdict, reason, signature,
                        warnings, warning_messages, decided_by)
                    VALUES ('older', 1900000000000, 'gate', x'01', 'valid', 'ok', 'valid', 'seen-before,issuer-quirk',
                        'seen-before: Seen twice.' || char(10) || 'issuer-quirk: A space at byte 8.', 'offline')
                    """)
        }
        let older = try #require(try journal.allInspections().last)
        #expect(older.id == "older")
        #expect(older.warnings.map(\.code) == ["seen-before", "issuer-quirk"])
        #expect(older.warnings.map(\.message) == ["Seen twice.", "A space at byte 8."])
    }

    @Test("inspections a full disk left in the reserve of the version before are journaled after an upgrade")
    func previousVersionReserve() throws {
        let paths = (journal: directory.path + "/u.journal.sqlite", reserve: directory.path + "/u.journal.reserve")
        do {
            // A frame as the version before wrote it: its own record type's JSON, bytes as arrays of numbers.
            let reserve = try JournalReserve(path: paths.reserve, capacity: 64 << 10)
            let frame =
                #"{"id":"from-reserve","inspectedAt":1800000000000,"device":"gate","symbology":"qr","#
                + #""payloadDigest":[1,2],"format":"fc1","issuer":"demo-transit","ticketID":[10,11],"#
                + #""verdict":"valid","reason":"ok","signature":"valid","warnings":"seen-before","#
                + #""warningMessages":"seen-before: Seen once.","decidedBy":"offline"}"#
            #expect(try reserve.write(Array(frame.utf8)))
        }
        let journal = try InspectionJournal(path: paths.journal, reservePath: paths.reserve)
        #expect(journal.pendingCount == 0)
        let adopted = try #require(try journal.allInspections().first)
        #expect(adopted.id == "from-reserve" && adopted.source == "gate" && adopted.payloadDigest == [1, 2])
        #expect(adopted.ticketID == [10, 11] && adopted.issuer == "demo-transit" && adopted.verdict == .valid)
        #expect(adopted.warnings.map(\.message) == ["Seen once."])
    }
}

@Suite("Inspection journal in its own file")
struct JournalFileTests {
    let directory = TemporaryDirectory()

    func verdict(ticket id: [UInt8], at seconds: TimeInterval) -> Verdict {
        Verdict(
            kind: .valid, reason: "reason", signature: .valid, format: .fc1, issuer: "demo-transit", keyID: "0a0b",
            ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: TicketID(id)),
            inspectedAt: Date(timeIntervalSince1970: seconds))
    }

    @Test("a store of schema v8 with 300 inspections is upgraded: every record moves to the journal file, once")
    func upgradesAV8Store() throws {
        let path = directory.path + "/old.sqlite"
        // A store as farecheck up to schema v8 wrote it: the journal inside the store file.
        let old = try DatabaseQueue(path: path)
        try TrustStore.migrator.migrate(old, upTo: TrustStore.lastMigrationWithJournal)
        let ids = (0..<300).map { "old-\($0)" }
        try old.write { db in
            // The table as v3 made it and v7 extended it: the store defines it no more (its one schema is the journal's).
            try db.execute(
                sql: """
                    CREATE TABLE inspection (id TEXT PRIMARY KEY, inspected_at INTEGER NOT NULL, device TEXT NOT NULL,
                        symbology TEXT, payload_digest BLOB NOT NULL, format TEXT, issuer TEXT, ticket_id BLOB,
                        verdict TEXT NOT NULL, reason TEXT NOT NULL, signature TEXT NOT NULL, warnings TEXT NOT NULL,
                        inspector TEXT, sent_at INTEGER, decided_by TEXT)
                    """)
            for (index, id) in ids.enumerated() {
                let record = InspectionRecord(
                    id: InspectionID(id), verdict: verdict(ticket: [UInt8(index % 7)], at: Double(1_000 + index)),
                    device: "gate", symbology: .aztec, payloadDigest: [UInt8(index % 256)])
                try db.execute(
                    sql: """
                        INSERT INTO inspection (id, inspected_at, device, symbology, payload_digest, format, issuer,
                            ticket_id, verdict, reason, signature, warnings, inspector, decided_by)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """,
                    arguments: [
                        id, record.inspectedAt, record.source.rawValue, record.symbology?.text,
                        Data(record.payloadDigest), record.format?.text, record.issuer?.rawValue,
                        record.ticketID.map { Data($0.bytes) }, record.verdict.text, record.reason,
                        record.signature.text, record.warningCodes, record.inspector, record.decidedBy?.text,
                    ])
            }
            try db.execute(sql: "UPDATE inspection SET sent_at = 5 WHERE id = 'old-0'")
        }
        try old.close()

        let store = try TrustStore(path: path)
        let moved = try store.inspectionJournal.allInspections()
        #expect(moved.map(\.id.rawValue).sorted() == ids.sorted())
        #expect(moved.first { $0.id == "old-0" }?.sentAt == 5)
        #expect(try store.inspectionJournal.unsentInspectionCount() == 299)
        // The store file no longer holds a journal; reopening does not copy anything again.
        let hasTable = try DatabaseQueue(path: path).read { db in try db.tableExists("inspection") }
        #expect(!hasTable)
        try store.close()
        #expect(try TrustStore(path: path).inspectionJournal.allInspections().count == 300)
    }

    @Test("an upload's acknowledgement of more records than one marking transaction holds marks every one of them")
    func marksInParts() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        let count = InspectionJournal.marksPerTransaction * 2 + 7
        for index in 0..<count {
            try store.inspectionJournal.write(
                InspectionRecord(
                    id: "m\(index)", verdict: verdict(ticket: [UInt8(index % 256)], at: Double(100 + index)),
                    device: "d", symbology: nil, payloadDigest: [3]))
        }
        try store.inspectionJournal.markInspectionsSent((0..<count - 3).map { "m\($0)" })
        try store.inspectionJournal.markInspectionsRefused(
            (count - 3..<count - 1).map { (id: "m\($0)", reason: "conflicting-record") })
        #expect(try store.inspectionJournal.unsentInspections(limit: 1000).map(\.id) == ["m\(count - 1)"])
        #expect(try store.inspectionJournal.refusedInspectionCount() == 2)
    }

    @Test(
        "a journal whose owner checkpoints: appends leave the log to it, its checkpoint (paced or not) copies it in",
        arguments: [nil, BulkWritePacing.standard])
    func checkpointsByOwner(pacing: BulkWritePacing?) throws {
        let paths = InspectionJournal.paths(besideStore: directory.path + "/c.sqlite")
        let journal = try InspectionJournal(
            path: paths.journal, reservePath: paths.reserve, checkpoints: .byOwner)
        // Well past the 1,000 pages at which SQLite would have checkpointed in an append.
        for index in 0..<1_500 {
            let record = InspectionRecord(
                verdict: verdict(ticket: [UInt8(index % 256), UInt8(index / 256)], at: Double(index)), device: "gate",
                symbology: .qr, payloadDigest: [UInt8](repeating: 7, count: 32))
            #expect(journal.append(record) == .journaled)
        }
        let copied = try journal.checkpoint(pacing: pacing)
        #expect(copied.logPages > 1_000)
        #expect(copied.copiedPages == copied.logPages)
        #expect(try journal.allInspections().count == 1_500)
        // The file alone (copied without its log) holds every record.
        let copy = directory.path + "/copy.journal.sqlite"
        try FileManager.default.copyItem(atPath: paths.journal, toPath: copy)
        let queue = try DatabaseQueue(path: copy)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection") } == 1_500)
        try queue.close()
        // The next append starts the log again from its beginning.
        _ = journal.append(
            InspectionRecord(
                verdict: verdict(ticket: [0xFF], at: 9_999), device: "gate", symbology: .qr, payloadDigest: [1]))
        #expect(try journal.checkpoint(pacing: pacing).logPages < 100)
        try journal.close()
    }

    @Test("a record written while a store transaction is open is not held up by it")
    func journalDoesNotWaitForTheStore() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        let record = InspectionRecord(
            verdict: verdict(ticket: [1], at: 100), device: "gate", symbology: .qr, payloadDigest: [1])
        // A sync page holds the store's writer; the journal is another file with its own writer.
        let durability = try store.write { db in
            try db.execute(sql: "INSERT INTO meta(name, value) VALUES ('held', 'by a sync page')")
            return store.inspectionJournal.append(record)
        }
        #expect(durability == .journaled)
        #expect(try store.inspectionJournal.allInspections().map(\.id) == [record.id])
    }

    @Test("the journal and the store sync every commit to disk from the moment they open (synchronous = FULL)")
    func syncsEveryCommit() throws {
        let store = try TrustStore(path: directory.path + "/f.sqlite")
        // 2: FULL. GRDB turns a pool's writer to NORMAL (1) when it sets up the write-ahead log, and a commit in
        // NORMAL survives a crash of the process but not a power cut.
        #expect(try store.inspectionJournal.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
        #expect(try store.write { db in try Int.fetchOne(db, sql: "PRAGMA synchronous") } == 2)
    }

    @Test("a replay lookup is answered while an upload's marks hold the journal's writer")
    func readsDoNotWaitForTheWriter() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        let record = InspectionRecord(
            verdict: verdict(ticket: [7], at: 100), device: "gate", symbology: .qr, payloadDigest: [1])
        try store.inspectionJournal.write(record)
        let journal = store.inspectionJournal
        // Inside a marking transaction (the writer's lock held): the lookup a scan makes before its own append.
        let found = try journal.writeUnsynced(ifAbsent: [InspectionID?]()) { db in
            try db.execute(sql: "UPDATE inspection SET sent_at = 1 WHERE id = ?", arguments: [record.id.rawValue])
            return try journal.pastInspections(
                ofTicket: [7], issuer: "demo-transit", since: Date(timeIntervalSince1970: 0)
            ).map(\.id)
        }
        #expect(found == [record.id])
        #expect(try store.inspectionJournal.unsentInspections(limit: 10).isEmpty)
        // The count of inspections waiting for the database, which a scan's status reads, does not wait either.
        #expect(try journal.writeUnsynced(ifAbsent: -1) { _ in journal.pendingCount } == 0)
    }

    @Test("one owner of the reserve: a second opener (a command beside the daemon) gets none until the first closes")
    func reserveHasOneOwner() throws {
        let paths = InspectionJournal.paths(besideStore: directory.path + "/s.sqlite")
        let daemon = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 65_536)
        #expect(daemon.reserveAvailable)
        let command = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 65_536)
        #expect(!command.reserveAvailable)
        // Both write the journal itself.
        #expect(
            command.append(
                InspectionRecord(
                    verdict: verdict(ticket: [3], at: 300), device: "cli", symbology: nil, payloadDigest: [3]))
                == .journaled)
        try daemon.close()
        try command.close()
        #expect(try InspectionJournal(path: paths.journal, reservePath: paths.reserve).reserveAvailable)
    }

    @Test("the reserve keeps framed records across reopening and drops a torn last frame")
    func reserveFrames() throws {
        let path = directory.path + "/r.reserve"
        do {
            let reserve = try JournalReserve(path: path, capacity: 4096)
            #expect(try reserve.write(Array("first".utf8)))
            #expect(try reserve.write(Array("second".utf8)))
            // No room for a frame larger than what is left.
            #expect(try !reserve.write([UInt8](repeating: 1, count: 5000)))
            reserve.close()
        }
        // A crash in the middle of a third write: its frame header is there, its body cut short.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(12 + 5 + 12 + 6))
        try handle.write(contentsOf: Data("FCJR".utf8) + Data([10, 0, 0, 0, 1, 2, 3, 4]) + Data("thi".utf8))
        try handle.close()
        let reopened = try JournalReserve(path: path, capacity: 4096)
        #expect(try reopened.records().map { String(decoding: $0, as: UTF8.self) } == ["first", "second"])
        #expect(reopened.count == 2)
        try reopened.clear()
        reopened.close()
        #expect(try JournalReserve(path: path, capacity: 4096).records().isEmpty)
    }

    @Test("only what journals makes the journal and its reserve: a command reads a missing journal as empty")
    func journalMadeOnlyByWhatJournals() throws {
        let path = directory.path + "/s.sqlite"
        let files = InspectionJournal.paths(besideStore: path)
        func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }
        do {
            let command = try TrustStore(path: path, journal: .usesExisting)
            #expect(!command.inspectionJournal.reserveAvailable)
            #expect(try command.inspectionJournal.unsentInspections(limit: 10).isEmpty)
            #expect(
                try command.inspectionJournal.unsentInspectionCount() == 0
                    && command.inspectionJournal.refusedInspectionCount() == 0)
            #expect(
                try command.inspectionJournal.recentInspections(limit: 10).isEmpty
                    && command.inspectionJournal.allInspections().isEmpty)
            try command.inspectionJournal.markInspectionsSent(["nothing"])
            try command.inspectionJournal.markInspectionsRefused([(id: "nothing", reason: "none")])
            #expect(try command.inspectionJournal.deleteSentInspections(before: Date(), limit: 10) == 0)
            let past = try command.inspectionJournal.pastInspections(
                ofTicket: [1], issuer: "demo-transit", since: .distantPast)
            #expect(past.isEmpty)
            #expect(try command.inspectionJournal.checkpoint().logPages == 0)
            #expect(try command.trustedTimeFloor()?.source == .release)
            try command.close()
        }
        #expect(exists(path))
        for file in [files.journal, files.journal + "-wal", files.journal + "-shm", files.reserve] {
            #expect(!exists(file), "\(file)")
        }
        // The daemon's opening makes both; a command then reads and marks what it journaled.
        let record = InspectionRecord(
            verdict: verdict(ticket: [1], at: 1_800_000_000), device: "gate", symbology: .qr, payloadDigest: [1])
        do {
            let daemon = try TrustStore(path: path, ifMissing: .refuse, journal: .journals)
            try daemon.inspectionJournal.write(record)
            try daemon.close()
        }
        #expect(exists(files.journal) && exists(files.reserve))
        let command = try TrustStore(path: path, ifMissing: .refuse, journal: .usesExisting)
        #expect(try command.inspectionJournal.unsentInspections(limit: 10).map(\.id) == [record.id])
        #expect(command.inspectionJournal.newestInspectedAt == record.inspectedDate)
        try command.inspectionJournal.markInspectionsSent([record.id])
        #expect(try command.inspectionJournal.unsentInspectionCount() == 0)
    }

    @Test("a store that must exist is refused where there is none, and nothing is made: no file, no folder")
    func refusesAMissingStore() throws {
        let path = directory.path + "/x/typo.sqlite"
        let error = try #require(throws: StoreError.self) { try TrustStore(path: path, ifMissing: .refuse) }
        #expect(error.code == .noStore && error.path == path)
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/x"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }
}
