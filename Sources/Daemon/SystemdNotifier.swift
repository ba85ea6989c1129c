import Foundation
import ServiceLifecycle
import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// Talks to systemd's notification socket (`Type=notify`): `READY=1` once every service is up, `WATCHDOG=1`
/// while the daemon is alive, `STOPPING=1` at shutdown, and `STATUS=` lines for `systemctl status`.
///
/// Without `$NOTIFY_SOCKET` (not started by systemd) every call does nothing.
public struct SystemdNotifier: Sendable {
    /// The socket path from `$NOTIFY_SOCKET` (`@` for the abstract namespace).
    public let socketPath: String?
    /// Half the watchdog interval from `$WATCHDOG_USEC`, when the unit sets `WatchdogSec=`.
    public let watchdogInterval: Duration?

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        socketPath = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
        if let text = environment["WATCHDOG_USEC"], let microseconds = Int64(text), microseconds > 0,
            environment["WATCHDOG_PID"].map({ $0 == String(getpid()) }) ?? true
        {
            watchdogInterval = .microseconds(microseconds / 2)
        } else {
            watchdogInterval = nil
        }
    }

    /// Sends one notification (e.g. `READY=1`); returns whether it was sent.
    @discardableResult
    public func notify(_ message: String) -> Bool {
        guard let socketPath else { return false }
        guard
            let descriptor = try? systemCall({
                socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            })
        else { return false }
        defer { _ = try? systemCall(retryingOnInterrupt: false) { close(descriptor) } }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var pathBytes = Array(socketPath.utf8)
        if pathBytes.first == UInt8(ascii: "@") { pathBytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard pathBytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: pathBytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + pathBytes.count + (pathBytes.first == 0 ? 0 : 1))
        let bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                try? systemCall { sendto(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL), socketAddress, length) }
            }
        }
        return sent == bytes.count
    }
}

/// Pets systemd's watchdog while the daemon runs, and tells systemd it is stopping at shutdown.
public struct SystemdWatchdogService: Service {
    private let notifier: SystemdNotifier
    /// Whether the daemon can still do its work (the store answers); a failing check stops the petting, so
    /// systemd restarts a hung daemon.
    private let healthy: @Sendable () -> Bool

    public init(notifier: SystemdNotifier, healthy: @escaping @Sendable () -> Bool) {
        self.notifier = notifier
        self.healthy = healthy
    }

    public func run() async throws {
        guard let interval = notifier.watchdogInterval else {
            try? await gracefulShutdown()
            notifier.notify("STOPPING=1")
            return
        }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            if healthy() { notifier.notify("WATCHDOG=1") }
            try? await Task.sleep(for: interval)
        }
        notifier.notify("STOPPING=1")
    }
}
