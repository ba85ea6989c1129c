import FareCore
import Foundation
import GRDB
import GRDBSQLite
import TicketFormats

/// The two published blocklist files, read as they come: the VDV-KA blocklist (an SQLite file) and the DTVG UIC
/// blocklist (a zip holding `blacklistuic.csv`). Shared by `farecheck revoke` and `farecheck-server revoke`.
///
/// Each reader streams the entries to its caller one at a time (never the whole list in memory) and throws a
/// `FormatError` saying what is wrong and where, for a file that is not what it should be.
public enum BlocklistFile {
    /// The largest file read: far above a real list (a million entries are a few tens of MB).
    public static let maximumFileBytes = 1 << 30

    /// Reads the entries of `list` from the file at `path`.
    ///
    /// - Parameters:
    ///   - progress: Called now and then with the work done and the whole (rows of the table, bytes of the CSV).
    ///   - entry: Called for each entry with its row (VDV, in the sorted order) or line (DTVG).
    /// - Returns: Rows read, and rows left out because a higher instance of the same VDV number applies.
    @discardableResult
    public static func read(
        _ list: BlocklistKind, path: String, progress: ((_ done: Int, _ total: Int) -> Void)? = nil,
        entry: (BlocklistEntry, _ position: Int) throws -> Void
    ) throws -> (rows: Int, superseded: Int) {
        switch list {
        case .vdvKA:
            return try VDVBlocklistFile.read(path: path, progress: progress) { try entry(.vdv($0), $1) }
        case .dtvgUIC:
            let bytes = try contents(of: path)
            var rows = 0
            // The caller's error (a store that refused a row) stops the reader, and is what is thrown.
            var callerError: (any Error)?
            do {
                try DTVGBlocklistFile.readEntries(zip: bytes, progress: progress) { (item, line) throws(FormatError) in
                    rows += 1
                    do {
                        try entry(.dtvg(item), line)
                    } catch {
                        callerError = error
                        throw .malformed("stopped by the caller")
                    }
                }
            } catch {
                throw callerError ?? error
            }
            return (rows, 0)
        }
    }

    /// The file's bytes, refused when it is missing, unreadable or absurdly large.
    static func contents(of path: String) throws(FormatError) -> [UInt8] {
        let attributes = try? FileManager.default.attributesOfItem(atPath: path)
        guard let attributes, attributes[.type] as? FileAttributeType != .typeDirectory else {
            throw .malformed("cannot read the file (it does not exist or is not a file)")
        }
        if let size = attributes[.size] as? NSNumber, size.intValue > maximumFileBytes {
            throw .malformed(
                "the file is \(size.intValue) bytes, more than the \(maximumFileBytes >> 20) MiB a list may be")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .malformed("cannot read the file")
        }
        return Array(data)
    }
}

/// The VDV-KA blocklist: an SQLite database with the table `blacklist(type, orgId, number, instanceNum, lockMode)`.
///
/// Opened read-only; the table's rows are read sorted by SQLite (`VDVBlocklistRows.orderedQuery`), so that of
/// several rows for one number the one with the highest `instanceNum` is kept without holding the list in memory.
public enum VDVBlocklistFile {
    /// Reads the entries (see `BlocklistFile.read`).
    public static func read(
        path: String, progress: ((_ done: Int, _ total: Int) -> Void)? = nil,
        entry: (VDVBlocklistEntry, _ row: Int) throws -> Void
    ) throws -> (rows: Int, superseded: Int) {
        // Checked before SQLite sees it: SQLite opens any file lazily and would call a text file a damaged database.
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FormatError.malformed("cannot read the file (it does not exist or is not readable)")
        }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        guard header == Data("SQLite format 3\0".utf8) else {
            throw FormatError.malformed(
                header.isEmpty ? "the file is empty, not an SQLite database" : "the file is not an SQLite database")
        }
        var connection: OpaquePointer?
        let flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        let opened = sqlite3_open_v2(path, &connection, flags, nil)
        defer { sqlite3_close_v2(connection) }
        guard opened == SQLITE_OK, let connection else {
            throw FormatError.malformed("SQLite cannot open the file (error \(opened))")
        }
        func explain(_ error: any Error) -> FormatError {
            if let error = error as? DatabaseError {
                switch error.resultCode {
                case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                    return .malformed("the SQLite database is damaged (\(error.message ?? "corrupt"))")
                default:
                    return .malformed("SQLite could not read the file: \(error.message ?? "\(error.resultCode)")")
                }
            }
            return .malformed("\(error)")
        }
        var total = 0
        do {
            let tables = try SQLiteStatement(
                connection, "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'blacklist' COLLATE NOCASE")
            guard try tables.step() else {
                throw FormatError.malformed("the SQLite database has no table blacklist: it is not a VDV-KA blocklist")
            }
            let info = try SQLiteStatement(connection, "PRAGMA table_info(blacklist)")
            var names: Set<String> = []
            while try info.step() { names.insert(info.text(1).lowercased()) }
            let missing = VDVBlocklistRows.columns.filter { !names.contains($0.lowercased()) }
            guard missing.isEmpty else {
                throw FormatError.malformed(
                    "the table blacklist lacks the column\(missing.count == 1 ? "" : "s") "
                        + "\(missing.joined(separator: ", ")) (it needs type, orgId, number, instanceNum, lockMode)")
            }
            let count = try SQLiteStatement(connection, "SELECT count(*) FROM blacklist")
            if try count.step() { total = Int(count.int64(0)) }
        } catch let error as FormatError {
            throw error
        } catch {
            throw explain(error)
        }
        var rows = VDVBlocklistRows()
        var row = 0
        // The caller's error (a store that refused a row) stops the reading, and is what is thrown.
        var callerError: (any Error)?
        do {
            let query = try SQLiteStatement(connection, VDVBlocklistRows.orderedQuery)
            progress?(0, total)
            while try query.step() {
                row += 1
                let cells = (0..<5).map { query.cell(Int32($0)) }
                if let accepted = try rows.accept(cells, row: row) {
                    do {
                        try entry(accepted, row)
                    } catch {
                        callerError = error
                        throw FormatError.malformed("stopped by the caller")
                    }
                }
                if row % 50_000 == 0 { progress?(row, total) }
            }
            progress?(row, total)
        } catch {
            if let callerError { throw callerError }
            if let error = error as? FormatError { throw error }
            throw explain(error)
        }
        return (rows.rowCount, rows.supersededCount)
    }
}
