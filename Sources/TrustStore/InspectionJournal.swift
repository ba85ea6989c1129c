import FareCore
import Foundation
import GRDB
import GRDBSQLite
import Synchronization
import ValidationAPI
import Verification

/// An inspection as the journal holds it: the record (what is kept of it and sent home), and what became of its
/// upload, which only this validator knows.
@dynamicMemberLookup
public struct JournalEntry: Sendable, Equatable {
    /// The inspection.
    public var record: InspectionRecord
    /// When the server acknowledged the record, Unix milliseconds; `nil` until then.
    public var sentAt: Int64?
    /// When the server refused the record, Unix milliseconds; a refused record is kept here and not sent again.
    public var refusedAt: Int64?
    /// The server's reason for refusing it (its code and sentence, e.g. `conflicting-record: …`).
    public var refusal: String?

    public init(record: InspectionRecord, sentAt: Int64? = nil, refusedAt: Int64? = nil, refusal: String? = nil) {
        self.record = record
        self.sentAt = sentAt
        self.refusedAt = refusedAt
        self.refusal = refusal
    }

    /// The record's fields, as the entry's own.
    public subscript<Value>(dynamicMember field: KeyPath<InspectionRecord, Value>) -> Value { record[keyPath: field] }
}

/// The journal's row of a record: the one mapping between the record and the table (``InspectionJournal/schema``).
extension InspectionRecord {
    /// The journal's columns, in the order of ``journalValues``. `warnings` (the codes) and `warning_messages` (a
    /// `code: sentence` line each) are written beside `warning_list` (the warnings as JSON, with their explanations),
    /// so that the version before, which reads only the first two, reads the journal as it did.
    static let journalColumns = [
        "id", "inspected_at", "device", "symbology", "payload_digest", "format", "issuer", "ticket_id", "verdict",
        "reason", "signature", "warnings", "inspector", "decided_by", "warning_messages", "clock_floor",
        "clock_floor_source", "first_use", "first_use_payload", "scan_received_at", "warning_list", "key_id",
    ]

    /// The record's row, a value for each of ``journalColumns`` in their order. `first_use` is `true` or NULL.
    var journalValues: [(any DatabaseValueConvertible)?] {
        [
            id.rawValue, inspectedAt, source.rawValue, symbology?.text, Data(payloadDigest), format?.text,
            issuer?.rawValue, ticketID.map { Data($0.bytes) }, verdict.text, reason, signature.text, warningCodes,
            inspector, decidedBy?.text ?? Decider.offline.rawValue,
            // One line each: a sentence never holds a line break of its own (the verifier writes them), but text from
            // the ticket could, so each is kept on its line.
            warnings.isEmpty
                ? nil : warnings.map { "\($0.code): \($0.message.replacing("\n", with: " "))" }.joined(separator: "\n"),
            clockFloor, clockFloorSource?.text, firstUse == true ? true : nil, payload.map { Data($0) }, scanReceivedAt,
            warnings.isEmpty ? nil : (try? JSONEncoder().encode(warnings)).map { String(decoding: $0, as: UTF8.self) },
            keyID?.rawValue,
        ]
    }

    /// The statement each append runs, with ``journalValues`` as its arguments. Prepared once per connection and bound
    /// by position: GRDB's record insert built the column list and its SQL again for every record (perf on the
    /// daemon's scans thread, issue 27).
    static let journalInsert =
        "INSERT OR IGNORE INTO inspection (\(journalColumns.joined(separator: ", "))) VALUES ("
        + Array(repeating: "?", count: journalColumns.count).joined(separator: ", ") + ")"

    /// Inserts the record into the journal's table, unless a record with its id is there already.
    func insertIntoJournal(_ db: Database) throws {
        try db.cachedStatement(sql: Self.journalInsert).execute(arguments: StatementArguments(journalValues))
    }

    /// The record of a journal row, written by this version or an earlier one (a row without the later columns).
    init(journalRow row: Row) {
        let codes: String = row["warnings"]
        let warningList = (row["warning_list"] as String?).flatMap {
            try? JSONDecoder().decode([VerdictWarning].self, from: Data($0.utf8))
        }
        self.init(
            id: InspectionID(row["id"] as String), inspectedAt: row["inspected_at"],
            scanReceivedAt: row["scan_received_at"],
            source: SourceName(row["device"] as String),
            symbology: (row["symbology"] as String?).map(Recorded.init(text:)),
            payloadDigest: Array(row["payload_digest"] as Data),
            format: (row["format"] as String?).map(Recorded.init(text:)),
            issuer: (row["issuer"] as String?).map(IssuerID.init),
            ticketID: (row["ticket_id"] as Data?).map { TicketID(Array($0)) },
            keyID: (row["key_id"] as String?).map(KeyID.init),
            verdict: Recorded(text: row["verdict"]), reason: row["reason"], signature: Recorded(text: row["signature"]),
            warnings: warningList ?? Self.warnings(codes: codes, journalMessages: row["warning_messages"]),
            inspector: row["inspector"],
            decidedBy: (row["decided_by"] as String?).map(Recorded.init(text:)) ?? Recorded(.offline),
            clockFloor: row["clock_floor"],
            clockFloorSource: (row["clock_floor_source"] as String?).map(Recorded.init(text:)),
            firstUse: (row["first_use"] as Bool?) == true ? true : nil,
            payload: (row["first_use_payload"] as Data?).map { Array($0) })
    }

    /// The warnings of a row written before `warning_list`: the codes, and the `code: sentence` lines when kept.
    static func warnings(codes: String, journalMessages: String?) -> [VerdictWarning] {
        let lines = journalMessages?.split(separator: "\n", omittingEmptySubsequences: false) ?? []
        let codeList = codes.split(separator: ",", omittingEmptySubsequences: false)
        let messages = zip(codeList, lines).map { code, line in
            line.hasPrefix(code + ": ") ? String(line.dropFirst(code.count + 2)) : String(line)
        }
        return warnings(codes: codes, messages: messages)
    }
}

extension JournalEntry {
    /// The entry of a journal row.
    init(row: Row) {
        self.init(
            record: InspectionRecord(journalRow: row), sentAt: row["sent_at"], refusedAt: row["refused_at"],
            refusal: row["refusal"])
    }
}

/// The inspection journal: its own SQLite file beside the store, so that a scan's journal write never waits for
/// a sync transaction on the store, with a reserve on disk for the time the disk is full.
///
/// `append` is what the daemon calls for every verdict before it is shown. It writes the record to the
/// database and syncs it (`synchronous = FULL`). When the database refuses (a full disk, an I/O error), the
/// record goes to the reserve file, synced too, so that it survives a crash or a kill; only when the reserve is
/// full as well is it held in memory. Before each append, and on `drain()`, whatever waits is moved into the
/// database first, oldest first, so the journal recovers by itself with the first write after space returns.
/// After a failed write the database connection is closed and a fresh one is opened for the next attempt.
public final class InspectionJournal: Sendable {
    /// Where an appended inspection is kept.
    public enum Durability: Sendable, Equatable {
        /// In the journal database, on disk.
        case journaled
        /// In the reserve file on disk: it moves into the database when the disk has room again.
        case reserved
        /// Only in this process's memory (the disk refused even the reserve): lost if the process dies.
        case heldInMemory
    }

    /// Who copies the journal's write-ahead log into its file (a checkpoint).
    public enum Checkpoints: Sendable, Equatable {
        /// SQLite, in whichever commit takes the log past 1,000 pages: an append now and then (the CLI).
        case automatic
        /// The owner, by calling ``checkpoint(pacing:)`` from outside the verdict path (the daemon, every second), so that
        /// no append copies the log and syncs the file before its verdict can be shown. SQLite still checkpoints
        /// in a commit once the log passes ``backstopPages``, should the owner fall behind.
        case byOwner
    }

    /// What this process does with the journal, and so whether opening it makes its files.
    public enum Role: Sendable, Equatable {
        /// It journals inspections (the daemon): the journal and its reserve are created when missing, the reserve
        /// is held for a full disk, and inspections a previous run left in it are moved into the journal.
        case journals
        /// It only reads the journal or marks what it holds (the commands, `farecheck sync`): a journal that does
        /// not exist reads as empty and is not created, and the reserve is neither made nor taken. (Writing a
        /// record with ``write(_:)`` journals, and makes the file.)
        case usesExisting
    }

    /// With ``Checkpoints/byOwner``: the log size, in pages, past which a commit checkpoints after all (64 MiB).
    public static let backstopPages = 16_384

    /// The journal database file.
    public let path: String
    /// Who checkpoints the write-ahead log.
    public let checkpoints: Checkpoints
    /// Whether this process journals (and so makes the files), or uses the journal only if it exists.
    public let role: Role
    /// The connection that checkpoints (``checkpoint(pacing:)``): its own, so that it never holds the writer's turn.
    private let checkpointer = Mutex<DatabaseQueue?>(nil)
    /// The reserve file, `nil` when it could not be made (then waiting records are held in memory).
    private let reserve: JournalReserve?
    private struct State {
        /// Records the disk refused, also the reserve; oldest first.
        var held: [InspectionRecord]
        /// Why the last write failed, until one succeeds.
        var failure: StoreError?
        /// The newest `inspectedAt` in the journal (database, reserve or memory), Unix milliseconds.
        var newest: Int64?
    }
    /// The writer's lock: held for a whole write transaction, and whenever `pool` is set.
    private let state: Mutex<State>
    /// `state.held.count`, for `pendingCount`.
    private let heldCount = Atomic<Int>(0)
    /// The open pool; `nil` before it opens and after a failed write or `close()`. Set under the writer's lock; a read
    /// takes it without that lock, so that it never waits for a write in progress (an append, or marks of an upload).
    private let pool: Mutex<DatabasePool?>
    /// The connection of replay detection's look-up (``pastInspections(ofTicket:issuer:since:)``), opened on first use.
    private let lookups: LookupConnection<JournalLookup>

    /// The reserve's size: about 9,000 inspections of ~450 bytes each.
    public static let defaultReserveBytes = 4 << 20

    /// The journal beside the store file at `storePath`: `farecheck.sqlite` → `farecheck.journal.sqlite`,
    /// and its reserve `farecheck.journal.reserve`.
    public static func paths(besideStore storePath: String) -> (journal: String, reserve: String) {
        let url = URL(fileURLWithPath: storePath)
        let base = url.pathExtension.isEmpty ? url : url.deletingPathExtension()
        return (base.path + ".journal.sqlite", base.path + ".journal.reserve")
    }

    /// Opens the journal at `path` with its reserve at `reservePath`. With ``Role/journals`` both are created when
    /// missing, and what the reserve holds is moved into the database when it can; with ``Role/usesExisting``
    /// neither is created, and the reserve is left alone.
    ///
    /// - Throws: `StoreError` when the database cannot be opened. A reserve that cannot be made is no reason to
    ///   refuse: the journal then holds waiting records in memory, as `reserveAvailable` tells.
    public init(
        path: String, reservePath: String, reserveBytes: Int = defaultReserveBytes,
        checkpoints: Checkpoints = .automatic, role: Role = .journals
    ) throws(StoreError) {
        self.path = path
        self.checkpoints = checkpoints
        self.role = role
        self.lookups = LookupConnection(path: path) { error, _ in Self.classify(error, path: path) }
        let reserve = role == .journals ? try? JournalReserve(path: reservePath, capacity: reserveBytes) : nil
        self.reserve = reserve
        var pool: DatabasePool?
        var failure: StoreError?
        if role == .journals || FileManager.default.fileExists(atPath: path) {
            do {
                pool = try Self.open(path, checkpoints: checkpoints)
            } catch  where error.code == .ioFailure && reserve != nil {
                // A full disk at start (a restart while it is full): inspections go to the reserve, and the
                // database is opened with the first write that finds room.
                failure = error
            }
        }
        state = Mutex(State(held: [], failure: failure))
        self.pool = Mutex(pool)
        if role == .journals {
            // Inspections kept in the reserve by an earlier run (a full disk, then a restart or a kill).
            try? drain()
        }
        noteNewestInDatabase()
    }

    /// The time of the newest inspection in the journal (its database, reserve or memory): the device clock at
    /// its last verdict, which the trusted-time floor counts (`TrustStore.trustedTimeFloor()`). Read from the
    /// database when the journal opens, then kept in memory as inspections are appended.
    public var newestInspectedAt: Date? {
        state.withLock { $0.newest }.map { Date(timeIntervalSince1970: TimeInterval($0) / 1000) }
    }

    /// Reads the newest inspection time from the database (an index read) into `newestInspectedAt`.
    private func noteNewestInDatabase() {
        guard
            let newest = try? read(
                ifAbsent: nil, { db in try Int64.fetchOne(db, sql: "SELECT max(inspected_at) FROM inspection") })
        else { return }
        state.withLock { $0.newest = max($0.newest ?? newest, newest) }
    }

    /// Gives up to `bytes` of the reserve's unused space back to the disk (see `JournalReserve.release`).
    func releaseReserve(_ bytes: Int) -> Int { reserve?.release(bytes) ?? 0 }

    /// Whether the reserve file exists, so that inspections survive a full disk and a crash together.
    public var reserveAvailable: Bool { reserve != nil }

    /// How many inspections wait to be written into the database (in the reserve or in memory).
    /// Read without the writer's lock, which a write in progress holds: the status a scan reads never waits for one.
    public var pendingCount: Int { (reserve?.count ?? 0) + heldCount.load(ordering: .relaxed) }

    /// Why the last write failed, while inspections wait; `nil` once they are written.
    public var lastFailure: StoreError? { state.withLock { $0.failure } }

    /// Appends `record`, after anything still waiting. Never throws: where the record ended up is returned.
    public func append(_ record: InspectionRecord) -> Durability {
        state.withLock { state in
            // Shown now, so part of the journal from now on, wherever it is kept.
            state.newest = max(state.newest ?? record.inspectedAt, record.inspectedAt)
            if (reserve?.count ?? 0) > 0 || !state.held.isEmpty {
                drainLocked(&state)
            }
            if state.held.isEmpty, (reserve?.count ?? 0) == 0 {
                do {
                    try writeLocked(&state, [record])
                    return .journaled
                } catch {
                    // Kept below.
                }
            }
            if state.held.isEmpty, let reserve, let body = try? JSONEncoder().encode(record),
                (try? reserve.write(Array(body))) == true
            {
                return .reserved
            }
            state.held.append(record)
            heldCount.store(state.held.count, ordering: .relaxed)
            return .heldInMemory
        }
    }

    /// Moves what waits (the reserve, then memory) into the database.
    ///
    /// - Throws: `StoreError` when the database still refuses; nothing is lost then.
    public func drain() throws(StoreError) {
        let failure = state.withLock { state -> StoreError? in
            drainLocked(&state)
            return (reserve?.count ?? 0) + state.held.count > 0 ? state.failure : nil
        }
        if let failure { throw failure }
    }

    private func drainLocked(_ state: inout State) {
        do {
            let reserved = try reserve?.records() ?? []
            let decoder = JSONDecoder()
            // A frame that does not decode was written by another farecheck version's reserve layout; keeping it
            // would block the journal for ever, so it is skipped (its checksum was valid, its content is not ours).
            let records = reserved.compactMap { frame in
                (try? decoder.decode(InspectionRecord.self, from: Data(frame)))
                    ?? (try? decoder.decode(EarlierReserveFrame.self, from: Data(frame)))?.record
            }
            try writeLocked(&state, records + state.held)
            try reserve?.clear()
            state.held.removeAll()
            heldCount.store(0, ordering: .relaxed)
            state.failure = nil
            reserve?.restore()
        } catch {
            // Still refused: everything stays where it is (the database write was one transaction).
        }
    }

    /// Writes `records` in one transaction (`INSERT OR IGNORE`: a record already there is not written twice).
    private func writeLocked(_ state: inout State, _ records: [InspectionRecord]) throws {
        do {
            try openPool().write { db in
                for record in records { try record.insertIntoJournal(db) }
            }
            if let latest = records.map(\.inspectedAt).max() { state.newest = max(state.newest ?? latest, latest) }
            state.failure = nil
        } catch {
            let failure = Self.classify(error, path: path)
            state.failure = failure
            // A fresh connection for the next attempt: nothing of the failed write's state is carried over.
            try? pool.withLock { $0 }?.close()
            pool.withLock { $0 = nil }
            throw failure
        }
    }

    /// The open pool, opened (and the file created) now if there is none; call it under the writer's lock.
    private func openPool() throws(StoreError) -> DatabasePool {
        if let pool = pool.withLock({ $0 }) { return pool }
        let opened = try Self.open(path, checkpoints: checkpoints)
        pool.withLock { $0 = opened }
        return opened
    }

    /// The open pool, opened now if there is none, but `nil` when the file does not exist and this process does
    /// not make it (``Role/usesExisting``); call it under the writer's lock.
    private func existingPool() throws(StoreError) -> DatabasePool? {
        if let pool = pool.withLock({ $0 }) { return pool }
        guard role == .journals || FileManager.default.fileExists(atPath: path) else { return nil }
        return try openPool()
    }

    /// Runs `body` on a connection of the journal, without waiting for a write in progress; in a read transaction,
    /// or, with `inTransaction: false`, without one (for `body` of a single statement). `absent` is the answer of
    /// a journal that does not exist (and is not made by reading it).
    func read<T: Sendable>(
        inTransaction: Bool = true, ifAbsent absent: T, _ body: @Sendable (Database) throws -> T
    ) throws(StoreError) -> T {
        do {
            guard
                let pool = try pool.withLock({ $0 }) ?? state.withLock({ _ throws(StoreError) in try existingPool() })
            else { return absent }
            return try inTransaction ? pool.read(body) : pool.unsafeRead(body)
        } catch let error as StoreError {
            throw error
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// Runs `body` in a write transaction (writing a record: the journal is made if it does not exist).
    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(StoreError) -> T {
        try withWriter(ifAbsent: nil) { try $0.write(body) }
    }

    /// Runs `body` in a write transaction whose commit is not synced to disk at once (`synchronous = NORMAL`): for
    /// what can be redone (marking records sent), so that it costs the appends that wait for the writer no fsync. A
    /// power cut may lose the transaction, never part of it; the next append's sync makes it durable. `absent` is
    /// the answer of a journal that does not exist (which has nothing to mark, and is not made for it).
    func writeUnsynced<T: Sendable>(ifAbsent absent: T, _ body: @Sendable (Database) throws -> T) throws(StoreError)
        -> T
    {
        try withWriter(ifAbsent: absent) { try $0.writeUnsyncedTransaction(body) }
    }

    /// Runs `write` on the pool (opened on first use) under the writer's lock, its errors classified. With `absent`,
    /// a journal that does not exist (and that this process does not make) is not created: `absent` is returned.
    private func withWriter<T: Sendable>(ifAbsent absent: T?, _ write: (DatabasePool) throws -> T) throws(StoreError)
        -> T
    {
        do {
            return try state.withLock { _ throws -> T in
                guard let absent else { return try write(openPool()) }
                guard let pool = try existingPool() else { return absent }
                return try write(pool)
            }
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// Copies the write-ahead log into the journal file as far as no reader needs it (`PASSIVE`), on a connection of
    /// its own: appends go on meanwhile, and the next one after a complete copy starts the log from its beginning.
    /// Blocking (it writes and syncs the file): call it off the verdict path. Returns the log's size in pages and
    /// how many of them are in the file.
    ///
    /// With `pacing`, the copy reaches the disk in paced steps (``BulkWritePacing``) instead of one `fsync` of all of
    /// it, so that an append's own `fsync` never waits behind much of it: the log is written back and synced first
    /// (marks committed unsynced are in it), then copied with `synchronous = OFF` while a read transaction holds the
    /// log's last frame (no append starts the log over meanwhile), then the file is written back and synced, as
    /// `TrustStore` does after a sync page.
    @discardableResult
    public func checkpoint(pacing: BulkWritePacing? = nil) throws(StoreError) -> (logPages: Int, copiedPages: Int) {
        // A journal that does not exist has no log, and checkpointing is no reason to make it.
        guard role == .journals || FileManager.default.fileExists(atPath: path) else { return (0, 0) }
        if let pacing {
            let writeBack = PacedWriteBack(pacing: pacing)
            do {
                try writeBack.flush(path + "-wal")
            } catch {
                throw StoreError(.ioFailure, "The journal could not be written to disk", path: path, underlying: error)
            }
            let path = self.path
            return try read(ifAbsent: (0, 0)) { _ -> (logPages: Int, copiedPages: Int) in
                let copied = try self.checkpointOwnConnection(synchronous: false)
                try writeBack.flush(path)
                return copied
            }
        }
        do {
            return try checkpointOwnConnection(synchronous: true)
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    /// `PASSIVE` on the checkpointing connection (opened on first use); with `synchronous: false`, SQLite neither
    /// syncs the log before the copy nor the file after it (the caller does).
    private func checkpointOwnConnection(synchronous: Bool) throws -> (logPages: Int, copiedPages: Int) {
        try checkpointer.withLock { checkpointer throws -> (logPages: Int, copiedPages: Int) in
            let queue: DatabaseQueue
            if let checkpointer {
                queue = checkpointer
            } else {
                var configuration = Configuration()
                configuration.label = "farecheck.journal.checkpoint"
                configuration.busyMode = .immediateError
                configuration.prepareDatabase { db in WriteAheadLog.keepOnClose(db) }
                queue = try DatabaseQueue(path: path, configuration: configuration)
                checkpointer = queue
            }
            return try queue.writeWithoutTransaction { db in
                if !synchronous { try db.execute(sql: "PRAGMA synchronous = OFF") }
                defer { if !synchronous { try? db.execute(sql: "PRAGMA synchronous = FULL") } }
                let result = try db.checkpoint(.passive)
                return (result.walFrameCount, result.checkpointedFrameCount)
            }
        }
    }

    /// Closes the journal: the write-ahead log is checkpointed into the file and removed.
    public func close() throws(StoreError) {
        do {
            lookups.close()
            try checkpointer.withLock { checkpointer in
                try checkpointer?.close()
                checkpointer = nil
            }
            try state.withLock { _ in
                guard let open = pool.withLock({ $0 }) else { return }
                try open.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
                try open.close()
                pool.withLock { $0 = nil }
            }
            reserve?.close()
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    private static func open(_ path: String, checkpoints: Checkpoints) throws(StoreError) -> DatabasePool {
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "farecheck.journal"
        configuration.prepareDatabase { db in
            // (A verdict that was shown must survive power loss: `syncingEveryCommit()` below, once the pool is open.)
            if checkpoints == .byOwner {
                try db.execute(sql: "PRAGMA wal_autocheckpoint = \(backstopPages)")
            }
            // A command that only reads opens and closes the journal without a write (see `WriteAheadLog`).
            WriteAheadLog.keepOnClose(db)
        }
        do {
            try PrivateFiles.prepare(path)
            let pool = try DatabasePool(path: path, configuration: configuration).syncingEveryCommit()
            try migrator.migrate(pool)
            return pool
        } catch {
            throw classify(error, path: path)
        }
    }

    /// The journal's schema, as numbered migrations: the one definition of the inspection table. (A store of v3–v8
    /// held a table of the same name, which ``adopt(inspectionsOf:)`` copies from; the store no longer defines it.)
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-inspection") { db in
            try db.create(table: "inspection") { t in
                t.column("id", .text).primaryKey()
                t.column("inspected_at", .integer).notNull()
                t.column("device", .text).notNull()
                t.column("symbology", .text)
                t.column("payload_digest", .blob).notNull()
                t.column("format", .text)
                t.column("issuer", .text)
                t.column("ticket_id", .blob)
                t.column("verdict", .text).notNull()
                t.column("reason", .text).notNull()
                t.column("signature", .text).notNull()
                t.column("warnings", .text).notNull()
                t.column("inspector", .text)
                t.column("sent_at", .integer)
                t.column("decided_by", .text)
            }
            // Replay detection looks a ticket up by issuer and id within a time window.
            try db.create(
                index: "inspection_by_ticket", on: "inspection", columns: ["issuer", "ticket_id", "inspected_at"])
            // Sync takes the unsent records oldest first.
            try db.create(
                index: "inspection_unsent", on: "inspection", columns: ["inspected_at"],
                condition: Column("sent_at") == nil)
        }
        migrator.registerMigration("v2-inspection-refusal") { db in
            // A record the server refused (it conflicts with one the device uploaded before): kept with the
            // server's reason, and no longer offered for upload.
            try db.alter(table: "inspection") { t in
                t.add(column: "refused_at", .integer)
                t.add(column: "refusal", .text)
            }
            // The refused are few: counted (`/metrics`, `/healthz`) without reading the journal.
            try db.create(
                index: "inspection_refused", on: "inspection", columns: ["refused_at"],
                condition: Column("refused_at") != nil)
        }
        migrator.registerMigration("v3-clock-floor") { db in
            // The trusted-time floor each verdict was judged against, beside the device clock (`inspected_at`).
            try db.alter(table: "inspection") { t in
                t.add(column: "clock_floor", .integer)
                t.add(column: "clock_floor_source", .text)
            }
            // The newest inspection is part of the trusted-time floor, read at every start.
            try db.create(index: "inspection_by_time", on: "inspection", columns: ["inspected_at"])
        }
        migrator.registerMigration("v4-warning-messages") { db in
            // The warnings as the inspector read them, beside their codes: which quirk, record and byte.
            try db.alter(table: "inspection") { t in t.add(column: "warning_messages", .text) }
        }
        migrator.registerMigration("v5-first-use") { db in
            // Whether the inspection passed a single-use ticket at a gate: uploaded as the ticket's first use.
            try db.alter(table: "inspection") { t in t.add(column: "first_use", .boolean) }
        }
        migrator.registerMigration("v6-first-use-payload") { db in
            // A first use's payload bytes, uploaded with it for the server to verify, and cleared once the server
            // has answered for the record: only unsent first uses hold one.
            try db.alter(table: "inspection") { t in t.add(column: "first_use_payload", .blob) }
        }
        migrator.registerMigration("v7-scan-received-at-warning-list") { db in
            // When the scan arrived, and the warnings as a list with their explanations (JSON), beside the codes and
            // `code: sentence` lines, which the version before reads.
            try db.alter(table: "inspection") { t in
                t.add(column: "scan_received_at", .integer)
                t.add(column: "warning_list", .text)
            }
        }
        migrator.registerMigration("v8-key-id") { db in
            // The key that verified the ticket, uploaded so that the server holds a key list change that would drop a
            // key tickets verified with lately.
            try db.alter(table: "inspection") { t in t.add(column: "key_id", .text) }
        }
        return migrator
    }

    /// Copies the inspections a store of schema v3–v8 kept in its own file into this journal, once: records
    /// already here are left as they are.
    func adopt(inspectionsOf storePath: String) throws(StoreError) {
        do {
            try state.withLock { _ in
                try openPool().writeWithoutTransaction { db in
                    try db.execute(sql: "ATTACH DATABASE ? AS old_store", arguments: [storePath])
                    defer { try? db.execute(sql: "DETACH DATABASE old_store") }
                    try db.inTransaction {
                        try db.execute(
                            sql: """
                                INSERT OR IGNORE INTO inspection (id, inspected_at, device, symbology, payload_digest,
                                    format, issuer, ticket_id, verdict, reason, signature, warnings, inspector, sent_at,
                                    decided_by)
                                SELECT id, inspected_at, device, symbology, payload_digest, format, issuer, ticket_id,
                                    verdict, reason, signature, warnings, inspector, sent_at, decided_by
                                FROM old_store.inspection
                                """)
                        return .commit
                    }
                }
            }
            noteNewestInDatabase()
        } catch {
            throw Self.classify(error, path: path)
        }
    }

    static func classify(_ error: any Error, path: String) -> StoreError {
        StoreError.remedied(classifyCause(error, path: path))
    }

    private static func classifyCause(_ error: any Error, path: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let dbError = error as? DatabaseError {
            switch dbError.resultCode {
            case .SQLITE_FULL:
                return StoreError(
                    .ioFailure, "The disk is full; the journal could not be written", path: path, underlying: dbError)
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return StoreError(.notAStore, "The journal file is damaged", path: path, underlying: dbError)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
                return StoreError(.cannotOpen, "Cannot open the journal", path: path, underlying: dbError)
            default:
                return StoreError(.ioFailure, "The journal failed", path: path, underlying: dbError)
            }
        }
        return StoreError(
            .ioFailure, "The journal failed", path: path,
            underlying: StoreError.Cause(description: String(describing: error)))
    }
}

extension InspectionJournal {
    /// Appends an inspection and returns once it is in the database, or throws: for the CLI and tools, which
    /// have nobody to show a verdict to while the disk is full. The daemon uses `append`.
    public func write(_ record: InspectionRecord) throws(StoreError) {
        try write([record])
    }

    /// Appends inspections in one transaction and returns once they are in the database, or throws (a backlog
    /// written by a tool or a bench, each record once).
    public func write(_ records: [InspectionRecord]) throws(StoreError) {
        try write { db in
            for record in records { try record.insertIntoJournal(db) }
        }
        guard let latest = records.map(\.inspectedAt).max() else { return }
        state.withLock { $0.newest = max($0.newest ?? latest, latest) }
    }

    /// The records waiting for the server: not acknowledged, and not refused.
    private static let waiting = "sent_at IS NULL AND refused_at IS NULL"

    /// Up to `limit` inspections not yet acknowledged by the server (nor refused by it), oldest first: the next
    /// upload batch.
    public func unsentInspections(limit: Int) throws(StoreError) -> [InspectionRecord] {
        try read(ifAbsent: []) { db in
            try Row.fetchAll(
                db, sql: "SELECT * FROM inspection WHERE \(Self.waiting) ORDER BY inspected_at LIMIT ?",
                arguments: [limit]
            ).map(InspectionRecord.init(journalRow:))
        }
    }

    /// Inspections marked sent or refused per transaction: appends wait for the writer between two such
    /// transactions only, never for a whole upload batch.
    static let marksPerTransaction = 50

    /// Marks inspections as acknowledged by the server, only after it said so.
    ///
    /// A few at a time, each transaction unsynced (``writeUnsynced(ifAbsent:_:)``): a mark lost to a power cut sends the
    /// record again, and the server stores an upload sent twice once.
    public func markInspectionsSent(_ ids: [InspectionID], at date: Date = Date()) throws(StoreError) {
        let stamp = Int64((date.timeIntervalSince1970 * 1000).rounded())
        for start in stride(from: 0, to: ids.count, by: Self.marksPerTransaction) {
            let part = Array(ids[start..<min(start + Self.marksPerTransaction, ids.count)])
            try writeUnsynced(ifAbsent: ()) { db in
                // The server holds the record: the first use's payload has done its work and is not kept.
                try db.execute(
                    sql: "UPDATE inspection SET sent_at = ?, first_use_payload = NULL WHERE id IN ("
                        + Array(repeating: "?", count: part.count).joined(separator: ", ") + ")",
                    arguments: StatementArguments([stamp] + part.map(\.rawValue)))
            }
        }
    }

    /// Marks inspections as refused by the server, each with its reason: they stay in the journal, are not
    /// offered for upload again, and are counted by `refusedInspectionCount()`.
    public func markInspectionsRefused(_ refusals: [(id: InspectionID, reason: String)], at date: Date = Date())
        throws(StoreError)
    {
        let stamp = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let refusals = refusals.map { (id: $0.id, reason: $0.reason) }
        // As marking sent: a few per unsynced transaction; a refusal lost to a power cut is asked again.
        for start in stride(from: 0, to: refusals.count, by: Self.marksPerTransaction) {
            let part = Array(refusals[start..<min(start + Self.marksPerTransaction, refusals.count)])
            try writeUnsynced(ifAbsent: ()) { db in
                for refusal in part {
                    try db.execute(
                        sql: """
                            UPDATE inspection SET refused_at = ?, refusal = ?, first_use_payload = NULL
                            WHERE id = ? AND sent_at IS NULL
                            """, arguments: [stamp, refusal.reason, refusal.id.rawValue])
                }
            }
        }
    }

    /// Deletes inspections the server acknowledged (`sent_at` set) that took place before `date`, oldest first, at
    /// most `limit`, and returns how many went. Never one waiting for the server, never one it refused (the
    /// journal holds the only copy of those), and never the newest inspection, whose time the trusted-time floor
    /// reads when the journal opens.
    ///
    /// As marking sent: a few per unsynced transaction, so that an append waits for a few rows' delete at most; a
    /// delete lost to a power cut is done again by the next call.
    public func deleteSentInspections(before date: Date, limit: Int) throws(StoreError) -> Int {
        let cutoff = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        var deleted = 0
        while deleted < limit {
            let step = min(Self.marksPerTransaction, limit - deleted)
            let count = try writeUnsynced(ifAbsent: 0) { db in
                try db.execute(
                    sql: """
                        DELETE FROM inspection WHERE id IN (
                            SELECT id FROM inspection
                            WHERE inspected_at < min(?, (SELECT max(inspected_at) FROM inspection))
                                AND sent_at IS NOT NULL
                            ORDER BY inspected_at LIMIT ?)
                        """, arguments: [cutoff, step])
                return db.changesCount
            }
            deleted += count
            if count < step { break }
        }
        return deleted
    }

    /// The keys (issuer, key id) that verified a ticket `valid` at or after `date`: a followed key list that would
    /// take one away is held for an operator.
    public func keysVerifying(since date: Date) throws(StoreError) -> [(issuer: IssuerID, keyID: KeyID)] {
        let since = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return try read(ifAbsent: []) { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT DISTINCT issuer, key_id FROM inspection
                    WHERE inspected_at >= ? AND verdict = 'valid' AND key_id IS NOT NULL AND issuer IS NOT NULL
                    """, arguments: [since]
            ).map { (IssuerID($0["issuer"] as String), KeyID($0["key_id"] as String)) }
        }
    }

    /// How many inspections wait for the server's acknowledgement (refused ones aside).
    public func unsentInspectionCount() throws(StoreError) -> Int {
        try read(ifAbsent: 0) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection WHERE \(Self.waiting)") ?? 0
        }
    }

    /// How many inspections the server refused (kept here with its reason, not sent again).
    public func refusedInspectionCount() throws(StoreError) -> Int {
        try read(ifAbsent: 0) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection WHERE refused_at IS NOT NULL") ?? 0
        }
    }

    /// The inspections the server refused, most recently refused first.
    public func refusedInspections(limit: Int) throws(StoreError) -> [JournalEntry] {
        try entries("WHERE refused_at IS NOT NULL ORDER BY refused_at DESC LIMIT ?", [limit])
    }

    /// The most recent inspections, newest first.
    public func recentInspections(limit: Int) throws(StoreError) -> [JournalEntry] {
        try entries("ORDER BY inspected_at DESC LIMIT ?", [limit])
    }

    /// Every inspection, oldest first (for export and tests).
    public func allInspections() throws(StoreError) -> [JournalEntry] {
        try entries("ORDER BY inspected_at, id", [])
    }

    /// The entries a `SELECT * FROM inspection` with `clauses` finds.
    private func entries(_ clauses: String, _ arguments: StatementArguments) throws(StoreError) -> [JournalEntry] {
        try read(ifAbsent: []) { db in
            try Row.fetchAll(db, sql: "SELECT * FROM inspection \(clauses)", arguments: arguments).map(
                JournalEntry.init)
        }
    }
}

extension InspectionJournal: InspectionHistory {
    /// The inspections of one ticket since `since`, newest first: what replay detection asks on every valid verdict,
    /// on the journal's look-up connection (``LookupConnection``), whose single `SELECT` never waits for a write.
    public func pastInspections(ofTicket ticketID: TicketID, issuer: IssuerID, since: Date) throws -> [PastInspection] {
        // The file made and migrated first: a journal the disk kept from opening at start opens here, as on any read.
        if !lookups.isOpen {
            // A journal that does not exist holds no inspection of the ticket, and a look-up does not make it.
            guard try pool.withLock({ $0 }) ?? state.withLock({ _ throws(StoreError) in try existingPool() }) != nil
            else { return [] }
        }
        let cutoff = Int64((since.timeIntervalSince1970 * 1000).rounded(.down))
        return try lookups.rows(
            .ticketInspections,
            bind: { statement in
                var code = SQLiteBinding.text(statement, 1, issuer.rawValue)
                if code == SQLITE_OK { code = SQLiteBinding.blob(statement, 2, ticketID.bytes) }
                if code == SQLITE_OK { code = sqlite3_bind_int64(statement, 3, cutoff) }
                return code
            },
            read: { statement in
                PastInspection(
                    id: SQLiteColumn.text(statement, 0).map(InspectionID.init),
                    inspectedAt: Date(timeIntervalSince1970: TimeInterval(sqlite3_column_int64(statement, 1)) / 1000),
                    device: SourceName(SQLiteColumn.text(statement, 2) ?? ""),
                    verdict: SQLiteColumn.text(statement, 3).flatMap { Recorded<VerdictKind>(text: $0).known })
            })
    }
}

/// A record as the reserve file held it up to the version that kept the journal's own record type (its field names,
/// bytes as arrays of numbers, the warnings as text): read so that inspections a full disk left in the reserve are
/// journaled after an upgrade too.
private struct EarlierReserveFrame: Decodable {
    var id: String
    var inspectedAt: Int64
    var device: String
    var symbology: Recorded<Symbology>?
    var payloadDigest: [UInt8]
    var format: Recorded<TicketFormat>?
    var issuer: String?
    var ticketID: [UInt8]?
    var verdict: Recorded<VerdictKind>
    var reason: String
    var signature: Recorded<SignatureStatus>
    var warnings: String
    var warningMessages: String?
    var inspector: String?
    var decidedBy: Recorded<Decider>
    var clockFloor: Int64?
    var clockFloorSource: Recorded<TrustedTimeSource>?
    var firstUse: Bool?
    var firstUsePayload: [UInt8]?

    var record: InspectionRecord {
        InspectionRecord(
            id: InspectionID(id), inspectedAt: inspectedAt, source: SourceName(device), symbology: symbology,
            payloadDigest: payloadDigest, format: format, issuer: issuer.map(IssuerID.init),
            ticketID: ticketID.map(TicketID.init), verdict: verdict, reason: reason, signature: signature,
            warnings: InspectionRecord.warnings(codes: warnings, journalMessages: warningMessages),
            inspector: inspector, decidedBy: decidedBy, clockFloor: clockFloor, clockFloorSource: clockFloorSource,
            firstUse: firstUse, payload: firstUsePayload)
    }
}
