import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The statements a ``LookupConnection`` prepares: one case each, numbered from 0 (the case is the slot of its
/// prepared statement).
protocol LookupStatement: RawRepresentable<Int>, CaseIterable, Sendable {
    var sql: String { get }
}

/// A database's connection for the look-ups every verdict makes, each one statement through SQLite's C API, prepared
/// once: the store's revocations and data version (``StoreLookup``), the journal's earlier inspections of a ticket
/// (``JournalLookup``).
///
/// Through GRDB's pool, a look-up took a reader from the pool and gave it back (a semaphore, two dispatch queues,
/// generic code resolved at run time) and read its row by column name: the pool's part cost about twice SQLite's
/// indexed read (perf on the daemon's scans thread, issue 27). This connection is the database's file opened once
/// more, read-only in effect (`query_only`). Each `SELECT`, outside an explicit transaction, is atomic on its own, so it
/// sees a commit of another connection or process whole or not at all, as the pool's readers do.
///
/// It opens on its first look-up (or ``open()``), once the owner's pool has made and migrated the file; after
/// ``close()`` a look-up fails.
final class LookupConnection<Statement: LookupStatement>: Sendable {
    private let path: String
    /// The owner's reading of a failure: `opening` when the connection could not be opened.
    private let classify: @Sendable (DatabaseError, _ opening: Bool) -> StoreError
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var connection: OpaquePointer? = nil
        /// The prepared statements, by ``LookupStatement``'s raw value.
        var statements: [OpaquePointer?] = Array(repeating: nil, count: Statement.allCases.count)
        var closed = false

        deinit {
            for statement in statements { sqlite3_finalize(statement) }
            sqlite3_close_v2(connection)
        }
    }

    init(path: String, classify: @escaping @Sendable (DatabaseError, _ opening: Bool) -> StoreError) {
        self.path = path
        self.classify = classify
        self.state = Mutex(State())
    }

    /// Opens the file at `path` (it exists: the owner's pool made it) unless it is open, waiting up to 5 s for a lock
    /// as the pools do, and keeping the write-ahead log when it closes (``WriteAheadLog``).
    func open() throws(StoreError) {
        let outcome = state.withLock { state in Self.open(&state, path: path) }
        if case .failure(let error) = outcome { throw classify(error, true) }
    }

    /// Whether the connection is open.
    var isOpen: Bool { state.withLock { $0.connection != nil } }

    /// The open connection, opened now if it is not.
    private static func open(_ state: inout State, path: String) -> Result<OpaquePointer, DatabaseError> {
        if let connection = state.connection { return .success(connection) }
        if state.closed {
            return .failure(DatabaseError(resultCode: .SQLITE_MISUSE, message: "the database is closed", sql: nil))
        }
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            defer { sqlite3_close_v2(connection) }
            return .failure(failure(code, connection, sql: nil))
        }
        sqlite3_busy_timeout(connection, 5_000)
        var keep: Int32 = 1
        _ = sqlite3_file_control(connection, "main", SQLITE_FCNTL_PERSIST_WAL, &keep)
        let readOnly = sqlite3_exec(connection, "PRAGMA query_only = 1", nil, nil, nil)
        guard readOnly == SQLITE_OK else {
            defer { sqlite3_close_v2(connection) }
            return .failure(failure(readOnly, connection, sql: nil))
        }
        state.connection = connection
        return .success(connection)
    }

    /// Closes the connection; a look-up after this fails.
    func close() {
        // The old state's deinit finalizes its statements and closes its connection.
        state.withLock { state in
            state = State()
            state.closed = true
        }
    }

    /// The first row of `statement` (bound by `bind`) as `read` makes it, `nil` when there is none.
    func first<Value: Sendable>(
        _ statement: Statement, bind: @Sendable (OpaquePointer) -> Int32, read: @Sendable (OpaquePointer) -> Value
    ) throws(StoreError) -> Value? {
        try rows(statement, limit: 1, bind: bind, read: read).first
    }

    /// Up to `limit` rows of `statement` (bound by `bind`), each as `read` makes it, in the statement's order.
    func rows<Value: Sendable>(
        _ statement: Statement, limit: Int = .max, bind: @Sendable (OpaquePointer) -> Int32,
        read: @Sendable (OpaquePointer) -> Value
    ) throws(StoreError) -> [Value] {
        let path = path
        let outcome: Result<[Value], DatabaseError> = state.withLock { state in
            let connection: OpaquePointer
            switch Self.open(&state, path: path) {
            case .success(let open): connection = open
            case .failure(let error): return .failure(error)
            }
            let sql = statement.sql
            let prepared: OpaquePointer
            if let kept = state.statements[statement.rawValue] {
                prepared = kept
            } else {
                var made: OpaquePointer?
                let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &made, nil)
                guard code == SQLITE_OK, let made else {
                    sqlite3_finalize(made)
                    return .failure(Self.failure(code, connection, sql: sql))
                }
                state.statements[statement.rawValue] = made
                prepared = made
            }
            defer {
                sqlite3_reset(prepared)
                sqlite3_clear_bindings(prepared)
            }
            var code = bind(prepared)
            guard code == SQLITE_OK else { return .failure(Self.failure(code, connection, sql: sql)) }
            var values: [Value] = []
            while values.count < limit {
                code = sqlite3_step(prepared)
                switch code {
                case SQLITE_DONE: return .success(values)
                case SQLITE_ROW: values.append(read(prepared))
                default: return .failure(Self.failure(code, connection, sql: sql))
                }
            }
            return .success(values)
        }
        switch outcome {
        case .success(let values): return values
        case .failure(let error): throw classify(error, false)
        }
    }

    private static func failure(_ code: Int32, _ connection: OpaquePointer?, sql: String?) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code),
            message: connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory", sql: sql)
    }
}

/// Column values read through SQLite's C API.
enum SQLiteColumn {
    /// Column `index` as text (its whole UTF-8), `nil` when NULL.
    static func text(_ statement: OpaquePointer, _ index: Int32) -> String? {
        sqlite3_column_text(statement, index).map { text in
            String(
                decoding: UnsafeRawBufferPointer(
                    start: UnsafeRawPointer(text), count: Int(sqlite3_column_bytes(statement, index))),
                as: UTF8.self)
        }
    }
}

/// The store's look-ups: the two revocations of each verdict (the ticket's, the key's) and the store's data version,
/// which tells ``StoreTrust`` whether the keys it looked up before still hold.
enum StoreLookup: Int, LookupStatement {
    case ticket, key, dataVersion

    var sql: String {
        switch self {
        case .dataVersion: "PRAGMA data_version"
        case .ticket: "SELECT reason, revoked_at FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?"
        case .key: "SELECT reason, revoked_at FROM revoked_key WHERE format = ? AND issuer = ? AND key_id = ?"
        }
    }
}

extension LookupConnection where Statement == StoreLookup {
    /// A number that changes whenever another connection (the pool's writer, `farecheck sync` in another process)
    /// has committed a change to the store since this one last asked: `PRAGMA data_version`.
    func dataVersion() throws(StoreError) -> Int64 {
        try first(.dataVersion, bind: { _ in SQLITE_OK }, read: { sqlite3_column_int64($0, 0) }) ?? 0
    }

    /// The revocation of ticket `ticketID` of `issuer`, if any.
    func ticket(issuer: String, ticketID: [UInt8]) throws(StoreError) -> (reason: String?, revokedAt: Int64)? {
        try first(
            .ticket,
            bind: { statement in
                var code = SQLiteBinding.text(statement, 1, issuer)
                if code == SQLITE_OK { code = SQLiteBinding.blob(statement, 2, ticketID) }
                return code
            }, read: Self.revocation)
    }

    /// The revocation of key `keyID` of `issuer` in the family stored as `format`, if any.
    func key(format: String, issuer: String, keyID: String) throws(StoreError) -> (reason: String?, revokedAt: Int64)? {
        try first(
            .key,
            bind: { statement in
                var code = SQLiteBinding.text(statement, 1, format)
                if code == SQLITE_OK { code = SQLiteBinding.text(statement, 2, issuer) }
                if code == SQLITE_OK { code = SQLiteBinding.text(statement, 3, keyID) }
                return code
            }, read: Self.revocation)
    }

    /// `reason, revoked_at` of a revocation's row.
    private static func revocation(_ statement: OpaquePointer) -> (reason: String?, revokedAt: Int64) {
        (SQLiteColumn.text(statement, 0), sqlite3_column_int64(statement, 1))
    }
}

/// The journal's look-up: the earlier inspections of a ticket, what replay detection asks on every valid verdict.
enum JournalLookup: Int, LookupStatement {
    case ticketInspections

    var sql: String {
        switch self {
        case .ticketInspections:
            """
            SELECT id, inspected_at, device, verdict FROM inspection
            WHERE issuer = ? AND ticket_id = ? AND inspected_at >= ? ORDER BY inspected_at DESC
            """
        }
    }
}
