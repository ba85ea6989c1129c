import FareCore
import Foundation

/// An earlier inspection of the same ticket, as the journal remembers it.
public struct PastInspection: Sendable, Hashable {
    /// The inspection's id (the journal record id), when known.
    public var id: InspectionID?
    /// When it was inspected.
    public var inspectedAt: Date
    /// Where: the scanner or source.
    public var device: SourceName
    /// The verdict given then.
    public var verdict: VerdictKind?

    public init(id: InspectionID? = nil, inspectedAt: Date, device: SourceName, verdict: VerdictKind?) {
        self.id = id
        self.inspectedAt = inspectedAt
        self.device = device
        self.verdict = verdict
    }
}

/// Where earlier inspections are looked up (the store's journal).
public protocol InspectionHistory: Sendable {
    /// Inspections of ticket `ticketID` of `issuer` at or after `since`, newest first.
    func pastInspections(ofTicket ticketID: TicketID, issuer: IssuerID, since: Date) throws -> [PastInspection]
}

/// How the validator is used, which decides what a ticket seen twice means.
public enum InspectionMode: String, Sendable, CaseIterable {
    /// A gate on a vehicle: a single-use ticket may pass once.
    case gate
    /// An inspector's handheld: seeing a ticket again is information, not a refusal.
    case inspector
}

/// Replay detection: the same ticket seen again within a window.
///
/// In inspector mode a valid ticket seen before gets the warning `seen-before` saying where and when;
/// in gate mode a single-use product already let through within the window becomes `replayed`.
/// Only valid verdicts are looked at: a rejected ticket is rejected anyway.
public struct ReplayCheck: Sendable {
    /// How far back an earlier inspection counts.
    public var window: TimeInterval
    /// Gate or inspector.
    public var mode: InspectionMode
    /// Products that may pass a gate only once.
    public var singleUseProducts: Set<String>

    public init(window: TimeInterval = 3600, mode: InspectionMode, singleUseProducts: Set<String> = ["single"]) {
        self.window = window
        self.mode = mode
        self.singleUseProducts = singleUseProducts
    }

    /// Whether a verdict is for a ticket that passes a gate only once: at a gate, a ticket with an id whose product
    /// is one of ``singleUseProducts``. Its first use is what the online check claims for the fleet.
    public func isSingleUse(_ verdict: Verdict) -> Bool {
        guard mode == .gate, let ticket = verdict.ticket, !ticket.ticketID.isEmpty, let product = ticket.product
        else { return false }
        return singleUseProducts.contains(product)
    }

    /// The verdict after replay detection. Throws only when the history cannot be read.
    public func apply(to verdict: Verdict, history: any InspectionHistory) throws -> Verdict {
        guard verdict.kind == .valid, let ticket = verdict.ticket, !ticket.ticketID.isEmpty else { return verdict }
        let earlier = try history.pastInspections(
            ofTicket: ticket.ticketID, issuer: ticket.issuer, since: verdict.inspectedAt.addingTimeInterval(-window)
        ).filter { $0.inspectedAt <= verdict.inspectedAt }
        guard let last = earlier.first else { return verdict }
        if isSingleUse(verdict), earlier.contains(where: { $0.verdict == .valid }) {
            return verdict.replayed(passed: last.device.rawValue, at: last.inspectedAt)
        }
        var result = verdict
        let times: Explanation = earlier.count == 1 ? "once" : "\(earlier.count) times"
        result.warnings.append(
            VerdictWarning(
                code: VerdictWarning.seenBeforeCode,
                message:
                    "Seen \(times) in the last \(Int(window / 60)) min, last at \(date: last.inspectedAt) on \(last.device.rawValue)."
            ))
        return result
    }
}

extension Verdict {
    /// This verdict as `replayed`: the single-use ticket already passed `device` at `date`, by this validator's
    /// journal or, with `source`, as the fleet told it ("the fleet's first use, from the server").
    public func replayed(passed device: String, at date: Date, source: Explanation? = nil) -> Verdict {
        var replayed = self
        replayed.kind = .replayed
        replayed.explanation =
            if let source {
                "This single-use ticket already passed \(device) at \(date: date) (\(source))."
            } else {
                "This single-use ticket already passed \(device) at \(date: date)."
            }
        return replayed
    }
}
