import Logging
import PostgresNIO

/// Which database the server and its admin commands use: a SQLite file or a PostgreSQL database.
public enum StoreLocation: Sendable, CustomStringConvertible {
    /// A SQLite file (`--db PATH`).
    case sqlite(path: String)
    /// A PostgreSQL database (`--database-url postgres://…`).
    case postgres(PostgresLocation)

    /// The location the command-line options name: `--database-url` when given, else `--db`.
    ///
    /// - Throws: `ServerError` with code `.invalidInput` when both are given, `.invalidDatabaseURL` for a bad URL.
    public init(db: String?, databaseURL: String?) throws(ServerError) {
        switch (db, databaseURL) {
        case (.some, .some):
            throw ServerError(
                code: .invalidInput,
                message: "Give either --db (SQLite) or --database-url (PostgreSQL), not both.")
        case (_, .some(let url)):
            self = .postgres(try PostgresLocation(url: url))
        case (let path, .none):
            self = .sqlite(path: path ?? "server.sqlite")
        }
    }

    /// The file path or the URL without its password.
    public var description: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let location): location.description
        }
    }

    /// A warning when the SQLite file is readable by every user (see `SQLiteExecutor.exposureWarning`); nil for
    /// PostgreSQL, whose access the database server controls.
    public var exposureWarning: String? {
        switch self {
        case .sqlite(let path): SQLiteExecutor.exposureWarning(path)
        case .postgres: nil
        }
    }

    /// Opens the store, runs `body` with it, and closes it.
    ///
    /// For PostgreSQL the connection pool runs beside `body` and stops when it returns; the schema is created
    /// or upgraded first in both databases.
    ///
    /// - Parameters:
    ///   - create: Whether a missing SQLite file is created (`serve`, `init`) or refused (admin commands).
    ///   - body: The work to do.
    /// - Throws: `ServerError` when the store cannot be opened, and whatever `body` throws.
    public func withStore<Result: Sendable>(
        create: Bool, _ body: (any ServerStore) async throws -> Result
    ) async throws -> Result {
        switch self {
        case .sqlite(let path):
            let store = try SQLiteServerStore.open(path: path, create: create)
            return try await body(store)
        case .postgres(let location):
            var logger = Logger(label: "farecheck-server.postgres")
            logger.logLevel = .warning
            try await PostgresExecutor.probe(location, logger: logger)
            let client = PostgresExecutor.makeClient(location, logger: logger)
            let executor = PostgresExecutor(location: location, client: client, logger: logger)
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                defer { group.cancelAll() }
                try await executor.migrate()
                return try await body(SQLServerStore(executor: executor))
            }
        }
    }
}
