import FareCore
import Foundation

/// What a policy looks at: a ticket whose signature has been checked, its key, and the time.
public struct PolicyContext: Sendable {
    /// The ticket, read from signed claims.
    public var ticket: Ticket
    /// The key that signed it.
    public var key: TrustedKey
    /// The inspection time.
    public var now: Date
}

/// A policy's answer: the ticket meets it (perhaps with remarks), or fails it with a verdict and why.
public enum PolicyOutcome: Sendable {
    case meets(warnings: [VerdictWarning])
    case fails(VerdictKind, reason: Explanation)
    /// Fails as `revoked` because a published blocklist names the ticket: the verdict carries the entry.
    case revokedByBlocklist(BlocklistRevocation)

    /// Meets, with nothing to remark.
    public static let meets = PolicyOutcome.meets(warnings: [])
}

/// One rule a signed ticket must satisfy. Policies run in order; the first failure decides.
public protocol TicketPolicy: Sendable {
    /// Checks the rule. Throws only when the policy cannot work (its data source failed).
    func evaluate(_ context: PolicyContext) throws -> PolicyOutcome

    /// Whether the rule's answer depends on the inspection instant. While the device clock is doubted (earlier
    /// than the trusted-time floor) such a policy is not run and the verdict is `clock-untrusted`; the others
    /// still decide (a revoked ticket stays `revoked`). True unless a policy says otherwise, so that a new rule
    /// is never judged by a clock that cannot be trusted.
    var dependsOnTime: Bool { get }
}

extension TicketPolicy {
    public var dependsOnTime: Bool { true }
}

private func describe(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// The signing key must not be one the UIC key list marks as forged (`keyForged`): its private half is known to
/// others, so a ticket it signs is `revoked` whatever its signature says. Holds at any instant.
public struct ForgedKeyPolicy: TicketPolicy {
    public init() {}

    /// A key is forged or not at any instant: judged even when the device clock is not trusted.
    public var dependsOnTime: Bool { false }

    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        let key = context.key
        guard key.listing?.forged == true else { return .meets }
        return .fails(
            .revoked,
            reason: "The signature matches key \(key.keyID) of \(key.issuer), but the UIC key list marks that key as "
                + "forged: anyone may have made this ticket.")
    }
}

/// The signing key must be within its own validity for the ticket (a forged key: see `ForgedKeyPolicy`).
///
/// A key list's dates bound when the key may sign, so a UIC key and a UK RSP6 key are judged at the ticket's
/// issuing time (a season ticket issued the day before its key's end date stays genuine all year); without an
/// issuing time, and for the other families, at inspection time. The UIC list's dates are whole days without a
/// zone, so a UIC key covers its start day from 00:00 in the earliest zone (UTC+14) to its end day's 24:00 in the
/// latest (UTC−12). The RSP6 list's date-times name no zone either: read as UK time, they are an hour early if the
/// list meant UTC in summer, so an RSP6 key's end is given that hour.
public struct KeyValidityPolicy: TicketPolicy {
    public init() {}

    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        let key = context.key
        // A listed key is judged when the ticket was issued; other keys (and a ticket without an issuing time) now.
        let issued = Self.judgedAtIssue(key) ? context.ticket.issuedAt : nil
        let instant = issued ?? context.now
        if let notAfter = key.notAfter, instant > notAfter.addingTimeInterval(Self.slack(key).after) {
            let when: Explanation = issued.map { ", before the ticket was issued (\(date: $0))" } ?? ""
            return .fails(
                .keyExpired,
                reason: "The signature is genuine, but key \(key.keyID) of \(key.issuer) expired on "
                    + "\(date: notAfter)\(when).")
        }
        if let notBefore = key.notBefore, instant < notBefore.addingTimeInterval(-Self.slack(key).before) {
            let when: Explanation = issued.map { ", after the ticket was issued (\(date: $0))" } ?? ""
            return .fails(
                .keyExpired,
                reason: "The signature is genuine, but key \(key.keyID) of \(key.issuer) is only valid from "
                    + "\(date: notBefore)\(when).")
        }
        return .meets
    }

    /// Why `key` is not trusted for a ticket issued at `issuedAt` (marked forged, or outside its validity then),
    /// or `nil` when it is; for a UIC key's failed signature, whose failure then proves nothing.
    static func distrust(of key: TrustedKey, issuedAt: Date?) -> String? {
        if key.listing?.forged == true { return "marked forged in the key list" }
        guard let issuedAt else { return nil }
        let slack = slack(key)
        let window = "valid \(day(key.notBefore)) to \(day(key.notAfter))"
        if let notBefore = key.notBefore, issuedAt < notBefore.addingTimeInterval(-slack.before) {
            return "\(window), not when the ticket says it was issued (\(describe(issuedAt)))"
        }
        if let notAfter = key.notAfter, issuedAt > notAfter.addingTimeInterval(slack.after) {
            return "\(window), not when the ticket says it was issued (\(describe(issuedAt)))"
        }
        return nil
    }

    /// Whether `key`'s validity bounds when it may sign, so that a ticket is judged at its issuing time: the keys
    /// of the UIC and RSP6 key lists.
    private static func judgedAtIssue(_ key: TrustedKey) -> Bool {
        key.family == .uic || key.family == .rsp6
    }

    /// The slack around a UIC key's zone-less days: 14 h before the start, 12 h after the end; an hour after an
    /// RSP6 key's end (UK time, or UTC); none otherwise.
    private static func slack(_ key: TrustedKey) -> (before: TimeInterval, after: TimeInterval) {
        switch key.family {
        case .uic: (14 * 3600, 12 * 3600)
        case .rsp6: (0, 3600)
        default: (0, 0)
        }
    }

    private static func day(_ date: Date?) -> String {
        guard let date else { return "(open)" }
        return String(describe(date).prefix(10))
    }
}

/// The key must belong to the issuer the ticket claims: no issuer signs for another.
public struct IssuerPolicy: TicketPolicy {
    public init() {}

    /// The issuer is the same at any instant.
    public var dependsOnTime: Bool { false }

    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        guard context.ticket.issuer == context.key.issuer else {
            return .fails(
                .wrongIssuer,
                reason:
                    "The ticket claims issuer \"\(context.ticket.issuer)\" but is signed with key \(context.key.keyID) of \"\(context.key.issuer)\"."
            )
        }
        return .meets
    }
}

/// The key must be trusted for what the ticket is: a staff badge (product `staff-badge`) only with a key imported
/// for staff badges, a passenger's ticket only with a ticket key. A ticket issuer's key that signs a badge, or a
/// badge key that signs a ticket, gives `wrong-issuer`: the signature is genuine, the signer is not the one trusted.
///
/// A test key (`KeyPurpose.testTickets`) signs no ticket in service: `wrong-issuer` too, unless the verifier
/// accepts test keys (a test bench), when its ticket is judged as any other with the warning `test-key`.
public struct KeyPurposePolicy: TicketPolicy {
    /// The product name of a staff badge.
    public static let staffBadgeProduct = "staff-badge"

    /// Whether tickets signed by test keys are judged as tickets (`TicketVerifier.Configuration.acceptTestKeys`).
    public var acceptTestKeys: Bool

    public init(acceptTestKeys: Bool = false) {
        self.acceptTestKeys = acceptTestKeys
    }

    /// What a key is for holds at any instant: judged even when the device clock is not trusted.
    public var dependsOnTime: Bool { false }

    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        let isBadge = context.ticket.product == Self.staffBadgeProduct
        let key = context.key
        switch (isBadge, key.purpose) {
        case (true, .tickets), (true, .testTickets):
            return .fails(
                .wrongIssuer,
                reason: "This staff badge is signed with key \(key.keyID) of \(key.issuer), a ticket key that is not "
                    + "trusted for staff badges.")
        case (false, .staffBadges):
            return .fails(
                .wrongIssuer,
                reason: "This ticket is signed with key \(key.keyID) of \(key.issuer), which is trusted for staff "
                    + "badges only.")
        case (false, .testTickets) where !acceptTestKeys:
            return .fails(
                .wrongIssuer,
                reason: "This ticket is signed with key \(key.keyID) of \(key.issuer), which its issuer publishes as a "
                    + "test key: it is not valid in service.")
        case (false, .testTickets):
            return .meets(warnings: [
                VerdictWarning(
                    code: "test-key",
                    message: "Signed with test key \(key.keyID) of \(key.issuer): judged only because this validator "
                        + "accepts test keys; such a ticket is never valid in service.")
            ])
        default:
            return .meets
        }
    }
}

/// The inspection time must lie in the ticket's validity window, give or take a clock-skew tolerance.
///
/// Also remarks on tickets activated only moments before the scan: riders who activate when they
/// see an inspector.
public struct ValidityWindowPolicy: TicketPolicy {
    /// How far the validator's clock may be off: a ticket is accepted this long before its start and after its end.
    public var clockSkew: TimeInterval
    /// Activation this recent before the scan gives the `recently-activated` warning.
    public var recentActivation: TimeInterval

    public init(clockSkew: TimeInterval = 120, recentActivation: TimeInterval = 120) {
        self.clockSkew = clockSkew
        self.recentActivation = recentActivation
    }

    /// A ticket with several documents (`Ticket.documents`) is judged by the one that applies now
    /// (`Ticket.governingDocument(at:)`): valid inside its window, else not yet valid or expired by the nearest.
    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        let ticket = context.ticket
        let window = ticket.validityWindow(at: context.now)
        // Name the document when there are several, so the inspector knows which one was judged.
        var which: Explanation = ""
        if ticket.documents.count > 1, let index = ticket.governingDocument(at: context.now) {
            which = " (document \(index + 1) of \(ticket.documents.count), \(ticket.documents[index].kind))"
        }
        if let start = window.validFrom, context.now < start.addingTimeInterval(-clockSkew) {
            return .fails(.notYetValid, reason: "The ticket is valid only from \(date: start)\(which).")
        }
        if let end = window.validUntil, context.now > end.addingTimeInterval(clockSkew) {
            return .fails(.expired, reason: "The ticket expired on \(date: end)\(which).")
        }
        var warnings: [VerdictWarning] = []
        if window.validFrom == nil, window.validUntil == nil {
            warnings.append(
                VerdictWarning(
                    code: VerdictWarning.validityNotCheckedCode,
                    message:
                        "The ticket states its validity in a part farecheck does not read; check the printed dates."
                ))
        }
        if let activated = ticket.activatedAt, context.now.timeIntervalSince(activated) < recentActivation {
            let seconds = max(0, Int(context.now.timeIntervalSince(activated)))
            warnings.append(
                VerdictWarning(
                    code: VerdictWarning.recentlyActivatedCode,
                    message: "The ticket was activated \(seconds) s before this check."))
        }
        return .meets(warnings: warnings)
    }
}

/// Neither the ticket nor its key may be revoked, and no published blocklist (VDV-KA, DTVG) may name the ticket.
///
/// A blocklist entry gives `revoked` whatever its lock mode (a gate refuses them all); the verdict carries the
/// entry, and its reason names the list, its version, the entry and what the inspector does.
public struct RevocationPolicy: TicketPolicy {
    /// Where revocations are looked up.
    public var revocations: any RevocationList

    public init(revocations: any RevocationList) {
        self.revocations = revocations
    }

    /// A revocation holds at any instant: a revoked ticket is `revoked` whatever the clock reads.
    public var dependsOnTime: Bool { false }

    public func evaluate(_ context: PolicyContext) throws -> PolicyOutcome {
        let ticket = context.ticket
        if let revocation = try revocations.revocation(ofTicket: ticket.ticketID, issuer: ticket.issuer) {
            return .fails(
                .revoked,
                reason: "Ticket \(ticket.ticketIDHex) of \(ticket.issuer) has been revoked\(Self.because(revocation)).")
        }
        if let revocation = try revocations.revocation(ofKey: context.key) {
            return .fails(
                .revoked,
                reason: "Key \(context.key.keyID) of \(context.key.issuer) has been revoked\(Self.because(revocation))."
            )
        }
        if let key = BlocklistKey(ticket: ticket), let revocation = try revocations.blocklistRevocation(for: key) {
            return .revokedByBlocklist(revocation)
        }
        return .meets
    }

    private static func because(_ revocation: Revocation) -> Explanation {
        guard let reason = revocation.reason, !reason.isEmpty else { return "" }
        return ": \(reason)"
    }
}
