import Foundation
import Synchronization
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// A thread that runs one device's blocking read loop until the device goes away or it is stopped.
///
/// Device reads block (hidraw, evdev, libusb's synchronous transfers); a thread of their own keeps them off
/// the cooperative pool, and a wake-up pipe lets ``stop()`` interrupt a `poll` at once.
public final class DeviceThread: Sendable {
    private let stopFlag = Atomic<Bool>(false)
    private let wakeReader: FileDescriptor
    private let wakeWriter: FileDescriptor
    /// The thread running the loop, set by `start` once the loop's thread exists.
    private let worker = Mutex<DedicatedThread?>(nil)

    /// What waiting for a descriptor gave.
    public enum Readiness: Sendable {
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
    public static func start(name: String, _ body: @escaping @Sendable (DeviceThread) -> Void) throws(Errno)
        -> DeviceThread
    {
        let wake = try FileDescriptor.pipe(options: [.closeOnExec, .nonBlocking])
        let thread = DeviceThread(wakeReader: wake.readEnd, wakeWriter: wake.writeEnd)
        thread.worker.withLock { $0 = DedicatedThread.start(name: name) { body(thread) } }
        return thread
    }

    /// Whether ``stop()`` has been called.
    public var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    /// Asks the loop to end, without waiting for it.
    public func requestStop() {
        if !stopFlag.exchange(true, ordering: .acquiringAndReleasing) {
            _ = try? wakeWriter.writeAll([UInt8(1)])
        }
    }

    /// Asks the loop to end and waits until it has (and so has released the device).
    public func stop() async {
        requestStop()
        await worker.withLock { $0 }?.finished()
    }

    /// Waits until `descriptor` is readable, hangs up, the thread is stopped, or `timeout` passes
    /// (`nil`: no timeout).
    public func wait(forReading descriptor: FileDescriptor, timeout: Duration?) throws(Errno) -> Readiness {
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
