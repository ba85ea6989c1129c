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
    case fails(VerdictKind, reason: String)
    /// Fails as `revoked` because a published blocklist names the ticket: the verdict carries the entry.
    case revokedByBlocklist(BlocklistRevocation)

    /// Meets, with nothing to remark.
    public static let meets = PolicyOutcome.meets(warnings: [])
}

/// One rule a signed ticket must satisfy. Policies run in order; the first failure decides.
public protocol TicketPolicy: Sendable {
    /// Checks the rule. Throws only when the policy cannot work (its data source failed).
    func evaluate(_ context: PolicyContext) throws -> PolicyOutcome
}

private func describe(_ date: Date) -> String {
    date.formatted(.iso8601)
}

/// The signing key must be within its own validity window at inspection time.
public struct KeyValidityPolicy: TicketPolicy {
    public init() {}

    public func evaluate(_ context: PolicyContext) -> PolicyOutcome {
        if let notAfter = context.key.notAfter, context.now > notAfter {
            let key = context.key
            return .fails(
                .keyExpired,
                reason:
                    "The signature is genuine, but key \(key.keyID) of \(key.issuer) expired on \(describe(notAfter)).")
        }
        if let notBefore = context.key.notBefore, context.now < notBefore {
            let key = context.key
            return .fails(
                .keyExpired,
                reason:
                    "The signature is genuine, but key \(key.keyID) of \(key.issuer) is only valid from \(describe(notBefore))."
            )
        }
        return .meets
    }
}

/// The key must belong to the issuer the ticket claims: no issuer signs for another.
public struct IssuerPolicy: TicketPolicy {
    public init() {}

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
        var which = ""
        if ticket.documents.count > 1, let index = ticket.governingDocument(at: context.now) {
            which = " (document \(index + 1) of \(ticket.documents.count), \(ticket.documents[index].kind))"
        }
        if let start = window.validFrom, context.now < start.addingTimeInterval(-clockSkew) {
            return .fails(.notYetValid, reason: "The ticket is valid only from \(describe(start))\(which).")
        }
        if let end = window.validUntil, context.now > end.addingTimeInterval(clockSkew) {
            return .fails(.expired, reason: "The ticket expired on \(describe(end))\(which).")
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

    private static func because(_ revocation: Revocation) -> String {
        guard let reason = revocation.reason, !reason.isEmpty else { return "" }
        return ": \(reason)"
    }
}
