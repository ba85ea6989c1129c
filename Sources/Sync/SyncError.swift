import ValidationAPI

/// Why a request to the validation API, or a sync round, did not succeed.
///
/// Every failure leaves the store as it was before the step that failed: a refused bundle or delta is never
/// partly applied.
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added, so match with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for logs and for scripts that read them.
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The code's name.
        public var description: String { name }

        /// The server refused the device token (401): unknown or revoked device.
        public static let unauthorized = Code("unauthorized")
        /// The server could not answer now (5xx): retried later.
        public static let serverUnavailable = Code("server-unavailable")
        /// The server refused the request (another 4xx).
        public static let rejected = Code("rejected")
        /// The server answered a first-use claim it cannot back with its own trust (4xx `claim-refused`, 403 from the
        /// reference server): the ticket is not a single-use ticket valid then by the server's keys, or the device may
        /// not claim. The server answered; the link is up.
        public static let claimRefused = Code("claim-refused")
        /// The server refused a claim because this device claims more first uses than its rate allows (429
        /// `too-many-claims`, with `Retry-After`). The server answered; the link is up.
        public static let tooManyClaims = Code("too-many-claims")
        /// The server could not be reached, or the connection broke (refused, reset, closed mid-body).
        public static let unreachable = Code("unreachable")
        /// The TLS handshake failed: the server's certificate is not trusted, or the server refused the client
        /// certificate (or its absence).
        public static let tlsFailed = Code("tls")
        /// The server did not answer within the request's deadline.
        public static let timedOut = Code("timed-out")
        /// The response body was larger than the cap for its kind.
        public static let bodyTooLarge = Code("body-too-large")
        /// The response is not `application/json`.
        public static let wrongContentType = Code("wrong-content-type")
        /// The response body is not the document expected (truncated, corrupted, another format).
        public static let malformedResponse = Code("malformed-response")
        /// A signed document was refused: unknown anchor, bad signature, rollback.
        public static let refused = Code("refused")
        /// The local store failed or refused the data.
        public static let store = Code("store")
        /// The sync configuration cannot work (bad URL, no anchors).
        public static let misconfigured = Code("misconfigured")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and what to do about it.
    public var message: String
    /// The failure underneath (an HTTP client, decoding, bundle or store error), when there is one.
    public var cause: (any Error & Sendable)?

    /// Makes an error from its parts.
    public init(code: Code, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The bundle refusal underneath, when this is one (`.refused`).
    public var bundleError: BundleError? { cause as? BundleError }

    /// The message, the code and the cause, on one line for logs.
    public var description: String {
        guard let cause else { return "\(message) [\(code)]" }
        return "\(message) [\(code)] (cause: \(cause))"
    }
}
