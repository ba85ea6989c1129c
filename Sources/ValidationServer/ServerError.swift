import FareCore

/// Why the reference server or one of its admin commands could not do what was asked.
public struct ServerError: CodedError {
    /// What kind of failure this is (its codes: the extension below).
    public typealias Code = ErrorCode<ServerError>

    /// What kind of failure this is.
    public var code: Code
    /// A sentence a person can act on.
    public var message: String
    /// The failure underneath, if any.
    public var cause: (any Error)?

    /// Makes an error from its parts.
    public init(code: Code, message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, the code and the cause, on one line; the cause as reflected, because PostgreSQL's errors
    /// (`PSQLError`) keep what happened out of their plain description.
    public var description: String {
        guard let cause else { return "\(message) [\(code)]" }
        return "\(message) [\(code)] (cause: \(String(reflecting: cause)))"
    }
}

extension ErrorCode where Domain == ServerError {
    /// The SQLite database named does not exist (admin commands never create one by accident).
    public static var missingDatabase: Self { Self("missing-database") }
    /// The database cannot be opened or reached, or is not a farecheck server database.
    public static var cannotOpen: Self { Self("cannot-open") }
    /// The database was written by a newer farecheck-server.
    public static var newerSchema: Self { Self("newer-schema") }
    /// The `--database-url` is not a `postgres://user:password@host:port/database` URL.
    public static var invalidDatabaseURL: Self { Self("invalid-database-url") }
    /// A query failed (disk full, connection lost, constraint).
    public static var storageFailure: Self { Self("storage-failure") }
    /// A named device, key or revocation does not exist.
    public static var notFound: Self { Self("not-found") }
    /// The thing to add exists already, or another writer got there first.
    public static var conflict: Self { Self("conflict") }
    /// An argument or file is not acceptable (bad PEM, bad hex, bad address).
    public static var invalidInput: Self { Self("invalid-input") }
    /// The server could not listen or serve.
    public static var serveFailed: Self { Self("serve-failed") }
}
