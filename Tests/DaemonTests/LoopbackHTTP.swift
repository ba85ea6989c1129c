import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A failure talking to the server under test, with what was expected.
struct LoopbackError: Error, CustomStringConvertible {
    var description: String
}

/// One HTTP response as the bytes on the wire said it.
struct HTTPReply {
    var status: Int
    /// Header fields by lowercased name.
    var headers: [String: String]
    var body: [UInt8]
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// One server-sent event: the `event:` name, the `data:` lines joined, or a comment.
struct ServerSentEvent {
    var event: String?
    var data: String?
    var comment: String?
}

/// A TCP connection to the server under test on 127.0.0.1, speaking HTTP/1.1 by hand.
///
/// Reads poll and sleep rather than block, so that no thread the server's handlers need is held. Each read gives
/// up after 20 seconds (or the timeout given) so that a broken server fails a test instead of hanging it.
final class LoopbackConnection {
    private let fd: Int32
    private let receiveTimeout: Int

    /// Connects to 127.0.0.1:`port`, from `source` (another loopback address, e.g. `127.0.0.2`, to stand for
    /// another client) when given.
    init(port: Int, source: String? = nil, receiveTimeout: Int = 20) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw LoopbackError(description: "socket: errno \(errno)") }
        var timeout = timeval(tv_sec: receiveTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard bound == 0 else {
                close(fd)
                throw LoopbackError(description: "bind to \(source): errno \(errno)")
            }
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(fd)
            throw LoopbackError(description: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        self.fd = fd
        self.receiveTimeout = receiveTimeout
    }

    deinit { close(fd) }

    /// Closes the connection now, as a client that goes away does.
    func hangUp() {
        shutdown(fd, Int32(SHUT_RDWR))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw LoopbackError(description: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// The next bytes the server sent; empty at the end of the stream.
    ///
    /// Waits with `poll` and `Task.sleep`, never blocking a thread: many connections waiting at once (a test of 60
    /// simultaneous logins) must not take every thread the server under test needs in the same process.
    func receive() async throws -> [UInt8] {
        let deadline = ContinuousClock.now + .seconds(receiveTimeout)
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 0) > 0 {
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count >= 0 { return Array(buffer[..<count]) }
                if errno == ECONNRESET { return [] }
                if errno != EAGAIN && errno != EWOULDBLOCK {
                    throw LoopbackError(description: "recv: errno \(errno)")
                }
            }
            guard ContinuousClock.now < deadline else {
                throw LoopbackError(description: "nothing from the server within \(receiveTimeout) s")
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Sends a request and reads the whole response (the request asks the server to close after it).
    static func request(
        port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = [],
        source: String? = nil
    ) async throws -> HTTPReply {
        let connection = try LoopbackConnection(port: port, source: source)
        var head = "\(method) \(path) HTTP/1.1\r\n"
        if !headers.keys.contains(where: { $0.lowercased() == "host" }) { head += "Host: 127.0.0.1:\(port)\r\n" }
        head += "Connection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" { head += "Content-Length: \(body.count)\r\n" }
        try connection.send(Array((head + "\r\n").utf8) + body)
        var received: [UInt8] = []
        while true {
            let bytes = try await connection.receive()
            if bytes.isEmpty { break }
            received += bytes
        }
        guard let (reply, rest) = try parseHead(received) else {
            throw LoopbackError(description: "incomplete response: \(String(decoding: received, as: UTF8.self))")
        }
        var complete = reply
        if reply.headers["transfer-encoding"] == "chunked" {
            var chunks = ChunkedBody()
            complete.body = try chunks.decode(rest)
        } else {
            complete.body = rest
        }
        return complete
    }

    /// Splits a response head from what follows it, or `nil` when the head is not complete yet.
    static func parseHead(_ bytes: [UInt8]) throws -> (HTTPReply, rest: [UInt8])? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.firstRange(of: separator) else { return nil }
        let lines = String(decoding: bytes[..<end.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw LoopbackError(description: "not an HTTP status line: \(lines[0])")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (HTTPReply(status: status, headers: headers, body: []), Array(bytes[end.upperBound...]))
    }
}

extension HTTPReply {
    /// The `name=value` part of the `Set-Cookie` header, to send back as `Cookie`.
    var cookie: String? {
        headers["set-cookie"].flatMap { $0.split(separator: ";").first.map(String.init) }
    }
}

/// Undoes chunked transfer coding as bytes arrive.
struct ChunkedBody {
    private var pending: [UInt8] = []
    /// Whether the last (empty) chunk has arrived.
    private(set) var finished = false

    /// Takes more bytes off the wire and returns the body bytes they complete.
    mutating func decode(_ bytes: [UInt8]) throws -> [UInt8] {
        pending += bytes
        var body: [UInt8] = []
        while !finished, let lineEnd = pending.firstRange(of: Array("\r\n".utf8)) {
            let sizeText = String(decoding: pending[..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16) else {
                throw LoopbackError(description: "bad chunk size line: \(sizeText)")
            }
            if size == 0 {
                finished = true
                pending.removeAll()
                break
            }
            let start = lineEnd.upperBound
            guard pending.count >= start + size + 2 else { break }
            body += pending[start..<start + size]
            pending.removeFirst(start + size + 2)
        }
        return body
    }
}

/// A client of `/events`: the response head, then one event at a time.
final class EventStreamClient {
    let connection: LoopbackConnection
    private(set) var head: HTTPReply
    private var chunks = ChunkedBody()
    private var pending: [UInt8] = []

    /// Connects and reads the response head; `cookie` is sent as the `Cookie` header.
    init(port: Int, path: String = "/events", cookie: String? = nil) async throws {
        connection = try LoopbackConnection(port: port)
        let cookieLine = cookie.map { "Cookie: \($0)\r\n" } ?? ""
        try connection.send(
            Array(
                "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n\(cookieLine)\r\n"
                    .utf8))
        var received: [UInt8] = []
        while true {
            let bytes = try await connection.receive()
            if bytes.isEmpty { throw LoopbackError(description: "the server closed before a response head") }
            received += bytes
            if let (head, rest) = try LoopbackConnection.parseHead(received) {
                self.head = head
                pending = try chunks.decode(rest)
                return
            }
        }
    }

    /// The next event or comment, skipping `retry:` only blocks; `nil` when the server ends the stream.
    func next() async throws -> ServerSentEvent? {
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
            if chunks.finished { return nil }
            let bytes = try await connection.receive()
            if bytes.isEmpty { return nil }
            pending += try chunks.decode(bytes)
        }
    }

    /// The next event named `name`, skipping others; fails at the end of the stream.
    func next(named name: String) async throws -> ServerSentEvent {
        while let event = try await next() {
            if event.event == name { return event }
        }
        throw LoopbackError(description: "the stream ended before an `\(name)` event")
    }
}
