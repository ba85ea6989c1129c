import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL

/// What one request came to, before the fetcher judges a redirect.
enum ExchangeResult: Sendable {
    case notModified
    case fetched([UInt8], HTTPHeaders)
    case redirect(status: Int, location: String?)
}

/// One GET on a connection of its own: connect, TLS, request, response head, body, with the head's deadline counted
/// from the start and the body's from the head, and the connection closed whatever happens.
///
/// All of it runs on one event loop (the channel's handler and both timers), so the outcome is decided in one place
/// (`ExchangeReader`) without locks; the caller awaits one promise.
struct PublisherExchange: Sendable {
    let url: PublisherURL
    let held: HeldValidators
    let limits: FetchLimits
    /// The media types accepted; nil accepts any.
    let contentTypes: Set<String>?
    /// The TLS setup for an `https` URL; nil for plain `http`.
    let tls: PublisherTLS?

    func run(on eventLoop: any EventLoop) async throws(FetchError) -> ExchangeResult {
        let promise = eventLoop.makePromise(of: ExchangeResult.self)
        let headDeadline = NIODeadline.now() + timeAmount(limits.headTimeout)
        let exchange = self
        let bootstrap = ClientBootstrap(group: eventLoop)
            .connectTimeout(timeAmount(limits.headTimeout))
            .channelInitializer { channel in
                do {
                    if let tls = exchange.tls {
                        try channel.pipeline.syncOperations.addHandler(tls.handler(host: exchange.url.host))
                    }
                    try channel.pipeline.syncOperations.addHTTPClientHandlers()
                    try channel.pipeline.syncOperations.addHandler(
                        ExchangeReader(exchange: exchange, headDeadline: headDeadline, promise: promise))
                    return channel.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return channel.eventLoop.makeFailedFuture(error)
                }
            }
        let connected = bootstrap.connect(host: url.host, port: url.port)
        // A promise completed twice keeps its first outcome: whichever of these comes first is the answer.
        connected.whenFailure { error in promise.fail(exchange.connectionFailure(error)) }
        defer { connected.whenSuccess { channel in channel.close(promise: nil) } }
        do {
            return try await withTaskCancellationHandler {
                try await promise.futureResult.get()
            } onCancel: {
                promise.fail(
                    FetchError(
                        code: .cancelled, message: "The fetch of \(url.text) was stopped.",
                        details: .init(url: url.text)))
            }
        } catch let error as FetchError {
            throw error
        } catch {
            throw connectionFailure(error)
        }
    }

    /// The request: conditional on the copy held, asking for the accepted types, on a connection not kept.
    var requestHead: HTTPRequestHead {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: url.authority)
        headers.add(name: "User-Agent", value: "farecheck-server")
        headers.add(name: "Accept", value: contentTypes.map { $0.sorted().joined(separator: ", ") } ?? "*/*")
        headers.add(name: "Connection", value: "close")
        if let etag = held.etag { headers.add(name: "If-None-Match", value: etag) }
        if let lastModified = held.lastModified { headers.add(name: "If-Modified-Since", value: lastModified) }
        return HTTPRequestHead(version: .http1_1, method: .GET, uri: url.target, headers: headers)
    }

    func failure(_ code: FetchError.Code, _ message: String, status: Int? = nil, cause: (any Error)? = nil)
        -> FetchError
    {
        FetchError(code: code, message: message, details: .init(url: url.text, status: status), cause: cause)
    }

    /// A failure before the response head: refused, unknown host, timed out connecting, TLS.
    func connectionFailure(_ error: any Error) -> FetchError {
        if let fetchError = error as? FetchError { return fetchError }
        if let channelError = error as? ChannelError, case .connectTimeout = channelError {
            return failure(
                .headTimeout,
                "\(url.authority) did not answer within \(limits.headTimeout) (\(url.text)): no "
                    + "connection could be made in that time.", cause: error)
        }
        if isTLS(error) { return tlsFailure(error) }
        return failure(
            .unreachable,
            "Cannot reach \(url.authority) for \(url.text): \(error). Is the host name right, and is "
                + "the publisher up?", cause: error)
    }

    func tlsFailure(_ error: any Error) -> FetchError {
        let trusted = tls?.trusted ?? "the trust configured"
        return failure(
            .tlsFailed,
            "The TLS handshake with \(url.authority) failed for \(url.text): its certificate is not "
                + "trusted by \(trusted), or does not name the host (\(error)). Check the publisher's certificate "
                + "against the trust configured for it.", cause: error)
    }

    func isTLS(_ error: any Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError
    }
}

/// The exchange's channel handler: sends the request, judges the head, reads the body up to the cap, and completes
/// the promise once, with the first of: the answer, a failure, a timer.
final class ExchangeReader: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart
    typealias OutboundOut = HTTPClientRequestPart

    private enum State {
        case waitingForHead
        /// The head was judged good; `expected` is its Content-Length.
        case readingBody(HTTPResponseHead, expected: Int?)
        case done
    }

    private let exchange: PublisherExchange
    private let headDeadline: NIODeadline
    private let promise: EventLoopPromise<ExchangeResult>
    private var state = State.waitingForHead
    private var body: [UInt8] = []
    private var timer: Scheduled<Void>?
    private var context: ChannelHandlerContext?

    init(exchange: PublisherExchange, headDeadline: NIODeadline, promise: EventLoopPromise<ExchangeResult>) {
        self.exchange = exchange
        self.headDeadline = headDeadline
        self.promise = promise
    }

    private var url: String { exchange.url.text }
    private var limits: FetchLimits { exchange.limits }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        // Added before the connection is made: the head's deadline covers connecting and the handshake too.
        schedule(at: headDeadline, on: context.eventLoop)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        finish(
            .failure(
                exchange.failure(
                    .unreachable, "The connection to \(exchange.url.authority) ended early (\(exchange.url.text)).")))
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.head(exchange.requestHead)), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch (unwrapInboundIn(data), state) {
        case (.head(let head), .waitingForHead) where head.status.code < 200:
            // An informational answer (100, 103): the real one follows.
            break
        case (.head(let head), .waitingForHead):
            judge(head, on: context.eventLoop)
        case (.body(let part), .readingBody):
            guard body.count + part.readableBytes <= limits.maximumBodyBytes else {
                // Never more than the cap in memory: this part is refused whole, and the connection closed.
                finish(
                    .failure(
                        exchange.failure(
                            .tooLarge,
                            "\(url) sent more than \(limits.maximumBodyBytes) bytes, the cap for it: reading stopped "
                                + "at \(body.count) bytes. Raise the cap if the publisher's file really is that "
                                + "large.", status: 200)))
                return
            }
            body.append(contentsOf: part.readableBytesView)
        case (.end, .readingBody(let head, let expected)):
            if let expected, body.count < expected {
                finish(.failure(truncated(expected: expected)))
            } else {
                finish(.success(.fetched(body, head.headers)))
            }
        default:
            // The end of an informational answer, or anything after the outcome.
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch state {
        case .readingBody(_, let expected):
            // A TLS close without close_notify, a body that ends early or a reset: all mean a body cut short.
            finish(.failure(truncated(expected: expected, cause: error)))
        case .waitingForHead:
            if exchange.isTLS(error) {
                finish(.failure(exchange.tlsFailure(error)))
            } else if error is HTTPParserError {
                finish(
                    .failure(
                        exchange.failure(
                            .malformedResponse, "\(exchange.url.authority) did not answer HTTP for \(url) (\(error)).",
                            cause: error)))
            } else {
                finish(.failure(exchange.connectionFailure(error)))
            }
        case .done:
            break
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        switch state {
        case .readingBody(_, let expected):
            finish(.failure(truncated(expected: expected)))
        case .waitingForHead:
            finish(
                .failure(
                    exchange.failure(
                        .unreachable,
                        "\(exchange.url.authority) closed the connection without answering the request for \(url).")))
        case .done:
            break
        }
        context.fireChannelInactive()
    }

    /// Decides on the head: an outcome at once (304, a redirect, a refusal), or the body to read.
    private func judge(_ head: HTTPResponseHead, on eventLoop: any EventLoop) {
        let status = Int(head.status.code)
        switch status {
        case 304:
            guard !exchange.held.isEmpty else {
                finish(
                    .failure(
                        exchange.failure(
                            .malformedResponse, "\(url) answered 304 (not modified) to a request that held no copy.",
                            status: status)))
                return
            }
            finish(.success(.notModified))
            return
        case 301, 302, 303, 307, 308:
            finish(.success(.redirect(status: status, location: head.headers.first(name: "Location"))))
            return
        case 200:
            break
        default:
            finish(
                .failure(
                    exchange.failure(
                        .httpStatus,
                        "\(url) answered \(status) \(head.status.reasonPhrase): "
                            + (status >= 500
                                ? "the publisher cannot serve it now; the copy held stays, and the next fetch retries."
                                : "is the URL right?"),
                        status: status)))
            return
        }
        let contentType = head.headers.first(name: "Content-Type")
        if let accepted = exchange.contentTypes, !accepted.contains(mediaType(contentType ?? "")) {
            finish(
                .failure(
                    exchange.failure(
                        .wrongContentType,
                        "\(url) sent \(contentType.map { "content of type \($0)" } ?? "no content type"), not "
                            + "\(accepted.sorted().joined(separator: " or ")): is it the publisher's file, or an "
                            + "error or login page?", status: status)))
            return
        }
        let announced = head.headers.first(name: "Content-Length").flatMap { Int($0) }
        if let announced, announced > limits.maximumBodyBytes {
            finish(
                .failure(
                    exchange.failure(
                        .tooLarge,
                        "\(url) announces \(announced) bytes, more than the cap of \(limits.maximumBodyBytes): not "
                            + "read. Raise the cap if the publisher's file really is that large.", status: status)))
            return
        }
        state = .readingBody(head, expected: announced)
        body.reserveCapacity(min(announced ?? 0, limits.maximumBodyBytes))
        timer?.cancel()
        schedule(at: .now() + timeAmount(limits.bodyTimeout), on: eventLoop)
    }

    private func truncated(expected: Int?, cause: (any Error)? = nil) -> FetchError {
        let of = expected.map { " of the \($0) announced" } ?? ""
        return exchange.failure(
            .truncated,
            "The connection to \(exchange.url.authority) ended after \(body.count)\(of) bytes of \(url): the body is "
                + "incomplete and was not used.", status: 200, cause: cause)
    }

    private func schedule(at deadline: NIODeadline, on eventLoop: any EventLoop) {
        let reader = NIOLoopBound(self, eventLoop: eventLoop)
        timer = eventLoop.scheduleTask(deadline: deadline) { reader.value.timedOut() }
    }

    private func timedOut() {
        switch state {
        case .waitingForHead:
            finish(
                .failure(
                    exchange.failure(
                        .headTimeout,
                        "\(exchange.url.authority) did not answer within \(limits.headTimeout) (\(url)): the "
                            + "publisher is slow or stuck; the next fetch retries.")))
        case .readingBody:
            finish(
                .failure(
                    exchange.failure(
                        .bodyTimeout,
                        "The body of \(url) did not arrive within \(limits.bodyTimeout) (\(body.count) bytes came): "
                            + "the publisher is slow or stalled; the next fetch retries.", status: 200)))
        case .done:
            break
        }
    }

    /// Completes the promise with `result` unless it is complete already, and closes the connection.
    private func finish(_ result: Result<ExchangeResult, FetchError>) {
        if case .done = state { return }
        state = .done
        timer?.cancel()
        timer = nil
        switch result {
        case .success(let value): promise.succeed(value)
        case .failure(let error): promise.fail(error)
        }
        if case .failure = result { body = [] }
        context?.close(promise: nil)
    }
}

/// The same length of time, to the nanosecond.
func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
