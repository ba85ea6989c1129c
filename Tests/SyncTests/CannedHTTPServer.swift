import Foundation
import Glibc
import Synchronization
import SystemCalls

/// An HTTP/1.1 server on loopback that answers each request as the test says: a canned answer (a 422, a 429, a
/// signed page the test wrote byte by byte), or a head at once and then a body trickled one byte a second.
///
/// It speaks just enough HTTP: one request per connection (`Connection: close`), a body read by its
/// `Content-Length`. Each connection is served on a thread of its own, so a trickling answer holds no other.
final class CannedHTTPServer: @unchecked Sendable {
    /// What the server sends for one request.
    enum Answer: Sendable {
        /// A whole response at once.
        case respond(status: Int, headers: [String: String], body: [UInt8])
        /// The head at once (a JSON content type and a `Content-Length` of `bodyBytes`), then the body one byte
        /// every `interval`.
        case trickle(bodyBytes: Int, interval: Duration)
    }

    /// A request as it arrived.
    struct Request: Sendable {
        var method: String
        /// The request target, with its query.
        var target: String
        var body: [UInt8]
    }

    private let listener: Int32
    private let answer: @Sendable (Request) -> Answer
    private let stopped = Atomic<Bool>(false)
    private let received = Mutex<[Request]>([])
    /// The port the server listens on.
    let port: Int
    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }
    /// The requests received so far, in order.
    var requests: [Request] { received.withLock { $0 } }

    /// Listens on a free loopback port and answers each request with `answer(request)`.
    init(answer: @escaping @Sendable (Request) -> Answer) throws {
        self.answer = answer
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        listener = descriptor
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw FaultProxy.ProxyError(message: "cannot listen: \(errno)")
        }
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
        stop()
    }

    /// Stops listening; trickling answers end at their next byte.
    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        guard let request = Self.readRequest(from: client) else { return }
        received.withLock { $0.append(request) }
        switch answer(request) {
        case .respond(let status, let headers, let body):
            var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
            var fields = headers
            fields["Content-Length"] = "\(body.count)"
            fields["Connection"] = "close"
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
            head += "\r\n"
            _ = Self.send(client, Array(head.utf8) + body)
        case .trickle(let bodyBytes, let interval):
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bodyBytes)\r\n"
                + "Connection: close\r\n\r\n"
            guard Self.send(client, Array(head.utf8)) else { return }
            for _ in 0..<bodyBytes {
                let (seconds, attoseconds) = interval.components
                Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
                guard !stopped.load(ordering: .relaxed), Self.send(client, [UInt8(ascii: " ")]) else { return }
            }
        }
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 404: "Not Found"
        case 422: "Unprocessable Content"
        case 429: "Too Many Requests"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }

    /// Reads a request head and its `Content-Length` body (`FaultProxy`'s reader).
    private static func readRequest(from descriptor: Int32) -> Request? {
        guard let (head, body) = FaultProxy.readMessage(from: descriptor, isResponse: false) else { return nil }
        let requestLine = head.split(separator: "\r\n").first.map { $0.split(separator: " ") } ?? []
        return Request(
            method: requestLine.first.map(String.init) ?? "",
            target: requestLine.dropFirst().first.map(String.init) ?? "/", body: body)
    }

    /// Sends all of `bytes`; false when the peer has gone.
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
}
