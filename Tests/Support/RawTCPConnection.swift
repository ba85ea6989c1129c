import Foundation
import Glibc

/// A TCP connection to 127.0.0.1 that sends exactly the bytes a test gives it: half a request head, a stalled
/// TLS handshake, a keep-alive connection left idle, a connection held open to fill a server's cap. For tests of
/// what a server does with a client that misbehaves, which an HTTP client library would not let a test be: it is
/// a raw socket by design. Tests about HTTP itself (status, headers, cookies, bodies, event streams) use
/// ``LoopbackHTTP`` and ``EventStreamClient`` (async-http-client) instead.
///
/// Reads block on a dispatch queue (never on the concurrency pool the server under test may use), each for at
/// most the time the test allows.
public final class RawTCPConnection: @unchecked Sendable {
    private let descriptor: Int32

    /// What a wait on the connection saw.
    public enum Event: Equatable, Sendable {
        /// Bytes from the server.
        case bytes([UInt8])
        /// The server closed the connection (end of stream, or a reset).
        case closed
        /// Nothing happened in the time allowed.
        case quiet
    }

    /// Connects to `127.0.0.1:port`.
    public init(port: Int) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(message: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(message: "connect to 127.0.0.1:\(port): errno \(errno)")
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// Closes both directions now, as a client that goes away does (the descriptor is released at deinit).
    public func hangUp() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    /// Sends `bytes`.
    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes {
                Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
            }
            guard sent > 0 else { throw Failure(message: "send: errno \(errno)") }
            offset += sent
        }
    }

    /// Sends `text` as UTF-8.
    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    /// Waits at most `seconds` for the next bytes or the end of the connection.
    public func next(within seconds: Double) async -> Event {
        let descriptor = descriptor
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                let ready = poll(&poller, 1, Int32(seconds * 1000))
                guard ready > 0 else {
                    continuation.resume(returning: .quiet)
                    return
                }
                var buffer = [UInt8](repeating: 0, count: 65536)
                let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
                continuation.resume(returning: count > 0 ? .bytes(Array(buffer[..<count])) : .closed)
            }
        }
    }

    /// Reads until the server closes the connection, for at most `seconds`; returns everything it sent and
    /// whether it closed (false: still open when the time ran out).
    public func readUntilClosed(within seconds: Double) async -> (bytes: [UInt8], closed: Bool) {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return (received, false) }
            switch await next(within: left) {
            case .bytes(let bytes): received += bytes
            case .closed: return (received, true)
            case .quiet: return (received, false)
            }
        }
    }

    /// Reads one HTTP/1.1 response with a `Content-Length` body, for at most `seconds`: its status and body, or
    /// nil when none came whole.
    public func readResponse(within seconds: Double) async -> (status: Int, body: [UInt8])? {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        let separator = Array("\r\n\r\n".utf8)
        while true {
            if let end = received.firstRange(of: separator) {
                let head = String(decoding: received[..<end.lowerBound], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                let parts = lines[0].split(separator: " ")
                let length =
                    lines.dropFirst().compactMap { line -> Int? in
                        let pair = line.split(separator: ":", maxSplits: 1)
                        guard pair.count == 2, pair[0].lowercased() == "content-length" else { return nil }
                        return Int(pair[1].trimmingCharacters(in: .whitespaces))
                    }.first ?? 0
                let body = received[end.upperBound...]
                if body.count >= length, parts.count >= 2, let status = Int(parts[1]) {
                    return (status, Array(body.prefix(length)))
                }
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0, case .bytes(let bytes) = await next(within: left) else { return nil }
            received += bytes
        }
    }

    /// A socket call that failed.
    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}
