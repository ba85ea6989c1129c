import FareCore
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import Presentation
import ServiceLifecycle
import Synchronization

/// The daemon's HTTP endpoint: health, metrics, the live verdict stream and the inspector page.
///
/// Routes:
/// - `GET /` — the inspector page: the last verdict, large, updated live from `/events`.
/// - `GET /healthz` — ``DaemonStatus/report`` as JSON; 200 when `ok`, 503 when `degraded`.
/// - `GET /metrics` — ``DaemonMetrics/render()`` in the Prometheus text format.
/// - `GET /events` — server-sent events: `verdict` (a ``VerdictEvent`` JSON line), `session` (the client's
///   session, or `null`) and a `: keep-alive` comment every 15 seconds. In inspector mode only for a client with a
///   session (its cookie): the stream ends with the session, as soon as it ends, and replays the last verdict only
///   if it was made in that session. At a gate, to anyone, without holder data unless configured.
/// - `POST /login` (staff id and PIN, JSON or form-urlencoded): sets the session cookie (HttpOnly,
///   SameSite=Strict, Secure over TLS). `GET /session` and `POST /logout` need it (401 without).
///
/// Every request must name one of the page's host names in `Host` (421 otherwise): a DNS-rebinding page, whose
/// requests carry its own name, reaches nothing. Failed logins and refusals for want of a session are logged for
/// audit (at most ``AuditTrail/linesPerMinute`` a minute, text from the client escaped).
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
    private let options: Options
    private let audit: AuditTrail
    private let onServerRunning: @Sendable (_ port: Int) async -> Void

    /// How the page is served.
    public struct Options: Sendable {
        /// The host names (and addresses) the page answers to; `nil`: ``AllowedHosts/defaults(listeningOn:)``.
        public var hosts: AllowedHosts?
        /// Whether a gate's page (no login) shows holder data.
        public var gateHolderData: Bool
        /// TLS for this listener (then the session cookie is `Secure`).
        public var tls: NIOSSLContext?
        public var limits: ConnectionLimits
        /// The page's configured language and its time zone.
        public var locale: InspectorPage.Locale

        public init(
            hosts: AllowedHosts? = nil, gateHolderData: Bool = false, tls: NIOSSLContext? = nil,
            limits: ConnectionLimits = ConnectionLimits(), locale: InspectorPage.Locale = InspectorPage.Locale()
        ) {
            self.hosts = hosts
            self.gateHolderData = gateHolderData
            self.tls = tls
            self.limits = limits
            self.locale = locale
        }
    }

    /// The cookie that carries a client's session token.
    static let cookieName = "farecheck_session"

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
    ///   - logger: Where requests that change state (login, logout), refusals and server start are logged.
    ///   - options: Host names, holder data at a gate, TLS and connection limits.
    ///   - onServerRunning: Called once the socket is bound, with the port actually bound.
    public init(
        host: String, port: Int, hub: EventHub, status: DaemonStatus, metrics: DaemonMetrics,
        sessions: InspectorSessions, logger: Logger, options: Options = Options(),
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void = { _ in }
    ) {
        self.init(
            host: host, port: port, hub: hub, status: status, metrics: metrics, sessions: sessions, logger: logger,
            options: options, audit: AuditTrail(logger: logger), onServerRunning: onServerRunning)
    }

    /// Creates the service with an audit trail shared with the daemon's other listeners (plain and TLS): their
    /// refusals count against one limit of ``AuditTrail/linesPerMinute``, not one each.
    init(
        host: String, port: Int, hub: EventHub, status: DaemonStatus, metrics: DaemonMetrics,
        sessions: InspectorSessions, logger: Logger, options: Options, audit: AuditTrail,
        onServerRunning: @escaping @Sendable (_ port: Int) async -> Void
    ) {
        self.options = options
        self.audit = audit
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
        let limits = options.limits
        let tls = options.tls
        let application = Application(
            router: makeRouter(closing: closing),
            server: HTTPServerBuilder { responder in
                GuardedHTTP1Channel(responder: responder, limits: limits, tls: tls)
            },
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maxConnections, logger: logger)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                logger.info(
                    "HTTP endpoint listening",
                    metadata: ["host": "\(host)", "port": "\(port)", "tls": "\(tls != nil)"])
                await onServerRunning(port)
            },
            logger: logger
        )
        do {
            try await withGracefulShutdownHandler {
                try await application.run()
            } onGracefulShutdown: {
                closing.close()
            }
        } catch let error as IOError {
            // Binding failed (the server's only socket call that reaches here): said in words, with the address.
            throw DaemonStartError(
                message: NetworkErrorText.listening(
                    on: "\(host):\(port)", errno: error.errnoCode,
                    setting: tls == nil ? "[http] listen (or --http)" : "[http] tls_listen"))
        }
    }

    // MARK: Routes

    private func makeRouter(closing: StreamClosing) -> Router<PageRequestContext> {
        let router = Router(context: PageRequestContext.self)
        router.add(middleware: PageResponseHeaders())
        router.add(middleware: HostCheck(hosts: options.hosts ?? AllowedHosts.defaults(listeningOn: host)))
        let secure = options.tls != nil
        // Put together from its resource files here, at startup, not at the first request.
        let page = InspectorPage.html(loginRequired: sessions.isRequired, locale: options.locale)
        router.get("/") { _, _ in
            Self.response(
                .ok, page, contentType: "text/html; charset=utf-8",
                extraHeaders: [.contentSecurityPolicy: InspectorPage.contentSecurityPolicy])
        }
        router.get("/healthz") { _, _ in
            let report = status.report
            return Self.json(report.status == "ok" ? .ok : .serviceUnavailable, report)
        }
        router.get("/metrics") { _, _ in
            Self.response(.ok, metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        router.get("/events") { request, context in
            let token = Self.sessionToken(request)
            if sessions.isRequired, sessions.session(forToken: token) == nil {
                refusedForWantOfSession(request, context)
                return Self.json(.unauthorized, Refusal(error: "Log in to see verdicts."))
            }
            return eventStream(for: request, token: token, closing: closing)
        }
        router.get("/session") { request, context in
            let token = Self.sessionToken(request)
            guard let session = sessions.session(forToken: token) else {
                // The page asks this at every load before anyone logs in: only a token that is not valid is news.
                if token != nil { refusedForWantOfSession(request, context) }
                return Self.json(.unauthorized, Refusal(error: "Not logged in."))
            }
            return Self.json(.ok, session)
        }
        router.post("/login") { request, context in
            if Self.isCrossSite(request) { return Self.crossSiteRefusal }
            return try await login(request, context: context, secure: secure)
        }
        router.post("/logout") { request, context in
            if Self.isCrossSite(request) { return Self.crossSiteRefusal }
            guard let session = sessions.logout(token: Self.sessionToken(request)) else {
                refusedForWantOfSession(request, context)
                return Self.json(.unauthorized, Refusal(error: "Not logged in."))
            }
            logger.notice(
                "Inspector logged out",
                metadata: ["staff": "\(PrintableText(session.staffID))", "client": "\(context.clientAddress)"])
            var response = Response(status: .noContent)
            response.headers[.setCookie] = Self.cookie(token: "", secure: secure, clear: true)
            return response
        }
        return router
    }

    /// Logs (for audit, rate-limited) a request refused because it carries no valid session.
    private func refusedForWantOfSession(_ request: Request, _ context: PageRequestContext) {
        audit.record(
            "Refused without a session",
            metadata: [
                "path": "\(PrintableText(request.uri.path))", "client": "\(context.clientAddress)",
                "cookie": "\(Self.sessionToken(request) == nil ? "none" : "not valid")",
            ])
    }

    /// The session token from the request's cookie.
    static func sessionToken(_ request: Request) -> String? {
        for field in request.headers[values: .cookie] {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
                let value = parts[1].trimmingCharacters(in: .whitespaces)
                return value.isEmpty ? nil : value
            }
        }
        return nil
    }

    /// The `Set-Cookie` value: the token, only for this page (`HttpOnly`: no script reads it; `SameSite=Strict`: no
    /// other site's page sends it), `Secure` when the page is served over TLS.
    static func cookie(token: String, secure: Bool, clear: Bool = false) -> String {
        var cookie = "\(cookieName)=\(token); Path=/; HttpOnly; SameSite=Strict"
        if secure { cookie += "; Secure" }
        if clear { cookie += "; Max-Age=0" }
        return cookie
    }

    /// Whether a state-changing request comes from another site's page: a form elsewhere must not log an
    /// inspector in or out of a handheld through its loopback address. Browsers name the page's origin in
    /// `Origin` (and `Sec-Fetch-Site`) on every cross-origin POST; tools that send neither are not browsers.
    ///
    /// `Sec-Fetch-Site: same-origin` (set by the browser, never by a page's script) is taken as it is: with the
    /// page's `Referrer-Policy: no-referrer`, a browser posts the login form (without script) with `Origin: null`.
    static func isCrossSite(_ request: Request) -> Bool {
        if let name = HTTPField.Name("Sec-Fetch-Site"), let site = request.headers[name] {
            if site == "cross-site" || site == "same-site" { return true }
            if site == "same-origin" { return false }
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

    private func login(_ request: Request, context: PageRequestContext, secure: Bool) async throws -> Response {
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
        // The staff id is the client's text: escaped before it reaches a log line (a newline would forge one).
        let staff = PrintableText(form.staffID)
        let client = context.clientAddress
        do {
            let login = try await sessions.login(staffID: form.staffID, pin: form.pin, address: client)
            logger.notice(
                "Inspector logged in", metadata: ["staff": "\(staff)", "method": "pin", "client": "\(client)"])
            if login.upgraded {
                logger.notice("PIN hash upgraded to scrypt", metadata: ["staff": "\(staff)"])
            }
            if login.pinTooShort {
                let minimum = sessions.pinPolicy.minimumLength
                logger.warning(
                    "PIN shorter than the configured minimum (\(minimum)); set a longer one with `farecheck staff add`",
                    metadata: ["staff": "\(staff)"])
            }
            var response = Self.json(.ok, login.session)
            response.headers[.setCookie] = Self.cookie(token: login.token, secure: secure)
            return response
        } catch {
            audit.record(
                "Login refused",
                metadata: ["staff": "\(staff)", "client": "\(client)", "cause": "\(error.cause.rawValue)"])
            if error.cause == .secretUnavailable {
                let why = "The PIN hash of this staff id was made with another PIN secret than the one configured"
                logger.error("\(why) ([inspector] pin_secret_file)", metadata: ["staff": "\(staff)"])
            }
            if let retryAfter = error.retryAfter {
                var response = Self.json(.tooManyRequests, Refusal(error: error.message))
                response.headers[.retryAfter] = String(retryAfter)
                return response
            }
            return Self.json(
                error.cause == .storeFailed ? .serviceUnavailable : .unauthorized, Refusal(error: error.message))
        }
    }

    // MARK: Server-sent events

    /// One message on an event stream.
    private enum StreamFrame: Sendable {
        case verdict(PublishedVerdict, holderData: Bool)
        case session(InspectorSessions.Session?)
        case keepAlive

        var text: String {
            switch self {
            case .verdict(let event, let holderData):
                // The id lets a client tell a replayed last event from a new one after it reconnects.
                return "event: verdict\nid: \(event.event.id)\ndata: \(event.line(holderData: holderData))\n\n"
            case .session(let session):
                let json = session.flatMap { try? VerdictEvent.encoder.encode($0) }
                return "event: session\ndata: \(json.map { String(decoding: $0, as: UTF8.self) } ?? "null")\n\n"
            case .keepAlive:
                return ": keep-alive\n\n"
            }
        }
    }

    private func eventStream(for request: Request, token: String?, closing: StreamClosing) -> Response {
        let hub = hub
        let sessions = sessions
        // Holder data for an inspector's own session; at a gate, only when configured.
        let holderData = sessions.isRequired || options.gateHolderData
        let body = ResponseBody { writer in
            try await request.body.consumeWithCancellationOnInboundClose { _ in
                try await Self.stream(
                    hub: hub, sessions: sessions, token: token, holderData: holderData, closing: closing, to: &writer)
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
        hub: EventHub, sessions: InspectorSessions, token: String?, holderData: Bool, closing: StreamClosing,
        to writer: inout any ResponseBodyWriter
    ) async throws {
        let first = sessions.session(forToken: token)
        // In inspector mode the stream belongs to the client's session: it ends when the session does, at once
        // (logout, timeout, removal, another inspector's login), and replays only a verdict made in that session,
        // never the previous inspector's passenger.
        let endsWithSession = sessions.isRequired
        // Subscribing before the first frame goes out means that a client which has read it receives every
        // event published after it.
        let events = hub.subscribe(replayingLastIf: { last in
            guard endsWithSession else { return true }
            return Self.madeIn(first, last.event)
        })
        let (frames, sink) = AsyncStream.makeStream(of: StreamFrame.self, bufferingPolicy: .bufferingNewest(256))
        let registration = closing.onClose { sink.finish() }
        defer { closing.remove(registration) }
        let ended: @Sendable () -> Void = {
            guard sessions.session(forToken: token) == nil else { return }
            sink.yield(.session(nil))
            sink.finish()
        }
        let observer = endsWithSession ? sessions.onSessionEnd(ended) : nil
        defer {
            if let observer { sessions.removeSessionEndObserver(observer) }
        }
        // Reconnect soon after the daemon restarts, and show who is logged in at once.
        try await writer.write(ByteBuffer(string: "retry: 2000\n\n" + StreamFrame.session(first).text))
        // The session may have ended before the observer was registered.
        if endsWithSession { ended() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in events {
                    // A verdict published after the session ended, before the stream noticed, is not sent.
                    if endsWithSession, sessions.session(forToken: token) == nil { break }
                    sink.yield(.verdict(event, holderData: holderData))
                }
                if endsWithSession { ended() }
                sink.finish()
            }
            group.addTask {
                var current = first
                var sinceKeepAlive = Duration.zero
                while !Task.isCancelled {
                    try await Task.sleep(for: sessionCheckInterval)
                    sinceKeepAlive += sessionCheckInterval
                    let now = sessions.session(forToken: token)
                    if !Self.sameSession(now, current) {
                        current = now
                        sink.yield(.session(now))
                        if endsWithSession, now == nil {
                            sink.finish()
                            return
                        }
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

    /// Whether `event` was made while `session` was open: scanned after its login, with its inspector.
    private static func madeIn(_ session: InspectorSessions.Session?, _ event: VerdictEvent) -> Bool {
        guard let session, let inspector = event.inspector else { return false }
        return inspector == session.staffID && event.inspectedAt >= session.since
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
