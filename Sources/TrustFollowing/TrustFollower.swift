import FareCore
import Foundation
import Logging
import Signatures
import TicketFormats
import TrustSources
import ValidationAPI
import ValidationServer
import Verification

/// What one round of a source came to.
public struct TrustRoundOutcome: Sendable, Equatable {
    /// What kind of end the round had.
    public enum Kind: String, Sendable, Equatable {
        /// Nothing new (304, the same version or content, or a change already held or refused).
        case unchanged
        /// The change was applied (keys stored and signed into a bundle, or a blocklist imported).
        case applied
        /// The change was held for an operator (`trust pending`).
        case held
        /// The fetch or its check failed: the trust is as it was.
        case failed
        /// `--dry-run`: this would have been applied.
        case wouldApply = "would-apply"
        /// `--dry-run`: this would have been held.
        case wouldHold = "would-hold"
    }

    /// The source.
    public var source: String
    /// How the round ended.
    public var kind: Kind
    /// What changed or would change, or why nothing did: the audit line's detail.
    public var detail: String
    /// The held change's number, when one was held.
    public var pendingID: Int64?

    /// `SOURCE KIND: DETAIL`.
    public var line: String { "\(source) \(kind.rawValue): \(detail)" }
}

/// What the guard rails and the VDV chain check read about the trust in use: on the server, its own store (the VDV
/// roots pinned there, the keys its validators' uploaded inspections name); on a stand-alone gate, the validator's
/// store (its pinned roots, its own journal).
public struct TrustInUse: Sendable {
    /// The VDV roots a directory's certificates must chain to.
    public var vdvRoots: @Sendable () async throws -> [VDVAuthority]
    /// The keys that verified a ticket `valid` at or after a date.
    public var keysVerifying: @Sendable (Date) async throws -> Set<KeyUse>

    public init(
        vdvRoots: @escaping @Sendable () async throws -> [VDVAuthority],
        keysVerifying: @escaping @Sendable (Date) async throws -> Set<KeyUse>
    ) {
        self.vdvRoots = vdvRoots
        self.keysVerifying = keysVerifying
    }

    /// The server's: the roots pinned in `store` (`keys add --format vdv --root`), the inspections uploaded to it.
    public static func server(_ store: any ServerStore) -> TrustInUse {
        TrustInUse(
            vdvRoots: {
                try await store.issuerKeys().filter { $0.format == KeyFamily.vdv.wireName && $0.root }.compactMap {
                    $0.certificate.flatMap { try? VDVCertificateImport.root($0) }
                }
            },
            keysVerifying: { date in try await store.keysVerifying(since: date) })
    }
}

/// A publisher's content as farecheck would trust it: checked by the importers the CLI uses.
enum CandidateTrust {
    /// Keys (UIC key list, VDV certificates, RSP6 keys), with the entries refused on the way.
    case keys([BundleKey], refused: [String])
    /// A blocklist version and its entries.
    case blocklist(BlocklistKind, BlocklistVersion, [BlocklistEntry])
}

/// Fetches a source, checks what came, and applies it or holds it for an operator: one round, as the worker runs it
/// on the source's period and `farecheck-server trust fetch` runs it at once.
///
/// Nothing a publisher sends changes the trust unless it parses with the same importers as the CLI, chains where it
/// must (a VDV certificate to a pinned root), and passes the guard rails: a key list that would drop more than
/// `maximumDropShare` of the source's keys, and a blocklist whose version goes back or that keeps fewer than
/// `minimumKeptShare` of the entries, are held for an operator whole. Every applied, held or failed round writes an
/// audit line; every round writes the source's state.
public struct TrustFollower: Sendable {
    /// The server's store.
    public let store: any ServerStore
    /// The trust anchor's private key, to sign a new key bundle after a key change; without it keys are stored and
    /// an operator publishes (`keys publish`).
    public let anchorKey: PrivateKey?
    /// Where lines go.
    public let logger: Logger
    /// The clock.
    public let now: @Sendable () -> Date
    /// What the guard rails and the VDV chain check read about the trust in use (the store's own, on a server).
    public let inUse: TrustInUse

    public init(
        store: any ServerStore, anchorKey: PrivateKey?, logger: Logger = Logger(label: "farecheck.trust"),
        inUse: TrustInUse? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.store = store
        self.anchorKey = anchorKey
        self.logger = logger
        self.inUse = inUse ?? .server(store)
        self.now = now
    }

    /// One round of `source`: fetch, check, then apply or hold (with `dryRun`, only say which).
    public func run(_ source: TrustSourceConfiguration, dryRun: Bool = false) async -> TrustRoundOutcome {
        let started = now()
        let held =
            (try? await store.trustSourceStates().first { $0.name == source.name })
            ?? TrustSourceState(name: source.name, kind: source.kind.rawValue)
        var state = held
        state.kind = source.kind.rawValue
        state.lastAttempt = started
        do {
            let outcome = try await round(source, held: held, state: &state, dryRun: dryRun)
            return outcome
        } catch {
            let message = Self.sentence(error)
            state.lastError = message
            state.failures = held.failures + 1
            let outcome = TrustRoundOutcome(
                source: source.name, kind: .failed, detail: "\(message); the trust is as it was")
            if !dryRun {
                let entry = TrustAuditEntry(at: started, source: source.name, action: .failed, detail: outcome.detail)
                do {
                    try await store.recordTrustAudit(entry, state: state)
                } catch {
                    logger.error("trust source \(source.name): cannot record the failure: \(error)")
                }
            }
            logger.warning("trust source \(outcome.line)")
            return outcome
        }
    }

    private func round(
        _ source: TrustSourceConfiguration, held: TrustSourceState, state: inout TrustSourceState, dryRun: Bool
    ) async throws -> TrustRoundOutcome {
        let fetcher = TrustSourceFetch(source: source)
        let fetched = try await fetcher.fetch(held: held)
        guard let content = fetched.content else {
            return try await unchanged(source, state: &state, dryRun: dryRun, why: fetched.why)
        }
        let digest = digest(.sha256, content.bytes).hexString
        if digest == held.contentDigest {
            state.etag = content.etag ?? held.etag
            state.lastModified = content.lastModified ?? held.lastModified
            return try await unchanged(source, state: &state, dryRun: dryRun, why: "the same content as held")
        }
        if let earlier = try await store.trustChange(source: source.name, digest: digest),
            earlier.decision != .approved
        {
            state.etag = content.etag
            state.lastModified = content.lastModified
            let why =
                earlier.decision == .pending
                ? "the same content as change \(earlier.id), which waits for an operator (trust approve \(earlier.id))"
                : "the same content as change \(earlier.id), which an operator rejected"
            return try await unchanged(source, state: &state, dryRun: dryRun, why: why)
        }
        let candidate = try await TrustSourceImport.candidate(
            source, content: content.bytes, version: fetched.version, inUse: inUse)
        let plan = try await TrustPlan.make(candidate, source: source, store: store, inUse: inUse, now: now())
        // A held change leaves the version and content held as they were (what validators get), but its validators
        // are kept: the same file again is a 304, and the change waits for its operator.
        state.etag = content.etag
        state.lastModified = content.lastModified
        state.lastError = nil
        state.failures = 0
        let at = now()
        if let reason = plan.holdReason {
            if dryRun {
                return TrustRoundOutcome(source: source.name, kind: .wouldHold, detail: "\(reason); \(plan.summary)")
            }
            state.lastSuccess = at
            let change = PendingTrustChange(
                source: source.name, heldAt: at, version: plan.version, reason: reason, summary: plan.summary,
                contentDigest: digest, content: content.bytes)
            let detail = "\(reason); held for an operator: \(plan.summary)"
            let id = try await store.holdTrustChange(
                change, state: state,
                audit: TrustAuditEntry(at: at, source: source.name, action: .held, detail: detail))
            let outcome = TrustRoundOutcome(
                source: source.name, kind: .held,
                detail: "\(detail) (change \(id): trust approve \(id) or trust reject \(id))",
                pendingID: id)
            logger.warning("trust source \(outcome.line)")
            return outcome
        }
        if dryRun { return TrustRoundOutcome(source: source.name, kind: .wouldApply, detail: plan.summary) }
        state.version = plan.version ?? String(digest.prefix(16))
        state.contentDigest = digest
        state.lastSuccess = at
        if plan.isEmpty {
            try await store.recordTrustSourceState(state)
            return TrustRoundOutcome(
                source: source.name, kind: .unchanged, detail: "nothing to change (\(plan.summary))")
        }
        state.lastChange = at
        let detail = try await apply(plan, source: source, state: state, action: .applied, at: at)
        let outcome = TrustRoundOutcome(source: source.name, kind: .applied, detail: detail)
        logger.notice("trust source \(outcome.line)")
        return outcome
    }

    /// Applies a held change, as an operator approved it (the guard rails are what the operator overrules; the
    /// content is still parsed and checked).
    public func approve(_ id: Int64, sources: TrustFollowingConfiguration) async throws -> TrustRoundOutcome {
        guard let change = try await store.trustChange(id: id) else {
            throw ServerError(code: .notFound, message: "No change \(id) is held (trust pending lists them).")
        }
        guard change.decision == .pending else {
            throw ServerError(code: .conflict, message: "Change \(id) was \(change.decision.rawValue) already.")
        }
        guard let source = sources.source(named: change.source) else {
            throw ServerError(
                code: .invalidInput,
                message: "Change \(id) came from source \(change.source), which the configuration no longer names.")
        }
        let candidate = try await TrustSourceImport.candidate(
            source, content: change.content, version: change.version, inUse: inUse)
        let plan = try await TrustPlan.make(candidate, source: source, store: store, inUse: inUse, now: now())
        let at = now()
        var state =
            (try await store.trustSourceStates().first { $0.name == source.name })
            ?? TrustSourceState(name: source.name, kind: source.kind.rawValue)
        state.lastChange = at
        state.version = plan.version ?? String(change.contentDigest.prefix(16))
        state.contentDigest = change.contentDigest
        let decided = try await store.decideTrustChange(
            id: id, .approved,
            audit: TrustAuditEntry(
                at: at, source: source.name, action: .approved, detail: "change \(id) approved: \(plan.summary)"))
        guard decided else { throw ServerError(code: .conflict, message: "Change \(id) was decided already.") }
        let detail = try await apply(plan, source: source, state: state, action: .applied, at: at)
        return TrustRoundOutcome(source: source.name, kind: .applied, detail: detail)
    }

    /// Refuses a held change: it is never applied, and the same content is not held again.
    public func reject(_ id: Int64) async throws -> TrustRoundOutcome {
        guard let change = try await store.trustChange(id: id) else {
            throw ServerError(code: .notFound, message: "No change \(id) is held (trust pending lists them).")
        }
        let at = now()
        let decided = try await store.decideTrustChange(
            id: id, .rejected,
            audit: TrustAuditEntry(
                at: at, source: change.source, action: .rejected, detail: "change \(id) rejected: \(change.summary)"))
        guard decided else {
            throw ServerError(code: .conflict, message: "Change \(id) was \(change.decision.rawValue) already.")
        }
        return TrustRoundOutcome(source: change.source, kind: .unchanged, detail: "change \(id) rejected")
    }

    private func unchanged(
        _ source: TrustSourceConfiguration, state: inout TrustSourceState, dryRun: Bool, why: String
    ) async throws -> TrustRoundOutcome {
        state.lastSuccess = now()
        state.lastError = nil
        state.failures = 0
        if !dryRun { try await store.recordTrustSourceState(state) }
        return TrustRoundOutcome(source: source.name, kind: .unchanged, detail: why)
    }

    /// Writes `plan` with its audit line and `state`; keys are then signed into a new bundle.
    private func apply(
        _ plan: TrustPlan, source: TrustSourceConfiguration, state: TrustSourceState, action: TrustAuditAction,
        at: Date
    ) async throws -> String {
        switch plan.change {
        case .keys(let adding, let removing):
            var detail = plan.summary
            if anchorKey == nil { detail += "; not signed: the server has no anchor key (keys publish signs them)" }
            try await store.applySourceKeys(
                source: source.name, adding: adding, removing: removing, state: state,
                audit: TrustAuditEntry(at: at, source: source.name, action: action, detail: detail))
            if let anchorKey {
                let bundle = try await store.publishBundle(signedBy: anchorKey, at: at)
                detail += "; key bundle \(bundle.sequence) signed"
            }
            return detail
        case .blocklist(let list, let version, let entries):
            let imported = try await store.importBlocklist(
                list, version: version, entries: entries, force: true, at: at)
            var detail = plan.summary
            if case .imported(let added, let removed, _) = imported {
                detail = "\(list.displayName) version \(version.text): \(added) entries added, \(removed) removed"
            }
            try await store.recordTrustAudit(
                TrustAuditEntry(at: at, source: source.name, action: action, detail: detail), state: state)
            return detail
        }
    }

    /// An error as one sentence for the audit and the status.
    static func sentence(_ error: any Error) -> String {
        let text: String =
            if let error = error as? ServerError { error.message } else if let error = error as? FetchError {
                error.message
            } else if let error = error as? DirectoryError { error.message } else if let error = error as? FormatError {
                error.message
            } else if let error = error as? BlocklistVersionError { error.message } else { "\(error)" }
        // Sentences are joined after it (`…; the trust is as it was`).
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }
}
