import Foundation
import GRDB
import GRDBSQLite

/// The write-ahead log of the store and of the journal, kept on disk when the last connection closes.
///
/// SQLite deletes the log when its last connection closes (after a checkpoint), and GRDB writes a transaction
/// whenever it opens a `DatabasePool` on a database without a log (or with an empty one, groue/GRDB.swift#102).
/// Every run of a command that only reads, `farecheck verify`, therefore wrote to both files, synced ten times and
/// deleted two logs: about 90 ms on a virtual machine's disk, more than the verdict and the image together. With the
/// log kept, a store that has not changed is opened and closed without a write.
///
/// The main file still holds everything: the close's checkpoint copies the log into it first, as before, so a backup
/// may copy the main file alone; `TrustStore.close()` and `InspectionJournal.close()` still empty the log.
enum WriteAheadLog {
    /// A log above this size is emptied when a ``TrustStore`` goes away (a sync or an import of a million
    /// revocations can leave hundreds of megabytes), so that keeping it never keeps much disk.
    static let keptSizeLimit = 16 << 20

    /// Asks SQLite to keep `db`'s log file when the last connection closes (`SQLITE_FCNTL_PERSIST_WAL`). A file
    /// system that cannot (another VFS) keeps deleting it, which costs time and nothing else.
    static func keepOnClose(_ db: Database) {
        var keep: Int32 = 1
        _ = sqlite3_file_control(db.sqliteConnection, "main", SQLITE_FCNTL_PERSIST_WAL, &keep)
    }

    /// The size of the log beside the database at `path`, 0 when there is none.
    static func size(besideDatabase path: String) -> Int {
        var status = stat()
        guard stat(path + "-wal", &status) == 0 else { return 0 }
        return Int(status.st_size)
    }
}
