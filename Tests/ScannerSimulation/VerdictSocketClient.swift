import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A client of the daemon's verdict socket (`[output] socket`): one JSON line per verdict, as a gate
/// controller or a local UI written in Swift reads them. Waits with `Task.sleep`, never blocking a thread.
///
/// Lines, not decoded verdicts: the simulator stays below the daemon (a caller that wants a `VerdictEvent` decodes
/// the line with the daemon's own decoder).
public final class VerdictSocketClient {
    private let descriptor: Int32
    private var pending: [UInt8] = []

    /// Connects to the socket at `path`, retrying for up to `timeout` seconds while it does not exist yet.
    public static func connect(path: String, timeout: Double = 10) async throws -> VerdictSocketClient {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let socket = VerdictSocketClient(path: path) { return socket }
            guard Date() < deadline else {
                throw VerdictSocketError(message: "cannot connect to \(path): \(String(cString: strerror(errno)))")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// One connection attempt; `nil` when the socket is not there (yet) or refuses.
    private init?(path: String) {
        let pathBytes = Array(path.utf8)
        var address = sockaddr_un()
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes + [0]) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The next line, or `nil` if none arrives within `timeout` seconds or the other end closed.
    public func readLine(timeout: Double = 10) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let line = takeLine() { return line }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard remaining > 0 else { return nil }
            guard poll(&poller, 1, 0) > 0 else {
                try? await Task.sleep(for: .milliseconds(1))
                continue
            }
            guard readAvailable() else { return nil }
        }
    }

    /// The next line, waiting in `poll` on the calling thread: for a latency measurement, which must not add the
    /// millisecond `readLine` sleeps between polls to every figure. `nil` if none arrives within `timeout` seconds
    /// or the other end closed. Blocks the thread: call it from a thread of the caller's own.
    public func waitForLine(timeout: Double = 10) -> String? {
        let deadline = ContinuousClock.now + .milliseconds(Int64(timeout * 1000))
        while true {
            if let line = takeLine() { return line }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else { return nil }
            let (seconds, attoseconds) = remaining.components
            let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000 + 1
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(clamping: milliseconds))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { continue }
            guard readAvailable() else { return nil }
        }
    }

    /// The first whole line in `pending`, taken out of it; `nil` when none is there yet.
    private func takeLine() -> String? {
        guard let newline = pending.firstIndex(of: 0x0A) else { return nil }
        let line = String(decoding: pending[..<newline], as: UTF8.self)
        pending.removeSubrange(...newline)
        return line
    }

    /// Reads what the socket holds into `pending`; `false` when the other end closed or the read failed.
    private func readAvailable() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = read(descriptor, &buffer, buffer.count)
        guard count > 0 else { return false }
        pending += buffer[..<count]
        return true
    }
}

/// The verdict socket could not be reached.
public struct VerdictSocketError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}
