import Foundation
import HummingbirdCore
import Logging
import NIOCore
import NIOSSL
import NIOTLS

/// The limits on each connection to the daemon's HTTP page: a client that connects and then stalls (a partial
/// request head, a TLS handshake never finished, an idle keep-alive) is closed instead of holding a connection.
public struct ConnectionLimits: Sendable, Equatable {
    /// From a request's first byte until its response starts: the head and any body must arrive within this.
    public var requestTimeout: Duration
    /// A kept-alive connection with no request for this long is closed (also a connection that never sends one).
    public var idleTimeout: Duration
    /// A TLS client must finish its handshake within this.
    public var handshakeTimeout: Duration
    /// Connections served at once; more wait in the listen backlog until one closes.
    public var maxConnections: Int

    public init(
        requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(60),
        handshakeTimeout: Duration = .seconds(10), maxConnections: Int = 64
    ) {
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.handshakeTimeout = handshakeTimeout
        self.maxConnections = maxConnections
    }
}

/// The page's TLS settings: TLS 1.2 or newer, and on TLS 1.2 only ECDHE suites with AEAD ciphers (no CBC, no
/// SHA-1 MACs, no static RSA key exchange). TLS 1.3's suites are all AEAD.
public enum PageTLS {
    /// The TLS 1.2 suites offered.
    public static let tls12Suites: [NIOTLSCipher] = [
        .TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, .TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        .TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, .TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        .TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, .TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    ]

    /// A server context from a PEM certificate chain and key; the key is checked against the certificate.
    public static func context(certificateFile: String, keyFile: String) throws -> NIOSSLContext {
        let chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
        let key = try NIOSSLPrivateKey(file: keyFile, format: .pem)
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
        configuration.minimumTLSVersion = .tlsv12
        configuration.cipherSuiteValues = tls12Suites
        return try NIOSSLContext(configuration: configuration)
    }
}

/// Hummingbird's HTTP/1 channel with the page's guards in front of it, added through the channel setup: optional
/// TLS with a handshake deadline, and a deadline on reading each request. Hummingbird itself gives the idle
/// timeout (`HTTP1Channel.Configuration.idleTimeout`) and the cap on connections (`MaximumAvailableConnections`).
struct GuardedHTTP1Channel: ServerChildChannel {
    typealias Value = HTTP1Channel.Value

    let base: HTTP1Channel
    let limits: ConnectionLimits
    let tls: NIOSSLContext?

    init(responder: @escaping HTTPChannelHandler.Responder, limits: ConnectionLimits, tls: NIOSSLContext?) {
        base = HTTP1Channel(
            responder: responder,
            configuration: .init(idleTimeout: TimeAmount(limits.idleTimeout)))
        self.limits = limits
        self.tls = tls
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let limits = limits
        let tls = tls
        return channel.eventLoop.makeCompletedFuture {
            let pipeline = channel.pipeline.syncOperations
            if let tls {
                try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                try pipeline.addHandler(HandshakeDeadline(timeout: limits.handshakeTimeout))
            }
            try pipeline.addHandler(RequestReadDeadline(timeout: limits.requestTimeout))
        }.flatMap {
            base.setup(channel: channel, logger: logger)
        }
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}

/// Closes a TLS connection whose handshake is not done within the timeout (a client that opens the connection
/// and sends nothing, or a few bytes of a ClientHello, ties up no connection for longer).
final class HandshakeDeadline: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let timeout: Duration
    private var deadline: Scheduled<Void>?

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let channel = context.channel
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
            channel.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            deadline?.cancel()
            deadline = nil
            context.pipeline.syncOperations.removeHandler(self, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}

/// Closes a connection whose request does not arrive in full within the timeout: started by a request's first
/// byte, ended when the response starts (a response is written only once the handler has the request, and its
/// body when it reads one). Between requests, Hummingbird's idle timeout applies instead.
final class RequestReadDeadline: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private let timeout: Duration
    private var deadline: Scheduled<Void>?
    /// A response has started and no new request byte arrived since.
    private var responding = false

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if deadline == nil, !responding {
            let channel = context.channel
            deadline = context.eventLoop.scheduleTask(in: TimeAmount(timeout)) {
                channel.close(promise: nil)
            }
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        deadline?.cancel()
        deadline = nil
        responding = true
        context.write(data, promise: promise)
    }

    func flush(context: ChannelHandlerContext) {
        // The response (or its first part) is on its way: the next byte read starts the next request.
        responding = false
        context.flush()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        deadline?.cancel()
        deadline = nil
    }
}
