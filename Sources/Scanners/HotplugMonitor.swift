import CLinuxShims
import Executors
import FareCore
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
public typealias HotplugError = CodedError<HotplugFailure>

/// The domain of `HotplugError`: a hotplug monitor that could not be started.
public enum HotplugFailure: ErrorDomain {
    /// The message with its cause.
    public static func description(of error: HotplugError) -> String {
        error.cause.map { "\(error.message) (\($0))" } ?? error.message
    }
}

extension ErrorCode where Domain == HotplugFailure {
    /// The netlink socket could not be opened or bound (no netlink in this sandbox, a seccomp filter).
    public static var socketUnavailable: Self { Self("socket-unavailable") }
    /// The listening thread could not be started.
    public static var threadUnavailable: Self { Self("thread-unavailable") }
}
