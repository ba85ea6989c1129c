import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import Synchronization

/// A trust publisher on 127.0.0.1 for tests of fetching (issue 49): HTTPS (or plain HTTP) on a free port, serving
/// files set at runtime by path, with a strong ETag per content and a Last-Modified, answering conditional requests
/// with 304, and failing on demand the ways publishers fail (``PublisherFailure``). It counts the requests per path
/// and keeps their headers, so that a test can see a conditional request was made.
///
/// Its certificate is issued for 127.0.0.1 and `localhost` by a throwaway CA (``PublisherPKI``, made once per test
/// process with the `openssl` command line); it presents the certificate and the CA's, so a client can pin the CA
/// file, the CA's key or the server's key.
///
/// It listens on 127.0.0.1 only. ``stop()`` closes it and every connection; dropping it does the same, so it never
/// outlives its test.
public final class LoopbackPublisher: Sendable {
    /// The port it listens on, on 127.0.0.1.
    public let port: Int
    /// Whether it speaks HTTPS.
    public let isSecure: Bool
    /// The CA and keys behind its certificate.
    public let pki: PublisherPKI
    private let shared: PublisherState
    private let channel: any Channel

    /// `https://127.0.0.1:PORT` (or `http://`).
    public var baseURL: String { (isSecure ? "https" : "http") + "://127.0.0.1:\(port)" }

    /// The URL of `path` (e.g. `/download.php`) on this publisher.
    public func url(_ path: String) -> String { baseURL + path }

    /// Starts a publisher on a free port of 127.0.0.1.
    ///
    /// - Parameters:
    ///   - secure: HTTPS (the default) or plain HTTP.
    ///   - identity: The certificate it presents (``PublisherIdentity``).
    public static func start(secure: Bool = true, identity: PublisherIdentity = .trusted) async throws
        -> LoopbackPublisher
    {
        let pki = try PublisherPKI.shared.get()
        let shared = PublisherState()
        var sslContext: NIOSSLContext?
        if secure {
            let chain: [NIOSSLCertificate]
            let key: NIOSSLPrivateKey
            switch identity {
            case .trusted:
                chain =
                    try NIOSSLCertificate.fromPEMFile(pki.serverCertificate)
                    + NIOSSLCertificate.fromPEMFile(pki.caCertificate)
                key = try NIOSSLPrivateKey(file: pki.serverKey, format: .pem)
            case .forgedChain:
                chain =
                    try NIOSSLCertificate.fromPEMFile(pki.strangerCertificate)
                    + NIOSSLCertificate.fromPEMFile(pki.caCertificate)
                key = try NIOSSLPrivateKey(file: pki.strangerKey, format: .pem)
            }
            let configuration = TLSConfiguration.makeServerConfiguration(
                certificateChain: chain.map { .certificate($0) }, privateKey: .privateKey(key))
            sslContext = try NIOSSLContext(configuration: configuration)
        }
        let tls = sslContext
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { child in
                do {
                    if let tls { try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: tls)) }
                    try child.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try child.pipeline.syncOperations.addHandler(PublisherHandler(shared: shared))
                    shared.opened(child)
                    return child.eventLoop.makeSucceededVoidFuture()
                } catch {
                    return child.eventLoop.makeFailedFuture(error)
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return LoopbackPublisher(
            port: channel.localAddress?.port ?? 0, isSecure: secure, pki: pki, shared: shared, channel: channel)
    }

    private init(port: Int, isSecure: Bool, pki: PublisherPKI, shared: PublisherState, channel: any Channel) {
        self.port = port
        self.isSecure = isSecure
        self.pki = pki
        self.shared = shared
        self.channel = channel
    }

    deinit {
        channel.close(promise: nil)
        shared.closeAll()
    }

    /// Stops listening and closes every connection.
    public func stop() async {
        try? await channel.close()
        shared.closeAll()
    }

    /// Serves `bytes` at `path` as `contentType`, last modified at `lastModified` (whole seconds), with a strong ETag
    /// of the content. Replaces what was there.
    public func serve(
        _ path: String, _ bytes: [UInt8], contentType: String, lastModified: Date = Date(timeIntervalSince1970: 1.7e9)
    ) {
        let file = PublishedFile(
            bytes: bytes, contentType: contentType, etag: PublishedFile.etag(of: bytes),
            lastModified: Date(timeIntervalSince1970: lastModified.timeIntervalSince1970.rounded(.down)))
        shared.state.withLock { $0.files[path] = file }
    }

    /// Serves `text` (UTF-8) at `path`, e.g. a `version.txt`.
    public func serve(_ path: String, text: String, contentType: String = "text/plain; charset=utf-8") {
        serve(path, Array(text.utf8), contentType: contentType)
    }

    /// Makes `path` fail as `failure` from the next request on; nil serves it normally again.
    public func fail(_ path: String, _ failure: PublisherFailure?) {
        shared.state.withLock { $0.failures[path] = failure }
    }

    /// The strong ETag served for `path` (quoted, as sent), if a file is there.
    public func etag(_ path: String) -> String? { shared.state.withLock { $0.files[path]?.etag } }

    /// The Last-Modified served for `path` (an HTTP date), if a file is there.
    public func lastModified(_ path: String) -> String? {
        shared.state.withLock { $0.files[path].map { HTTPDate.format($0.lastModified) } }
    }

    /// The requests for `path` so far, oldest first.
    public func requests(_ path: String) -> [PublisherRequest] { shared.state.withLock { $0.requests[path] ?? [] } }

    /// How many body bytes of an ``PublisherFailure/oversized(bytes:announced:)`` body for `path` were handed to the
    /// connection before the client stopped it.
    public func bodyBytesSent(_ path: String) -> Int { shared.state.withLock { $0.bodyBytesSent[path] ?? 0 } }
}

/// The certificate a ``LoopbackPublisher`` presents.
public enum PublisherIdentity: Sendable {
    /// Its own certificate for 127.0.0.1 and localhost, issued by the PKI's CA, followed by the CA's certificate.
    case trusted
    /// A certificate for 127.0.0.1 issued by another CA, followed by the PKI's CA certificate (which anyone can
    /// copy): a server that shows a pinned CA without being vouched for by it.
    case forgedChain
}

/// A way a publisher fails, set per path with ``LoopbackPublisher/fail(_:_:)``.
public enum PublisherFailure: Sendable, Hashable {
    /// Answers this status (e.g. 500) with a short text body.
    case status(Int)
    /// Holds the response head back this long, then answers normally.
    case holdHead(Duration)
    /// Sends the head (with the full Content-Length) and the first `after` bytes, then stalls this long before the
    /// rest.
    case stallBody(after: Int, for: Duration)
    /// Announces the full Content-Length, sends only the first `after` bytes, then closes the connection.
    case truncate(after: Int)
    /// Sends a body of `bytes` filler bytes (announced in Content-Length or chunked), one piece after the other as
    /// the client reads them, and counts what it sent (``LoopbackPublisher/bodyBytesSent(_:)``).
    case oversized(bytes: Int, announced: Bool)
    /// Serves the file with this content type instead of its own.
    case contentType(String)
    /// Redirects (302 by default) to `location`, absolute or relative.
    case redirect(to: String, status: Int = 302)
}

/// A request as the publisher saw it.
public struct PublisherRequest: Sendable {
    /// The request target, path and query.
    public var target: String
    /// Header fields by lowercased name.
    public var headers: [String: String]
}

/// A throwaway PKI made with the `openssl` command line: a CA, the publisher's certificate for 127.0.0.1 and
/// localhost, another CA with a certificate of its own for 127.0.0.1, and the SPKI pins (base64 SHA-256 of the
/// SubjectPublicKeyInfo) of each.
public struct PublisherPKI: Sendable {
    public let directory: String
    public var caCertificate: String { directory + "/ca.pem" }
    public var otherCACertificate: String { directory + "/other-ca.pem" }
    public var serverCertificate: String { directory + "/server.pem" }
    public var serverKey: String { directory + "/server.key" }
    public var strangerCertificate: String { directory + "/stranger.pem" }
    public var strangerKey: String { directory + "/stranger.key" }
    /// The pin of the CA's key.
    public let caPin: String
    /// The pin of the other CA's key.
    public let otherCAPin: String
    /// The pin of the publisher's own key.
    public let serverPin: String

    /// One PKI for the whole test process (each `openssl` run costs a moment).
    public static let shared: Result<PublisherPKI, PublisherSetupError> = Result {
        () throws(PublisherSetupError) in try PublisherPKI()
    }

    private static let script = #"""
        set -e
        ca() {
          {
            echo '[req]'; echo 'distinguished_name=dn'; echo 'x509_extensions=ext'; echo 'prompt=no'
            echo '[dn]'; echo "CN=farecheck test publisher $1"
            echo '[ext]'; echo 'basicConstraints=critical,CA:TRUE'; echo 'keyUsage=critical,keyCertSign,cRLSign'
            echo 'subjectKeyIdentifier=hash'
          } > $1.cnf
          openssl req -x509 -new -config $1.cnf -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout $1.key -out $1.pem -days 2 2>/dev/null
        }
        leaf() {
          openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.csr \
            -subj "/CN=127.0.0.1" 2>/dev/null
          printf 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' \
            > $1.ext
          openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -set_serial 0x$(openssl rand -hex 8) -days 2 \
            -out $1.pem -extfile $1.ext 2>/dev/null
        }
        pin() {
          openssl x509 -in $1.pem -pubkey -noout | openssl pkey -pubin -outform der \
            | openssl dgst -sha256 -binary | base64 > $1.pin
        }
        ca ca
        ca other-ca
        leaf server ca
        leaf stranger other-ca
        pin ca
        pin other-ca
        pin server
        """#

    private init() throws(PublisherSetupError) {
        let directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("farecheck-publisher-pki-\(getpid())").path
        self.directory = directory
        let pins: [String]
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let made = try Workbench(directory: directory).shell(Self.script)
            guard made.status == 0 else { throw PublisherSetupError(description: "openssl: \(made.stderr)") }
            pins = try ["ca", "other-ca", "server"].map { name in
                try String(contentsOfFile: directory + "/\(name).pin", encoding: .utf8)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
        } catch let failure as PublisherSetupError {
            throw failure
        } catch {
            throw PublisherSetupError(description: "cannot make the publisher's PKI in \(directory): \(error)")
        }
        caPin = pins[0]
        otherCAPin = pins[1]
        serverPin = pins[2]
    }
}

/// Why a ``PublisherPKI`` could not be made.
public struct PublisherSetupError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// A file a publisher serves.
struct PublishedFile: Sendable {
    var bytes: [UInt8]
    var contentType: String
    var etag: String
    var lastModified: Date

    /// A strong ETag that changes with the content: FNV-1a 64 of the bytes and their count.
    static func etag(of bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return "\"\(String(hash, radix: 16))-\(bytes.count)\""
    }
}

/// What a publisher's connections share: its files and failures, what it saw, and the open connections.
final class PublisherState: Sendable {
    struct Contents {
        var files: [String: PublishedFile] = [:]
        var failures: [String: PublisherFailure] = [:]
        var requests: [String: [PublisherRequest]] = [:]
        var bodyBytesSent: [String: Int] = [:]
    }

    let state = Mutex(Contents())
    private let connections = Mutex<[ObjectIdentifier: any Channel]>([:])

    func opened(_ channel: any Channel) {
        let key = ObjectIdentifier(channel)
        connections.withLock { $0[key] = channel }
        channel.closeFuture.whenComplete { [weak self] _ in
            self?.connections.withLock { _ = $0.removeValue(forKey: key) }
        }
    }

    func closeAll() {
        for channel in connections.withLock({ Array($0.values) }) { channel.close(promise: nil) }
    }
}

/// HTTP dates (`Sun, 06 Nov 1994 08:49:37 GMT`), as Last-Modified and If-Modified-Since carry them.
enum HTTPDate {
    static func format(_ date: Date) -> String { formatter().string(from: date) }
    static func parse(_ text: String) -> Date? { formatter().date(from: text) }

    /// A new formatter each time: a formatter is not safe to share between connections' threads.
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}

/// One connection of a publisher: answers each request from the shared state, then closes.
final class PublisherHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let shared: PublisherState
    private var request: HTTPRequestHead?

    init(shared: PublisherState) { self.shared = shared }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            request = head
        case .body:
            break
        case .end:
            guard let head = request else { return }
            request = nil
            respond(to: head, context: context)
        }
    }

    private func respond(to head: HTTPRequestHead, context: ChannelHandlerContext) {
        let path = String(head.uri.prefix { $0 != "?" })
        var fields: [String: String] = [:]
        for field in head.headers { fields[field.name.lowercased()] = field.value }
        let recorded = PublisherRequest(target: head.uri, headers: fields)
        let (file, failure) = shared.state.withLock { state in
            state.requests[path, default: []].append(recorded)
            return (state.files[path], state.failures[path])
        }
        let connection = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        switch failure {
        case .status(let status):
            send(status: status, body: Array("failure \(status)\n".utf8), contentType: "text/plain", context: context)
        case .redirect(let location, let status):
            send(
                status: status, body: [], contentType: nil, extra: [("Location", location)], context: context)
        case .holdHead(let delay):
            context.eventLoop.scheduleTask(in: timeAmount(delay)) {
                let (handler, context) = connection.value
                guard context.channel.isActive else { return }
                handler.answer(file, head: head, contentType: nil, context: context)
            }
        case .contentType(let contentType):
            answer(file, head: head, contentType: contentType, context: context)
        case .truncate(let after):
            guard let file else { return notFound(context) }
            sendHead(200, length: file.bytes.count, file: file, contentType: nil, context: context)
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: file.bytes.prefix(after))))))
                .whenComplete { _ in connection.value.1.close(promise: nil) }
        case .stallBody(let after, let delay):
            guard let file else { return notFound(context) }
            sendHead(200, length: file.bytes.count, file: file, contentType: nil, context: context)
            context.writeAndFlush(
                wrapOutboundOut(.body(.byteBuffer(ByteBuffer(bytes: file.bytes.prefix(after))))),
                promise: nil)
            context.eventLoop.scheduleTask(in: timeAmount(delay)) {
                let (handler, context) = connection.value
                guard context.channel.isActive else { return }
                handler.finishBody(ByteBuffer(bytes: file.bytes.dropFirst(after)), context: context)
            }
        case .oversized(let bytes, let announced):
            var headers = HTTPHeaders()
            headers.add(name: "Content-Type", value: file?.contentType ?? "application/octet-stream")
            headers.add(name: "Connection", value: "close")
            if announced { headers.add(name: "Content-Length", value: "\(bytes)") }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                promise: nil)
            sendFiller(remaining: bytes, path: path, context: context)
        case nil:
            answer(file, head: head, contentType: nil, context: context)
        }
    }

    /// The file, or 304 when the request's validators match it, or 404.
    private func answer(
        _ file: PublishedFile?, head: HTTPRequestHead, contentType: String?, context: ChannelHandlerContext
    ) {
        guard let file else { return notFound(context) }
        let notModified: Bool
        if let tags = head.headers.first(name: "If-None-Match") {
            // If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
            notModified = tags.split(separator: ",").contains {
                let tag = $0.trimmingCharacters(in: .whitespaces)
                return tag == file.etag || tag == "*"
            }
        } else if let since = head.headers.first(name: "If-Modified-Since").flatMap(HTTPDate.parse) {
            notModified = file.lastModified <= since
        } else {
            notModified = false
        }
        if notModified {
            send(
                status: 304, body: [], contentType: nil,
                extra: [("ETag", file.etag), ("Last-Modified", HTTPDate.format(file.lastModified))], context: context)
            return
        }
        sendHead(200, length: file.bytes.count, file: file, contentType: contentType, context: context)
        finishBody(ByteBuffer(bytes: file.bytes), context: context)
    }

    private func notFound(_ context: ChannelHandlerContext) {
        send(status: 404, body: Array("not found\n".utf8), contentType: "text/plain", context: context)
    }

    private func sendHead(
        _ status: Int, length: Int, file: PublishedFile, contentType: String?, context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: contentType ?? file.contentType)
        headers.add(name: "Content-Length", value: "\(length)")
        headers.add(name: "ETag", value: file.etag)
        headers.add(name: "Last-Modified", value: HTTPDate.format(file.lastModified))
        headers.add(name: "Connection", value: "close")
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
    }

    private func finishBody(_ body: ByteBuffer, context: ChannelHandlerContext) {
        context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }

    private func send(
        status: Int, body: [UInt8], contentType: String?, extra: [(String, String)] = [],
        context: ChannelHandlerContext
    ) {
        var headers = HTTPHeaders()
        if let contentType { headers.add(name: "Content-Type", value: contentType) }
        if status != 304 { headers.add(name: "Content-Length", value: "\(body.count)") }
        headers.add(name: "Connection", value: "close")
        for (name, value) in extra { headers.add(name: name, value: value) }
        let head = HTTPResponseHead(version: .http1_1, status: HTTPResponseStatus(statusCode: status), headers: headers)
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        finishBody(ByteBuffer(bytes: body), context: context)
    }

    /// Writes `remaining` filler bytes, one 64 KiB piece after the previous one was handed to the socket (so that
    /// what the client does not read is never sent ahead), counting them.
    private func sendFiller(remaining: Int, path: String, context: ChannelHandlerContext) {
        guard remaining > 0 else { return finishBody(ByteBuffer(), context: context) }
        let count = min(remaining, 64 << 10)
        let piece = ByteBuffer(repeating: UInt8(ascii: "x"), count: count)
        let connection = NIOLoopBound((self, context), eventLoop: context.eventLoop)
        let shared = shared
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(piece)))).whenComplete { result in
            let context = connection.value.1
            guard case .success = result, context.channel.isActive else { return context.close(promise: nil) }
            shared.state.withLock { $0.bodyBytesSent[path, default: 0] += count }
            // On the next tick: a write that completes at once would otherwise recurse until the stack runs out.
            context.eventLoop.execute {
                let (handler, context) = connection.value
                handler.sendFiller(remaining: remaining - count, path: path, context: context)
            }
        }
    }
}

/// The same length of time, to the nanosecond.
private func timeAmount(_ duration: Duration) -> TimeAmount {
    let (seconds, attoseconds) = duration.components
    return .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
}
