import Foundation
import GRDB
import GRDBSQLite
import TicketFormats

/// One prepared statement over SQLite's C API, for bulk work: binding through GRDB's arguments (an array of
/// existentials made into `DatabaseValue`s per row) costs more than a row's insert or read.
final class SQLiteStatement {
    private let connection: OpaquePointer
    private let handle: OpaquePointer
    let sql: String

    init(_ connection: OpaquePointer, _ sql: String) throws {
        self.connection = connection
        self.sql = sql
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            throw Self.error(connection, code, sql)
        }
        handle = statement
    }

    deinit { sqlite3_finalize(handle) }

    static func error(_ connection: OpaquePointer, _ code: Int32, _ sql: String) -> DatabaseError {
        DatabaseError(
            resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw Self.error(connection, code, sql) }
    }

    func bind(_ index: Int32, _ value: Int64) throws { try check(sqlite3_bind_int64(handle, index, value)) }

    /// Text, its whole UTF-8, as a copy.
    func bind(_ index: Int32, _ text: String) throws { try check(SQLiteBinding.text(handle, index, text)) }

    /// A blob (an empty one is an empty blob, not NULL), as a copy.
    func bind(_ index: Int32, blob bytes: some ContiguousBytes) throws {
        try check(SQLiteBinding.blob(handle, index, bytes))
    }

    /// Runs a statement that returns no rows, then resets it for the next binding.
    func execute() throws {
        let code = sqlite3_step(handle)
        sqlite3_reset(handle)
        guard code == SQLITE_DONE else { throw Self.error(connection, code, sql) }
    }

    /// Steps to the next row: true when there is one, false at the end.
    func step() throws -> Bool {
        let code = sqlite3_step(handle)
        if code == SQLITE_ROW { return true }
        if code == SQLITE_DONE { return false }
        throw Self.error(connection, code, sql)
    }

    func reset() { sqlite3_reset(handle) }

    func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

    func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(handle, column) else { return "" }
        return String(cString: pointer)
    }

    /// The column as a cell of its storage class.
    func cell(_ column: Int32) -> SQLiteCell {
        switch sqlite3_column_type(handle, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let pointer = sqlite3_column_text(handle, column) else { return .text([]) }
            return .text(Array(UnsafeBufferPointer(start: pointer, count: count)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, column))
            guard let pointer = sqlite3_column_blob(handle, column) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default:
            return .null
        }
    }
}
