import Executors
import FareCore
import Foundation
import Logging
import Presentation
import Scanners
import Signatures
import Sync
import TicketFormats
import TrustStore
import ValidationAPI
import Verification

/// A scan on its way through the pipeline: the scan, the inspection the steps build up, and what became of it.
struct ScanInProgress: Sendable {
    let scan: ScanEvent
    /// When the pipeline took the scan (for the latency).
    let started: ContinuousClock.Instant
    /// Told good or bad once the verdict is final (the scanner's beep and LED).
    let feedback: (@Sendable (ScanFeedback) async -> Void)?
    var inspection: Inspection
    /// The verifier's decoding of the payload (its printed layout, unreadable records): set by ``VerificationStep``.
    var decoding: PayloadDecoding?
    /// Where the journal kept the inspection: set by ``JournalStep``; `nil` for a refused scan, never journaled.
    var durability: InspectionJournal.Durability?
    /// What the sinks were given: set by ``PublicationStep``.
    var event: VerdictEvent?

    /// Whether the steps that judge a ticket apply: not to a refused scan, nor to a staff badge.
    var isTicketInspection: Bool {
        inspection.isJournaled && !InspectorSessions.isBadge(inspection.verdict)
    }
}

/// One step of every scan's way through the daemon, in the shape of the verifier's ``TicketPolicy``: small values,
/// run in the order ``InspectionPipeline`` lists them, each looking at the scan so far and changing what it
/// decides. A step never throws: a store failure becomes a verdict, a warning or a log line that says so.
protocol InspectionStep: Sendable {
    /// Applies the step to the scan.
    func apply(to scan: inout ScanInProgress) async
}

/// The accepted format (decided from the detected format, before any signature or store work), then the
/// signature and the ticket policies: `TicketVerifier`, on the pipeline's thread.
struct VerificationStep: InspectionStep {
    let verifier: TicketVerifier
    let io: ExecutorThread
    let status: DaemonStatus
    let logger: Logger

    func apply(to scan: inout ScanInProgress) async {
        let verifier = self.verifier
        let payload = scan.scan.payload
        // The verifier's error carries a non-Sendable cause: only its text crosses back.
        let result = await io.run { () -> (verified: VerifiedPayload?, failure: String?) in
            do throws(VerifierError) {
                return (try verifier.inspect(payload), nil)
            } catch {
                return (nil, error.description)
            }
        }
        if let verified = result.verified {
            scan.inspection.verdict = verified.verdict
            scan.decoding = verified.decoding
            return
        }
        let failure = result.failure ?? "unknown failure"
        logger.error("verification could not run: \(failure)")
        status.failed("verification could not run: \(failure)")
        scan.inspection.verdict = Verdict(
            kind: .unsupported, reason: "The validator could not check this ticket: \(failure).",
            signature: .notChecked, inspectedAt: Date())
    }
}

/// Inspector mode needs someone logged in: with nobody, the scan is `refused`, not inspected; a staff badge logs
/// its holder in.
struct InspectorSessionStep: InspectionStep {
    let sessions: InspectorSessions
    let logger: Logger

    func apply(to scan: inout ScanInProgress) async {
        guard sessions.isRequired else { return }
        let verdict = scan.inspection.verdict
        if InspectorSessions.isBadge(verdict) {
            if let session = sessions.login(badge: verdict) {
                logger.info(
                    "inspector \(PrintableText(session.staffID)) logged in by badge on \(scan.inspection.source)")
                scan.inspection.verdict.explanation =
                    "Logged in: \(session.name ?? session.staffID). \(verdict.explanation)"
            } else if verdict.isValid {
                // A genuine badge for an id not in the staff list (removed, or never added): nobody logs in.
                let holder = verdict.ticket?.holder ?? ""
                logger.warning("staff badge refused: \(PrintableText(holder)) is not in the staff list")
                scan.inspection.verdict = Verdict(
                    kind: .refused, reason: "This staff badge's inspector is not in the staff list: not logged in.",
                    signature: verdict.signature, format: verdict.format, issuer: verdict.issuer,
                    keyID: verdict.keyID, ticket: verdict.ticket, inspectedAt: verdict.inspectedAt)
            }
            scan.inspection.inspector = sessions.current()?.staffID
        } else if let session = sessions.touch(at: verdict.inspectedAt) {
            scan.inspection.inspector = session.staffID
        } else {
            scan.inspection.verdict = Verdict(
                kind: .refused, reason: "No inspector is logged in: log in on the page or scan a staff badge.",
                signature: verdict.signature, format: verdict.format, inspectedAt: verdict.inspectedAt)
        }
    }
}

/// `seen-before` or `replayed`, judged and recorded in one call on the pipeline's thread (`RecentInspections`): two scans
/// of one ticket arriving together, from one scanner or two, are judged one after the other, also while the first
/// one's online check is still under way.
struct ReplayStep: InspectionStep {
    let recent: RecentInspections
    let replay: ReplayCheck
    let journal: InspectionJournal
    let io: ExecutorThread
    let logger: Logger

    func apply(to scan: inout ScanInProgress) async {
        guard scan.isTicketInspection else { return }
        let (verdict, id, device) = (scan.inspection.verdict, scan.inspection.id, scan.inspection.source)
        let (recent, replay, journal) = (self.recent, self.replay, self.journal)
        let result = await io.run { () -> Result<Verdict, any Error> in
            Result { try recent.judge(verdict, id: id, device: device, replay: replay, history: journal) }
        }
        switch result {
        case .success(let judged):
            scan.inspection.verdict = judged
        case .failure(let error):
            logger.error("replay detection could not read the journal: \(error)")
        }
    }
}

/// A single-use ticket at a gate that another device of the fleet used first, as the last sync told: `replayed`,
/// offline. The fleet's first uses come with sync (`GET /v1/first-uses`) into the store.
struct FleetFirstUseStep: InspectionStep {
    let store: TrustStore
    let replay: ReplayCheck
    /// Told when the verdict changes, so that a replay judged against it sees the final one.
    let recent: RecentInspections
    let io: ExecutorThread
    let logger: Logger

    func apply(to scan: inout ScanInProgress) async {
        let verdict = scan.inspection.verdict
        guard scan.isTicketInspection, verdict.kind == .valid, replay.isSingleUse(verdict), let ticket = verdict.ticket
        else { return }
        let store = self.store
        let found = await io.run { () -> Result<FleetFirstUse?, StoreError> in
            Result { () throws(StoreError) in
                try store.fleetFirstUse(
                    issuer: ticket.issuer.rawValue, ticketID: ticket.ticketID.bytes, format: verdict.format)
            }
        }
        switch found {
        case .success(let first?):
            let replayed = verdict.replayed(
                passed: first.device, at: first.usedAt, source: "the fleet's first use, as of the last sync")
            recent.settle(replayed, id: scan.inspection.id)
            scan.inspection.verdict = replayed
        case .success(nil):
            break
        case .failure(let error):
            logger.error("the fleet's first uses could not be read: \(error)")
        }
    }
}

/// Marks an inspection that passed a single-use ticket at a gate as the ticket's first use: uploaded so, the server
/// records it for the fleet (or reports a conflict when another gate passed it before).
struct FirstUseStep: InspectionStep {
    let replay: ReplayCheck

    func apply(to scan: inout ScanInProgress) async {
        let verdict = scan.inspection.verdict
        scan.inspection.isFirstUse = scan.isTicketInspection && verdict.kind == .valid && replay.isSingleUse(verdict)
    }
}

/// The online check (`[sync] online_check`), which may only turn `valid` into `revoked`, or into `replayed` for a
/// single-use ticket at a gate whose first use another gate of the fleet claimed first, within its deadline.
struct OnlineCheckStep: InspectionStep {
    let checker: OnlineChecker
    /// Which tickets are single-use here (their first use is claimed for the fleet).
    let replay: ReplayCheck
    /// Told when the check changes a verdict, so that a replay judged against it sees the final one.
    let recent: RecentInspections

    func apply(to scan: inout ScanInProgress) async {
        guard scan.isTicketInspection else { return }
        let verdict = scan.inspection.verdict
        let review = await checker.review(
            verdict, payload: scan.scan.payload,
            firstUseOf: replay.isSingleUse(verdict) ? scan.inspection.id : nil)
        if review.verdict.kind != scan.inspection.verdict.kind {
            recent.settle(review.verdict, id: scan.inspection.id)
        }
        scan.inspection.verdict = review.verdict
        scan.inspection.decidedBy = review.decidedBy
    }
}

/// `stale-trust-data` past `[sync] stale_after`.
struct StalenessStep: InspectionStep {
    let policy: StalenessPolicy
    let status: DaemonStatus

    func apply(to scan: inout ScanInProgress) async {
        guard scan.isTicketInspection else { return }
        let times = status.trustTimes
        if let warning = policy.warning(lastSync: times.lastSync, trustChanged: times.trustUpdated, now: Date()) {
            scan.inspection.verdict.warnings.append(warning)
        }
    }
}

/// A UIC 918.3 ticket's printed layout (U_TLAY), for the inspector to compare with the paper, and the records of a
/// UIC ticket (918.3 or DOSIPAS) that are present but cannot be read, so that none disappears without a word.
///
/// Both come from the verifier's one decoding of the payload (`TicketVerifier.inspect`): its ticket's content, or the
/// container or barcode it took apart when it made no ticket (a signature that failed). Nothing is decoded again.
struct PrintedLayoutStep: InspectionStep {
    func apply(to scan: inout ScanInProgress) async {
        guard let decoding = scan.decoding else { return }
        switch scan.inspection.verdict.format {
        case .uic9183?:
            scan.inspection.printedLayout = decoding.printedLayout.lines
            scan.inspection.unreadableRecords = decoding.unreadableRecords
        case .uic9189?:
            scan.inspection.unreadableRecords = decoding.unreadableRecords
        default:
            break
        }
    }
}

/// The journal: written and synced (`InspectionJournal.append`) before any sink fires, so a verdict that was
/// beeped, shown or sent to the gate is on disk, also after power loss, and on a full disk in the journal's
/// reserve. A refused scan is not journaled.
struct JournalStep: InspectionStep {
    let journal: InspectionJournal
    let io: ExecutorThread
    let status: DaemonStatus
    let logger: Logger

    func apply(to scan: inout ScanInProgress) async {
        guard scan.inspection.isJournaled else { return }
        scan.inspection.payloadDigest = digest(.sha256, scan.scan.payload)
        // A first use keeps its payload until the server has it (the server verifies the claim with it).
        let record = InspectionRecord(scan.inspection, payload: scan.scan.payload)
        let journal = self.journal
        let durability = await io.run { journal.append(record) }
        scan.durability = durability
        if durability == .journaled {
            status.failed(nil)
        } else {
            let pending = journal.pendingCount
            let cause = journal.lastFailure?.message ?? "the journal refused the write"
            logger.error("journal write failed, \(pending) inspection(s) wait: \(cause)")
            status.failed("journal: \(cause)")
        }
    }
}

/// The verdict event (with a warning when the inspection is not in the journal database yet), handed to the
/// scanner's feedback and to every sink; then the metrics and the status page.
struct PublicationStep: InspectionStep {
    let sinks: [any VerdictSink]
    let metrics: DaemonMetrics
    let status: DaemonStatus

    func apply(to scan: inout ScanInProgress) async {
        scan.inspection.latency = scan.started.duration(to: .now)
        var event = VerdictEvent(scan.inspection)
        switch scan.durability {
        case .journaled?, nil:
            break
        case .reserved?:
            event.warnings.append(InspectionPipeline.notJournaledCode)
            event.warningMessages.append(
                "The disk is full: this inspection is kept in the journal's reserve file and written to the "
                    + "journal when space returns.")
        case .heldInMemory?:
            event.warnings.append(InspectionPipeline.notJournaledCode)
            event.warningMessages.append(
                "The store could not record this inspection; it is kept in memory and retried.")
        }
        let published = event.published
        if let feedback = scan.feedback { await feedback(event.isValid ? .good : .bad) }
        for sink in sinks { await sink.deliver(published) }
        metrics.verdict(event.verdict, latency: scan.started.duration(to: .now))
        status.inspected(at: event.inspectedAt)
        scan.event = event
    }
}
