import Dispatch
import Executors
import FareCore
import Foundation
import Logging
import Presentation
import Scanners
import ServiceLifecycle
import Sync
import TrustStore
import Verification

/// Where a verdict goes once it is in the journal: scanner feedback, JSON lines, sockets, the gate relay.
public protocol VerdictSink: Sendable {
    /// Hands the verdict over. Must return promptly: slow work (a gate command) is queued, not awaited.
    func deliver(_ verdict: PublishedVerdict) async
}

/// Every scan's path through the daemon: an ordered list of small steps (``InspectionStep``), listed in one place
/// (``steps``), each a value in the shape of the verifier's ticket policies.
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
/// 5. **staleness**: `stale-trust-data` past `[sync] stale_after`;
/// 6. **printed layout** of a UIC 918.3 ticket, and the records of a UIC ticket that cannot be read;
/// 7. **journal**: written and synced (`InspectionJournal.append`) before any sink fires, so a verdict that
///    was beeped, shown or sent to the gate is on disk, also after power loss, and on a full disk in the
///    journal's reserve;
/// 8. **publication**: the scanner's feedback, then the sinks, the metrics and the status.
///
/// The pipeline and its steps run on a thread of their own (``ExecutorThread``), the actor's executor and its scans'
/// task executor: the store and journal I/O blocks that thread, never one of the cooperative pool, and a step is a
/// call on it, not a hop to another thread that a busy machine can keep waiting for a core.
public actor InspectionPipeline {
    /// The steps every scan goes through, in order.
    private let steps: [any InspectionStep]
    private let journal: InspectionJournal
    private let metrics: DaemonMetrics
    private let status: DaemonStatus
    private let logger: Logger
    private nonisolated let io = ExecutorThread(name: "farecheck.scans")

    public nonisolated var unownedExecutor: UnownedSerialExecutor { io.asUnownedSerialExecutor() }

    /// The pipeline's thread, for a source to read its scans on (`withTaskExecutorPreference`): a scan that arrives
    /// there goes into the pipeline without waking another thread first.
    public nonisolated var thread: any TaskExecutor { io }

    /// - Parameters:
    ///   - onlineChecker: Asks the validation API about tickets found valid offline (`[sync] online_check`).
    ///   - staleness: Adds `stale-trust-data` past the configured staleness (`[sync] stale_after`).
    ///   - fleetFirstUses: The store sync keeps the fleet's first uses in: a single-use ticket another gate used is
    ///     `replayed` here too, offline.
    public init(
        verifier: TicketVerifier, journal: InspectionJournal, replay: ReplayCheck, sessions: InspectorSessions?,
        sinks: [any VerdictSink], metrics: DaemonMetrics, status: DaemonStatus, logger: Logger,
        onlineChecker: OnlineChecker? = nil, staleness: StalenessPolicy? = nil, fleetFirstUses: TrustStore? = nil
    ) {
        let recent = RecentInspections(window: replay.window)
        var steps: [any InspectionStep] = [
            VerificationStep(verifier: verifier, io: io, status: status, logger: logger)
        ]
        if let sessions { steps.append(InspectorSessionStep(sessions: sessions, logger: logger)) }
        steps.append(ReplayStep(recent: recent, replay: replay, journal: journal, io: io, logger: logger))
        if let fleetFirstUses {
            steps.append(
                FleetFirstUseStep(store: fleetFirstUses, replay: replay, recent: recent, io: io, logger: logger))
        }
        if let onlineChecker {
            steps.append(OnlineCheckStep(checker: onlineChecker, replay: replay, recent: recent))
        }
        if let staleness { steps.append(StalenessStep(policy: staleness, status: status)) }
        steps += [
            FirstUseStep(replay: replay),
            PrintedLayoutStep(),
            JournalStep(journal: journal, io: io, status: status, logger: logger),
            PublicationStep(sinks: sinks, metrics: metrics, status: status),
        ]
        self.steps = steps
        self.journal = journal
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
        metrics.scanned(device: scan.source.rawValue)
        var progress = ScanInProgress(
            scan: scan, started: ContinuousClock.now, feedback: feedback,
            inspection: Inspection(
                source: scan.source, receivedAt: scan.receivedAt, symbology: scan.symbology,
                payloadByteCount: scan.payload.count,
                payloadDigest: [], verdict: Self.notYetVerified))
        // In flight from here to the delivered verdict: a sync round's bulk work gives way meanwhile.
        await ScansInFlight.shared.track {
            await withTaskExecutorPreference(io) {
                for step in steps { await step.apply(to: &progress) }
            }
        }
        return progress.event ?? VerdictEvent(progress.inspection)
    }

    /// The verdict before the verification step, which always replaces it.
    private static let notYetVerified = Verdict(
        kind: .unsupported, reason: "The ticket has not been checked yet.", signature: .notChecked,
        inspectedAt: Date(timeIntervalSince1970: 0))

    /// The warning code of a verdict that is not (yet) in the journal database.
    public static let notJournaledCode = "not-journaled"

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

/// Checkpoints the journal's write-ahead log once a second on a thread of its own (the journal is opened with
/// `InspectionJournal.Checkpoints.byOwner`), so that no verdict's append copies the log into the file and syncs it
/// before the verdict can be shown: with SQLite's automatic checkpoint, every few hundredth append did.
struct JournalCheckpointService: Service {
    let journal: InspectionJournal
    /// How often.
    var interval: Duration = .seconds(1)
    private let io = BlockingQueue(label: "farecheck.journal.checkpoint", qos: .utility)

    init(journal: InspectionJournal) {
        self.journal = journal
    }

    func run() async throws {
        let journal = self.journal
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: interval)
                // A failure (the disk is full) leaves the log as it is: the next second tries again, and SQLite's
                // backstop checkpoints in a commit should the log grow large.
                // Paced: the copy reaches the disk in small steps, so that an append's fsync never queues behind it.
                _ = await io.run { (try? journal.checkpoint(pacing: .standard)) != nil }
            }
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
