import Foundation
import GRDB
import GRDBSQLite
import Synchronization

/// The store's connection for the look-ups every verdict makes: the two revocations (the ticket's, the key's) and the
/// store's data version, which tells ``StoreTrust`` whether the keys it looked up before still hold. Each is one
/// statement through SQLite's C API, prepared once.
///
/// Through GRDB's pool, a look-up took a reader from the pool and gave it back (a semaphore, two dispatch queues,
/// generic code resolved at run time) and read its row by column name: the pool's part cost about twice SQLite's
/// indexed read (perf on the daemon's scans thread, issue 27). This connection is the store's file opened once more,
/// read-only in effect (`query_only`). Each `SELECT`, outside an explicit transaction, is atomic on its own, so it
/// sees a sync page committed by another connection or process whole or not at all, as the pool's readers do.
final class LookupConnection: Sendable {
    private let path: String
    private let state: Mutex<State>

    private struct State: ~Copyable {
        var connection: OpaquePointer? = nil
        /// The prepared statements, by ``Lookup``'s raw value.
        var statements: [OpaquePointer?] = [nil, nil, nil]

        deinit {
            for statement in statements { sqlite3_finalize(statement) }
            sqlite3_close_v2(connection)
        }
    }

    /// The look-ups, each with its statement.
    private enum Lookup: Int {
        case ticket, key, dataVersion

        var sql: String {
            switch self {
            case .dataVersion: "PRAGMA data_version"
            case .ticket: "SELECT reason, revoked_at FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?"
            case .key: "SELECT reason, revoked_at FROM revoked_key WHERE format = ? AND issuer = ? AND key_id = ?"
            }
        }
    }

    /// Opens the store at `path` once more (it exists: the pool opened it), waiting up to 5 s for a lock as the
    /// pool does, and keeping the write-ahead log when it closes (``WriteAheadLog``).
    init(path: String) throws(StoreError) {
        self.path = path
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nil)
        let state = State(connection: connection)
        guard code == SQLITE_OK, let connection else {
            throw TrustStore.classify(Self.failure(code, connection, sql: nil), path: path, opening: true)
        }
        sqlite3_busy_timeout(connection, 5_000)
        var keep: Int32 = 1
        _ = sqlite3_file_control(connection, "main", SQLITE_FCNTL_PERSIST_WAL, &keep)
        let readOnly = sqlite3_exec(connection, "PRAGMA query_only = 1", nil, nil, nil)
        guard readOnly == SQLITE_OK else {
            throw TrustStore.classify(Self.failure(readOnly, connection, sql: nil), path: path, opening: true)
        }
        self.state = Mutex(state)
    }

    /// Closes the connection; a look-up after this fails.
    func close() {
        // The old state's deinit finalizes its statements and closes its connection.
        state.withLock { state in state = State() }
    }

    /// A number that changes whenever another connection (the pool's writer, `farecheck sync` in another process)
    /// has committed a change to the store since this one last asked: `PRAGMA data_version`.
    func dataVersion() throws(StoreError) -> Int64 {
        try step(.dataVersion, read: { sqlite3_column_int64($0, 0) }, bind: { _ in SQLITE_OK }) ?? 0
    }

    /// The revocation of ticket `ticketID` of `issuer`, if any.
    func ticket(issuer: String, ticketID: [UInt8]) throws(StoreError) -> (reason: String?, revokedAt: Int64)? {
        try step(.ticket, read: Self.revocation) { statement in
            var code = SQLiteBinding.text(statement, 1, issuer)
            if code == SQLITE_OK { code = SQLiteBinding.blob(statement, 2, ticketID) }
            return code
        }
    }

    /// The revocation of key `keyID` of `issuer` in the family stored as `format`, if any.
    func key(format: String, issuer: String, keyID: String) throws(StoreError) -> (reason: String?, revokedAt: Int64)? {
        try step(.key, read: Self.revocation) { statement in
            var code = SQLiteBinding.text(statement, 1, format)
            if code == SQLITE_OK { code = SQLiteBinding.text(statement, 2, issuer) }
            if code == SQLITE_OK { code = SQLiteBinding.text(statement, 3, keyID) }
            return code
        }
    }

    /// `reason, revoked_at` of a revocation's row.
    private static func revocation(_ statement: OpaquePointer) -> (reason: String?, revokedAt: Int64) {
        let reason = sqlite3_column_text(statement, 0).map { text in
            String(
                decoding: UnsafeRawBufferPointer(
                    start: UnsafeRawPointer(text), count: Int(sqlite3_column_bytes(statement, 0))),
                as: UTF8.self)
        }
        return (reason, sqlite3_column_int64(statement, 1))
    }

    /// Binds, steps once and reads the first row (`nil` when there is none) with the statement of `lookup`
    /// (prepared on first use).
    private func step<Value: Sendable>(
        _ lookup: Lookup, read: @Sendable (OpaquePointer) -> Value, bind: @Sendable (OpaquePointer) -> Int32
    ) throws(StoreError) -> Value? {
        let path = path
        let sql = lookup.sql
        let outcome: Result<Value?, DatabaseError> = state.withLock { state in
            guard let connection = state.connection else {
                return .failure(DatabaseError(resultCode: .SQLITE_MISUSE, message: "the store is closed", sql: sql))
            }
            if state.statements[lookup.rawValue] == nil {
                var prepared: OpaquePointer?
                let code = sqlite3_prepare_v3(
                    connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
                guard code == SQLITE_OK, prepared != nil else {
                    sqlite3_finalize(prepared)
                    return .failure(Self.failure(code, connection, sql: sql))
                }
                state.statements[lookup.rawValue] = prepared
            }
            guard let statement = state.statements[lookup.rawValue] else { return .success(nil) }
            defer {
                sqlite3_reset(statement)
                sqlite3_clear_bindings(statement)
            }
            var code = bind(statement)
            guard code == SQLITE_OK else { return .failure(Self.failure(code, connection, sql: sql)) }
            code = sqlite3_step(statement)
            switch code {
            case SQLITE_DONE:
                return .success(nil)
            case SQLITE_ROW:
                return .success(read(statement))
            default:
                return .failure(Self.failure(code, connection, sql: sql))
            }
        }
        switch outcome {
        case .success(let value): return value
        case .failure(let error): throw TrustStore.classify(error, path: path, opening: false)
        }
    }

    private static func failure(_ code: Int32, _ connection: OpaquePointer?, sql: String?) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code),
            message: connection.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory", sql: sql)
    }
}
