import FareCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// The daemon's HTTP endpoint: health, metrics, the live verdict stream and the inspector page.
///
/// Routes:
/// - `GET /` — the inspector page: the last verdict, large, updated live from `/events`.
/// - `GET /healthz` — ``DaemonStatus/report`` as JSON; 200 when `ok`, 503 when `degraded`.
/// - `GET /metrics` — ``DaemonMetrics/render()`` in the Prometheus text format.
/// - `GET /events` — server-sent events: `verdict` (a ``VerdictEvent`` JSON line), `session` (the
///   inspector's session, or `null`) and a `: keep-alive` comment every 15 seconds.
/// - `GET /session`, `POST /login` (staff id and PIN, JSON or form-urlencoded), `POST /logout`.
///
/// The service runs until its task is cancelled or the service group shuts down gracefully; open event
/// streams are ended at graceful shutdown so that it does not wait for clients that never hang up.
public struct HTTPService: Service {
    /// The address to listen on, e.g. `127.0.0.1` or `0.0.0.0`.
    public let host: String
    /// The port to listen on; 0 asks the system for a free one (reported to `onServerRunning`).
    public let port: Int
    private let hub: EventHub
    private let status: DaemonStatus
    private let metrics: DaemonMetrics
    private let sessions: InspectorSessions
    private let logger: Logger
    private let onServerRunning: @Sendable (_ port: Int) async -> Void

    /// The largest `/login` body accepted; a staff id and PIN fit many times over.
    static let maxLoginBodyBytes = 16 * 1024
    /// How often an idle event stream sends a comment, so that proxies and clients keep it open.
    static let keepAliveInterval = Duration.seconds(15)
    /// How often an event stream looks for a changed inspector session (login, logout, badge, timeout).
    static let sessionCheckInterval = Duration.seconds(1)

    /// Creates the service; nothing listens until ``run()``.
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port to listen on, or 0 for any free port.
    ///   - hub: The verdicts to stream on `/events` and show on the page.
    ///   - status: The daemon's health, for `/healthz`.
    ///   - metrics: The metrics served at `/metrics`.
    ///   - sessions: The inspector sessions behind `/login`, `/logout` and `/session`.
    ///   - logger: Where requests that change state (login, logout) and server start are logged.
    ///   - onServerRunning: Called once the socket is bound, with the port actually bound.
    public init(
        host: String, port: Int, hub: EventHub, status: DaemonStatus, metrics: DaemonMetrics,
        sessions: InspectorSessions, logger: Logger,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.host = host
        self.port = port
        self.hub = hub
        self.status = status
        self.metrics = metrics
        self.sessions = sessions
        self.logger = logger
        self.onServerRunning = onServerRunning
    }

    /// Listens and serves until the service group shuts down (gracefully or by cancellation).
    public func run() async throws {
        let closing = StreamClosing()
        let logger = logger
        let host = host
        let onServerRunning = onServerRunning
        let application = Application(
            router: makeRouter(closing: closing),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info("HTTP endpoint listening", metadata: ["host": "\(host)", "port": "\(port)"])
                await onServerRunning(port)
            },
            logger: logger
        )
        try await withGracefulShutdownHandler {
            try await application.run()
        } onGracefulShutdown: {
            closing.close()
        }
    }

    // MARK: Routes

    private func makeRouter(closing: StreamClosing) -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        router.get("/") { _, _ in
            Self.response(
                .ok, InspectorPage.html(loginRequired: sessions.isRequired), contentType: "text/html; charset=utf-8",
                extraHeaders: [.contentSecurityPolicy: InspectorPage.contentSecurityPolicy])
        }
        router.get("/healthz") { _, _ in
            let report = status.report
            return Self.json(report.status == "ok" ? .ok : .serviceUnavailable, report)
        }
        router.get("/metrics") { _, _ in
            Self.response(.ok, metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("/events") { request, _ in
            eventStream(for: request, closing: closing)
        }
        router.get("/session") { _, _ in
            guard let session = sessions.current() else { return Self.json(.notFound, Self.Null()) }
            return Self.json(.ok, session)
        }
        router.post("/login") { request, _ in
            if Self.isCrossSite(request) { return Self.crossSiteRefusal }
            return try await login(request)
        }
        router.post("/logout") { request, _ in
            if Self.isCrossSite(request) { return Self.crossSiteRefusal }
            if let session = sessions.current() {
                logger.notice("Inspector logged out", metadata: ["staff": "\(session.staffID)"])
            }
            sessions.logout()
            return Response(status: .noContent)
        }
        return router
    }

    /// Whether a state-changing request comes from another site's page: a form elsewhere must not log an
    /// inspector in or out of a handheld through its loopback address. Browsers name the page's origin in
    /// `Origin` (and `Sec-Fetch-Site`) on every cross-origin POST; tools that send neither are not browsers.
    static func isCrossSite(_ request: Request) -> Bool {
        if let name = HTTPField.Name("Sec-Fetch-Site"), let site = request.headers[name],
            site == "cross-site" || site == "same-site"
        {
            return true
        }
        guard let origin = request.headers[.origin], let host = request.head.authority else { return false }
        guard let url = URL(string: origin), let originHost = url.host else { return true }
        let originAuthority = url.port.map { "\(originHost):\($0)" } ?? originHost
        return originAuthority.lowercased() != host.lowercased()
    }

    static var crossSiteRefusal: Response {
        json(.forbidden, Refusal(error: "Logins are accepted only from the inspector page itself."))
    }

    /// What `/login` accepts, as JSON or as a form.
    private struct LoginForm: Decodable {
        var staffID: String
        var pin: String
    }

    /// The body of every refusal: one sentence for the page to show.
    private struct Refusal: Encodable {
        var error: String
    }

    /// Encodes as JSON `null`.
    private struct Null: Encodable {
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        }
    }

    private func login(_ request: Request) async throws -> Response {
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxLoginBodyBytes)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            return Self.json(.contentTooLarge, Refusal(error: "The login request is too large."))
        }
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        let form: LoginForm
        do {
            if contentType.hasPrefix("application/json") {
                form = try JSONDecoder().decode(LoginForm.self, from: Data(body.readableBytesView))
            } else if contentType.hasPrefix("application/x-www-form-urlencoded") {
                let text = String(decoding: body.readableBytesView, as: UTF8.self)
                form = try URLEncodedFormDecoder().decode(LoginForm.self, from: text)
            } else {
                return Self.json(
                    .unsupportedMediaType, Refusal(error: "Send the staff id and PIN as JSON or as a form."))
            }
        } catch {
            // The decoder's message could quote the body, and with it the PIN: say only what is expected.
            return Self.json(.badRequest, Refusal(error: "The login needs a staffID and a pin."))
        }
        do {
            let session = try sessions.login(staffID: form.staffID, pin: form.pin)
            logger.notice("Inspector logged in", metadata: ["staff": "\(session.staffID)", "method": "pin"])
            return Self.json(.ok, session)
        } catch {
            logger.warning("Login refused", metadata: ["staff": "\(form.staffID)", "why": "\(error.message)"])
            return Self.json(.unauthorized, Refusal(error: error.message))
        }
    }

    // MARK: Server-sent events

    /// One message on an event stream.
    private enum StreamFrame: Sendable {
        case verdict(PublishedVerdict)
        case session(InspectorSessions.Session?)
        case keepAlive

        var text: String {
            switch self {
            case .verdict(let event):
                // The id lets a client tell a replayed last event from a new one after it reconnects.
                return "event: verdict\nid: \(event.event.id)\ndata: \(event.line)\n\n"
            case .session(let session):
                let json = session.flatMap { try? VerdictEvent.encoder.encode($0) }
                return "event: session\ndata: \(json.map { String(decoding: $0, as: UTF8.self) } ?? "null")\n\n"
            case .keepAlive:
                return ": keep-alive\n\n"
            }
        }
    }

    private func eventStream(for request: Request, closing: StreamClosing) -> Response {
        let hub = hub
        let sessions = sessions
        let body = ResponseBody { writer in
            try await request.body.consumeWithCancellationOnInboundClose { _ in
                try await Self.stream(hub: hub, sessions: sessions, closing: closing, to: &writer)
            }
            try await writer.finish(nil)
        }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
            body: body)
    }

    /// Writes frames until the hub finishes, the service shuts down, the client hangs up (the task is
    /// cancelled) or a write fails.
    private static func stream(
        hub: EventHub, sessions: InspectorSessions, closing: StreamClosing, to writer: inout any ResponseBodyWriter
    ) async throws {
        // Subscribing before the first frame goes out means that a client which has read it receives every
        // event published after it.
        let events = hub.subscribe()
        let (frames, sink) = AsyncStream.makeStream(of: StreamFrame.self, bufferingPolicy: .bufferingNewest(256))
        let registration = closing.onClose { sink.finish() }
        defer { closing.remove(registration) }
        let first = sessions.current()
        // Reconnect soon after the daemon restarts, and show who is logged in at once.
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n" + StreamFrame.session(first).text))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events { sink.yield(.verdict(event)) }
                sink.finish()
            }
            group.addTask {
                var current = first
                var sinceKeepAlive = Duration.zero
                while !Task.isCancelled {
                    try await Task.sleep(for: sessionCheckInterval)
                    sinceKeepAlive += sessionCheckInterval
                    let now = sessions.current()
                    if !Self.sameSession(now, current) {
                        current = now
                        sink.yield(.session(now))
                    }
                    if sinceKeepAlive >= keepAliveInterval {
                        sinceKeepAlive = .zero
                        sink.yield(.keepAlive)
                    }
                }
            }
            for await frame in frames {
                try await writer.write(ByteBuffer(string: frame.text))
            }
            group.cancelAll()
        }
    }

    /// Whether two sessions are the same login (activity alone is not a change worth sending).
    private static func sameSession(_ a: InspectorSessions.Session?, _ b: InspectorSessions.Session?) -> Bool {
        a?.staffID == b?.staffID && a?.method == b?.method && a?.since == b?.since
    }

    // MARK: Responses

    private static func json(_ status: HTTPResponse.Status, _ value: some Encodable) -> Response {
        let data = (try? VerdictEvent.encoder.encode(value)) ?? Data("null".utf8)
        return response(status, Array(data), contentType: "application/json")
    }

    private static func response(
        _ status: HTTPResponse.Status, _ text: String, contentType: String, extraHeaders: HTTPFields = [:]
    ) -> Response {
        response(status, Array(text.utf8), contentType: contentType, extraHeaders: extraHeaders)
    }

    private static func response(
        _ status: HTTPResponse.Status, _ bytes: [UInt8], contentType: String, extraHeaders: HTTPFields = [:]
    ) -> Response {
        var headers: HTTPFields = [.contentType: contentType, .cacheControl: "no-store"]
        headers.append(contentsOf: extraHeaders)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Tells the open event streams that the service is shutting down, so that each ends its response.
private final class StreamClosing: Sendable {
    private struct State {
        var closed = false
        var handlers: [Int: @Sendable () -> Void] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    /// Runs `handler` at ``close()``, or now if that has happened; returns a registration for ``remove(_:)``.
    func onClose(_ handler: @escaping @Sendable () -> Void) -> Int {
        let id: Int? = state.withLock { state in
            guard !state.closed else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.handlers[id] = handler
            return id
        }
        guard let id else {
            handler()
            return -1
        }
        return id
    }

    func remove(_ registration: Int) {
        state.withLock { _ = $0.handlers.removeValue(forKey: registration) }
    }

    func close() {
        let handlers = state.withLock { state in
            state.closed = true
            defer { state.handlers.removeAll() }
            return Array(state.handlers.values)
        }
        for handler in handlers { handler() }
    }
}
