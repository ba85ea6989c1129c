import FareCore
import ValidationAPI

/// Why a request to the validation API, or a sync round, did not succeed.
///
/// Every failure leaves the store as it was before the step that failed: a refused bundle or delta is never
/// partly applied.
public typealias SyncError = CodedError<SyncFailure>

/// The domain of `SyncError`: requests to the validation API and sync rounds that did not succeed.
public enum SyncFailure: ErrorDomain {}

extension ErrorCode where Domain == SyncFailure {
    /// The server refused the device token (401): unknown or revoked device.
    public static var unauthorized: Self { Self("unauthorized") }
    /// The server could not answer now (5xx): retried later.
    public static var serverUnavailable: Self { Self("server-unavailable") }
    /// The server refused the request (another 4xx).
    public static var rejected: Self { Self("rejected") }
    /// The server answered a first-use claim it cannot back with its own trust (4xx `claim-refused`, 403 from the
    /// reference server): the ticket is not a single-use ticket valid then by the server's keys, or the device may
    /// not claim. The server answered; the link is up.
    public static var claimRefused: Self { Self("claim-refused") }
    /// The server refused a claim because this device claims more first uses than its rate allows (429
    /// `too-many-claims`, with `Retry-After`). The server answered; the link is up.
    public static var tooManyClaims: Self { Self("too-many-claims") }
    /// The server could not be reached, or the connection broke (refused, reset, closed mid-body).
    public static var unreachable: Self { Self("unreachable") }
    /// The TLS handshake failed: the server's certificate is not trusted, or the server refused the client
    /// certificate (or its absence).
    public static var tlsFailed: Self { Self("tls") }
    /// The server did not answer within the request's deadline.
    public static var timedOut: Self { Self("timed-out") }
    /// The response body was larger than the cap for its kind.
    public static var bodyTooLarge: Self { Self("body-too-large") }
    /// The response is not `application/json`.
    public static var wrongContentType: Self { Self("wrong-content-type") }
    /// The response body is not the document expected (truncated, corrupted, another format).
    public static var malformedResponse: Self { Self("malformed-response") }
    /// A signed document was refused: unknown anchor, bad signature, rollback.
    public static var refused: Self { Self("refused") }
    /// The local store failed or refused the data.
    public static var store: Self { Self("store") }
    /// The sync configuration cannot work (bad URL, no anchors).
    public static var misconfigured: Self { Self("misconfigured") }
}

extension SyncFailure {
    /// Every code a sync round may fail with (the inspector page has words for each).
    public static let codes: [SyncError.Code] = [
        .unauthorized, .serverUnavailable, .rejected, .claimRefused, .tooManyClaims, .unreachable, .tlsFailed,
        .timedOut, .bodyTooLarge, .wrongContentType, .malformedResponse, .refused, .store, .misconfigured,
    ]
}

extension CodedError where Domain == SyncFailure {
    /// The bundle refusal underneath, when this is one (`.refused`).
    public var bundleError: BundleError? { cause as? BundleError }
}
