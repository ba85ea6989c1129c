import FareCore
import Foundation
import Logging
import ServiceLifecycle
import Verification

/// The device clock held against the trusted-time floor, as the verifier holds it for each verdict: for the
/// status (`/healthz`, the page), the metrics and systemd's `STATUS=` line.
public struct ClockCheck: Sendable {
    /// Where the floor is read (the store, with the journal and the release date).
    public let trustedTime: any TrustedTimeFloorSource
    /// How far the clock may read earlier than the floor (`[verification] clock_floor_tolerance`).
    public let tolerance: TimeInterval

    public init(trustedTime: any TrustedTimeFloorSource, tolerance: TimeInterval) {
        self.trustedTime = trustedTime
        self.tolerance = tolerance
    }

    /// The clock's state at `now` (the device clock). A floor that cannot be read leaves the clock trusted (the
    /// verifier then reports the failure with each scan), with the reason in `message`.
    public func check(at now: Date = Date()) -> DaemonStatus.Clock {
        let floor: TrustedTimeFloor?
        do {
            floor = try trustedTime.trustedTimeFloor()
        } catch {
            return DaemonStatus.Clock(
                trusted: true, wallClock: now, floor: nil, floorSource: nil,
                message: "the trusted-time floor could not be read: \(error)")
        }
        let doubt = floor?.doubt(of: now, tolerance: tolerance)
        return DaemonStatus.Clock(
            trusted: doubt == nil, wallClock: now, floor: floor?.instant, floorSource: floor?.source,
            message: doubt?.reason.english)
    }
}

/// Checks the device clock every `interval` and tells the status, the log and systemd when its trust changes: a
/// clock stepped back (or found wrong at boot) and a clock put right are both seen within the interval, with no
/// scan needed. Verdicts do not wait for it: the verifier reads the floor for each one.
struct ClockWatchService: Service {
    let check: ClockCheck
    let status: DaemonStatus
    let notifier: SystemdNotifier
    let logger: Logger
    var interval: Duration = .seconds(1)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                Self.record(check.check(), status: status, notifier: notifier, logger: logger)
                try await Task.sleep(for: interval)
            }
        }
    }

    /// Records one check; on a change of trust, logs it and updates systemd's `STATUS=` line (once the daemon is
    /// ready: until then the `READY=1` message carries it).
    static func record(_ clock: DaemonStatus.Clock, status: DaemonStatus, notifier: SystemdNotifier, logger: Logger) {
        guard status.clockChecked(clock) else { return }
        if clock.trusted {
            let floor = clock.floor.map { " (trusted-time floor \($0.formatted(.iso8601)))" } ?? ""
            logger.notice("the device clock reads \(clock.wallClock.formatted(.iso8601)) and is trusted\(floor)")
        } else {
            logger.warning("clock untrusted: \(clock.message ?? "the device clock is behind")")
        }
        if status.report.ready { notifier.notify("STATUS=\(status.systemdStatus)") }
    }
}
