import FareCore
import Foundation
import Logging
import ValidationAPI
import Verification

/// Asks the validation API about a ticket the offline check found valid, for what the server knows better
/// (a ticket revoked minutes ago), within a short deadline.
///
/// Only a `valid` verdict is asked about, only while the `ServerLink` is connected, and the answer can only
/// turn it into `revoked`, or, for a single-use ticket whose first use it claims, `replayed` when another device
/// claimed it first: on a timeout, an error or any other answer the offline verdict stands. A server that does
/// not answer in time (unreachable, timed out, 5xx) marks the link down until the next good sync round, so that later
/// scans are not slowed down; one that refuses the claim (403 `claim-refused`, 429 `too-many-claims`) answered, and
/// leaves it up.
public struct OnlineChecker: Sendable {
    /// The verdict to show, and which check decided it.
    public struct Review: Sendable {
        /// The verdict to show.
        public var verdict: Verdict
        /// Which check decided.
        public var decidedBy: Decider
    }

    private let link: ServerLink
    /// The longest an online check may take before the offline verdict is shown.
    public let deadline: Duration
    private let logger: Logger

    /// Makes a checker over the worker's link.
    public init(link: ServerLink, deadline: Duration = .milliseconds(800), logger: Logger) {
        self.link = link
        self.deadline = deadline
        self.logger = logger
    }

    /// Reviews an offline verdict; never throws and never takes much longer than `deadline`.
    ///
    /// - Parameters:
    ///   - verdict: The offline verdict.
    ///   - payload: The payload bytes as scanned.
    ///   - firstUseOf: For a single-use ticket at a gate, the inspection whose first use is claimed for the
    ///     fleet: another gate's earlier claim turns the verdict into `replayed`.
    public func review(_ verdict: Verdict, payload: [UInt8], firstUseOf inspectionID: InspectionID? = nil) async
        -> Review
    {
        let offline = Review(verdict: verdict, decidedBy: .offline)
        guard verdict.kind == .valid, let client = link.connectedClient else { return offline }
        let request = OnlineCheckRequest(
            payload: payload, format: verdict.format.map(Recorded.init),
            issuer: verdict.ticket?.issuer ?? verdict.issuer,
            ticketID: verdict.ticket?.ticketID, keyID: verdict.keyID, claimFirstUse: inspectionID != nil,
            inspectionID: inspectionID)
        let answer: OnlineCheckResponse
        do {
            answer = try await client.check(request, deadline: deadline)
        } catch {
            // Only a server that did not answer (unreachable, too slow, 5xx) takes the link down: one that refused
            // this claim, or this device's rate of claims, answered, and the next scan may ask again.
            if error.failsOver {
                link.failed()
            } else if error.code == .claimRefused || error.code == .tooManyClaims {
                link.succeeded()
            }
            logger.notice("online check skipped, the offline verdict stands: \(error.description)")
            return offline
        }
        link.succeeded()
        if inspectionID != nil, answer.verdict == OnlineCheckVerdict.alreadyUsed, let first = answer.firstUse,
            !first.claimed
        {
            let replayed = verdict.replayed(
                passed: first.device, at: first.usedAt, source: "the fleet's first use, from the server")
            return Review(verdict: replayed, decidedBy: .online)
        }
        guard answer.revoked == true || answer.verdict == OnlineCheckVerdict.revoked else { return offline }
        var revoked = verdict
        revoked.kind = .revoked
        revoked.explanation = answer.explanation ?? .verbatim(answer.reason)
        return Review(verdict: revoked, decidedBy: .online)
    }
}

/// When the keys and revocations are too old to be trusted without a remark: past `staleAfter` since the last
/// good sync (or, before the first, since the store's trust data last changed), verdicts carry the warning
/// `stale-trust-data`.
public struct StalenessPolicy: Sendable, Equatable {
    /// Seconds after which the trust data counts as stale.
    public var staleAfter: TimeInterval

    /// Makes a policy.
    public init(staleAfter: TimeInterval) {
        self.staleAfter = staleAfter
    }

    /// The warning to add to a verdict given at `now`, or nil while the data is fresh.
    ///
    /// Both dates come from this device's clock (when it synced, when the store changed), so a clock that is
    /// off by hours shifts both alike; server dates are never used.
    public func warning(lastSync: Date?, trustChanged: Date?, now: Date) -> VerdictWarning? {
        guard let reference = lastSync ?? trustChanged else {
            return VerdictWarning(
                code: VerdictWarning.staleTrustDataCode,
                message: "This validator has never synced its keys and revocations with the agency.")
        }
        let age = now.timeIntervalSince(reference)
        guard age > staleAfter else { return nil }
        return VerdictWarning(
            code: VerdictWarning.staleTrustDataCode,
            message: "Keys and revocations were last updated \(duration: age) ago; a ticket revoked since "
                + "then is not known here.")
    }
}
