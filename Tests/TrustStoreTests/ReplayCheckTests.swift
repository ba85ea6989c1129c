import FareCore
import Foundation
import Testing
import ValidationAPI
import Verification

@testable import TrustStore

@Suite("Replay detection over the journal")
struct ReplayCheckTests {
    let directory = TemporaryDirectory()

    func verdict(product: String, at seconds: TimeInterval, id: [UInt8] = [7, 7]) -> Verdict {
        Verdict(
            kind: .valid, reason: "The ticket is genuine and valid now.", signature: .valid, format: .fc1,
            issuer: "demo-transit",
            ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: TicketID(id), product: product),
            inspectedAt: Date(timeIntervalSince1970: seconds)
        )
    }

    func journal(_ store: TrustStore, _ verdict: Verdict, device: String) throws {
        try store.inspectionJournal.write(
            InspectionRecord(verdict: verdict, device: SourceName(device), symbology: .qr, payloadDigest: [1]))
    }

    @Test("inspector mode: a ticket seen again within the window is valid with seen-before, saying where and when")
    func inspectorSeenBefore() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        let check = ReplayCheck(window: 3600, mode: .inspector)
        let first = verdict(product: "single", at: 10_000)
        #expect(try check.apply(to: first, history: store.inspectionJournal).warnings.isEmpty)
        try journal(store, first, device: "handheld-3")
        let again = try check.apply(to: verdict(product: "single", at: 10_600), history: store.inspectionJournal)
        #expect(again.kind == .valid)
        #expect(again.warnings.map(\.code) == ["seen-before"])
        #expect(again.warnings.first?.message.contains("handheld-3") == true)
        // Outside the window the earlier scan no longer counts.
        #expect(
            try check.apply(to: verdict(product: "single", at: 20_000), history: store.inspectionJournal).warnings
                .isEmpty)
    }

    @Test("gate mode: a single-use ticket that already passed is replayed; a day ticket only warned")
    func gateReplay() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        let check = ReplayCheck(window: 3600, mode: .gate)
        try journal(store, verdict(product: "single", at: 10_000), device: "gate-front")
        let replayed = try check.apply(to: verdict(product: "single", at: 10_100), history: store.inspectionJournal)
        #expect(replayed.kind == .replayed)
        #expect(replayed.reason.contains("gate-front"))
        try journal(store, verdict(product: "day", at: 10_000, id: [8]), device: "gate-front")
        let day = try check.apply(to: verdict(product: "day", at: 10_100, id: [8]), history: store.inspectionJournal)
        #expect(day.kind == .valid)
        #expect(day.warnings.map(\.code) == ["seen-before"])
    }

    @Test("a rejected ticket is left as it is")
    func onlyValid() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        try journal(store, verdict(product: "single", at: 10_000), device: "gate-front")
        var expired = verdict(product: "single", at: 10_100)
        expired.kind = .expired
        #expect(try ReplayCheck(mode: .gate).apply(to: expired, history: store.inspectionJournal).kind == .expired)
    }
}
