import Foundation
import GRDB
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// The server's store in one SQLite file (GRDB): WAL, `synchronous=FULL`, numbered migrations.
///
/// The default backend, so that `farecheck-server serve --db server.sqlite` works on a laptop.
public enum SQLiteServerStore {
    /// Opens the database at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - create: Whether a missing file is created (`serve`, `init`); admin commands pass false, so that a
    ///     mistyped path is an error and not a new empty database.
    /// - Throws: `ServerError` with code `.missingDatabase`, `.cannotOpen` (not SQLite, another program's
    ///   database), or `.newerSchema`.
    public static func open(path: String, create: Bool) throws(ServerError) -> SQLServerStore {
        SQLServerStore(executor: try SQLiteExecutor(path: path, create: create))
    }
}

/// Runs the store's SQL through GRDB.
///
/// A transaction spans several GRDB accesses (the store's code awaits between statements), so the writer
/// connection allows a transaction left open between them, and an async lock keeps one transaction at a time.
/// Snapshot reads run the same way on a few read-only connections, beside the writer (WAL), one picked at random.
final class SQLiteExecutor: SQLExecutor {
    let path: String
    private let writer: DatabasePool
    private let readers: [(queue: DatabaseQueue, lock: AsyncLock)]
    private let writeLock = AsyncLock()

    /// Read-only connections: requests read concurrently, and a long snapshot holds up only its own.
    private static let readerCount = 4

    var backendName: String { "sqlite" }
    var dialect: ServerSchema.Dialect { .sqlite }
    var locationDescription: String { path }

    init(path: String, create: Bool) throws(ServerError) {
        self.path = path
        var status = stat()
        let exists = lstat(path, &status) == 0
        if exists && status.st_mode & 0o170000 == 0o120000 {
            // SQLite would follow it, to a file (or a new file) wherever another user pointed it.
            throw ServerError(
                code: .cannotOpen,
                message: "\(path) is a symbolic link; refusing to open a database through it (give the file's own "
                    + "path with --db).")
        }
        if !exists && !create {
            throw ServerError(
                code: .missingDatabase,
                message: "There is no server database at \(path). Create it with "
                    + "`farecheck-server init --db \(path)` (or start `farecheck-server serve --db \(path)`), "
                    + "or give the right --db.")
        }
        if exists {
            try Self.inspectExisting(path)
            for file in [path, path + "-wal", path + "-shm"] { Self.narrow(file) }
        } else {
            try Self.createPrivateFile(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "farecheck-server.store"
        configuration.allowsUnsafeTransactions = true
        var readConfiguration = Configuration()
        readConfiguration.busyMode = .timeout(10)
        readConfiguration.label = "farecheck-server.store.reader"
        readConfiguration.readonly = true
        readConfiguration.allowsUnsafeTransactions = true
        do {
            writer = try DatabasePool(path: path, configuration: configuration)
            // An acknowledged inspection must survive power loss: every commit synced. Set on the open pool: GRDB
            // puts a pool's writer in `synchronous = NORMAL` after `Configuration.prepareDatabase` has run.
            try writer.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
            try Self.migrator.migrate(writer)
            readers = try (0..<Self.readerCount).map { _ in
                (try DatabaseQueue(path: path, configuration: readConfiguration), AsyncLock())
            }
        } catch {
            throw ServerError(code: .cannotOpen, message: "Cannot open the server database at \(path).", cause: error)
        }
    }

    /// The file mode of a new database: the owner's alone. SQLite creates the `-wal`, `-shm` and `-journal` files
    /// beside it with the database's own mode, so they are private too.
    static let fileMode = 0o600

    /// The bits an existing database keeps at most: the owner's read and write, and the group's read (an admin group
    /// an operator gave access on purpose keeps it); every other user loses them.
    static let keptBits: mode_t = 0o740

    /// Creates an empty database file with `fileMode`, whatever the umask (SQLite's own default is 0644 less the
    /// umask: the inspections and device token hashes readable by every user). `O_EXCL | O_NOFOLLOW`: a file or a
    /// link planted at the path since it was looked at is refused, never followed or opened.
    private static func createPrivateFile(_ path: String) throws(ServerError) {
        let descriptor: Int32
        do {
            descriptor = try systemCall {
                open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode_t(fileMode))
            }
        } catch {
            throw ServerError(
                code: .cannotOpen,
                message: "Cannot create the server database at \(path) (does the directory exist, and may this user "
                    + "write to it? A file or link that appeared there is not replaced).",
                cause: error)
        }
        defer { _ = close(descriptor) }
        do {
            // The mode again, explicitly: creation applies the umask, this does not.
            _ = try systemCall { fchmod(descriptor, mode_t(fileMode)) }
        } catch {
            _ = unlink(path)
            throw ServerError(
                code: .cannotOpen, message: "Cannot make the server database at \(path) private to its owner.",
                cause: error)
        }
    }

    /// Takes group write and every bit for others off an existing database file (or its `-wal`, `-shm`): one made
    /// before the database was created private, or opened up by hand. A file of another owner is left as it is
    /// (only its owner may change it); ``exposureWarning(_:)`` then still names it.
    static func narrow(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & 0o170000 == 0o100000 else { return }
        let mode = status.st_mode & 0o7777
        guard mode & ~keptBits != 0 else { return }
        _ = try? systemCall { chmod(path, mode & keptBits) }
    }

    /// A warning for a database file that other users may read (group members aside): one made before the
    /// database was created private, or opened up by hand. Nil when only the owner and the group can read it.
    static func exposureWarning(_ path: String) -> String? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o007 != 0
        else { return nil }
        return "\(path) is readable by every user of this machine (mode \(String(mode, radix: 8))); it holds the "
            + "inspections and the device token hashes: chmod 600 \(path) (and its -wal and -shm files)."
    }

    /// Refuses, before writing anything, a file that is not SQLite, a database of another program (or the
    /// validator's own store), and one written by a newer farecheck-server.
    private static func inspectExisting(_ path: String) throws(ServerError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ServerError(code: .cannotOpen, message: "Cannot read the server database at \(path).")
        }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
            throw ServerError(
                code: .cannotOpen, message: "\(path) is not a SQLite database; refusing to touch it.")
        }
        guard !header.isEmpty else { return }
        var configuration = Configuration()
        configuration.readonly = true
        let state: (foreign: Bool, newer: Bool)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            state = try queue.read { db in
                let tableCount =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                guard try db.tableExists("grdb_migrations") else { return (tableCount > 0, false) }
                let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
                if !applied.contains(where: { $0.hasPrefix(migrationPrefix) }) { return (true, false) }
                return (false, try migrator.hasBeenSuperseded(db))
            }
            try queue.close()
        } catch {
            throw ServerError(code: .cannotOpen, message: "Cannot read the server database at \(path).", cause: error)
        }
        if state.foreign {
            throw ServerError(
                code: .cannotOpen,
                message: "\(path) is a database of another program (or a validator's store), not a farecheck-server "
                    + "database; refusing to change it.")
        }
        if state.newer {
            throw ServerError(
                code: .newerSchema,
                message: "\(path) was written by a newer farecheck-server (unknown migrations); upgrade this one.")
        }
    }

    private static let migrationPrefix = "server-"

    /// The schema's migrations (`ServerSchema.migrations`) in SQLite's dialect, registered by their names.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        for migration in ServerSchema.migrations {
            let statements = migration.statements(.sqlite)
            migrator.registerMigration(migration.identifier) { db in
                for statement in statements {
                    try db.execute(sql: statement)
                }
            }
        }
        return migrator
    }

    func write<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T {
        try await writeLock.withLock {
            try await Self.transaction(
                "BEGIN IMMEDIATE", body,
                run: { [writer] access in try await writer.writeWithoutTransaction(access) },
                end: { [writer] sql in try writer.writeWithoutTransaction { db in try Self.end(db, sql) } })
        }
    }

    func read<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T {
        // Any reader will do; picking at random spreads the requests without shared state.
        let (reader, readLock) = readers[Int.random(in: 0..<readers.count)]
        return try await readLock.withLock {
            try await Self.transaction(
                "BEGIN DEFERRED", body,
                run: { [reader] access in try await reader.unsafeRead(access) },
                end: { [reader] sql in try reader.unsafeRead { db in try Self.end(db, sql) } })
        }
    }

    /// Opens a transaction with `begin`, runs `body` with a session whose statements go through `run`, and
    /// commits, or rolls back when anything throws.
    private static func transaction<T: Sendable>(
        _ begin: String, _ body: @Sendable (any SQLSession) async throws -> T,
        run: @escaping @Sendable (@escaping @Sendable (Database) throws -> [SQLRow]) async throws -> [SQLRow],
        end: @Sendable (String) throws -> Void
    ) async throws -> T {
        _ = try await run { db in
            // A transaction a cancelled task left open is abandoned here.
            if db.isInsideTransaction { try db.execute(sql: "ROLLBACK") }
            try db.execute(sql: begin)
            return []
        }
        do {
            let value = try await body(GRDBSession(run: run))
            try end("COMMIT")
            return value
        } catch {
            // Synchronous, so that a cancelled task still rolls back.
            try? end("ROLLBACK")
            throw error
        }
    }

    private static func end(_ db: Database, _ sql: String) throws {
        if db.isInsideTransaction { try db.execute(sql: sql) }
    }

    /// The whole batch in one GRDB access: two cached statements per entry, without a hop per statement.
    func insertTicketRevocations(_ entries: [NumberedTicketRevocation], in session: any SQLSession) async throws {
        guard let session = session as? GRDBSession else {
            throw SQLReadError(column: "session", expected: "a SQLite session")
        }
        _ = try await session.run { db in
            let change = try db.cachedStatement(
                sql: """
                    INSERT INTO revocation_change (sequence, kind, action, issuer, ticket_id, reason, revoked_at)
                    VALUES (?, 'ticket', 'add', ?, ?, ?, ?)
                    """)
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, sequence) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                        revoked_at = excluded.revoked_at, sequence = excluded.sequence
                    """)
            for entry in entries {
                try change.execute(arguments: [
                    entry.sequence, entry.issuer, entry.ticketID, entry.reason, entry.revokedAt,
                ])
                try upsert.execute(arguments: [
                    entry.issuer, entry.ticketID, entry.reason, entry.revokedAt, entry.sequence,
                ])
            }
            return []
        }
    }
}

extension SQLiteExecutor {
    /// The whole list in one GRDB access: one cached statement per row, without a hop per statement.
    func insertBlocklistImport(_ rows: [BlocklistRow], in session: any SQLSession) async throws {
        guard let session = session as? GRDBSession else {
            throw SQLReadError(column: "session", expected: "a SQLite session")
        }
        _ = try await session.run { db in
            let insert = try db.cachedStatement(
                sql: """
                    INSERT INTO blocklist_import (list, entry_type, org_id, item, instance_num, lock_mode)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """)
            for row in rows {
                try insert.execute(arguments: [
                    row.list, row.entryType, row.orgID, row.item, row.instance, row.lockMode,
                ])
            }
            return []
        }
    }
}

/// A session whose statements run, one GRDB access each, inside the executor's open transaction.
private struct GRDBSession: SQLSession {
    let run: @Sendable (@escaping @Sendable (Database) throws -> [SQLRow]) async throws -> [SQLRow]

    func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
        try await run { db in
            let statement = try db.cachedStatement(sql: sql)
            let values: [DatabaseValue] = arguments.map { value in
                switch value {
                case .integer(let integer): integer.databaseValue
                case .text(let text): text.databaseValue
                case .boolean(let boolean): boolean.databaseValue
                case .null: .null
                }
            }
            try statement.setArguments(StatementArguments(values))
            guard statement.columnCount > 0 else {
                try statement.execute()
                return []
            }
            var rows: [SQLRow] = []
            let cursor = try Row.fetchCursor(statement)
            while let row = try cursor.next() {
                var columns: [String: SQLValue] = [:]
                for (name, value) in row {
                    columns[name] =
                        switch value.storage {
                        case .null: .null
                        case .int64(let integer): .integer(integer)
                        case .double(let double): Int64(exactly: double).map(SQLValue.integer) ?? .text("\(double)")
                        case .string(let text): .text(text)
                        case .blob(let data): .text(String(decoding: data, as: UTF8.self))
                        }
                }
                rows.append(SQLRow(columns: columns))
            }
            return rows
        }
    }
}

/// A lock held across suspension points, granted in the order asked.
actor AsyncLock {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    private func lock() async {
        if held {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            held = true
        }
    }

    private func unlock() {
        if waiters.isEmpty {
            held = false
        } else {
            // The lock passes straight to the next waiter.
            waiters.removeFirst().resume()
        }
    }

    /// Runs `body` holding the lock.
    nonisolated func withLock<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await lock()
        do {
            let value = try await body()
            await unlock()
            return value
        } catch {
            await unlock()
            throw error
        }
    }
}
