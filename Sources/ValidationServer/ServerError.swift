import FareCore

/// Why the reference server or one of its admin commands could not do what was asked.
public typealias ServerError = CodedError<ServerFailure>

/// The domain of `ServerError`: what the reference server and its admin commands could not do.
public enum ServerFailure: ErrorDomain {
    /// A cause as reflected: PostgreSQL's errors (`PSQLError`) keep what happened out of their plain description.
    public static func text(ofCause cause: any Error) -> String { String(reflecting: cause) }
}

extension ErrorCode where Domain == ServerFailure {
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
