import FareCore
import Foundation
import GRDB

/// Why the store could not do what was asked. Carries a message a person can act on.
public typealias StoreError = CodedError<StoreFailure>

/// The domain of `StoreError`: what the store, the journal and their files could not do.
public enum StoreFailure: ErrorDomain {
    /// What a store error says besides its code, message and cause.
    public struct Details: Hashable, Sendable {
        /// The database path concerned.
        public var path: String
        /// What to do about it, when the cause is one a person can remove (a full disk, a permission): said instead
        /// of the database library's own text (issue 52).
        public var remedy: String?
    }

    /// The text of an underlying error that is not itself `Sendable`.
    public struct Cause: Error, Sendable, CustomStringConvertible {
        /// The error's text.
        public var description: String
    }

    /// The message and the path, then the remedy or else the cause.
    public static func description(of error: StoreError) -> String {
        if let remedy = error.remedy { return "\(error.message) (\(error.path)); \(remedy)" }
        if let cause = error.cause { return "\(error.message) (\(error.path): \(cause))" }
        return "\(error.message) (\(error.path))"
    }
}

extension ErrorCode where Domain == StoreFailure {
    /// The file exists but is not a farecheck store (or is damaged). It is left untouched.
    public static var notAStore: Self { Self("not-a-store") }
    /// The store was written by a newer farecheck; this one does not understand it.
    public static var newerSchema: Self { Self("newer-schema") }
    /// There is no store at the path, and this opening does not make one (`TrustStore.Missing.refuse`).
    public static var noStore: Self { Self("no-store") }
    /// The file or its directory cannot be opened or created.
    public static var cannotOpen: Self { Self("cannot-open") }
    /// A read or write failed (disk full, I/O error).
    public static var ioFailure: Self { Self("io-failure") }
    /// A record was not found, or a value was refused.
    public static var invalidRequest: Self { Self("invalid-request") }
    /// Sync data that does not follow what the store holds (an older bundle, a delta from another cursor).
    public static var outOfSequence: Self { Self("out-of-sequence") }
}

extension CodedError where Domain == StoreFailure {
    /// The text of an underlying error that is not itself `Sendable`.
    public typealias Cause = StoreFailure.Cause

    /// Makes an error: `message` is a sentence for the person at the terminal, `path` the database concerned,
    /// `underlying` the failure underneath, if any.
    public init(_ code: Code, _ message: String, path: String, underlying: (any Error)? = nil) {
        self.init(code: code, message: message, details: StoreFailure.Details(path: path), cause: underlying)
    }

    /// `error` with the remedy for its cause when it is a full disk or a permission SQLite reported.
    static func remedied(_ error: StoreError) -> StoreError {
        guard error.remedy == nil, let cause = error.cause as? DatabaseError else { return error }
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
