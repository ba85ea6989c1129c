import FareCore
import Foundation

/// A value bound to a `?` placeholder or read from a column, in the few types the server's tables use.
enum SQLValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case boolean(Bool)
    case null
}

/// A Swift value that binds to a placeholder.
protocol SQLBindable {
    /// The value as bound.
    var sqlValue: SQLValue { get }
}

extension Int64: SQLBindable {
    var sqlValue: SQLValue { .integer(self) }
}

extension Int: SQLBindable {
    var sqlValue: SQLValue { .integer(Int64(self)) }
}

extension String: SQLBindable {
    var sqlValue: SQLValue { .text(self) }
}

/// Identifiers are bound as their text.
extension SQLBindable where Self: TextIdentifier {
    var sqlValue: SQLValue { rawValue.sqlValue }
}

extension InspectionID: SQLBindable {}
extension IssuerID: SQLBindable {}
extension SourceName: SQLBindable {}
extension KeyID: SQLBindable {}

extension Bool: SQLBindable {
    var sqlValue: SQLValue { .boolean(self) }
}

extension Optional: SQLBindable where Wrapped: SQLBindable {
    var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// One row read back, with typed reads by column name that fail (rather than trap) on a surprise.
struct SQLRow: Sendable {
    /// The columns by name, as the backend returned them.
    var columns: [String: SQLValue]

    /// An integer column that is never NULL.
    func integer(_ name: String) throws -> Int64 {
        guard let value = try optionalInteger(name) else { throw SQLReadError(column: name, expected: "an integer") }
        return value
    }

    /// An integer column that may be NULL.
    func optionalInteger(_ name: String) throws -> Int64? {
        switch columns[name] {
        case .integer(let value): value
        case .null: nil
        default: throw SQLReadError(column: name, expected: "an integer")
        }
    }

    /// A text column that is never NULL.
    func text(_ name: String) throws -> String {
        guard let value = try optionalText(name) else { throw SQLReadError(column: name, expected: "text") }
        return value
    }

    /// A text column that may be NULL.
    func optionalText(_ name: String) throws -> String? {
        switch columns[name] {
        case .text(let value): value
        case .null: nil
        default: throw SQLReadError(column: name, expected: "text")
        }
    }

    /// A boolean column: PostgreSQL's `BOOLEAN`, or SQLite's 0 and 1.
    func boolean(_ name: String) throws -> Bool {
        switch columns[name] {
        case .boolean(let value): value
        case .integer(let value): value != 0
        default: throw SQLReadError(column: name, expected: "a boolean")
        }
    }
}

/// A column that did not hold what the store expected (a schema edited by hand, a bug).
struct SQLReadError: Error, CustomStringConvertible {
    /// The column's name.
    var column: String
    /// What the store expected there.
    var expected: String

    var description: String { "column \(column) does not hold \(expected)" }
}

/// A connection inside one transaction (or one read snapshot).
///
/// Statements use `?` placeholders in both dialects; counts of changed rows come from `RETURNING`, which both
/// databases support, so that no backend needs to report them.
protocol SQLSession: Sendable {
    /// Runs one statement and returns its rows (those of a `SELECT` or a `RETURNING` clause).
    func query(_ sql: String, _ arguments: [SQLValue]) async throws -> [SQLRow]
}

extension SQLSession {
    /// Runs one statement whose rows, if any, are not needed.
    func execute(_ sql: String, _ arguments: [SQLValue] = []) async throws {
        _ = try await query(sql, arguments)
    }

    /// The rows of `sql` with `arguments` bound in order.
    func query(_ sql: String, _ arguments: any SQLBindable...) async throws -> [SQLRow] {
        try await query(sql, arguments.map(\.sqlValue))
    }

    /// Runs `sql` with `arguments` bound in order.
    func execute(_ sql: String, _ arguments: any SQLBindable...) async throws {
        _ = try await query(sql, arguments.map(\.sqlValue))
    }
}

/// A ticket revocation as the bulk path writes it: the row and its change number.
struct NumberedTicketRevocation: Sendable {
    /// The change number, also the row's `sequence`.
    var sequence: Int64
    /// The issuer.
    var issuer: String
    /// The ticket id, lowercase hex.
    var ticketID: String
    /// Why, if told.
    var reason: String?
    /// When, as Unix milliseconds.
    var revokedAt: Int64
}

/// What `SQLServerStore` needs from a database: transactions, snapshot reads, and its SQL flavour.
///
/// The store writes its SQL and row mapping once over this; each backend adapts its driver (GRDB for SQLite,
/// postgres-nio for PostgreSQL) and may replace a bulk path with a faster one of its own.
protocol SQLExecutor: Sendable {
    /// `sqlite` or `postgresql`.
    var backendName: String { get }
    /// The SQL flavour, for the few places where the two differ.
    var dialect: ServerSchema.Dialect { get }
    /// The database, for messages: a file path or a URL without its password.
    var locationDescription: String { get }

    /// Runs `body` in one transaction that commits when it returns and rolls back when it throws. Writers are
    /// serialised, so that change numbers follow commit order.
    func write<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T
    /// Runs `body` over one consistent snapshot of the database.
    func read<T: Sendable>(_ body: @Sendable (any SQLSession) async throws -> T) async throws -> T
    /// Writes ticket revocations and their logged changes in the caller's transaction; the entries are distinct
    /// tickets, numbered in order.
    func insertTicketRevocations(_ entries: [NumberedTicketRevocation], in session: any SQLSession) async throws
    /// Fills the `blocklist_import` staging table in the caller's transaction; the rows are distinct entries.
    func insertBlocklistImport(_ rows: [BlocklistRow], in session: any SQLSession) async throws
    /// Explains a driver error in the database's own words, for messages.
    func explain(_ error: any Error) -> String
}

extension SQLExecutor {
    /// Two statements per entry, prepared once by the driver's statement cache.
    func insertTicketRevocations(_ entries: [NumberedTicketRevocation], in session: any SQLSession) async throws {
        for entry in entries {
            try await session.execute(
                """
                INSERT INTO revocation_change (sequence, kind, action, issuer, ticket_id, reason, revoked_at)
                VALUES (?, 'ticket', 'add', ?, ?, ?, ?)
                """,
                entry.sequence, entry.issuer, entry.ticketID, entry.reason, entry.revokedAt)
            try await session.execute(
                """
                INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, sequence) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                    revoked_at = excluded.revoked_at, sequence = excluded.sequence
                """,
                entry.issuer, entry.ticketID, entry.reason, entry.revokedAt, entry.sequence)
        }
    }

    func insertBlocklistImport(_ rows: [BlocklistRow], in session: any SQLSession) async throws {
        try await insertBlocklistImportRows(rows, in: session)
    }

    func explain(_ error: any Error) -> String { "\(error)" }
}
