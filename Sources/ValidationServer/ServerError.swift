/// Why the reference server or one of its admin commands could not do what was asked.
public struct ServerError: Error, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added, so match with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for logs and scripts.
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The code's name.
        public var description: String { name }

        /// The SQLite database named does not exist (admin commands never create one by accident).
        public static let missingDatabase = Code("missing-database")
        /// The database cannot be opened or reached, or is not a farecheck server database.
        public static let cannotOpen = Code("cannot-open")
        /// The database was written by a newer farecheck-server.
        public static let newerSchema = Code("newer-schema")
        /// The `--database-url` is not a `postgres://user:password@host:port/database` URL.
        public static let invalidDatabaseURL = Code("invalid-database-url")
        /// A query failed (disk full, connection lost, constraint).
        public static let storageFailure = Code("storage-failure")
        /// A named device, key or revocation does not exist.
        public static let notFound = Code("not-found")
        /// The thing to add exists already, or another writer got there first.
        public static let conflict = Code("conflict")
        /// An argument or file is not acceptable (bad PEM, bad hex, bad address).
        public static let invalidInput = Code("invalid-input")
        /// The server could not listen or serve.
        public static let serveFailed = Code("serve-failed")
    }

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

    /// The message, the code and the cause, on one line.
    public var description: String {
        guard let cause else { return "\(message) [\(code)]" }
        return "\(message) [\(code)] (cause: \(String(reflecting: cause)))"
    }
}
