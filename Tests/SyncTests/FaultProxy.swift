import Foundation
import Glibc
import SystemCalls
import ValidationAPI

/// A TCP proxy on loopback in front of the reference server that misbehaves on request: it delays, cuts,
/// corrupts, truncates or inflates responses, changes their content type, or answers 500 itself.
///
/// It speaks just enough HTTP/1.1 to find the body: one request per connection (it tells both ends
/// `Connection: close`), the response read whole from the server before the fault is applied.
final class FaultProxy: @unchecked Sendable {
    /// What happens to responses.
    enum Fault: Sendable, Equatable {
        /// Passed through unchanged.
        case none
        /// Held back this many seconds before it is sent.
        case delay(Double)
        /// The head and half the body are sent, then the connection is closed.
        case cutBody
        /// The request reaches the server, but the response is dropped and the connection closed.
        case dropResponse
        /// Bytes in the middle of the body are flipped (same length).
        case corrupt
        /// Only the first half of the body is sent, with a Content-Length to match (well-formed HTTP).
        case truncate
        /// The body is replaced by a JSON document of this many bytes.
        case oversize(Int)
        /// The content type becomes `text/html`.
        case wrongContentType
        /// The proxy answers 500 without asking the server.
        case serverError
        /// The proxy answers 200 with this JSON body without asking the server (an old document replayed).
        case replay([UInt8])
        /// The signed document's payload is altered by one byte, its signature kept.
        case tamperPayload
        /// The response header `name` is set to `value` (a server whose `Date` is wrong).
        case header(String, String)
        /// The head is sent at once, then the body one byte a second (a stalling proxy).
        case trickle
    }

    private let lock = NSLock()
    private var upstreamPort: Int
    private var rules: [(prefix: String, fault: Fault)] = []
    private var received: [(path: String, body: [UInt8])] = []
    private var trickling: (started: Int, finished: Int, bodyBytes: Int) = (0, 0, 0)
    private let listener: Int32
    /// The port the proxy listens on.
    let port: Int
    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Listens on a free loopback port and forwards to the server at `upstream` (`http://127.0.0.1:PORT`).
    init(upstream: String) throws {
        upstreamPort = Self.port(of: upstream)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else { throw ProxyError(message: "cannot listen: \(errno)") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        Thread.detachNewThread { [self] in
            while let client = try? systemCall({ accept(descriptor, nil, nil) }) {
                Thread.detachNewThread { [self] in self.serve(client) }
            }
        }
    }

    deinit {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Points the proxy at another server (after a restart on a new port).
    func setUpstream(_ url: String) {
        lock.withLock { upstreamPort = Self.port(of: url) }
    }

    /// Applies `fault` to responses to paths that start with `prefix` (every path by default); `.none` clears.
    /// Trickled answers begun and sent to their end, and the last one's body size (its seconds at a byte a second).
    var trickled: (started: Int, finished: Int, bodyBytes: Int) { lock.withLock { trickling } }

    func set(_ fault: Fault, forPathsStartingWith prefix: String = "/") {
        lock.withLock {
            rules.removeAll { $0.prefix == prefix }
            if fault != .none { rules.append((prefix, fault)) }
        }
    }

    /// The bodies of the requests to paths that start with `prefix` that reached the proxy so far, in order.
    func requestBodies(toPathsStartingWith prefix: String) -> [[UInt8]] {
        lock.withLock { received.filter { $0.path.hasPrefix(prefix) }.map(\.body) }
    }

    private func fault(for path: String) -> Fault {
        lock.withLock { rules.last { path.hasPrefix($0.prefix) }?.fault ?? .none }
    }

    // MARK: One connection

    private func serve(_ client: Int32) {
        defer { close(client) }
        guard case (var head, let body)? = Self.readMessage(from: client, isResponse: false) else { return }
        let requestLine = head.split(separator: "\r\n").first.map(String.init) ?? ""
        let path = requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "/"
        let fault = fault(for: path)
        lock.withLock { received.append((path, body)) }
        if fault == .serverError {
            let text = Array(#"{"error":"internal","message":"injected by the test proxy"}"#.utf8)
            let response =
                "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: "
                + "\(text.count)\r\nConnection: close\r\n\r\n"
            Self.send(client, Array(response.utf8) + text)
            return
        }
        if case .replay(let replayed) = fault {
            let response =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(replayed.count)\r\n"
                + "Connection: close\r\n\r\n"
            Self.send(client, Array(response.utf8) + replayed)
            return
        }
        head = Self.setting("Connection", "close", in: head)
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(upstream) }
        var address = Self.loopback(port: lock.withLock { upstreamPort })
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return }
        Self.send(upstream, Array(head.utf8) + body)
        guard var (responseHead, responseBody) = Self.readMessage(from: upstream, isResponse: true) else { return }
        responseHead = Self.setting("Connection", "close", in: responseHead)
        switch fault {
        case .none, .serverError, .replay:
            break
        case .tamperPayload:
            if var document = try? SignedDocument(jsonBytes: responseBody), let last = document.payload.indices.last {
                document.payload[last / 2] ^= 0x01
                responseBody = document.jsonBytes()
                responseHead = Self.setting("Content-Length", "\(responseBody.count)", in: responseHead)
            }
        case .delay(let seconds):
            usleep(UInt32(seconds * 1_000_000))
        case .cutBody:
            Self.send(client, Array(responseHead.utf8) + responseBody.prefix(responseBody.count / 2))
            return
        case .dropResponse:
            return
        case .corrupt:
            let middle = responseBody.count / 2
            for index in max(0, middle - 8)..<min(responseBody.count, middle + 8) { responseBody[index] ^= 0x5A }
        case .truncate:
            responseBody = Array(responseBody.prefix(responseBody.count / 2))
            responseHead = Self.setting("Content-Length", "\(responseBody.count)", in: responseHead)
        case .oversize(let size):
            responseBody =
                Array(#"{"padding":""#.utf8) + [UInt8](repeating: UInt8(ascii: "x"), count: size) + Array(#""}"#.utf8)
            responseHead = Self.setting("Content-Length", "\(responseBody.count)", in: responseHead)
        case .wrongContentType:
            responseHead = Self.setting("Content-Type", "text/html; charset=utf-8", in: responseHead)
        case .header(let name, let value):
            responseHead = Self.setting(name, value, in: responseHead)
        case .trickle:
            lock.withLock {
                trickling.started += 1
                trickling.bodyBytes = responseBody.count
            }
            guard Self.send(client, Array(responseHead.utf8)) else { return }
            for byte in responseBody {
                sleep(1)
                guard Self.send(client, [byte]) else { return }
            }
            lock.withLock { trickling.finished += 1 }
            return
        }
        Self.send(client, Array(responseHead.utf8) + responseBody)
    }

    // MARK: HTTP, just enough

    /// Reads a head (up to the blank line, included) and a body (Content-Length, or to the end for responses); the
    /// loopback servers of the tests read their requests with it too.
    static func readMessage(from descriptor: Int32, isResponse: Bool) -> (String, [UInt8])? {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd: Int?
        while headEnd == nil {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer += chunk[..<count]
            if buffer.count >= 4 {
                headEnd = (0...(buffer.count - 4)).first { Array(buffer[$0..<($0 + 4)]) == separator }.map { $0 + 4 }
            }
        }
        let head = String(decoding: buffer[..<headEnd!], as: UTF8.self)
        var body = Array(buffer[headEnd!...])
        let status = isResponse ? Int(head.split(separator: " ").dropFirst().first ?? "") : nil
        let length = value(of: "Content-Length", in: head).flatMap { Int($0) }
        if let length {
            while body.count < length {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body += chunk[..<count]
            }
        } else if isResponse, status != 304, status != 204 {
            while true {
                let count = recv(descriptor, &chunk, chunk.count, 0)
                guard count > 0 else { break }
                body += chunk[..<count]
            }
        }
        return (head, body)
    }

    private static func value(of name: String, in head: String) -> String? {
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == name.lowercased() {
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// The head with header `name` set to `value` (replaced, or added before the blank line).
    private static func setting(_ name: String, _ value: String, in head: String) -> String {
        var lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        lines.removeAll { $0.lowercased().hasPrefix(name.lowercased() + ":") }
        lines.append("\(name): \(value)")
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// Sends all of `bytes`; false when the peer has gone.
    @discardableResult
    private static func send(_ descriptor: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard written > 0 else { return false }
            offset += written
        }
        return true
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    private static func port(of url: String) -> Int {
        Int(url.split(separator: ":").last ?? "") ?? 0
    }

    struct ProxyError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}
