import CLinuxShims
import Executors
import Synchronization
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// An open serial line (RS-232 adapter, USB CDC-ACM /dev/ttyACM*, or a pseudo-terminal) in raw mode.
///
/// Reads wait in `poll()` on a dispatch queue of the port's own, never on Swift's cooperative threads, with a
/// deadline so that protocols can time out between bytes. Waiting does not spin: the thread sleeps in the
/// kernel until bytes, the deadline, ``interruptRead()``, task cancellation or ``close()`` wakes it.
///
/// Only ``open(path:settings:)`` touches a device node; everything else works on any tty descriptor, which is
/// how the tests drive it through a pseudo-terminal.
public final class SerialPort: Sendable {
    /// What one ``read(maximumCount:until:)`` produced.
    public enum ReadResult: Sendable, Hashable {
        /// Bytes arrived (at least one).
        case bytes([UInt8])
        /// The deadline passed with no bytes: the line is quiet.
        case timedOut
        /// ``interruptRead()`` was called: the caller has something else to do (send feedback, recompute a
        /// deadline) and will read again.
        case interrupted
        /// The other end hung up with nothing left to read (a pseudo-terminal closed, a tty hangup).
        case endOfFile
    }

    /// The path the port was opened with.
    public let path: String

    private let descriptor: FileDescriptor
    private let wakeRead: FileDescriptor
    private let wakeWrite: FileDescriptor
    private let exclusive: Bool
    private let readQueue = BlockingQueue(label: "farecheck.serial.read")
    private let writeQueue = BlockingQueue(label: "farecheck.serial.write")
    private let state = Mutex(PortState())

    private struct PortState {
        var closing = false
        var closed = false
        var queuedWrites = 0
    }

    /// Opens `path` and sets it up with `settings`: O_RDWR | O_NOCTTY | O_NONBLOCK, raw mode, speed, format,
    /// exclusive use, stale input and output flushed.
    public static func open(path: String, settings: SerialSettings = SerialSettings()) throws(ScannerConnectionError)
        -> SerialPort
    {
        try settings.validate(device: path)
        let descriptor: FileDescriptor
        do {
            // O_NONBLOCK: a serial port without CLOCAL yet would otherwise block the open until carrier detect.
            descriptor = try FileDescriptor.open(
                FilePath(path),
                .readWrite,
                options: [.nonBlocking, .closeOnExec, FileDescriptor.OpenOptions(rawValue: O_NOCTTY)]
            )
        } catch {
            throw openError(error as? Errno, device: path)
        }
        do throws(ScannerConnectionError) {
            var attributes = termios()
            do {
                _ = try systemCall { tcgetattr(descriptor.rawValue, &attributes) }
            } catch {
                throw ScannerConnectionError(
                    code: .misconfigured,
                    device: path,
                    message: "is not a serial port (tcgetattr failed); give the tty of the scanner",
                    cause: error
                )
            }
            settings.apply(to: &attributes)
            do {
                _ = try systemCall { tcsetattr(descriptor.rawValue, TCSANOW, &attributes) }
            } catch {
                throw ScannerConnectionError(
                    code: .openFailed,
                    device: path,
                    message: "cannot set \(settings.baudRate) baud, raw mode",
                    cause: error
                )
            }
            if settings.exclusive {
                do {
                    _ = try systemCallReturningNegatedErrno { CLinuxShims_setTerminalExclusive(descriptor.rawValue, 1) }
                } catch {
                    throw ScannerConnectionError(
                        code: .openFailed,
                        device: path,
                        message: "cannot take the tty exclusively",
                        cause: error
                    )
                }
            }
            // Bytes from before this session (a scan half-read by a previous process) would only confuse framing.
            _ = try? systemCall { tcflush(descriptor.rawValue, TCIOFLUSH) }
            return try SerialPort(descriptor: descriptor, path: path, exclusive: settings.exclusive)
        } catch {
            try? descriptor.close()
            throw error
        }
    }

    /// Adopts an open descriptor (a tty already configured, a pseudo-terminal); the port closes it.
    public init(descriptor: FileDescriptor, path: String, exclusive: Bool = false) throws(ScannerConnectionError) {
        // The wake-up pipe lets another thread cut a poll() short: cancellation, feedback, close.
        let pipe: (readEnd: FileDescriptor, writeEnd: FileDescriptor)
        do {
            pipe = try FileDescriptor.pipe()
        } catch {
            throw ScannerConnectionError(
                code: .openFailed,
                device: path,
                message: "cannot create a wake-up pipe",
                cause: error as? Errno
            )
        }
        for end in [pipe.readEnd, pipe.writeEnd] {
            _ = try? systemCall { fcntl(end.rawValue, F_SETFL, O_NONBLOCK) }
            _ = try? systemCall { fcntl(end.rawValue, F_SETFD, FD_CLOEXEC) }
        }
        if let flags = try? systemCall({ fcntl(descriptor.rawValue, F_GETFL) }) {
            _ = try? systemCall { fcntl(descriptor.rawValue, F_SETFL, flags | O_NONBLOCK) }
        }
        self.descriptor = descriptor
        self.wakeRead = pipe.readEnd
        self.wakeWrite = pipe.writeEnd
        self.path = path
        self.exclusive = exclusive
    }

    deinit {
        // A port dropped without close() (an abandoned iterator) still gives its descriptors back.
        state.withLock { state in
            if !state.closed { closeDescriptors() }
        }
    }

    /// Waits for bytes until `deadline` (forever if `nil`), returning what arrived.
    ///
    /// - Throws: `CancellationError` if the task is cancelled while waiting; ``ScannerConnectionError`` with
    ///   `.deviceGone` for EIO, ENXIO, ENODEV or an invalid descriptor (the scanner
    ///   was unplugged), other codes for other failures.
    ///
    /// It runs on the caller's actor (`nonsending`): the read queue's reply resumes the connection directly,
    /// without a hop through the global executor, which halves the latency of a scan.
    nonisolated(nonsending) public func read(
        maximumCount: Int = 4096,
        until deadline: ContinuousClock.Instant? = nil
    ) async throws -> ReadResult {
        try Task.checkCancellation()
        let result = await withTaskCancellationHandler {
            await readQueue.run { self.blockingRead(maximumCount: maximumCount, deadline: deadline) }
        } onCancel: {
            interruptRead()
        }
        let outcome = try result.get()
        if outcome == .interrupted, Task.isCancelled { throw CancellationError() }
        return outcome
    }

    /// Makes a waiting ``read(maximumCount:until:)`` return ``ReadResult/interrupted`` now (or the next one,
    /// if none is waiting).
    public func interruptRead() {
        var byte: UInt8 = 1
        // EAGAIN: the pipe is full, so a wake-up is already waiting.
        _ = try? systemCall { Glibc.write(wakeWrite.rawValue, &byte, 1) }
    }

    /// Writes all of `bytes`, in order with other writes.
    ///
    /// A packet that fits in the tty's output buffer (always, for SSI) is written at once on the calling thread;
    /// the rest waits for the line on the port's write queue, for two seconds at most.
    nonisolated(nonsending) public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        let immediate: Result<Int, ScannerConnectionError> = state.withLock { state in
            guard !state.closing else { return .failure(closedError()) }
            // Queued writes go first: a fast write now would overtake them.
            guard state.queuedWrites == 0 else {
                state.queuedWrites += 1
                return .success(0)
            }
            let written = writeSome(bytes[...])
            if case .success(let count) = written, count < bytes.count { state.queuedWrites += 1 }
            return written
        }
        let count = try immediate.get()
        guard count < bytes.count else { return }
        let rest = Array(bytes[count...])
        let result: Result<Void, ScannerConnectionError> = await writeQueue.run {
            let result = self.blockingWrite(rest)
            self.state.withLock { $0.queuedWrites -= 1 }
            return result
        }
        try result.get()
    }

    /// Closes the port after any read or write in progress returns; later reads and writes fail.
    public func close() async {
        let first = state.withLock { state in
            defer { state.closing = true }
            return !state.closing
        }
        guard first else { return }
        interruptRead()
        // After the read in progress, then after the writes queued: both queues are through with the descriptors.
        await readQueue.run {}
        await writeQueue.run {
            self.state.withLock { state in
                if !state.closed { self.closeDescriptors() }
                state.closed = true
            }
        }
    }

    // MARK: - Blocking work, on the port's queues

    private func blockingRead(maximumCount: Int, deadline: ContinuousClock.Instant?) -> Result<
        ReadResult, ScannerConnectionError
    > {
        guard !state.withLock({ $0.closing }) else { return .failure(closedError()) }
        var buffer = [UInt8](repeating: 0, count: max(1, maximumCount))
        while true {
            var fds = [
                pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakeRead.rawValue, events: Int16(POLLIN), revents: 0),
            ]
            let ready: Int32
            do {
                ready = try systemCall { poll(&fds, 2, Self.pollTimeout(until: deadline)) }
            } catch {
                return .failure(ioError(error, "waiting for data failed"))
            }
            if ready == 0 { return .success(.timedOut) }
            if fds[1].revents != 0 {
                drainWakeups()
                return .success(.interrupted)
            }
            let events = Int32(fds[0].revents)
            if events & Int32(POLLNVAL) != 0 {
                return .failure(goneError(nil, "the descriptor is no longer valid"))
            }
            let count: Int
            do {
                count = try systemCall {
                    buffer.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, $0.count) }
                }
            } catch {
                switch error {
                case .resourceTemporarilyUnavailable:
                    continue
                case .ioError, .noSuchAddressOrDevice, .operationNotSupportedByDevice:
                    return .failure(goneError(error, "the scanner went away"))
                default:
                    return .failure(ioError(error, "reading failed"))
                }
            }
            if count > 0 { return .success(.bytes(Array(buffer[0..<count]))) }
            return .success(.endOfFile)
        }
    }

    private func blockingWrite(_ bytes: [UInt8]) -> Result<Void, ScannerConnectionError> {
        var rest = bytes[...]
        let giveUp = ContinuousClock.now + .seconds(2)
        while !rest.isEmpty {
            let written: Result<Int, ScannerConnectionError> = state.withLock { state in
                guard !state.closing else { return .failure(closedError()) }
                return writeSome(rest)
            }
            switch written {
            case .failure(let error): return .failure(error)
            case .success(let count): rest = rest.dropFirst(count)
            }
            guard !rest.isEmpty else { break }
            guard ContinuousClock.now < giveUp else {
                return .failure(
                    ioError(nil, "the line takes no more data; check the flow control setting and the cable")
                )
            }
            // Short waits, so that close() is never held up for long.
            var fds = [pollfd(fd: descriptor.rawValue, events: Int16(POLLOUT), revents: 0)]
            _ = try? systemCall { poll(&fds, 1, 100) }
        }
        return .success(())
    }

    /// One non-blocking write(2) (through the funnel, which retries EINTR); EAGAIN counts as zero bytes written.
    /// Call with the lock held.
    private func writeSome(_ bytes: ArraySlice<UInt8>) -> Result<Int, ScannerConnectionError> {
        do {
            return .success(
                try systemCall { bytes.withUnsafeBytes { Glibc.write(descriptor.rawValue, $0.baseAddress, $0.count) } })
        } catch {
            switch error {
            case .resourceTemporarilyUnavailable: return .success(0)
            case .ioError, .noSuchAddressOrDevice, .operationNotSupportedByDevice, .badFileDescriptor:
                return .failure(goneError(error, "the scanner went away"))
            default: return .failure(ioError(error, "writing failed"))
            }
        }
    }

    private func drainWakeups() {
        var bytes = [UInt8](repeating: 0, count: 64)
        // Until the pipe is empty (EAGAIN on its non-blocking end) or fails.
        while let count = try? systemCall({
            bytes.withUnsafeMutableBytes { Glibc.read(wakeRead.rawValue, $0.baseAddress, $0.count) }
        }), count > 0 {}
    }

    private func closeDescriptors() {
        if exclusive {
            _ = try? systemCallReturningNegatedErrno { CLinuxShims_setTerminalExclusive(descriptor.rawValue, 0) }
        }
        try? descriptor.close()
        try? wakeRead.close()
        try? wakeWrite.close()
    }

    /// Milliseconds until `deadline`, rounded up so that poll() never returns just before it; -1 for none.
    public static func pollTimeout(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let remaining = ContinuousClock.now.duration(to: deadline)
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    private static func openError(_ errno: Errno?, device: String) -> ScannerConnectionError {
        switch errno {
        case .noSuchFileOrDirectory?:
            ScannerConnectionError(
                code: .deviceMissing,
                device: device,
                message: "no such device node; is the scanner plugged in (and the udev rule installed)?",
                cause: errno
            )
        case .permissionDenied?, .notPermitted?:
            ScannerConnectionError(
                code: .permissionDenied,
                device: device,
                message: "permission denied; install the udev rules and add the user to the farecheck group",
                cause: errno
            )
        case .resourceBusy?:
            ScannerConnectionError(
                code: .deviceBusy,
                device: device,
                message: "in use by another process (another farecheck, ModemManager?)",
                cause: errno
            )
        case .noSuchAddressOrDevice?, .operationNotSupportedByDevice?, .ioError?:
            ScannerConnectionError(
                code: .deviceGone,
                device: device,
                message: "the node exists but the scanner behind it is gone",
                cause: errno
            )
        default:
            ScannerConnectionError(code: .openFailed, device: device, message: "cannot open", cause: errno)
        }
    }

    private func closedError() -> ScannerConnectionError {
        ScannerConnectionError(code: .ioFailed, device: path, message: "the port is closed")
    }

    private func goneError(_ cause: Errno?, _ message: String) -> ScannerConnectionError {
        ScannerConnectionError(code: .deviceGone, device: path, message: message, cause: cause)
    }

    private func ioError(_ cause: Errno?, _ message: String) -> ScannerConnectionError {
        ScannerConnectionError(code: .ioFailed, device: path, message: message, cause: cause)
    }
}
