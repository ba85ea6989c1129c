import FareCore
import Foundation
import Logging
import Signatures
import TicketFormats
import TrustStore
import ValidationAPI
import Verification

/// What one sync round changed, for the log and for `farecheck sync`.
public struct SyncReport: Sendable, Equatable, Codable {
    /// The key bundle sequence held after the round (nil when the server has published none).
    public var keyBundleSequence: Int64?
    /// Whether a new key bundle was applied.
    public var keyBundleApplied = false
    /// Keys the bundle added, replaced and withdrew.
    public var keysAdded = 0
    public var keysUpdated = 0
    public var keysRemoved = 0
    /// Revocation deltas applied, and whether one of them was a full snapshot.
    public var revocationDeltas = 0
    public var fullSnapshot = false
    /// Revocations (tickets, keys and blocklist entries) added and lifted.
    public var revocationsAdded = 0
    public var revocationsRemoved = 0
    /// The published blocklists (VDV-KA, DTVG) the server distributes, by the versions the last page named.
    public var blocklists: [PublishedBlocklist] = []
    /// The revocation cursor held after the round.
    public var revocationCursor: Int64 = 0
    /// Other devices' first uses of single-use tickets learnt in this round (new to this validator).
    public var fleetFirstUsesAdded = 0
    /// Withdrawals of other devices' first uses applied in this round (the server no longer stands by them).
    public var fleetFirstUsesWithdrawn = 0
    /// Entries of signed pages (revocations, first uses) that could not be read and were skipped in this round; the
    /// rest of each page was applied and the cursor moved on.
    public var entriesSkipped = 0
    /// Inspections the server acknowledged in this round.
    public var inspectionsUploaded = 0
    /// Inspections the server refused in this round (kept in the journal with its reason, not sent again).
    public var inspectionsRefused = 0
    /// Whether the server refused more first-use claims from this device for now (429 `too-many-claims`): the
    /// round's remaining uploads wait for the next round.
    public var uploadsPaused = false
    /// Inspections still waiting for an acknowledgement.
    public var inspectionsUnsent = 0
    /// Inspections the server refused, this round or before, that the journal keeps.
    public var inspectionsRefusedInJournal = 0
    /// Acknowledged inspections older than the journal's retention, deleted from it in this round.
    public var inspectionsPruned = 0
    /// When the round completed, by the local clock (only for staleness; never compared to server dates).
    public var completedAt = Date()

    /// Makes an empty report.
    public init() {}

    /// One line for the log.
    public var summary: String {
        var parts: [String] = []
        if keyBundleApplied {
            parts.append(
                "key bundle \(keyBundleSequence ?? 0): +\(keysAdded) ~\(keysUpdated) -\(keysRemoved) keys")
        } else {
            parts.append("key bundle \(keyBundleSequence.map(String.init) ?? "none") unchanged")
        }
        parts.append(
            "revocations +\(revocationsAdded) -\(revocationsRemoved)\(fullSnapshot ? " (full snapshot)" : ""), "
                + "cursor \(revocationCursor)")
        parts.append(
            "\(inspectionsUploaded) inspections uploaded"
                + (uploadsPaused ? " (the rest next round: the server takes no more first-use claims for now)" : ""))
        if inspectionsPruned > 0 {
            parts.append("\(inspectionsPruned) acknowledged inspections pruned from the journal")
        }
        if fleetFirstUsesAdded > 0 { parts.append("\(fleetFirstUsesAdded) first uses by other gates") }
        if fleetFirstUsesWithdrawn > 0 { parts.append("\(fleetFirstUsesWithdrawn) first uses withdrawn by the server") }
        if entriesSkipped > 0 { parts.append("\(entriesSkipped) unreadable page entries skipped") }
        if inspectionsRefused > 0 || inspectionsRefusedInJournal > 0 {
            parts.append(
                "\(inspectionsRefused) refused by the server "
                    + "(\(inspectionsRefusedInJournal) refused kept in the journal)"
            )
        }
        return parts.joined(separator: "; ")
    }
}

/// Where a sync round's work runs (`SyncRound.priority`).
public enum RoundPriority: Sendable, Equatable {
    /// On the sync thread (`SyncThread`), at normal priority, giving way to the process's scans (`ScansInFlight`).
    case background
    /// On the caller's threads, at normal priority.
    case foreground
}

/// A step of a sync round, for progress: the round's totals so far.
public enum SyncProgress: Sendable, Equatable {
    /// A page of revocations applied: pages so far, entries added and removed so far.
    case revocationPage(pages: Int, added: Int, removed: Int)
    /// A batch of inspections accepted by the server: inspections uploaded so far.
    case uploaded(Int)
}

/// One sync round: keys, then revocations, then inspections, then the round is recorded.
///
/// Each signed document is checked against the pinned anchors before the store is touched, and applied in one
/// transaction, so a refused or broken document leaves the store as it was. The round resumes from what the
/// store holds (bundle sequence, revocation cursor, unsent inspections), never from a date: a device clock
/// that is hours off changes nothing here.
public struct SyncRound: Sendable {
    /// The API client.
    public var client: ValidationAPIClient
    /// The validator's store.
    public var store: TrustStore
    /// The anchors whose signature a bundle or delta must carry.
    public var anchors: [TrustAnchor]
    /// Inspections per upload (the server takes at most `InspectionBatch.maximumRecordCount`).
    public var uploadBatchSize: Int
    /// Where progress is logged.
    public var logger: Logger
    /// How far ahead of the device clock a signing time or a server's `Date` may be and still move the
    /// trusted-time floor (`[verification] clock_floor_tolerance`).
    public var clockFloorTolerance: TimeInterval
    /// Called once the server's key bundle is answered and accepted, before a key of it is stored: the worker
    /// brings its `ServerLink` up here, so that no scan finds a key of this round's while online checks are still
    /// off (a single use at that moment would not be claimed for the fleet).
    public var serverAnswered: @Sendable () -> Void = {}
    /// Where the round's work runs: `.background` (the daemon's worker) on the sync thread, giving way to the
    /// process's scans; `.foreground` on the caller's threads, for `farecheck sync`, which a person waits for. Both
    /// at the process's normal priority (`SyncThread` says why not lower).
    public var priority: RoundPriority = .background
    /// Told each step of a long round (a revocation page applied, an upload accepted), with the round's totals so
    /// far: `farecheck sync` shows them as progress.
    public var progress: @Sendable (SyncProgress) -> Void = { _ in }
    /// How long the journal keeps an inspection the server acknowledged (`[sync] journal_keep_days`); nil keeps
    /// every one. Each round deletes at most ``pruneLimit`` of the older ones.
    public var journalRetention: TimeInterval?
    /// Acknowledged inspections one round deletes at most: a journal that has grown for years shrinks over a few
    /// rounds, none of them long.
    public static let pruneLimit = 10_000

    /// Makes a round.
    public init(
        client: ValidationAPIClient, store: TrustStore, anchors: [TrustAnchor], uploadBatchSize: Int = 500,
        logger: Logger = Logger(label: "farecheck.sync"), clockFloorTolerance: TimeInterval = 300
    ) {
        self.client = client
        self.store = store
        self.anchors = anchors
        self.uploadBatchSize = max(1, min(uploadBatchSize, InspectionBatch.maximumRecordCount))
        self.logger = logger
        self.clockFloorTolerance = clockFloorTolerance
    }

    /// Runs the round, on the sync thread (`SyncThread`) unless `priority` is `.foreground`; throws at the first step that fails (the steps before it stay applied).
    public func run() async throws(SyncError) -> SyncReport {
        switch priority {
        case .background:
            try await SyncThread.shared.run { () async throws(SyncError) -> SyncReport in try await runSteps() }
        case .foreground:
            try await runSteps()
        }
    }

    /// `run()`'s steps, on the thread it runs them on.
    private func runSteps() async throws(SyncError) -> SyncReport {
        guard !anchors.isEmpty else {
            throw SyncError(
                code: .misconfigured,
                message: "No trust anchor is pinned, so no key bundle or revocation delta could be accepted; "
                    + "configure anchors in [sync].")
        }
        // Whatever the round's outcome, the replies it had are the server's word on the time.
        defer {
            if let date = client.serverTime.newest {
                offerTrustedTime(date, source: .serverReply, what: "the server's reply")
            }
        }
        var report = SyncReport()
        try await syncKeys(into: &report)
        try await syncRevocations(into: &report)
        try await uploadInspections(into: &report)
        try await pruneJournal(into: &report)
        try await syncFirstUses(into: &report)
        report.completedAt = Date()
        try storeStep { () throws(StoreError) in try store.recordSync(at: report.completedAt) }
        report.inspectionsUnsent = (try? store.inspectionJournal.unsentInspectionCount()) ?? 0
        report.inspectionsRefusedInJournal = (try? store.inspectionJournal.refusedInspectionCount()) ?? 0
        return report
    }

    // MARK: Keys

    private func syncKeys(into report: inout SyncReport) async throws(SyncError) {
        let held = try storeStep { () throws(StoreError) in try store.syncState() }.keyBundleSequence
        report.keyBundleSequence = held
        guard let document = try await client.keyBundle(newerThan: held) else {
            serverAnswered()
            return
        }
        let bundle: KeyBundle
        do {
            bundle = try document.open(as: KeyBundle.self, trusting: anchors)
            try bundle.checkNotRollback(holding: held)
        } catch {
            throw SyncError(code: .refused, message: "Key bundle refused: \(error.message)", cause: error)
        }
        if bundle.sequence == held {
            serverAnswered()
            return
        }
        var records: [KeyRecord] = []
        var vdvEntries: [BundleKey] = []
        for key in bundle.keys {
            if key.family == .vdv {
                // Verified with the certificate, not the SPKI (see `vdvAuthorities(in:)`).
                vdvEntries.append(key)
                continue
            }
            guard let record = Self.storeRecord(of: key) else {
                // A family a newer server distributes and this validator cannot use: no ticket it reads needs it.
                logger.warning(
                    "key bundle \(bundle.sequence): key \(key.keyID) of \(key.issuer) is of format \"\(key.format)\", which this validator does not use; skipped"
                )
                continue
            }
            // A key that does not parse would fail every ticket it signed at verify time; refuse the bundle now.
            do {
                _ = try PublicKey(spkiDER: key.spki)
            } catch {
                throw SyncError(
                    code: .refused,
                    message: "Key bundle \(bundle.sequence) refused: key \(key.keyID) of \(key.issuer) is not a "
                        + "usable public key; the store is unchanged.",
                    cause: error)
            }
            records.append(record)
        }
        let vdvAuthorities = try vdvAuthorities(in: vdvEntries, sequence: bundle.sequence)
        serverAnswered()
        let counts: (added: Int, updated: Int, removed: Int)
        do {
            counts = try store.applyKeyBundle(sequence: bundle.sequence, keys: records, vdvAuthorities: vdvAuthorities)
        } catch  where error.code == .outOfSequence {
            throw SyncError(
                code: .refused, message: "Key bundle \(bundle.sequence) refused: \(error.message).", cause: error)
        } catch {
            throw SyncError(code: .store, message: "The key bundle could not be stored: \(error.message)", cause: error)
        }
        offerTrustedTime(bundle.issuedAt, source: .keyBundle, what: "key bundle \(bundle.sequence)")
        report.keyBundleApplied = true
        report.keyBundleSequence = bundle.sequence
        report.keysAdded = counts.added
        report.keysUpdated = counts.updated
        report.keysRemoved = counts.removed
        let sequence = bundle.sequence
        logger.info("applied key bundle \(sequence): +\(counts.added) ~\(counts.updated) -\(counts.removed) keys")
    }

    /// The VDV CA certificates of a bundle, accepted as `farecheck keys import` accepts them: a `root` entry
    /// must be a self-signed root (`--vdv-root`); any other must chain to a root this validator pinned itself
    /// or the same bundle carries, a bare body being taken as vouched for by the bundle's signer (as
    /// `--trust-unsigned` does). A certificate that does not parse, or a root that is none, refuses the bundle
    /// (it is the server's error); a sub-CA with no root to chain to here, and an entry without a certificate
    /// (from a server that predates them), are skipped with a warning.
    private func vdvAuthorities(in entries: [BundleKey], sequence: Int64) throws(SyncError) -> [VDVAuthority] {
        guard !entries.isEmpty else { return [] }
        func refuse(_ entry: BundleKey, _ error: VDVImportError) -> SyncError {
            SyncError(
                code: .refused,
                message: "Key bundle \(sequence) refused: VDV certificate \(entry.keyID) is not acceptable: "
                    + "\(error.message); the store is unchanged.",
                cause: error)
        }
        var roots: [VDVAuthority] = []
        var subCAs: [(entry: BundleKey, certificate: [UInt8])] = []
        for entry in entries {
            guard let certificate = entry.certificate else {
                logger.warning(
                    "key bundle \(sequence): VDV key \(entry.keyID) comes without its certificate, which VDV-KA verification needs; skipped"
                )
                continue
            }
            if entry.root {
                do {
                    roots.append(try VDVCertificateImport.root(certificate))
                } catch {
                    throw refuse(entry, error)
                }
            } else {
                subCAs.append((entry, certificate))
            }
        }
        // Roots this validator pinned itself; roots an earlier bundle brought count only if this one has them.
        let local: [VDVAuthority]
        do {
            local = try store.vdvAuthorities().filter { $0.source != TrustStore.syncSource }.compactMap {
                guard let authority = try? $0.authority(), authority.isRoot else { return nil }
                return authority
            }
        } catch {
            throw SyncError(code: .store, message: "The store failed during sync: \(error.message)", cause: error)
        }
        var accepted = roots
        for (entry, certificate) in subCAs {
            do {
                accepted.append(
                    try VDVCertificateImport.subCA(
                        certificate, underAnyOf: roots + local, trustUnsigned: true, rootlessIfUnsigned: false))
            } catch {
                logger.warning(
                    "key bundle \(sequence): VDV certificate \(entry.keyID) (CA \(entry.issuer)) is not accepted here: \(error.message); skipped"
                )
            }
        }
        return accepted
    }

    // MARK: The trusted-time floor

    /// Offers a trusted time to the store's floor; one ahead of the device clock beyond the tolerance is not taken
    /// and is logged with its source. A store that fails here fails the next step anyway: logged, not thrown.
    private func offerTrustedTime(_ instant: Date, source: TrustedTimeSource, what: String) {
        let now = Date()
        do {
            let outcome = try store.raiseTrustedTimeFloor(
                to: instant, source: source, wallClock: now, tolerance: clockFloorTolerance)
            switch outcome {
            case .raised:
                logger.debug("trusted-time floor raised to \(instant.formatted(.iso8601)) (\(what))")
            case .notNewer:
                break
            case .refusedAhead(let ahead):
                logger.warning(
                    "\(what) is dated \(instant.formatted(.iso8601)), \(Int(ahead)) s ahead of this device's clock (\(now.formatted(.iso8601))), beyond the clock floor tolerance of \(Int(clockFloorTolerance)) s: the trusted-time floor is not moved (\(source.rawValue)). Is the device clock behind?"
                )
            }
        } catch {
            logger.warning("the trusted-time floor could not be stored: \(error.message)")
        }
    }

    // MARK: Revocations

    /// The most deltas one round asks for; a server that keeps sending more is cut off until the next round.
    static let maximumDeltasPerRound = 1000

    private func syncRevocations(into report: inout SyncReport) async throws(SyncError) {
        var cursor = try storeStep { () throws(StoreError) in try store.syncState() }.revocationCursor
        report.revocationCursor = cursor
        for _ in 0..<Self.maximumDeltasPerRound {
            let document = try await client.revocations(since: cursor)
            let reading: PageReading<RevocationDelta>
            do {
                reading = try document.openRevocationPage(trusting: anchors)
            } catch {
                throw SyncError(code: .refused, message: "Revocation delta refused: \(error.message)", cause: error)
            }
            let delta = reading.page
            // Signed by a pinned anchor: its signing time counts, also for a page with nothing new.
            if let issuedAt = delta.issuedAt {
                offerTrustedTime(issuedAt, source: .revocations, what: "the revocation page after cursor \(cursor)")
            }
            if delta.isEmpty && delta.next == cursor { return }
            // Snapshots too: the server echoes the cursor asked for, so an old signed snapshot replayed in
            // transit (which would lift every revocation made since) does not fit the request.
            guard delta.from == cursor else {
                throw SyncError(
                    code: .refused,
                    message: "Revocation delta refused: it starts at \(delta.from), not at the cursor \(cursor) "
                        + "asked for; the store is unchanged.")
            }
            let counts: (added: Int, removed: Int)
            ScansInFlight.shared.giveWay()
            do {
                // Blocks the sync thread for the transaction and its paced write-back (each giving way to scans in
                // flight), and nothing else.
                counts = try Self.apply(delta, to: store)
            } catch  where error.code == .outOfSequence {
                throw SyncError(code: .refused, message: "Revocation delta refused: \(error.message).", cause: error)
            } catch {
                throw SyncError(
                    code: .store, message: "The revocation delta could not be stored: \(error.message)", cause: error)
            }
            report.revocationDeltas += 1
            report.entriesSkipped += reading.skipped.count
            noteSkipped(reading.skipped, page: "revocation page \(delta.from)→\(delta.next)")
            report.fullSnapshot = report.fullSnapshot || delta.full
            report.revocationsAdded += counts.added
            report.revocationsRemoved += counts.removed
            progress(
                .revocationPage(
                    pages: report.revocationDeltas, added: report.revocationsAdded,
                    removed: report.revocationsRemoved))
            if !delta.blocklists.isEmpty { report.blocklists = delta.blocklists }
            let kind = delta.full ? "snapshot" : "delta"
            logger.info("applied revocation \(kind) \(delta.from)→\(delta.next): +\(counts.added) -\(counts.removed)")
            let moved = delta.next != cursor
            cursor = delta.next
            report.revocationCursor = cursor
            // A snapshot or a delta that did not move the cursor is all the server has now.
            if !moved || delta.isEmpty { return }
        }
    }

    /// A bundle key as the store keeps it (see `KeyRecord.init(_:source:addedAt:)`), under the source `sync`.
    public static func storeRecord(of key: BundleKey) -> KeyRecord? { KeyRecord(key, source: TrustStore.syncSource) }

    /// Applies a verified revocation delta to the store in one transaction (see
    /// `TrustStore.applyRevocations`), with key formats as the store names them.
    ///
    /// - Returns: The revocations (tickets, keys and blocklist entries) added and lifted.
    /// - Throws: `StoreError`, with code `.outOfSequence` when the delta does not start at the store's cursor.
    @discardableResult
    public static func apply(_ delta: RevocationDelta, to store: TrustStore) throws(StoreError) -> (
        added: Int, removed: Int
    ) {
        // Issuers as verification matches them: a UIC ticket's RICS code without leading zeros.
        let removed =
            delta.removedTickets.map {
                RevocationReference.ticket(issuer: UICKeyList.storedIssuer($0.issuer), ticketID: $0.ticketID)
            }
            + delta.removedKeys.compactMap {
                KeyRecord.storeIdentity(format: $0.format, issuer: $0.issuer, keyID: $0.keyID).map {
                    RevocationReference.key(family: $0.family, issuer: $0.issuer, keyID: $0.keyID)
                }
            }
        try store.applyRevocations(
            from: delta.from, next: delta.next, full: delta.full,
            addedTickets: delta.addedTickets.map {
                TicketRevocationRecord(
                    issuer: UICKeyList.storedIssuer($0.issuer), ticketID: $0.ticketID, reason: $0.reason,
                    revokedAt: $0.revokedAt)
            },
            addedKeys: delta.addedKeys.compactMap { key in
                // A revoked key of a family this validator does not know cannot sign anything it accepts.
                KeyRecord.storeIdentity(format: key.format, issuer: key.issuer, keyID: key.keyID).map {
                    KeyRevocationRecord(
                        family: $0.family, issuer: $0.issuer, keyID: $0.keyID, reason: key.reason,
                        revokedAt: key.revokedAt)
                }
            },
            removed: removed, blocklists: delta.blocklists.map { ($0.list, $0.version) },
            addedBlocklistEntries: delta.addedBlocklistEntries, removedBlocklistEntries: delta.removedBlocklistEntries)
        return (
            delta.addedTickets.count + delta.addedKeys.count + delta.addedBlocklistEntries.count,
            removed.count + delta.removedBlocklistEntries.count
        )
    }

    // MARK: The fleet's first uses

    /// The most pages of first uses one round asks for.
    static let maximumFirstUsePagesPerRound = 200

    /// Other devices' first uses of single-use tickets since the last round (this device's own are left out: its
    /// journal has them). A request the server refuses (one that predates first uses answers 404) is skipped with a
    /// warning; anything else fails the round as the other steps do.
    private func syncFirstUses(into report: inout SyncReport) async throws(SyncError) {
        let cursor = try storeStep { () throws(StoreError) in try store.fleetFirstUseCursor() }
        // From a minute before the cursor: a first use committed a moment late carries a slightly older time.
        var since = max(0, cursor - FirstUseDelta.overlapMilliseconds)
        for _ in 0..<Self.maximumFirstUsePagesPerRound {
            let document: SignedDocument
            do {
                document = try await client.firstUses(since: since)
            } catch  where error.code == .rejected {
                logger.warning("the server does not hand out the fleet's first uses (\(error.message)); skipped")
                return
            }
            let reading: PageReading<FirstUseDelta>
            do {
                reading = try document.openFirstUsePage(trusting: anchors)
            } catch {
                throw SyncError(code: .refused, message: "First-use page refused: \(error.message)", cause: error)
            }
            let delta = reading.page
            guard delta.since == since else {
                throw SyncError(
                    code: .refused,
                    message: "First-use page refused: it starts at \(delta.since), not at \(since) as asked; the store "
                        + "is unchanged.")
            }
            let own = client.configuration.deviceID
            // The issuer as verification matches it, in the entries and the withdrawals that name them.
            let entries = delta.entries.filter { $0.device != own }.map { entry in
                var entry = entry
                entry.issuer = UICKeyList.storedIssuer(entry.issuer)
                return entry
            }
            let withdrawals = (delta.withdrawals ?? []).filter { $0.device != own }.map { withdrawal in
                var withdrawal = withdrawal
                withdrawal.issuer = UICKeyList.storedIssuer(withdrawal.issuer)
                return withdrawal
            }
            let added = try storeStep { () throws(StoreError) in
                try store.applyFleetFirstUses(
                    entries, withdrawals: withdrawals, next: delta.next,
                    forgetBefore: Date().addingTimeInterval(-Double(FirstUseDelta.retentionMilliseconds) / 1000))
            }
            report.fleetFirstUsesWithdrawn += withdrawals.count
            report.fleetFirstUsesAdded += added
            report.entriesSkipped += reading.skipped.count
            noteSkipped(reading.skipped, page: "first-use page \(delta.since)→\(delta.next)")
            guard delta.more, delta.next > since || !delta.entries.isEmpty else { return }
            since = delta.next
        }
    }

    /// Logs a page's unreadable entries once for the page (a page of thousands of bad entries is one line), with
    /// the first few reasons.
    private func noteSkipped(_ skipped: [SkippedEntry], page: String) {
        guard !skipped.isEmpty else { return }
        let shown = skipped.prefix(3).map { PrintableText.escaped($0.description) }.joined(separator: "; ")
        let more = skipped.count > 3 ? "; and \(skipped.count - 3) more" : ""
        logger.warning(
            "\(page): \(skipped.count) entr\(skipped.count == 1 ? "y" : "ies") could not be read and were skipped, the rest applied (the server signed entries this validator cannot read: \(shown)\(more))"
        )
    }

    // MARK: Inspections

    private func uploadInspections(into report: inout SyncReport) async throws(SyncError) {
        while true {
            let unsent = try storeStep { () throws(StoreError) in
                try store.inspectionJournal.unsentInspections(limit: uploadBatchSize)
            }
            guard !unsent.isEmpty else { return }
            // First uses carry their payloads: a batch of them is cut to what the server takes in one body.
            let records = Self.fitting(unsent, within: Self.uploadByteBudget)
            let batch = Array(unsent.prefix(records.count))
            let acknowledgement: BatchAcknowledgement
            do {
                acknowledgement = try await client.upload(InspectionBatch(records: records))
            } catch  where error.code == .tooManyClaims {
                // The server answered: the rest waits for the next round, whose other steps go on now (the fleet's
                // first uses still come down).
                logger.notice("uploads paused until the next round: \(error.message)")
                report.uploadsPaused = true
                return
            }
            let (sent, refused) = Self.outcomes(of: batch.map(\.id), in: acknowledgement)
            // Only what the server says it holds is marked sent; a refused record stays in the journal with the
            // server's reason and is not offered again; anything else goes again next time.
            // These writes take the journal's writer lock, which a scan's append waits for: a scan in flight first.
            ScansInFlight.shared.giveWay()
            try storeStep { () throws(StoreError) in
                try store.inspectionJournal.markInspectionsSent(sent)
                try store.inspectionJournal.markInspectionsRefused(refused)
            }
            report.inspectionsUploaded += sent.count
            progress(.uploaded(report.inspectionsUploaded))
            report.inspectionsRefused += refused.count
            // Stored, but the server did not record the first use it claims: the fleet does not learn it from here.
            for result in acknowledgement.results ?? []
            where result.outcome.isHeld && result.code == InspectionResult.claimRefused {
                let line =
                    "the server holds inspection \(PrintableText(result.id)) but did not record its first use for the "
                    + "fleet (claim-refused): " + PrintableText.escaped(result.reason ?? "the server gave no reason")
                logger.notice("\(line)")
            }
            for refusal in refused {
                let line =
                    "the server refused inspection \(PrintableText(refusal.id)), kept in the journal: "
                    + PrintableText.escaped(refusal.reason)
                logger.warning("\(line)")
            }
            let settled = sent.count + refused.count
            if settled < batch.count {
                logger.warning("the server acknowledged \(settled) of \(batch.count) inspections; the rest later")
                return
            }
            if unsent.count < uploadBatchSize && batch.count == unsent.count { return }
        }
    }

    /// The most bytes of JSON one upload carries: the reference server takes bodies of up to 1 MiB, and a batch of
    /// first uses, each with its payload, can be larger than a batch without.
    static let uploadByteBudget = 768 << 10

    /// The first of `records` whose batch encodes within `budget` bytes (at least one record, which the server then
    /// judges on its own).
    static func fitting(_ records: [InspectionRecord], within budget: Int) -> [InspectionRecord] {
        // Records without a payload are small: a full batch of them fits, as it always did.
        guard records.contains(where: { $0.payload != nil }) else { return records }
        var count = records.count
        while count > 1 {
            guard let size = try? WireFormat.encode(InspectionBatch(records: Array(records.prefix(count)))).count,
                size > budget
            else { break }
            // Shrunk in proportion, and by one at least: a few encodes even for a batch of large payloads.
            count = max(1, min(count - 1, count * budget / size))
        }
        return Array(records.prefix(count))
    }

    /// Deletes the acknowledged inspections older than `journalRetention` (the server holds them), at most
    /// ``pruneLimit``.
    private func pruneJournal(into report: inout SyncReport) async throws(SyncError) {
        guard let retention = journalRetention else { return }
        let before = Date().addingTimeInterval(-retention)
        // As the marks: the delete holds the journal's writer lock, which appends wait for.
        ScansInFlight.shared.giveWay()
        report.inspectionsPruned = try storeStep { () throws(StoreError) in
            try store.inspectionJournal.deleteSentInspections(before: before, limit: Self.pruneLimit)
        }
    }

    /// What the server said of each record of a batch (`ids`, in order): the ids to mark sent (stored now or
    /// before) and the ones it refused, with its reason.
    ///
    /// A server that predates per-record results (or sends results that do not match the batch) lists what it
    /// holds in `accepted` only: those are sent, the rest stay unsent, as before.
    public static func outcomes(of ids: [InspectionID], in acknowledgement: BatchAcknowledgement) -> (
        sent: [InspectionID], refused: [(id: InspectionID, reason: String)]
    ) {
        guard let results = acknowledgement.results, results.map(\.id) == ids else {
            let accepted = Set(acknowledgement.accepted)
            return (ids.filter { accepted.contains($0) }, [])
        }
        var sent: [InspectionID] = []
        var refused: [(id: InspectionID, reason: String)] = []
        for result in results {
            switch result.outcome {
            case .stored, .alreadyStored:
                sent.append(result.id)
            case .refused:
                let code = result.code ?? "refused"
                refused.append((result.id, code + ": " + (result.reason ?? "the server gave no reason")))
            default:
                // An outcome this validator does not know: neither stored nor refused, so sent again later.
                continue
            }
        }
        return (sent, refused)
    }

    private func storeStep<T>(_ body: () throws(StoreError) -> T) throws(SyncError) -> T {
        do {
            return try body()
        } catch {
            throw SyncError(code: .store, message: "The store failed during sync: \(error.message)", cause: error)
        }
    }
}
