import Foundation
import Synchronization
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Scans handed from a device thread to the task calling `nextScan()`.
///
/// The device thread never waits for the consumer: scans queue here, so that SNAPI packets are acknowledged
/// and hidraw's 64-report kernel queue is drained however slowly verdicts are handled.
final class ScanMailbox: Sendable {
    private struct State {
        var scans: [ScanEvent] = []
        var ended = false
        var failure: (any Error)?
        var waiter: CheckedContinuation<ScanEvent?, any Error>?
        var waiterID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Queues a scan, or hands it straight to a waiting `next()`.
    func post(_ scan: ScanEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
            guard !state.ended else { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.scans.append(scan)
            return nil
        }
        waiter?.resume(returning: scan)
    }

    /// Ends the session after the queued scans: `next()` then returns `nil`, or throws `failure`.
    func finish(failure: (any Error & Sendable)? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
            guard !state.ended else { return nil }
            state.ended = true
            state.failure = failure
            defer { state.waiter = nil }
            return state.waiter
        }
        if let failure {
            waiter?.resume(throwing: failure)
        } else {
            waiter?.resume(returning: nil)
        }
    }

    /// The next scan; `nil` at a clean end. Throws the session's failure, or `CancellationError`.
    func next() async throws -> ScanEvent? {
        let id = state.withLock { state in
            state.waiterID &+= 1
            return state.waiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<ScanEvent?, any Error>) in
                let immediate = state.withLock { state -> Result<ScanEvent?, any Error>? in
                    if !state.scans.isEmpty { return .success(state.scans.removeFirst()) }
                    if state.ended { return state.failure.map { .failure($0) } ?? .success(nil) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiter = continuation
                    state.waiterID = id
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, any Error>? in
                guard state.waiterID == id, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }
}

/// A thread that runs one device's blocking read loop until the device goes away or it is stopped.
///
/// Device reads block (hidraw, evdev, libusb's synchronous transfers); a thread of their own keeps them off
/// the cooperative pool, and a wake-up pipe lets ``stop()`` interrupt a `poll` at once.
final class DeviceThread: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let wakeReader: FileDescriptor
    private let wakeWriter: FileDescriptor
    private let finished = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// What waiting for a descriptor gave.
    enum Readiness {
        /// Data (or end of file) can be read.
        case readable
        /// The device hung up or reported an error condition, with nothing left to read.
        case hangUp
        /// ``stop()`` was called.
        case stopped
        /// The timeout passed.
        case timedOut
    }

    private init(wakeReader: FileDescriptor, wakeWriter: FileDescriptor) {
        self.wakeReader = wakeReader
        self.wakeWriter = wakeWriter
    }

    deinit {
        try? wakeReader.close()
        try? wakeWriter.close()
    }

    /// Starts `body` on a new thread; `body` returns when the device is gone or ``isStopRequested``.
    static func start(name: String, _ body: @escaping @Sendable (DeviceThread) -> Void) throws(Errno) -> DeviceThread {
        let wake = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        let thread = DeviceThread(wakeReader: wake.readEnd, wakeWriter: wake.writeEnd)
        let worker = Thread {
            body(thread)
            let waiters = thread.finished.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        worker.name = name
        worker.start()
        return thread
    }

    /// Whether ``stop()`` has been called.
    var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    /// Asks the loop to end, without waiting for it.
    func requestStop() {
        if !stopFlag.exchange(true, ordering: .acquiringAndReleasing) {
            _ = try? wakeWriter.writeAll([UInt8(1)])
        }
    }

    /// Asks the loop to end and waits until it has (and so has released the device).
    func stop() async {
        requestStop()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = finished.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// Waits until `descriptor` is readable, hangs up, the thread is stopped, or `timeout` passes
    /// (`nil`: no timeout).
    func wait(forReading descriptor: FileDescriptor, timeout: Duration?) throws(Errno) -> Readiness {
        if isStopRequested { return .stopped }
        var fds = [
            pollfd(fd: descriptor.rawValue, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeReader.rawValue, events: Int16(POLLIN), revents: 0),
        ]
        let milliseconds: Int32
        if let timeout {
            let (seconds, attoseconds) = timeout.components
            // Round up, so that a deadline 0.4 ms away does not spin with a timeout of 0.
            milliseconds = Int32(
                clamping: max(0, seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
        } else {
            milliseconds = -1
        }
        let result = try systemCall { poll(&fds, 2, milliseconds) }
        if isStopRequested || fds[1].revents != 0 { return .stopped }
        if result == 0 { return .timedOut }
        let events = fds[0].revents
        if events & Int16(POLLIN) != 0 { return .readable }
        if events & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 { return .hangUp }
        return .timedOut
    }
}

/// Errors of the USB scanner transports, worded for the person who has to fix them.
enum USBNodeError {
    /// The error for a failed `open(2)` of a device node.
    static func opening(_ path: String, _ errno: Errno, what: String) -> ScannerConnectionError {
        switch errno {
        case .noSuchFileOrDirectory, .noSuchAddressOrDevice, .operationNotSupportedByDevice:
            return ScannerConnectionError(
                code: .deviceMissing,
                device: path,
                message: "\(path) does not exist: is the scanner plugged in? "
                    + "`farecheck scanners list` shows what is attached",
                cause: errno
            )
        case .permissionDenied, .notPermitted:
            return ScannerConnectionError(
                code: .permissionDenied,
                device: path,
                message: "no permission to open \(path): install the udev rules in Udev/ (see Udev/README.md) "
                    + "and add this user to the farecheck group",
                cause: errno
            )
        case .resourceBusy:
            return ScannerConnectionError(
                code: .deviceBusy, device: path, message: "\(path) is in use by another program", cause: errno)
        default:
            return ScannerConnectionError(
                code: .openFailed, device: path, message: "cannot open \(path) as \(what)", cause: errno)
        }
    }

    /// The error for a failed read or `poll` of an open node: gone for the errors an unplugged device gives.
    static func reading(_ path: String, _ errno: Errno, dropped: DroppedScan?) -> ScannerConnectionError {
        let gone: Set<Errno> = [.ioError, .operationNotSupportedByDevice, .noSuchAddressOrDevice, .badFileDescriptor]
        return ScannerConnectionError(
            code: gone.contains(errno) ? .deviceGone : .ioFailed,
            device: path,
            message: (gone.contains(errno) ? "the scanner went away" : "reading \(path) failed") + droppedNote(dropped),
            cause: errno
        )
    }

    /// The error for a hang-up or end of file.
    static func hungUp(_ path: String, dropped: DroppedScan?) -> ScannerConnectionError {
        ScannerConnectionError(code: .deviceGone, device: path, message: "the scanner went away" + droppedNote(dropped))
    }

    /// "; a scan in flight was dropped after N bytes", or nothing.
    static func droppedNote(_ dropped: DroppedScan?) -> String {
        guard let dropped else { return "" }
        return "; a scan in flight was dropped after \(dropped.receivedBytes) bytes"
    }
}
