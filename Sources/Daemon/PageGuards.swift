import FareCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The request context of the daemon's page: Hummingbird's basics and the client's address (the login lockout
/// counts failures per address, and the audit log names it).
public struct PageRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The client's IP address as text (no port), or `unknown`.
    var clientAddress: String { remoteAddress?.ipAddress ?? "unknown" }
}

extension AllowedHosts {
    /// The names that reach a page listening on `host`: the localhost names, the listen address itself, and for a
    /// wildcard address (`0.0.0.0`, `::`) the machine's host name and every address of its interfaces.
    public static func defaults(listeningOn host: String) -> AllowedHosts {
        var names = ["localhost", "127.0.0.1", "::1", "localhost.localdomain", host]
        if host == "0.0.0.0" || host == "::" || host.isEmpty {
            names.append(ProcessInfo.processInfo.hostName)
            names.append(contentsOf: interfaceAddresses())
        }
        return AllowedHosts(names.filter { !$0.isEmpty })
    }

    /// Every IPv4 and IPv6 address of this machine's interfaces, as text.
    static func interfaceAddresses() -> [String] {
        var first: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&first) == 0, let first else { return [] }
        defer { freeifaddrs(first) }
        var addresses: [String] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let address = entry.pointee.ifa_addr else { continue }
            let family = Int32(address.pointee.sa_family)
            guard family == AF_INET || family == AF_INET6 else { continue }
            var text = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let length = socklen_t(
                family == AF_INET ? MemoryLayout<sockaddr_in>.size : MemoryLayout<sockaddr_in6>.size)
            guard getnameinfo(address, length, &text, socklen_t(text.count), nil, 0, NI_NUMERICHOST) == 0 else {
                continue
            }
            var name = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            // A link-local IPv6 address carries its interface (`fe80::1%eth0`); Host headers do not.
            if let percent = name.firstIndex(of: "%") { name = String(name[..<percent]) }
            addresses.append(name)
        }
        return addresses
    }
}

/// Refuses, with 421 Misdirected Request, every request whose `Host` is not one of the page's names.
struct HostCheck: RouterMiddleware {
    typealias Context = PageRequestContext

    let hosts: AllowedHosts

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard hosts.allows(request.head.authority) else {
            let body = #"{"error":"This page does not answer to that host name."}"#
            return Response(
                status: .misdirectedRequest,
                headers: [.contentType: "application/json", .cacheControl: "no-store"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: body)))
        }
        return try await next(request, context)
    }
}

/// Marks every answer of the page (its HTML, JSON, metrics, the event stream, a refusal):
/// `X-Content-Type-Options: nosniff`, so that a browser never reads a verdict's text (ticket text) as another type
/// than the one declared, and `Referrer-Policy: no-referrer`, so that a link followed from the page tells nobody
/// the handheld's address.
struct PageResponseHeaders: RouterMiddleware {
    typealias Context = PageRequestContext

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.pageReferrerPolicy] = "no-referrer"
        return response
    }
}

extension HTTPField.Name {
    /// `Referrer-Policy` (not among HTTPTypes' names).
    fileprivate static let pageReferrerPolicy = Self("Referrer-Policy")!
}

/// Audit lines for refused logins and requests without a session, at most ``linesPerMinute`` in any minute, so that
/// a flood of guesses cannot flood the log; what was left out is counted in the next line written.
///
/// The minute slides: a line is written only if the ``linesPerMinute``-th line before it is more than 60 s old, so
/// no 60 s hold more (a window fixed to the clock's minutes would let twice as many through across its edge).
final class AuditTrail: Sendable {
    static let linesPerMinute = 30

    private struct State {
        /// When the last lines were written, oldest first, at most ``linesPerMinute``.
        var written: [Date] = []
        var suppressed = 0
    }

    private let logger: Logger
    private let state = Mutex(State())

    init(logger: Logger) {
        self.logger = logger
    }

    /// Logs `message` at warning level, unless ``linesPerMinute`` lines were written in the last 60 s. Metadata
    /// values from the client must already be escaped (``PrintableText``).
    func record(_ message: Logger.Message, metadata: Logger.Metadata, at now: Date = Date()) {
        let (write, suppressed) = state.withLock { state -> (Bool, Int) in
            if state.written.count == Self.linesPerMinute, let oldest = state.written.first,
                now.timeIntervalSince(oldest) < 60
            {
                state.suppressed += 1
                return (false, 0)
            }
            if state.written.count == Self.linesPerMinute { state.written.removeFirst() }
            state.written.append(now)
            let reported = state.suppressed
            state.suppressed = 0
            return (true, reported)
        }
        if suppressed > 0 {
            logger.warning(
                "\(suppressed) audit line(s) left out since the last one (rate limit: \(Self.linesPerMinute) in any minute)"
            )
        }
        if write { logger.warning(message, metadata: metadata) }
    }
}
