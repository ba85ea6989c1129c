import FareCore

/// Why a certificate directory could not be read: the server is not there, its TLS certificate is not trusted, it
/// refused the anonymous bind or the search, it did not answer in time, or it answered more than the caps allow.
///
/// The message names the directory's URL and what failed, in words a person can act on; `url`, `resultCode` and
/// `diagnostic` carry the same for logs and scripts.
public typealias DirectoryError = CodedError<DirectoryFailure>

/// The domain of `DirectoryError`: directories that could not be read as a whole. A bad entry in a directory that
/// answered is not one of these, but a ``DirectoryEntryProblem`` beside the good entries.
public enum DirectoryFailure: ErrorDomain {
    /// What a directory error says besides its code and message.
    public struct Details: Hashable, Sendable {
        /// The directory's URL, as configured.
        public var url: String
        /// The LDAP result code libldap or the server gave (negative for libldap's own: -1 server down, -5 timeout,
        /// -11 connect error), when there was one.
        public var resultCode: Int32?
        /// The diagnostic text libldap or the server gave, when there was one.
        public var diagnostic: String?

        /// Details for the directory at `url`.
        public init(url: String, resultCode: Int32? = nil, diagnostic: String? = nil) {
            self.url = url
            self.resultCode = resultCode
            self.diagnostic = diagnostic
        }
    }
}

extension ErrorCode where Domain == DirectoryFailure {
    /// The directory's settings cannot work: not an `ldap://` or `ldaps://` URL, a CA file that cannot be read.
    public static var misconfigured: Self { Self("misconfigured") }
    /// No connection to the server: nothing listens at the address, the name does not resolve, the network is down.
    public static var unreachable: Self { Self("unreachable") }
    /// The TLS handshake failed: the server's certificate is not from a trusted CA or not for the host name.
    public static var tlsFailed: Self { Self("tls") }
    /// The server refused the anonymous bind.
    public static var bindRefused: Self { Self("bind-refused") }
    /// The server refused or failed the search (no such base DN, a bad filter, an error of its own).
    public static var searchFailed: Self { Self("search-failed") }
    /// The server did not answer within the operation's time (or the connection within the connect time).
    public static var timedOut: Self { Self("timed-out") }
    /// The search found more entries than the cap: nothing is returned, so that a directory gone wrong cannot
    /// replace the trust with a partial or a flooded list.
    public static var tooManyEntries: Self { Self("too-many-entries") }
    /// One message of the answer was larger than the cap for an entry, or could not be decoded.
    public static var malformedAnswer: Self { Self("malformed-answer") }
}

extension CodedError where Domain == DirectoryFailure {
    /// An error about the directory at `url`: `message` a sentence for a person, `resultCode` and `diagnostic` what
    /// libldap or the server said, when there is something.
    init(code: Code, url: String, message: String, resultCode: Int32? = nil, diagnostic: String? = nil) {
        self.init(
            code: code, message: message,
            details: DirectoryFailure.Details(url: url, resultCode: resultCode, diagnostic: diagnostic))
    }
}
