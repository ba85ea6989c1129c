import Foundation
import GRDB

/// Why the store could not do what was asked. Carries a message a person can act on.
public struct StoreError: Error, CustomStringConvertible, Sendable {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The file exists but is not a farecheck store (or is damaged). It is left untouched.
        public static let notAStore = Code(name: "not-a-store")
        /// The store was written by a newer farecheck; this one does not understand it.
        public static let newerSchema = Code(name: "newer-schema")
        /// There is no store at the path, and this opening does not make one (`TrustStore.Missing.refuse`).
        public static let noStore = Code(name: "no-store")
        /// The file or its directory cannot be opened or created.
        public static let cannotOpen = Code(name: "cannot-open")
        /// A read or write failed (disk full, I/O error).
        public static let ioFailure = Code(name: "io-failure")
        /// A record was not found, or a value was refused.
        public static let invalidRequest = Code(name: "invalid-request")
        /// Sync data that does not follow what the store holds (an older bundle, a delta from another cursor).
        public static let outOfSequence = Code(name: "out-of-sequence")
        public var description: String { name }
    }

    public var code: Code
    /// A sentence for the person at the terminal.
    public var message: String
    /// The database path concerned.
    public var path: String
    /// The failure underneath, if any.
    public var underlying: (any Error & Sendable)?

    public init(_ code: Code, _ message: String, path: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.underlying = underlying
    }

    /// The text of an underlying error that is not itself `Sendable`.
    public struct Cause: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// What to do about it, when the cause is one a person can remove (a full disk, a permission): said instead
    /// of the database library's own text (issue 52).
    public var remedy: String?

    public var description: String {
        if let remedy { return "\(message) (\(path)); \(remedy)" }
        if let underlying { return "\(message) (\(path): \(underlying))" }
        return "\(message) (\(path))"
    }

    /// `error` with the remedy for its cause when it is a full disk or a permission SQLite reported.
    static func remedied(_ error: StoreError) -> StoreError {
        guard error.remedy == nil, let cause = error.underlying as? DatabaseError else { return error }
        var remedied = error
        let directory = (error.path as NSString).deletingLastPathComponent
        let place = directory.isEmpty ? "." : directory
        switch cause.resultCode {
        case .SQLITE_FULL:
            remedied.remedy = "the disk holding it is full: free some space (`df -h \(place)`) and try again"
        case .SQLITE_READONLY, .SQLITE_PERM, .SQLITE_CANTOPEN, .SQLITE_AUTH:
            remedied.remedy =
                "this user may not write it or its directory: check both (`ls -ld \(place) \(error.path)`), or run "
                + "as the store's owner"
        default:
            break
        }
        return remedied
    }
}
