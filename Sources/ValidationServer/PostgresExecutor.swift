import FareCore
import Foundation
import Logging
import PostgresNIO
import ValidationAPI

/// Where a PostgreSQL database is, read from a `postgres://user:password@host:port/database` URL.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 when the URL names none).
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if any.
    public var password: String?
    /// The database to use.
    public var database: String

    /// Reads a connection URL.
    ///
    /// - Throws: `ServerError` with code `.invalidDatabaseURL` for another scheme, a missing user or database,
    ///   or `sslmode` other than `disable` (TLS to PostgreSQL is not supported yet).
    public init(url text: String) throws(ServerError) {
        func invalid(_ why: String) -> ServerError {
            ServerError(
                code: .invalidDatabaseURL,
                message: "--database-url \(Self.redacted(text)): \(why). Expected "
                    + "postgres://USER:PASSWORD@HOST:PORT/DATABASE.")
        }
        guard let components = URLComponents(string: text) else { throw invalid("not a URL") }
        guard components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw invalid("the scheme must be postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        guard let user = components.user, !user.isEmpty else { throw invalid("no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw invalid("no database name after the host") }
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"): continue
            case ("sslmode", let mode):
                throw invalid(
                    "sslmode=\(mode ?? "") is not supported: this server connects without TLS (sslmode=disable); "
                        + "reach a remote PostgreSQL through a local tunnel")
            default: throw invalid("unknown parameter \(item.name)")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
    }

    /// The URL without its password, for messages and logs.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    private static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }
}

/// The server's store in PostgreSQL, for an agency's fleet: runs the store's SQL through postgres-nio. `?`
/// placeholders become `$1…`, transactions are the client's, reads take a repeatable-read snapshot, and bulk
/// ticket revocations go through `unnest`.
final class PostgresExecutor: SQLExecutor {
    let location: PostgresLocation
    private let client: PostgresClient
    private let logger: Logger

    var backendName: String { "postgresql" }
    var dialect: ServerSchema.Dialect { .postgres }
    var locationDescription: String { location.description }

    init(location: PostgresLocation, client: PostgresClient, logger: Logger) {
        self.location = location
        self.client = client
        self.logger = logger
    }

    /// Makes the connection pool for `location`; it works only while its `run()` runs.
    static func makeClient(_ location: PostgresLocation, logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Opens and closes one connection, to report why the database cannot be reached in PostgreSQL's words
    /// (the pool would only say that it gave up).
    static func probe(_ location: PostgresLocation, logger: Logger) async throws(ServerError) {
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try await connection.close()
        } catch {
            throw ServerError(
                code: .cannotOpen,
                message: "Cannot reach the PostgreSQL database \(location): \(explainError(error)). "
                    + "Is the server running, and do the role, password and database exist?",
                cause: error)
        }
    }

    /// The schema's migrations (`ServerSchema.migrations`) in PostgreSQL's dialect; applied under an advisory lock
    /// so that servers starting together do not race.
    private static let migrations: [(version: Int, statements: [String])] = ServerSchema.migrations.map {
        ($0.version, $0.statements(.postgres))
    }

    /// Creates or upgrades the schema, and refuses a database written by a newer farecheck-server.
    func migrate() async throws(ServerError) {
        do {
            try await write { session in
                // One lock id for this program's migrations: "fcserver" in ASCII.
                try await session.execute("SELECT pg_advisory_xact_lock(7378303373736534130)")
                try await session.execute(
                    """
                    CREATE TABLE IF NOT EXISTS farecheck_server_schema (
                        version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)
                    """)
                let applied = Set(
                    try await session.query("SELECT version FROM farecheck_server_schema").map {
                        try $0.integer("version")
                    })
                let known = Int64(Self.migrations.map(\.version).max() ?? 0)
                if let newest = applied.max(), newest > known {
                    throw ServerError(
                        code: .newerSchema,
                        message: "\(self.location) was written by a newer farecheck-server (schema \(newest)); "
                            + "upgrade this one.")
                }
                for migration in Self.migrations where !applied.contains(Int64(migration.version)) {
                    for statement in migration.statements {
                        try await session.execute(statement)
                    }
                    try await session.execute(
                        "INSERT INTO farecheck_server_schema (version, applied_at) VALUES (?, ?)",
                        Int64(migration.version), Date().unixMilliseconds)
                }
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(
                code: .storageFailure, message: "Could not prepare the schema in \(location): \(explain(error)).",
                cause: error)
        }
    }

    func write<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T {
        do {
            return try await client.withTransaction(logger: logger) { [logger] connection in
                try await body(PostgresSession(connection: connection, logger: logger))
            }
        } catch let error as PostgresTransactionError {
            // What the body threw (a `ServerError`) counts, not that the transaction was rolled back for it.
            if let thrown = error.closureError ?? error.beginError ?? error.commitError { throw thrown }
            throw error
        }
    }

    func read<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T {
        try await client.withConnection { [logger] connection in
            // A consistent snapshot of counter, log and lists, as SQLite's read transaction gives.
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
            do {
                let value = try await body(PostgresSession(connection: connection, logger: logger))
                try await connection.query("COMMIT", logger: logger)
                return value
            } catch {
                _ = try? await connection.query("ROLLBACK", logger: logger)
                throw error
            }
        }
    }

    /// Arrays unnested server-side: two statements per 5,000 entries, not two per entry.
    func insertTicketRevocations(_ entries: [NumberedTicketRevocation], in session: any SQLSession) async throws {
        guard let session = session as? PostgresSession else {
            throw SQLReadError(column: "session", expected: "a PostgreSQL session")
        }
        let rows = """
            FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::boolean[], $6::bigint[])
                AS entry (sequence, issuer, ticket_id, reason, has_reason, revoked_at)
            """
        for chunkStart in stride(from: 0, to: entries.count, by: 5_000) {
            let chunk = entries[chunkStart..<min(chunkStart + 5_000, entries.count)]
            var binds = PostgresBindings()
            binds.append(chunk.map(\.sequence))
            binds.append(chunk.map(\.issuer))
            binds.append(chunk.map(\.ticketID))
            // Arrays of optionals do not bind: a flag says which reasons are absent.
            binds.append(chunk.map { $0.reason ?? "" })
            binds.append(chunk.map { $0.reason != nil })
            binds.append(chunk.map(\.revokedAt))
            try await session.connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO revocation_change (sequence, kind, action, issuer, ticket_id, reason, revoked_at)
                        SELECT sequence, 'ticket', 'add', issuer, ticket_id, CASE WHEN has_reason THEN reason END,
                            revoked_at
                        \(rows)
                        """, binds: binds), logger: logger)
            try await session.connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, sequence)
                        SELECT issuer, ticket_id, CASE WHEN has_reason THEN reason END, revoked_at, sequence
                        \(rows)
                        ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                            revoked_at = excluded.revoked_at, sequence = excluded.sequence
                        """, binds: binds), logger: logger)
        }
    }

    /// Arrays unnested server-side: one statement per 5,000 entries.
    func insertBlocklistImport(_ rows: [BlocklistRow], in session: any SQLSession) async throws {
        guard let session = session as? PostgresSession else {
            throw SQLReadError(column: "session", expected: "a PostgreSQL session")
        }
        for chunkStart in stride(from: 0, to: rows.count, by: 5_000) {
            let chunk = rows[chunkStart..<min(chunkStart + 5_000, rows.count)]
            var binds = PostgresBindings()
            binds.append(chunk.map(\.list))
            binds.append(chunk.map(\.entryType))
            binds.append(chunk.map(\.orgID))
            binds.append(chunk.map(\.item))
            binds.append(chunk.map(\.instance))
            binds.append(chunk.map(\.lockMode))
            try await session.connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO blocklist_import (list, entry_type, org_id, item, instance_num, lock_mode)
                        SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[],
                            $6::bigint[])
                        """, binds: binds), logger: logger)
        }
    }

    func explain(_ error: any Error) -> String { Self.explainError(error) }

    /// What PostgreSQL said, when it said something: `PSQLError`'s description hides it on purpose.
    static func explainError(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        if let error = error as? PostgresTransactionError,
            let underlying = error.closureError ?? error.beginError ?? error.commitError
        {
            return explainError(underlying)
        }
        return "\(error)"
    }
}

/// A leased connection inside a transaction or snapshot.
private struct PostgresSession: SQLSession {
    let connection: PostgresConnection
    let logger: Logger

    func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow] {
        var binds = PostgresBindings()
        for argument in arguments {
            switch argument {
            case .integer(let integer): binds.append(integer)
            case .text(let text): binds.append(text)
            case .boolean(let boolean): binds.append(boolean)
            case .null: binds.appendNull()
            }
        }
        var rows: [SQLRow] = []
        for try await row in try await connection.query(
            PostgresQuery(unsafeSQL: Self.numberingPlaceholders(sql), binds: binds), logger: logger)
        {
            var columns: [String: SQLValue] = [:]
            for cell in row {
                columns[cell.columnName] = try Self.value(cell)
            }
            rows.append(SQLRow(columns: columns))
        }
        return rows
    }

    /// `?` → `$1`, `$2`, …; the store's SQL holds no other question mark.
    static func numberingPlaceholders(_ sql: String) -> String {
        var numbered = ""
        var count = 0
        for character in sql {
            if character == "?" {
                count += 1
                numbered += "$\(count)"
            } else {
                numbered.append(character)
            }
        }
        return numbered
    }

    private static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
        case .bool: return .boolean(try cell.decode(Bool.self))
        case .void: return .null
        default: return .text(try cell.decode(String.self))
        }
    }
}
