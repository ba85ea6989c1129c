import FareCore
import Foundation
import Synchronization

/// The inspections of the replay window that this process has decided, kept in memory, so that replay detection
/// is exact without waiting for the journal.
///
/// `judge` runs the replay check and records the inspection in one step under one lock: a second scan of the
/// same ticket, from another scanner or while the first one's online check or journal write is still under way,
/// finds the first one here. Inspections decided by an earlier process are found in the journal (`history`).
public final class RecentInspections: Sendable {
    private struct TicketKey: Hashable {
        var issuer: IssuerID
        var ticketID: TicketID
    }
    private struct State {
        var byTicket: [TicketKey: [PastInspection]] = [:]
        /// When entries were last pruned.
        var prunedAt: Date = .distantPast
    }
    private let state = Mutex(State())
    /// How long an inspection is kept: the replay window.
    public let window: TimeInterval

    public init(window: TimeInterval) {
        self.window = window
    }

    /// The verdict after `replay`, with this inspection recorded as given under `id`.
    ///
    /// - Parameters:
    ///   - verdict: The verdict so far (signature and ticket policies).
    ///   - id: The inspection's id (the journal record id).
    ///   - device: Where it was scanned.
    ///   - history: The journal, for inspections of earlier processes.
    /// - Throws: When the journal cannot be read; nothing is recorded then.
    public func judge(
        _ verdict: Verdict, id: InspectionID, device: SourceName, replay: ReplayCheck, history: any InspectionHistory
    ) throws -> Verdict {
        guard let ticket = verdict.ticket, !ticket.ticketID.isEmpty else { return verdict }
        let key = TicketKey(issuer: ticket.issuer, ticketID: ticket.ticketID)
        return try state.withLock { state in
            prune(&state, now: verdict.inspectedAt)
            let merged = MergedHistory(recent: state.byTicket[key] ?? [], journal: history, asOf: verdict.inspectedAt)
            let judged = try replay.apply(to: verdict, history: merged)
            state.byTicket[key, default: []].append(
                PastInspection(id: id, inspectedAt: judged.inspectedAt, device: device, verdict: judged.kind))
            return judged
        }
    }

    /// Records the final verdict of inspection `id` when a later step changed it (an online check that found the
    /// ticket revoked); a ticket that did not pass must not count as having passed.
    public func settle(_ verdict: Verdict, id: InspectionID) {
        guard let ticket = verdict.ticket, !ticket.ticketID.isEmpty else { return }
        let key = TicketKey(issuer: ticket.issuer, ticketID: ticket.ticketID)
        state.withLock { state in
            guard let index = state.byTicket[key]?.firstIndex(where: { $0.id == id }) else { return }
            state.byTicket[key]?[index].verdict = verdict.kind
        }
    }

    /// Forgets inspection `id` (a scan that was refused, not inspected).
    public func forget(_ verdict: Verdict, id: InspectionID) {
        guard let ticket = verdict.ticket, !ticket.ticketID.isEmpty else { return }
        let key = TicketKey(issuer: ticket.issuer, ticketID: ticket.ticketID)
        state.withLock { state in
            state.byTicket[key]?.removeAll { $0.id == id }
            if state.byTicket[key]?.isEmpty == true { state.byTicket[key] = nil }
        }
    }

    /// How many tickets are remembered.
    public var ticketCount: Int { state.withLock { $0.byTicket.count } }

    private func prune(_ state: inout State, now: Date) {
        // At most once a minute: a full pass over the map is cheap but not free.
        guard now.timeIntervalSince(state.prunedAt) > 60 else { return }
        state.prunedAt = now
        let cutoff = now.addingTimeInterval(-window)
        state.byTicket = state.byTicket.compactMapValues { entries in
            let kept = entries.filter { $0.inspectedAt >= cutoff }
            return kept.isEmpty ? nil : kept
        }
    }

    /// The journal's inspections and this process's, each once (an inspection journaled already is in both).
    private struct MergedHistory: InspectionHistory {
        var recent: [PastInspection]
        var journal: any InspectionHistory
        /// The time of the verdict being judged.
        var asOf: Date

        func pastInspections(ofTicket ticketID: TicketID, issuer: IssuerID, since: Date) throws -> [PastInspection] {
            // This process's inspections were judged before this one (under the lock), even where two scanners'
            // clocks were read in the other order: none of them counts as later than the verdict being judged.
            let ours = recent.filter { $0.inspectedAt >= since }.map { past in
                var past = past
                past.inspectedAt = min(past.inspectedAt, asOf)
                return past
            }
            let ids = Set(ours.compactMap(\.id))
            let journaled = try journal.pastInspections(ofTicket: ticketID, issuer: issuer, since: since)
                .filter { $0.id.map { !ids.contains($0) } ?? true }
            return (ours + journaled).sorted { $0.inspectedAt > $1.inspectedAt }
        }
    }
}
