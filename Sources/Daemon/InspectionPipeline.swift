import FareCore
import Foundation
import Logging
import Scanners
import Signatures
import Sync
import TrustStore
import Verification

/// Where a verdict goes once it is in the journal: scanner feedback, JSON lines, sockets, the gate relay.
public protocol VerdictSink: Sendable {
    /// Hands `event` over. Must return promptly: slow work (a gate command) is queued, not awaited.
    func deliver(_ event: VerdictEvent) async
}

/// Every scan's path through the daemon, in a fixed order: verify, replay check, **journal** (durable on disk),
/// then the sinks.
///
/// The journal write comes before any sink fires, so a verdict that was beeped, shown or sent to the gate is
/// always in the store, also after power loss. Scans are inspected one at a time (an actor), which is what
/// makes replay detection exact: a ticket scanned twice in quick succession is seen twice.
public actor InspectionPipeline {
    private let verifier: TicketVerifier
    private let store: TrustStore
    private let replay: ReplayCheck
    private let acceptedFormats: Set<String>
    private let sessions: InspectorSessions?
    private let sinks: [any VerdictSink]
    private let metrics: DaemonMetrics
    private let status: DaemonStatus
    private let logger: Logger
    /// Asks the validation API about tickets found valid offline ([sync] online_check); nil when not configured.
    private let onlineChecker: OnlineChecker?
    /// Adds `stale-trust-data` past the configured staleness ([sync] stale_after); nil without sync.
    private let staleness: StalenessPolicy?
    /// Records that could not be written (disk full, I/O error), kept and retried before the next write.
    private var unwritten: [InspectionRecord] = []

    public init(
        verifier: TicketVerifier, store: TrustStore, replay: ReplayCheck, acceptedFormats: Set<String>,
        sessions: InspectorSessions?, sinks: [any VerdictSink], metrics: DaemonMetrics, status: DaemonStatus,
        logger: Logger, onlineChecker: OnlineChecker? = nil, staleness: StalenessPolicy? = nil
    ) {
        self.onlineChecker = onlineChecker
        self.staleness = staleness
        self.verifier = verifier
        self.store = store
        self.replay = replay
        self.acceptedFormats = acceptedFormats
        self.sessions = sessions
        self.sinks = sinks
        self.metrics = metrics
        self.status = status
        self.logger = logger
    }

    /// Inspections that are waiting to be written because the store refused them.
    public var unwrittenCount: Int { unwritten.count }

    /// Inspects one scan and delivers the verdict; returns what the sinks were given. Never throws: a store
    /// failure becomes a verdict of kind `error` that says so.
    @discardableResult
    public func inspect(_ scan: ScanEvent, feedback: (@Sendable (ScanFeedback) async -> Void)? = nil) async
        -> VerdictEvent
    {
        let started = ContinuousClock.now
        metrics.scanned(device: scan.device)
        var verdict = decide(scan)
        var decidedBy = OnlineChecker.Decider.offline
        if !InspectorSessions.isBadge(verdict) {
            if let onlineChecker {
                let review = await onlineChecker.review(verdict, payload: scan.payload)
                verdict = review.verdict
                decidedBy = review.decidedBy
            }
            if let staleness {
                let report = status.report
                if let warning = staleness.warning(
                    lastSync: report.lastSyncAt, trustChanged: report.trustUpdatedAt, now: Date())
                {
                    verdict.warnings.append(warning)
                }
            }
        }
        var inspector: String?
        var kindLabel = verdict.kind.rawValue
        if let sessions, sessions.isRequired {
            if InspectorSessions.isBadge(verdict) {
                if let session = sessions.login(badge: verdict) {
                    logger.info("inspector \(session.staffID) logged in by badge on \(scan.device)")
                    verdict.reason = "Logged in: \(session.name ?? session.staffID). " + verdict.reason
                }
                inspector = sessions.current()?.staffID
            } else if let session = sessions.touch(at: verdict.inspectedAt) {
                inspector = session.staffID
            } else {
                verdict = Verdict(
                    kind: verdict.kind, reason: verdict.reason, signature: verdict.signature,
                    inspectedAt: verdict.inspectedAt)
                kindLabel = "refused"
            }
        }
        let id = UUID().uuidString
        var event: VerdictEvent
        if kindLabel == "refused" {
            event = VerdictEvent(
                id: id, verdict: verdict, device: scan.device, symbology: scan.symbology,
                payloadBytes: scan.payload.count, inspector: nil)
            event.verdict = "refused"
            event.reason = "No inspector is logged in: log in on the page or scan a staff badge."
        } else {
            let record = InspectionRecord(
                id: id, verdict: verdict, device: scan.device, symbology: scan.symbology,
                payloadDigest: digest(.sha256, scan.payload), inspector: inspector, decidedBy: decidedBy.rawValue)
            event = VerdictEvent(
                id: id, verdict: verdict, device: scan.device, symbology: scan.symbology,
                payloadBytes: scan.payload.count, inspector: inspector, decidedBy: decidedBy.rawValue)
            if !write(record) {
                event.warnings.append("not-journaled")
                event.warningMessages.append(
                    "The store could not record this inspection; it is kept in memory and retried.")
            }
        }
        let elapsed = started.duration(to: .now)
        event.latencyMicros = Int(
            elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000)
        if let feedback { await feedback(event.isValid ? .good : .bad) }
        for sink in sinks { await sink.deliver(event) }
        metrics.verdict(kindLabel, latency: started.duration(to: .now))
        status.inspected(at: event.inspectedAt)
        return event
    }

    /// The verdict before the journal: signature and policies, accepted formats, replay.
    private func decide(_ scan: ScanEvent) -> Verdict {
        var verdict: Verdict
        do {
            verdict = try verifier.verify(scan.payload)
        } catch {
            logger.error("verification could not run: \(error)")
            status.failed("verification could not run: \(error)")
            return Verdict(
                kind: .unsupported, reason: "The validator could not check this ticket: \(error.message).",
                signature: .notChecked, inspectedAt: Date())
        }
        if let format = verdict.format, !acceptedFormats.contains(format) {
            return Verdict(
                kind: .unsupported, reason: "Tickets of format \(format) are not accepted on this validator.",
                signature: verdict.signature, format: format, issuer: verdict.issuer, keyID: verdict.keyID,
                ticket: verdict.ticket, inspectedAt: verdict.inspectedAt)
        }
        guard !InspectorSessions.isBadge(verdict) else { return verdict }
        do {
            verdict = try replay.apply(to: verdict, history: store)
        } catch {
            logger.error("replay detection could not read the journal: \(error)")
        }
        return verdict
    }

    /// Appends `record` (after any earlier records still waiting) to the journal; `false` if it must wait.
    private func write(_ record: InspectionRecord) -> Bool {
        unwritten.append(record)
        while let next = unwritten.first {
            do {
                try store.journal(next)
                unwritten.removeFirst()
            } catch {
                logger.error(
                    "journal write failed, \(unwritten.count) inspection(s) kept in memory: \(error.description)")
                status.failed("journal: \(error.message)")
                return unwritten.last?.id != record.id
            }
        }
        status.failed(nil)
        return true
    }
}
