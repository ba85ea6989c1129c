import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization

/// A failure talking to the server under test, with what was expected.
public struct LoopbackError: Error, CustomStringConvertible {
    public var description: String
    public init(description: String) { self.description = description }
}

/// One HTTP response as a test sees it.
public struct HTTPReply: Sendable {
    public var status: Int
    /// Header fields by lowercased name (the last one wins when a name repeats).
    public var headers: [String: String]
    public var body: [UInt8]
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The `name=value` part of the `Set-Cookie` header, to send back as `Cookie`.
    public var cookie: String? {
        headers["set-cookie"].flatMap { $0.split(separator: ";").first.map(String.init) }
    }

    init(_ head: HTTPClientResponse, body: [UInt8]) {
        status = Int(head.status.code)
        var fields: [String: String] = [:]
        for field in head.headers { fields[field.name.lowercased()] = field.value }
        headers = fields
        self.body = body
    }
}

/// HTTP to a server under test on 127.0.0.1, through async-http-client.
///
/// Each request goes on a connection of its own (`Connection: close`), as a browser's first visit does, and redirects
/// are not followed: a test sees exactly the response the server gave. Tests of what a server does with bytes no
/// HTTP client sends (half a request head, a stalled handshake, a held connection) use ``RawTCPConnection``.
public enum LoopbackHTTP {
    /// One client for every test; it lives as long as the test process. No connection cap below the tests' own
    /// (60 logins at once must reach the server at once).
    public static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(redirectConfiguration: .disallow)
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 256)
        return HTTPClient(eventLoopGroup: .singletonMultiThreadedEventLoopGroup, configuration: configuration)
    }()

    /// Sends a request to `127.0.0.1:port` and reads the whole response, within `timeout`.
    ///
    /// - Parameters:
    ///   - method: The request method, e.g. `GET`.
    ///   - path: The request target, e.g. `/healthz`.
    ///   - headers: Header fields; a `Host` given here replaces `127.0.0.1:port`.
    ///   - source: Another loopback address to connect from (e.g. `127.0.0.2`), to stand for another client.
    public static func request(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [],
        source: String? = nil, timeout: Duration = .seconds(20)
    ) async throws -> HTTPReply {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.method = HTTPMethod(rawValue: method)
        request.localAddress = source
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        request.headers.replaceOrAdd(name: "Connection", value: "close")
        if !body.isEmpty { request.body = .bytes(body) }
        let prepared = request
        return try await within(timeout, "\(method) \(path)") {
            let response = try await client.execute(prepared, timeout: TimeAmount(timeout))
            let bytes = try await response.body.collect(upTo: 64 << 20)
            return HTTPReply(response, body: Array(buffer: bytes))
        }
    }

    /// `operation`, or a ``LoopbackError`` naming `what` when it takes longer than `limit` (and is cancelled).
    static func within<Result: Sendable>(
        _ limit: Duration, _ what: String, _ operation: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Result.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await Task.sleep(for: limit)
                throw LoopbackError(description: "\(what): nothing from the server within \(limit)")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }
}

extension TimeAmount {
    /// The same length of time, to the nanosecond.
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}

/// One server-sent event: the `event:` name, the `data:` lines joined, or a comment.
public struct ServerSentEvent: Sendable {
    public var event: String?
    public var data: String?
    public var comment: String?
}

/// A client of a server-sent event stream (the daemon's `/events`) over async-http-client: the response head, then
/// one event at a time.
///
/// The body is read by a task of its own; a read that waits more than 20 seconds fails the test instead of hanging
/// it, and ``hangUp()`` closes the connection as a browser tab that goes away does.
public final class EventStreamClient {
    /// The response head (its body empty).
    public let head: HTTPReply
    private var chunks: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
    private var pending: [UInt8] = []
    private let reader: Task<Void, Never>
    private let watchdog: Task<Void, Never>
    private let watch: ReadWatch

    /// Whether a read is waiting, since when, and whether it waited too long: shared with the reading task.
    private final class ReadWatch: Sendable {
        let waitingSince = Mutex<ContinuousClock.Instant?>(nil)
        let timedOut = Atomic<Bool>(false)
    }

    /// Connects and reads the response head; `cookie` is sent as the `Cookie` header.
    public init(port: Int, path: String = "/events", cookie: String? = nil) async throws {
        var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)")
        request.headers.add(name: "Accept", value: "text/event-stream")
        if let cookie { request.headers.add(name: "Cookie", value: cookie) }
        // Never back into the client's pool: a connection a stream ended on, reused by the next request while the
        // server closes it, fails that request.
        request.headers.add(name: "Connection", value: "close")
        let response = try await LoopbackHTTP.client.execute(request, timeout: .seconds(20))
        head = HTTPReply(response, body: [])
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        chunks = stream.makeAsyncIterator()
        let watch = ReadWatch()
        self.watch = watch
        let body = response.body
        let reader = Task {
            do {
                for try await buffer in body { continuation.yield(Array(buffer: buffer)) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: streamFailure(error, timedOut: watch.timedOut.load(ordering: .relaxed)))
            }
        }
        self.reader = reader
        watchdog = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(200))
                if let since = watch.waitingSince.withLock({ $0 }), since.duration(to: .now) > .seconds(20) {
                    watch.timedOut.store(true, ordering: .relaxed)
                    reader.cancel()
                    return
                }
            }
        }
    }

    deinit {
        reader.cancel()
        watchdog.cancel()
    }

    /// Closes the connection now, as a client that goes away does.
    public func hangUp() {
        reader.cancel()
        watchdog.cancel()
    }

    /// The next event or comment, skipping `retry:` only blocks; `nil` when the server ends the stream.
    public func next() async throws -> ServerSentEvent? {
        while true {
            if let end = pending.firstRange(of: Array("\n\n".utf8)) {
                let block = String(decoding: pending[..<end.lowerBound], as: UTF8.self)
                pending.removeSubrange(..<end.upperBound)
                var event = ServerSentEvent()
                for line in block.split(separator: "\n") {
                    if line.hasPrefix(":") {
                        event.comment = line.dropFirst().trimmingCharacters(in: .whitespaces)
                    } else if line.hasPrefix("event:") {
                        event.event = line.dropFirst(6).trimmingCharacters(in: .whitespaces)
                    } else if line.hasPrefix("data:") {
                        let data = String(line.dropFirst(5).drop(while: { $0 == " " }))
                        event.data = event.data.map { $0 + "\n" + data } ?? data
                    }
                }
                if event.event == nil, event.data == nil, event.comment == nil { continue }
                return event
            }
            watch.waitingSince.withLock { $0 = .now }
            defer { watch.waitingSince.withLock { $0 = nil } }
            guard let bytes = try await chunks.next() else { return nil }
            pending += bytes
        }
    }

    /// The next event named `name`, skipping others; fails at the end of the stream.
    public func next(named name: String) async throws -> ServerSentEvent {
        while let event = try await next() {
            if event.event == name { return event }
        }
        throw LoopbackError(description: "the stream ended before an `\(name)` event")
    }
}

/// How a stream's body read ended in `error`: `nil` when the server closed the connection after its last frame
/// (what a browser's EventSource reads as the end: the frames read before it stand), else the failure to report.
private func streamFailure(_ error: any Error, timedOut: Bool) -> (any Error)? {
    if timedOut { return LoopbackError(description: "nothing from the server within 20 s") }
    if let client = error as? HTTPClientError, client == .remoteConnectionClosed { return nil }
    if let channel = error as? ChannelError, case .ioOnClosedChannel = channel { return nil }
    return error
}

/// The Prometheus text exposition format, read strictly enough to catch a broken scrape.
public enum PrometheusText {
    /// Every sample by its series (name and labels as written), failing on any line that is not a comment,
    /// a blank, or `series value`.
    public static func samples(_ text: String) throws -> [String: Double] {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.isEmpty {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                throw LoopbackError(description: "not a Prometheus sample line: \(line)")
            }
            let series = String(line[..<space])
            let name = series.prefix { $0 != "{" }
            guard name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" }), !name.isEmpty else {
                throw LoopbackError(description: "bad metric name in: \(line)")
            }
            samples[series] = value
        }
        return samples
    }
}
