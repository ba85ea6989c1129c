import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// How the publisher's TLS certificate is trusted.
public enum PublisherTrust: Sendable, Hashable {
    /// The system's trust store, and the certificate must name the host.
    case systemCAs
    /// Only the CA certificates in this PEM file (a publisher with a private CA), and the certificate must name the
    /// host.
    case pinnedCA(path: String)
    /// A certificate the server presents whose SubjectPublicKeyInfo has one of these SHA-256 hashes (base64, as
    /// `openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64` prints them) is the trust anchor:
    /// the server's own certificate, or a CA certificate its chain leads to (the chain is then checked up to it). The
    /// server's certificate must name the host either way. A pin survives a certificate's renewal with the same key.
    case pinnedSPKI([String])
}

/// How much a fetch may take: bytes and time.
public struct FetchLimits: Sendable, Hashable {
    /// The largest body accepted; reading stops at this many bytes (a larger body is never held whole).
    public var maximumBodyBytes: Int
    /// From the start of a request (connecting and the TLS handshake included) to its response head.
    public var headTimeout: Duration
    /// From the response head to the body's last byte.
    public var bodyTimeout: Duration
    /// How many redirects (to the same scheme, host and port) are followed.
    public var maximumRedirects: Int

    /// Limits; by default 64 MiB, 30 s to the head, 5 min for the body, 3 redirects.
    public init(
        maximumBodyBytes: Int = 64 << 20, headTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(300),
        maximumRedirects: Int = 3
    ) {
        self.maximumBodyBytes = maximumBodyBytes
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.maximumRedirects = maximumRedirects
    }
}

/// The validators of the copy held, from its fetch: sent back so that the publisher answers 304 when nothing changed.
public struct HeldValidators: Sendable, Hashable {
    /// The `ETag` the copy came with, sent as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` the copy came with, sent as `If-Modified-Since`.
    public var lastModified: String?

    /// Validators; none by default (an unconditional fetch).
    public init(etag: String? = nil, lastModified: String? = nil) {
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether there is anything to send.
    public var isEmpty: Bool { etag == nil && lastModified == nil }
}

/// What one fetch came to.
public enum FetchOutcome: Sendable, Hashable {
    /// The publisher has nothing newer than the copy held (304).
    case notModified
    /// The whole body, with its validators (to hold for the next fetch) and content type.
    case fetched(body: [UInt8], etag: String?, lastModified: String?, contentType: String?)
}

/// Fetches one URL of a trust publisher (the UIC key list, a blocklist, a version file), with the guards a schedule
/// that runs unattended needs: a conditional request, a size cap, timeouts on the head and on the body, redirects
/// only within the same scheme, host and port, and the TLS trust the operator configured.
///
/// Each fetch opens its own connection (sent `Connection: close`) and closes it whatever happens, so a fetcher holds
/// nothing between fetches and needs no shutdown. It speaks HTTP/1.1 through SwiftNIO itself rather than through
/// AsyncHTTPClient, which can pin a CA but not a public key (it takes no certificate verification callback) and
/// follows redirects to any host when it follows them at all.
public struct PublisherFetcher: Sendable {
    /// How the publisher's certificate is trusted.
    public var trust: PublisherTrust
    /// Whether plain `http://` URLs are fetched (tests and development only: trust data must not travel in clear).
    public var allowsPlainHTTP: Bool
    private let eventLoopGroup: any EventLoopGroup

    /// A fetcher with this trust, whose connections run on `eventLoopGroup` (by default NIO's shared one).
    public init(
        trust: PublisherTrust = .systemCAs, allowsPlainHTTP: Bool = false,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) {
        self.trust = trust
        self.allowsPlainHTTP = allowsPlainHTTP
        self.eventLoopGroup = eventLoopGroup
    }

    /// Fetches `url`, conditionally when `held` has validators, following redirects within the same scheme, host and
    /// port.
    ///
    /// - Parameters:
    ///   - url: An `https://` URL (or `http://` when `allowsPlainHTTP`).
    ///   - held: The validators of the copy held; a 304 then returns `.notModified`.
    ///   - limits: The body cap, the timeouts and the redirects followed.
    ///   - contentTypes: The media types accepted (e.g. `["application/xml", "text/xml"]`, compared without
    ///     parameters and case); nil accepts any.
    /// - Throws: `FetchError`, naming the URL and what failed.
    public func fetch(
        _ url: String, held: HeldValidators = HeldValidators(), limits: FetchLimits = FetchLimits(),
        accepting contentTypes: [String]? = nil
    ) async throws(FetchError) -> FetchOutcome {
        let tls = try PublisherTLS(trust: trust, url: url)
        var target = try PublisherURL(url, allowsPlainHTTP: allowsPlainHTTP)
        var redirects = 0
        while true {
            let exchange = PublisherExchange(
                url: target, held: held, limits: limits, contentTypes: contentTypes.map { Set($0.map(mediaType)) },
                tls: target.isSecure ? tls : nil)
            switch try await exchange.run(on: eventLoopGroup.next()) {
            case .notModified:
                return .notModified
            case .fetched(let body, let headers):
                return .fetched(
                    body: body, etag: headers.first(name: "ETag"), lastModified: headers.first(name: "Last-Modified"),
                    contentType: headers.first(name: "Content-Type"))
            case .redirect(let status, let location):
                let next = try target.redirect(to: location, status: status)
                redirects += 1
                guard redirects <= limits.maximumRedirects else {
                    throw FetchError(
                        code: .badRedirect,
                        message: "\(url) redirected more than \(limits.maximumRedirects) times (last to \(next.text)): "
                            + "configure the URL the publisher serves the file at.",
                        details: .init(url: target.text, status: status))
                }
                target = next
            }
        }
    }

    /// Fetches a small version file beside a data file (`version.txt`, `versionuic.txt`): at most 4 KiB of UTF-8
    /// text, any content type, unconditional (it is what tells whether the data file is worth fetching), its text
    /// with surrounding white space trimmed.
    ///
    /// - Throws: `FetchError`; `.malformedResponse` when the file is not UTF-8 text.
    public func fetchVersionFile(
        _ url: String, headTimeout: Duration = .seconds(30), bodyTimeout: Duration = .seconds(30)
    ) async throws(FetchError) -> String {
        let limits = FetchLimits(maximumBodyBytes: 4 << 10, headTimeout: headTimeout, bodyTimeout: bodyTimeout)
        guard case .fetched(let body, _, _, _) = try await fetch(url, limits: limits) else {
            // Unreachable: an unconditional fetch that gets a 304 fails as malformed.
            throw FetchError(code: .malformedResponse, message: "\(url) answered 304.", details: .init(url: url))
        }
        guard let text = String(validating: body, as: UTF8.self), !text.contains("\0") else {
            throw FetchError(
                code: .malformedResponse,
                message: "The version file \(url) is not UTF-8 text (\(body.count) bytes): is it the right URL?",
                details: .init(url: url))
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// A media type without its parameters, lowercased: `Text/XML; charset=utf-8` → `text/xml`.
func mediaType(_ contentType: String) -> String {
    (contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
        .lowercased()
}
