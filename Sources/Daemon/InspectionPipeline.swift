import Dispatch
import FareCore
import Foundation
import Logging
import ServiceLifecycle
import Scanners
import Signatures
import Sync
import TicketFormats
import TrustStore
import Verification

/// Where a verdict goes once it is in the journal: scanner feedback, JSON lines, sockets, the gate relay.
public protocol VerdictSink: Sendable {
    /// Hands the verdict over. Must return promptly: slow work (a gate command) is queued, not awaited.
    func deliver(_ verdict: PublishedVerdict) async
}

/// Every scan's path through the daemon: an ordered list of small steps, then the **journal**, then the sinks.
///
/// The steps, in order:
/// 1. **verification**: the accepted format (decided from the detected format, before any signature or store
///    work), then the signature and the ticket policies (`TicketVerifier`);
/// 2. **inspector session** (inspector mode): with nobody logged in the scan is `refused`, not inspected; a
///    staff badge logs its holder in;
/// 3. **replay**: `seen-before` or `replayed`, judged and recorded in one step (`RecentInspections`), so two
///    scans of one ticket arriving together, from one scanner or two, are judged one after the other, also
///    while the first one's online check is still under way;
/// 4. **online check** (`[sync] online_check`): can only turn `valid` into `revoked`, within its deadline;
/// 5. **staleness**: `stale-trust-data` past `[sync] stale_after`.
///
/// Then the journal: written and synced (`InspectionJournal.append`) before any sink fires, so a verdict that
/// was beeped, shown or sent to the gate is on disk, also after power loss, and on a full disk in the journal's
/// reserve. Store and journal I/O runs on a thread of its own, never on the cooperative thread pool.
public actor InspectionPipeline {
    private let verifier: TicketVerifier
    private let journal: InspectionJournal
    private let replay: ReplayCheck
    private let recent: RecentInspections
    private let sessions: InspectorSessions?
    private let sinks: [any VerdictSink]
    private let metrics: DaemonMetrics
    private let status: DaemonStatus
    private let logger: Logger
    /// Asks the validation API about tickets found valid offline ([sync] online_check); nil when not configured.
    private let onlineChecker: OnlineChecker?
    /// Adds `stale-trust-data` past the configured staleness ([sync] stale_after); nil without sync.
    private let staleness: StalenessPolicy?
    private let io = BlockingIO(label: "farecheck.pipeline.io")

    public init(
        verifier: TicketVerifier, journal: InspectionJournal, replay: ReplayCheck, sessions: InspectorSessions?,
        sinks: [any VerdictSink], metrics: DaemonMetrics, status: DaemonStatus, logger: Logger,
        onlineChecker: OnlineChecker? = nil, staleness: StalenessPolicy? = nil
    ) {
        self.onlineChecker = onlineChecker
        self.staleness = staleness
        self.verifier = verifier
        self.journal = journal
        self.replay = replay
        self.recent = RecentInspections(window: replay.window)
        self.sessions = sessions
        self.sinks = sinks
        self.metrics = metrics
        self.status = status
        self.logger = logger
    }

    /// Inspections that wait to be written into the journal database (in its reserve file or in memory).
    public nonisolated var pendingCount: Int { journal.pendingCount }

    /// Inspects one scan and delivers the verdict; returns what the sinks were given. Never throws: a store
    /// failure becomes a verdict or a warning that says so.
    @discardableResult
    public func inspect(_ scan: ScanEvent, feedback: (@Sendable (ScanFeedback) async -> Void)? = nil) async
        -> VerdictEvent
    {
        let started = ContinuousClock.now
        metrics.scanned(device: scan.device)
        var inspection = Inspection(
            source: scan.device, symbology: scan.symbology, payloadByteCount: scan.payload.count,
            payloadDigest: [], verdict: await verify(scan))
        sessionStep(&inspection)
        if inspection.isJournaled {
            await replayStep(&inspection)
            await onlineStep(&inspection, payload: scan.payload)
            stalenessStep(&inspection)
        }
        if inspection.verdict.format == .uic9183 {
            inspection.printedLayout = UIC918_3.printedLayout(of: scan.payload)
        }
        let durability = await journalStep(&inspection, payload: scan.payload)
        inspection.latency = started.duration(to: .now)
        var event = VerdictEvent(inspection)
        switch durability {
        case .journaled?, nil:
            break
        case .reserved?:
            event.warnings.append(Self.notJournaledCode)
            event.warningMessages.append(
                "The disk is full: this inspection is kept in the journal's reserve file and written to the "
                    + "journal when space returns.")
        case .heldInMemory?:
            event.warnings.append(Self.notJournaledCode)
            event.warningMessages.append(
                "The store could not record this inspection; it is kept in memory and retried.")
        }
        let published = event.published
        if let feedback { await feedback(event.isValid ? .good : .bad) }
        for sink in sinks { await sink.deliver(published) }
        metrics.verdict(event.verdict, latency: started.duration(to: .now))
        status.inspected(at: event.inspectedAt)
        return event
    }

    /// The warning code of a verdict that is not (yet) in the journal database.
    public static let notJournaledCode = "not-journaled"

    // MARK: Steps

    /// Step 1: accepted format, signature and ticket policies.
    private func verify(_ scan: ScanEvent) async -> Verdict {
        let verifier = self.verifier
        let payload = scan.payload
        // The verifier's error carries a non-Sendable cause: only its text crosses back.
        let result = await io.run { () -> (verdict: Verdict?, failure: String?) in
            do throws(VerifierError) {
                return (try verifier.verify(payload), nil)
            } catch {
                return (nil, error.description)
            }
        }
        if let verdict = result.verdict { return verdict }
        let failure = result.failure ?? "unknown failure"
        logger.error("verification could not run: \(failure)")
        status.failed("verification could not run: \(failure)")
        return Verdict(
            kind: .unsupported, reason: "The validator could not check this ticket: \(failure).",
            signature: .notChecked, inspectedAt: Date())
    }

    /// Step 2: inspector mode needs someone logged in; a staff badge logs in.
    private func sessionStep(_ inspection: inout Inspection) {
        guard let sessions, sessions.isRequired else { return }
        let verdict = inspection.verdict
        if InspectorSessions.isBadge(verdict) {
            if let session = sessions.login(badge: verdict) {
                logger.info("inspector \(session.staffID) logged in by badge on \(inspection.source)")
                inspection.verdict.reason = "Logged in: \(session.name ?? session.staffID). " + verdict.reason
            }
            inspection.inspector = sessions.current()?.staffID
        } else if let session = sessions.touch(at: verdict.inspectedAt) {
            inspection.inspector = session.staffID
        } else {
            inspection.verdict = Verdict(
                kind: .refused, reason: "No inspector is logged in: log in on the page or scan a staff badge.",
                signature: verdict.signature, format: verdict.format, inspectedAt: verdict.inspectedAt)
        }
    }

    /// Step 3: replay, judged and recorded at once (no suspension point between the two).
    private func replayStep(_ inspection: inout Inspection) async {
        guard !InspectorSessions.isBadge(inspection.verdict) else { return }
        let (verdict, id, device) = (inspection.verdict, inspection.id, inspection.source)
        let (recent, replay, journal) = (self.recent, self.replay, self.journal)
        let result = await io.run { () -> Result<Verdict, any Error> in
            Result { try recent.judge(verdict, id: id, device: device, replay: replay, history: journal) }
        }
        switch result {
        case .success(let judged):
            inspection.verdict = judged
        case .failure(let error):
            logger.error("replay detection could not read the journal: \(error)")
        }
    }

    /// Step 4: the online check, which may only turn `valid` into `revoked`.
    private func onlineStep(_ inspection: inout Inspection, payload: [UInt8]) async {
        guard let onlineChecker, !InspectorSessions.isBadge(inspection.verdict) else { return }
        let review = await onlineChecker.review(inspection.verdict, payload: payload)
        if review.verdict.kind != inspection.verdict.kind { recent.settle(review.verdict, id: inspection.id) }
        inspection.verdict = review.verdict
        inspection.decidedBy = review.decidedBy
    }

    /// Step 5: trust data too old.
    private func stalenessStep(_ inspection: inout Inspection) {
        guard let staleness, !InspectorSessions.isBadge(inspection.verdict) else { return }
        let report = status.report
        if let warning = staleness.warning(
            lastSync: report.lastSyncAt, trustChanged: report.trustUpdatedAt, now: Date())
        {
            inspection.verdict.warnings.append(warning)
        }
    }

    /// The journal: where the inspection was kept, or `nil` for a refused scan, which is not journaled.
    private func journalStep(_ inspection: inout Inspection, payload: [UInt8]) async
        -> InspectionJournal.Durability?
    {
        guard inspection.isJournaled else { return nil }
        inspection.payloadDigest = digest(.sha256, payload)
        let record = InspectionRecord(inspection)
        let journal = self.journal
        let durability = await io.run { journal.append(record) }
        if durability == .journaled {
            status.failed(nil)
        } else {
            let pending = journal.pendingCount
            let cause = journal.lastFailure?.message ?? "the journal refused the write"
            logger.error("journal write failed, \(pending) inspection(s) wait: \(cause)")
            status.failed("journal: \(cause)")
        }
        return durability
    }

    /// Moves inspections waiting in the journal's reserve or memory into the journal database; for the
    /// watchdog, so that the daemon recovers when space returns even without a scan.
    public func drainJournal() async {
        let journal = self.journal
        guard journal.pendingCount > 0 else { return }
        let drained = await io.run { () -> Bool in (try? journal.drain()) != nil }
        if drained {
            logger.notice("the journal has room again: every waiting inspection is written")
            status.failed(nil)
        }
    }
}

/// A serial thread for blocking store and journal calls, so that they never hold a thread of Swift's
/// cooperative pool (which has as many threads as cores).
final class BlockingIO: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .userInitiated)
    }

    /// Runs `body` on the I/O thread and returns its result.
    func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}

/// Retries the journal while inspections wait for room (a full disk), so that the daemon is `ok` again soon
/// after space returns even when no scan comes; a scan retries at once by itself.
struct JournalRecoveryService: Service {
    let pipeline: InspectionPipeline
    /// How often to retry while inspections wait.
    var interval: Duration = .seconds(1)

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                if pipeline.pendingCount > 0 { await pipeline.drainJournal() }
            }
        }
    }
}
