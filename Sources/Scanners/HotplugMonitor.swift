import CLinuxShims
import Executors
import Foundation
import SystemCalls
import SystemPackage

/// Reports scanner nodes appearing and disappearing, from the kernel's uevent netlink socket.
///
/// By default it listens to udev's group, whose events come after udev has created the node and applied
/// the permissions of the rules in `Udev/` (a reopen attempted on the kernel's own event can fail with
/// "permission denied" for a moment). Where no udev runs (`/run/udev/control` missing, as in many
/// containers) it listens to the kernel's group instead.
///
/// ```swift
/// let monitor = try HotplugMonitor.open()
/// for await event in monitor.events where event.action == .add { … }
/// ```
public final class HotplugMonitor: Sendable {
    /// Which netlink group to listen to.
    public enum Source: Sendable, Hashable {
        /// udev's events (group 2).
        case udev
        /// The kernel's events (group 1).
        case kernel
        /// udev's when udev runs here, the kernel's otherwise.
        case automatic
    }

    /// The events, in order, for the subsystems asked for. Iterate it from one task.
    public let events: AsyncStream<HotplugEvent>
    private let thread: DeviceThread

    private init(events: AsyncStream<HotplugEvent>, thread: DeviceThread) {
        self.events = events
        self.thread = thread
    }

    /// Opens the netlink socket and starts listening.
    ///
    /// - Parameter subsystems: The subsystems to report: scanner nodes (`hidraw`, `tty`, `input`) and USB
    ///   devices (`usb`) by default.
    /// - Throws: ``HotplugError`` when the socket cannot be opened (no netlink in this sandbox).
    public static func open(
        source: Source = .automatic,
        subsystems: Set<String> = ["hidraw", "tty", "input", "usb"]
    ) throws(HotplugError) -> HotplugMonitor {
        let useUdev: Bool
        switch source {
        case .udev: useUdev = true
        case .kernel: useUdev = false
        case .automatic: useUdev = FileManager.default.fileExists(atPath: "/run/udev/control")
        }
        let opened: Int32
        do {
            opened = try systemCallReturningNegatedErrno { CLinuxShims_ueventSocket(useUdev ? 2 : 1) }
        } catch {
            throw HotplugError(
                code: .socketUnavailable,
                message: "cannot listen for scanners being plugged in (netlink uevent socket); "
                    + "the reader still retries unplugged scanners on its own",
                cause: error
            )
        }
        let socket = FileDescriptor(rawValue: opened)
        let (events, continuation) = AsyncStream.makeStream(of: HotplugEvent.self)
        do {
            let thread = try DeviceThread.start(name: "farecheck hotplug") { thread in
                defer {
                    try? socket.close()
                    continuation.finish()
                }
                // uevents are at most a few kilobytes (UEVENT_BUFFER_SIZE is 2048 for the kernel's part).
                var buffer = [UInt8](repeating: 0, count: 8192)
                while true {
                    guard (try? thread.wait(forReading: socket, timeout: nil)) == .readable else { return }
                    guard let count = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }), count > 0
                    else {
                        continue  // ENOBUFS after a burst: events were lost, later ones still come.
                    }
                    guard let event = HotplugEvent.parse(Array(buffer.prefix(count))),
                        event.subsystem.map(subsystems.contains) ?? false
                    else { continue }
                    continuation.yield(event)
                }
            }
            let monitor = HotplugMonitor(events: events, thread: thread)
            // The consumer stopped iterating: let the thread end (and close the socket) on its own.
            continuation.onTermination = { [weak thread] _ in thread?.requestStop() }
            return monitor
        } catch {
            try? socket.close()
            throw HotplugError(code: .threadUnavailable, message: "cannot start the hotplug thread", cause: error)
        }
    }

    /// Stops listening and closes the socket; `events` then ends.
    public func close() async {
        await thread.stop()
    }
}

/// The hotplug monitor could not be started.
public struct HotplugError: Error, Sendable, CustomStringConvertible {
    /// A category of failure; extensible, compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code, for logs.
        public let name: String
        /// Makes a code.
        public init(_ name: String) { self.name = name }
        /// The netlink socket could not be opened or bound (no netlink in this sandbox, a seccomp filter).
        public static let socketUnavailable = Code("socket-unavailable")
        /// The listening thread could not be started.
        public static let threadUnavailable = Code("thread-unavailable")
        /// The name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What failed and what it means for the user.
    public var message: String
    /// The underlying error (an `Errno`).
    public var cause: (any Error & Sendable)?

    /// Makes an error.
    public init(code: Code, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message with its cause.
    public var description: String {
        cause.map { "\(message) (\($0))" } ?? message
    }
}
