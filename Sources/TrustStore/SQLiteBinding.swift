import Foundation
import GRDBSQLite

/// Values bound to a statement through SQLite's C API, each as a copy (`SQLITE_TRANSIENT`): the Swift buffers do not
/// outlive the call. For the paths where GRDB's arguments (existentials made into `DatabaseValue`s) cost more than
/// the statement itself.
enum SQLiteBinding {
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// The whole UTF-8, NUL bytes included, as GRDB binds text; an empty string is text, not NULL.
    static func text(_ statement: OpaquePointer, _ index: Int32, _ text: String) -> Int32 {
        var text = text
        return text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, transient) }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) {
                sqlite3_bind_text(statement, index, $0, Int32(utf8.count), transient)
            }
        }
    }

    /// The bytes as a blob; no bytes are an empty blob (a nil base would bind NULL).
    static func blob(_ statement: OpaquePointer, _ index: Int32, _ bytes: some ContiguousBytes) -> Int32 {
        bytes.withUnsafeBytes { buffer in
            buffer.baseAddress.map { sqlite3_bind_blob(statement, index, $0, Int32(buffer.count), transient) }
                ?? sqlite3_bind_zeroblob(statement, index, 0)
        }
    }
}
