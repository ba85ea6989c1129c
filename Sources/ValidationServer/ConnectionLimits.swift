import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOHTTPTypes
import NIOSSL
import NIOTLS

/// How long the server waits on a client, and how many clients it serves at once: what keeps a client that
/// connects and then sends slowly, or nothing, from holding the server's connections for ever.
///
/// Every deadline closes the connection without an answer (the client has not said what it wants yet, or has
/// stopped saying it).
public struct ConnectionLimits: Sendable, Equatable {
    /// From the start of a connection, or from the first byte of a request after a keep-alive pause, until the
    /// request's head (request line and header fields) is complete. A client that sends half a head, or trickles
    /// it a byte at a time, is closed when it runs out.
    public var headerTimeout: Duration
    /// How long a keep-alive connection may wait for its next request, and how long a request body may pause
    /// between two reads.
    public var idleTimeout: Duration
    /// From the start of an HTTPS connection until its TLS handshake completes.
    public var tlsHandshakeTimeout: Duration
    /// The connections served at once. Beyond it the server stops accepting: new connections wait in the kernel's
    /// listen queue (`backlog` of them) until a served one closes, and are refused once the queue is full too.
    public var maximumConnections: Int
    /// The length of the listen queue.
    public var backlog: Int

    /// Makes limits; the defaults suit a fleet of validators syncing every few minutes.
    public init(
        headerTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        tlsHandshakeTimeout: Duration = .seconds(10), maximumConnections: Int = 512, backlog: Int = 256
    ) {
        self.headerTimeout = headerTimeout
        self.idleTimeout = idleTimeout
        self.tlsHandshakeTimeout = tlsHandshakeTimeout
        self.maximumConnections = maximumConnections
        self.backlog = backlog
    }

    /// Refuses a zero or negative value, naming the setting.
    public func validate() throws(ServerError) {
        for (name, duration) in [
            ("--header-timeout", headerTimeout), ("--idle-timeout", idleTimeout),
            ("--tls-handshake-timeout", tlsHandshakeTimeout),
        ] where duration <= .zero {
            throw ServerError(code: .invalidInput, message: "\(name) must be more than 0 seconds.")
        }
        guard maximumConnections > 0 else {
            throw ServerError(code: .invalidInput, message: "--max-connections must be 1 or more.")
        }
        guard backlog > 0 else {
            throw ServerError(code: .invalidInput, message: "The listen backlog must be 1 or more.")
        }
    }

    /// Reads a number of seconds as a command-line option gives it (`10`, `0.5`); nil for anything else.
    public static func seconds(_ text: String) -> Duration? {
        guard let value = Double(text), value.isFinite, value > 0, value <= 86_400 else { return nil }
        return .milliseconds(Int64((value * 1000).rounded()))
    }
}

extension ConnectionLimits {
    /// The HTTP/1.1 server with these limits: Hummingbird's own idle timeout (keep-alive pauses and stalled
    /// bodies) and connection cap, plus the head and TLS handshake deadlines it lacks, added in the connection's
    /// pipeline.
    func serverBuilder(tls: TLSConfiguration?) throws -> HTTPServerBuilder {
        let headerTimeout = TimeAmount(headerTimeout)
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [RequestHeadDeadline(timeout: headerTimeout)],
            idleTimeout: TimeAmount(idleTimeout))
        let handshakeTimeout = TimeAmount(tlsHandshakeTimeout)
        let plain = HTTPServerBuilder { responder in
            LimitedHTTPChannel(
                base: HTTP1Channel(responder: responder, configuration: http),
                handshakeTimeout: tls == nil ? nil : handshakeTimeout)
        }
        guard let tls else { return plain }
        // The TLS handler goes first in each connection's pipeline, then the handshake deadline that watches it.
        return try HTTPServerBuilder.tls(plain, tlsConfiguration: tls)
    }

    /// Hummingbird's application configuration with the cap and the backlog.
    func applicationConfiguration(address: BindAddress, logger: Logger) -> ApplicationConfiguration {
        ApplicationConfiguration(
            address: address, backlog: backlog,
            availableConnectionsDelegate: MaximumAvailableConnections(maximumConnections, logger: logger))
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// Hummingbird's HTTP/1.1 connection with two handlers of ours in front of its HTTP decoder: the TLS handshake
/// deadline (for HTTPS), and the signal that tells the head deadline when a request's first byte arrives.
struct LimitedHTTPChannel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    /// The handshake deadline, for a connection behind TLS; nil for plain HTTP.
    let handshakeTimeout: TimeAmount?

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            if let handshakeTimeout {
                try channel.pipeline.syncOperations.addHandler(TLSHandshakeDeadline(timeout: handshakeTimeout))
            }
            try channel.pipeline.syncOperations.addHandler(RequestBytesSignal())
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a connection whose TLS handshake has not completed in time. It sits after the TLS handler, which
/// announces a completed handshake with `TLSUserEvent.handshakeCompleted`.
final class TLSHandshakeDeadline: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    private var completed = false

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            completed = true
            deadline?.cancel()
            deadline = nil
        }
        context.fireUserInboundEventTriggered(event)
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil, !completed else { return }
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            channel.close(promise: nil)
        }
    }
}

/// Passes bytes on unchanged, announcing each read to the head deadline (after the HTTP decoder, which sees
/// only whole heads) with a `RequestBytesSignal.Arrived` event first.
final class RequestBytesSignal: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Bytes arrived from the client.
    struct Arrived {}

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.fireUserInboundEventTriggered(Arrived())
        context.fireChannelRead(data)
    }
}

/// Closes a connection whose request head does not arrive in time: counted from the start of the connection, or,
/// on a keep-alive connection, from the first byte after the last answer. While a request is being answered the
/// deadline is off; Hummingbird's idle timeout covers the pause before the next one and a stalled body.
final class RequestHeadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let timeout: TimeAmount
    private var deadline: Scheduled<Void>?
    /// Requests whose head arrived and whose answer has not ended.
    private var requestsInProgress = 0

    init(timeout: TimeAmount) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { arm(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        arm(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head = unwrapInboundIn(data) {
            requestsInProgress += 1
            disarm()
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            requestsInProgress = max(0, requestsInProgress - 1)
        }
        context.write(data, promise: promise)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        // The first byte of the next request starts its deadline; bytes during a request are its body (or the next
        // request pipelined, which the idle timeout bounds).
        guard event is RequestBytesSignal.Arrived else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        if requestsInProgress == 0 { arm(context) }
    }

    private func arm(_ context: ChannelHandlerContext) {
        guard deadline == nil else { return }
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: timeout) {
            channel.close(promise: nil)
        }
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
