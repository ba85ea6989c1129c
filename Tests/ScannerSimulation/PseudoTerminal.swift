import CLinuxShims
import Scanners
import Synchronization
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A pseudo-terminal pair: a stand-in serial line for a simulated scanner.
///
/// The simulator holds the primary side and writes what a scanner would send; the code under test opens
/// ``replicaPath`` (`/dev/pts/N`) as if it were `/dev/ttyACM0`. A pseudo-terminal has no baud rate: bytes
/// arrive as fast as the kernel moves them, so latencies measured through it exclude the wire time.
///
/// Closing the primary is the simulator being unplugged: the replica reads end of file and its path vanishes.
/// The primary's calls block the calling thread; call them from a thread of the simulator's own.
public final class PseudoTerminal: Sendable {
    /// What ``read(maximumCount:timeout:)`` produced.
    public enum ReadResult: Sendable, Hashable {
        /// Bytes the replica's owner wrote.
        case bytes([UInt8])
        /// Nothing within the timeout.
        case timedOut
        /// Nobody has the replica open (yet, or any more).
        case replicaClosed
    }

    /// The path of the replica side, e.g. `/dev/pts/3`.
    public let replicaPath: String
    private let primary: FileDescriptor
    private let closed = Mutex(false)

    /// Opens a new pair, in raw mode from the start so that nothing the simulator writes is echoed or edited
    /// before the reader sets the line up.
    public init() throws(ScannerConnectionError) {
        var path = [CChar](repeating: 0, count: 128)
        let result = CLinuxShims_openPseudoTerminal(&path, path.count)
        guard result >= 0 else {
            throw ScannerConnectionError(
                code: .openFailed,
                device: "/dev/ptmx",
                message: "cannot open a pseudo-terminal; is /dev/pts mounted?",
                cause: Errno(rawValue: -result)
            )
        }
        primary = FileDescriptor(rawValue: result)
        replicaPath = String(decoding: path.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var attributes = termios()
        if tcgetattr(result, &attributes) == 0 {
            cfmakeraw(&attributes)
            _ = tcsetattr(result, TCSANOW, &attributes)
        }
    }

    deinit {
        close()
    }

    /// Writes all of `bytes` to the replica's input, waiting while the pseudo-terminal's buffer is full.
    public func write(_ bytes: [UInt8]) throws(ScannerConnectionError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            do {
                let count = try systemCall {
                    rest.withUnsafeBytes { Glibc.write(primary.rawValue, $0.baseAddress, $0.count) }
                }
                rest = rest.dropFirst(count)
            } catch .resourceTemporarilyUnavailable {
                var fds = [pollfd(fd: primary.rawValue, events: Int16(POLLOUT), revents: 0)]
                _ = poll(&fds, 1, 100)
            } catch {
                throw ScannerConnectionError(
                    code: .ioFailed,
                    device: replicaPath,
                    message: "writing to the pseudo-terminal failed",
                    cause: error
                )
            }
        }
    }

    /// Waits up to `timeout` for what the replica's owner wrote.
    public func read(maximumCount: Int = 4096, timeout: Duration) throws(ScannerConnectionError) -> ReadResult {
        let deadline = ContinuousClock.now + timeout
        var buffer = [UInt8](repeating: 0, count: max(1, maximumCount))
        while true {
            var fds = [pollfd(fd: primary.rawValue, events: Int16(POLLIN), revents: 0)]
            let ready: Int32
            do {
                ready = try systemCall { poll(&fds, 1, SerialPort.pollTimeout(until: deadline)) }
            } catch {
                throw ScannerConnectionError(
                    code: .ioFailed,
                    device: replicaPath,
                    message: "poll on the pseudo-terminal failed",
                    cause: error
                )
            }
            if ready == 0 { return .timedOut }
            do {
                let count = try systemCall {
                    buffer.withUnsafeMutableBytes { Glibc.read(primary.rawValue, $0.baseAddress, $0.count) }
                }
                if count > 0 { return .bytes(Array(buffer[0..<count])) }
            } catch .resourceTemporarilyUnavailable {
                continue
            } catch {}
            // EIO (or a hangup with nothing buffered) is how Linux says no replica is open.
            return .replicaClosed
        }
    }

    /// Closes the primary side: the replica's reader sees end of file, and ``replicaPath`` disappears.
    public func close() {
        let wasOpen = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if wasOpen { try? primary.close() }
    }
}
