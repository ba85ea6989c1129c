import FareCore
import Foundation
import Scanners
import Sync
import Synchronization
import ValidationAPI

/// What the daemon knows about its own health, for `/healthz`, the inspector page and the logs.
public final class DaemonStatus: Sendable {
    /// One scanner as configured, and whether it is open.
    public struct Scanner: Sendable, Codable, Equatable {
        public var name: String
        public var device: String
        public var connected: Bool
        /// Why it is not connected, when it is not, in the device's words (English).
        public var reason: String?
        /// What kind of trouble that is, which the page says in its language.
        public var problem: ScannerProblem?
    }

    /// The device clock held against the trusted-time floor, as last checked.
    public struct Clock: Sendable, Codable, Equatable {
        /// Whether the device clock reads at or after the trusted-time floor (less the tolerance); while it does
        /// not, every verdict that depends on the time is `clock-untrusted`.
        public var trusted: Bool
        /// What the device clock read.
        public var wallClock: Date
        /// The trusted-time floor, and where it comes from; `nil` when it could not be read.
        public var floor: Date?
        public var floorSource: TrustedTimeSource?
        /// While the clock is not trusted (or the floor cannot be read): what is wrong and what to do.
        public var message: String?

        public init(
            trusted: Bool, wallClock: Date, floor: Date?, floorSource: TrustedTimeSource?, message: String? = nil
        ) {
            self.trusted = trusted
            self.wallClock = wallClock
            self.floor = floor
            self.floorSource = floorSource
            self.message = message
        }
    }

    /// The snapshot served as JSON.
    public struct Report: Sendable, Codable, Equatable {
        /// `ok` when every configured scanner is connected and the store is writable, else `degraded`.
        public var status: String
        public var mode: String
        public var startedAt: Date
        public var ready: Bool
        public var scanners: [Scanner]
        public var inspections: Int
        public var lastVerdictAt: Date?
        /// When the key and revocation data last changed (last good sync, or a local change).
        public var trustUpdatedAt: Date?
        /// When the sync worker last completed a round, if sync is configured.
        public var lastSyncAt: Date?
        /// The last failure of the journal or of verification, if the most recent attempt failed.
        public var lastError: String?
        /// Why the last sync round failed, when it did (cleared by the next good round): what went wrong, with
        /// which server, and what to do. A scan does not clear it.
        public var lastSyncError: String?
        /// When the last sync round failed, while `lastSyncError` is set.
        public var lastSyncErrorAt: Date?
        /// What kind of failure that was (`unreachable`, `tls`, `unauthorized`, …), which the page says in its
        /// language.
        public var lastSyncProblem: SyncError.Code?
        /// Clients connected to the verdict socket now (a gate controller, a local UI).
        public var socketClients: Int = 0
        /// Inspections shown but not yet in the journal database (a full disk): in the journal's reserve file
        /// or in memory. The status is `degraded` while any wait.
        public var journalPending: Int = 0
        /// Inspections the server refused (they conflict with a record this device uploaded before): kept in the
        /// journal with the server's reason, not sent again. Counted at start and after each sync round.
        public var journalRefused: Int = 0
        /// The device clock against the trusted-time floor. The status is `degraded` while it is not trusted.
        public var clock: Clock?
        /// The publishers a stand-alone gate follows itself (`[[trust.source]]`), as its house last said: each
        /// one's version, last success, age and staleness. A stale one leaves the status alone, as a failed sync
        /// does: the validator works offline on the trust it holds.
        public var trustSources: [TrustSourceHealth]?
    }

    private let state: Mutex<Report>
    /// Reads how many inspections wait for the journal (the pipeline's journal); set once at start.
    private let pendingJournal = Mutex<(@Sendable () -> Int)?>(nil)

    /// Has `report` read the journal's waiting inspections from `count`.
    public func countsPendingJournal(_ count: @escaping @Sendable () -> Int) { pendingJournal.withLock { $0 = count } }

    public init(mode: String, startedAt: Date = Date()) {
        state = Mutex(
            Report(
                status: "ok", mode: mode, startedAt: startedAt, ready: false, scanners: [], inspections: 0,
                lastVerdictAt: nil, trustUpdatedAt: nil, lastSyncAt: nil, lastError: nil))
    }

    /// The current report.
    public var report: Report {
        let pending = pendingJournal.withLock { $0 }?() ?? 0
        return state.withLock { report in
            var copy = report
            copy.journalPending = pending
            let allConnected = copy.scanners.allSatisfy(\.connected)
            let clockTrusted = copy.clock?.trusted ?? true
            // A failed sync round leaves the status alone: a validator works offline for days (its verdicts warn
            // `stale-trust-data` when the data is old), and says why in `lastSyncError`. A stale followed source
            // leaves it alone too (`trustSources` says which; the page says it beside the trust data's age).
            copy.status = allConnected && copy.lastError == nil && pending == 0 && clockTrusted ? "ok" : "degraded"
            return copy
        }
    }

    /// When trust data last came: the last sync, and the last change of the trusted keys. Read on every scan (the
    /// staleness warning), so without the rest of `report`, which asks the journal how many inspections wait.
    public var trustTimes: (lastSync: Date?, trustUpdated: Date?) {
        state.withLock { ($0.lastSyncAt, $0.trustUpdatedAt) }
    }

    public func markReady() { state.withLock { $0.ready = true } }

    /// Records the followed publishers' state, as the gate's house says it after a round or a hand-over.
    public func trustSourcesChecked(_ sources: [TrustSourceHealth]) { state.withLock { $0.trustSources = sources } }

    /// Records a check of the device clock; returns whether its trust changed (or it is the first check).
    @discardableResult
    public func clockChecked(_ clock: Clock) -> Bool {
        state.withLock { report in
            let changed = report.clock?.trusted != clock.trusted
            report.clock = clock
            return changed
        }
    }

    /// The `STATUS=` line for systemd: what the daemon does, and a clock that cannot be trusted first of all.
    public var systemdStatus: String {
        state.withLock { report in
            if let clock = report.clock, !clock.trusted {
                return "Clock untrusted (\(report.mode) mode): \(clock.message ?? "the device clock is behind")"
            }
            return "Inspecting (\(report.mode) mode)"
        }
    }

    /// Registers a configured scanner (disconnected until its reader says otherwise).
    public func addScanner(name: String, device: String) {
        state.withLock {
            $0.scanners.append(
                Scanner(name: name, device: device, connected: false, reason: "not opened yet", problem: .notOpened))
        }
    }

    /// Records a scanner's state: connected, or not for `reason` (the device's words), a `problem`.
    public func scanner(_ name: String, connected: Bool, reason: String?, problem: ScannerProblem? = nil) {
        state.withLock { report in
            guard let index = report.scanners.firstIndex(where: { $0.name == name }) else { return }
            report.scanners[index].connected = connected
            report.scanners[index].reason = connected ? nil : reason
            report.scanners[index].problem = connected ? nil : problem
        }
    }

    public func inspected(at date: Date) {
        state.withLock {
            $0.inspections += 1
            $0.lastVerdictAt = date
        }
    }

    /// Notes a verdict-socket client arriving (`+1`) or leaving (`-1`).
    public func socketClients(changedBy delta: Int) { state.withLock { $0.socketClients += delta } }

    public func trustUpdated(at date: Date?) { state.withLock { $0.trustUpdatedAt = date } }
    /// Records a good sync round: its time, and no sync error any more.
    public func synced(at date: Date) {
        state.withLock {
            $0.lastSyncAt = date
            $0.lastSyncError = nil
            $0.lastSyncErrorAt = nil
            $0.lastSyncProblem = nil
        }
    }
    /// Records a failed sync round (the journal's and the pipeline's own errors are kept apart, in `lastError`):
    /// `message` in English, and the kind of failure, `problem`.
    public func syncFailed(_ message: String, problem: SyncError.Code? = nil, at date: Date = Date()) {
        state.withLock {
            $0.lastSyncError = message
            $0.lastSyncErrorAt = date
            $0.lastSyncProblem = problem
        }
    }
    /// Records how many inspections the server refused, as the journal counts them.
    public func refusedInJournal(_ count: Int) { state.withLock { $0.journalRefused = count } }
    public func failed(_ message: String?) { state.withLock { $0.lastError = message } }
}
