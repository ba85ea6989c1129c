import FareCore

/// Why a fetch from a trust publisher (a key list, a blocklist, a version file) did not succeed. Its message names
/// the URL and says what to look at; `url` is the URL whose answer failed (after redirects, the last one followed).
public typealias FetchError = CodedError<FetchFailure>

/// The domain of `FetchError`: fetches from trust publishers that did not succeed.
public enum FetchFailure: ErrorDomain {
    /// What a fetch error says besides its code and message.
    public struct Details: Hashable, Sendable {
        /// The URL whose answer failed.
        public var url: String
        /// The HTTP status the publisher answered with, when it answered.
        public var status: Int?

        /// Details of a failure at `url`.
        public init(url: String, status: Int? = nil) {
            self.url = url
            self.status = status
        }
    }
}

extension ErrorCode where Domain == FetchFailure {
    /// The fetch cannot be made as configured: not an http(s) URL, plain http:// not allowed, an unreadable CA file,
    /// a pin that is not a base64 SHA-256.
    public static var misconfigured: Self { Self("misconfigured") }
    /// The publisher answered with a status other than 200, 304 or a followed redirect (e.g. 500, 404).
    public static var httpStatus: Self { Self("http-status") }
    /// No response head came within the head timeout (connecting and the TLS handshake included).
    public static var headTimeout: Self { Self("head-timeout") }
    /// The body did not arrive whole within the body timeout.
    public static var bodyTimeout: Self { Self("body-timeout") }
    /// The body is larger than the cap: refused from its announced length, or when reading reached the cap.
    public static var tooLarge: Self { Self("too-large") }
    /// The connection ended before the whole body came (fewer bytes than Content-Length, or an unfinished chunked
    /// body).
    public static var truncated: Self { Self("truncated") }
    /// The response's content type is not one of those accepted.
    public static var wrongContentType: Self { Self("wrong-content-type") }
    /// The publisher redirected to another scheme, host or port: refused, since trust data is fetched only from the
    /// place the operator configured.
    public static var redirectToOtherHost: Self { Self("redirect-to-other-host") }
    /// More redirects than allowed, or a redirect without a usable Location.
    public static var badRedirect: Self { Self("bad-redirect") }
    /// The TLS handshake failed: the certificate is not trusted by the configured trust, matches no pin, or is not
    /// for the host.
    public static var tlsFailed: Self { Self("tls") }
    /// The publisher could not be reached, or the connection broke before the response head.
    public static var unreachable: Self { Self("unreachable") }
    /// The answer is not HTTP, or not what it should be (a 304 to an unconditional request, a version file that is
    /// not text).
    public static var malformedResponse: Self { Self("malformed-response") }
    /// The fetch was stopped from outside (its task was cancelled).
    public static var cancelled: Self { Self("cancelled") }
}
