import FareCore
import Foundation

/// A person who may read the operator report (`/report`): a name and the SHA-256 of a secret token.
///
/// Operators are kept apart from devices on purpose. A device's token is on a validator in the field, so it must
/// not open the fleet's figures; an operator's token is on a desk, and must not upload inspections or claim first
/// uses as if it were a validator.
public struct OperatorRecord: Sendable, Equatable {
    /// The name the admin gave, e.g. `alex@agency`.
    public var name: String
    /// Whether its token (and every session opened with it) is refused.
    public var revoked: Bool
    /// When it was registered.
    public var createdAt: Date

    /// Makes a record.
    public init(name: String, revoked: Bool, createdAt: Date) {
        self.name = name
        self.revoked = revoked
        self.createdAt = createdAt
    }
}

/// An operator's secret token, and the hash under which the server keeps it.
///
/// The token is a device token's 43 random characters behind `fco_`: nothing about the check depends on the
/// prefix (the two live in different tables), but a person who finds one in a file or a shell history can tell at
/// once what it opens.
public enum OperatorToken {
    /// The text every operator token starts with.
    public static let prefix = "fco_"

    /// A fresh token.
    public static func generate() throws(ServerError) -> String {
        prefix + (try DeviceToken.generate())
    }

    /// SHA-256 of the token's UTF-8 bytes, as stored.
    public static func hash(_ token: String) -> [UInt8] {
        DeviceToken.hash(token)
    }
}

extension ServerStore {
    /// Registers an operator under a fresh random token and returns the token, which is shown once and never stored
    /// (only its hash is).
    ///
    /// - Throws: `ServerError` with code `.invalidInput` for a name that is not 1 to 128 printable characters
    ///   without spaces (it goes into log lines and onto the report page), `.conflict` for a name taken.
    public func registerOperator(name: String, at date: Date = Date()) async throws(ServerError) -> String {
        guard isAccountName(name) else {
            throw ServerError(
                code: .invalidInput,
                message: "An operator name is 1 to 128 printable characters without spaces, not "
                    + "\"\(PrintableText(name))\".")
        }
        let token = try OperatorToken.generate()
        try await addOperator(name: name, tokenHash: OperatorToken.hash(token), at: date)
        return token
    }
}

extension SQLServerStore {
    public func addOperator(name: String, tokenHash: [UInt8], at date: Date) async throws(ServerError) {
        try Self.refuseNUL(["operator name": name])
        try await write("register operator \(name)") { session in
            let inserted = try await session.query(
                """
                INSERT INTO operator_account (name, token_hash, revoked, created_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (name) DO NOTHING RETURNING name
                """,
                name, tokenHash.hexString, false, date.unixMilliseconds)
            if inserted.isEmpty {
                throw ServerError(code: .conflict, message: "An operator named \(name) is registered already.")
            }
        }
    }

    public func revokeOperator(name: String) async throws(ServerError) -> Bool {
        guard !name.contains("\0") else { return false }
        return try await write("revoke operator \(name)") { session in
            try await !session.query(
                "UPDATE operator_account SET revoked = ? WHERE name = ? RETURNING name", true, name
            ).isEmpty
        }
    }

    public func operators() async throws(ServerError) -> [OperatorRecord] {
        try await read("list operators") { [byteOrder] session in
            try await session.query(
                "SELECT name, revoked, created_at FROM operator_account ORDER BY name\(byteOrder)"
            ).map(Self.operatorRecord)
        }
    }

    public func operatorAccount(tokenHash: [UInt8]) async throws(ServerError) -> OperatorRecord? {
        try await read("look up an operator") { session in
            try await session.query(
                "SELECT name, revoked, created_at FROM operator_account WHERE token_hash = ?", tokenHash.hexString
            ).first.map(Self.operatorRecord)
        }
    }

    private static func operatorRecord(_ row: SQLRow) throws -> OperatorRecord {
        OperatorRecord(
            name: try row.text("name"), revoked: try row.boolean("revoked"),
            createdAt: Date(unixMilliseconds: try row.integer("created_at")))
    }
}
