import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

/// A first use carries the ticket's payload to the server, and the journal keeps it only until the server has the
/// record.
@Suite("the payload travels with a first use", .serialized, .timeLimit(.minutes(3)))
struct FirstUsePayloadTests {
    @Test("a first use is uploaded with its payload, which the journal no longer holds once the server has the record")
    func payloadUploadedThenCleared() async throws {
        let bench = try SyncBench()
        _ = try await bench.round()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("f1", product: "single"))))
        let store = try bench.store()
        let trust = StoreTrust(store: store)
        let verdict = try TicketVerifier(keys: trust, revocations: trust).verify(payload)
        #expect(verdict.kind == .valid)
        // As the gate's pipeline journals it: a first use, and an ordinary inspection beside it.
        var firstUse = Inspection(
            source: "gate-reader", symbology: .qr, payloadByteCount: payload.count,
            payloadDigest: digest(.sha256, payload), verdict: verdict)
        firstUse.isFirstUse = true
        let ordinary = Inspection(
            source: "gate-reader", symbology: .qr, payloadByteCount: payload.count,
            payloadDigest: digest(.sha256, payload), verdict: verdict)
        try store.inspectionJournal.write(InspectionRecord(firstUse, payload: payload))
        try store.inspectionJournal.write(InspectionRecord(ordinary, payload: payload))
        let journaled = try store.inspectionJournal.allInspections()
        #expect(journaled.first { $0.id == firstUse.id }?.payload == payload)
        #expect(journaled.first { $0.id == ordinary.id }?.payload == nil)

        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        let report = try await bench.round(url: proxy.baseURL)
        #expect(report.inspectionsUploaded == 2)
        // What travelled: the first use with its payload (base64 on the wire), the other without.
        let uploads = try proxy.requestBodies(toPathsStartingWith: APIPath.inspections).flatMap {
            try WireFormat.decode(InspectionBatch.self, from: $0).records
        }
        #expect(uploads.first { $0.id == firstUse.id }?.payload == payload)
        #expect(uploads.first { $0.id == firstUse.id }?.firstUse == true)
        #expect(uploads.contains { $0.id == ordinary.id && $0.payload == nil })
        // Acknowledged: the journal keeps the digest, not the ticket.
        let after = try bench.store().inspectionJournal.allInspections().first { $0.id == firstUse.id }
        #expect(after?.sentAt != nil)
        #expect(after?.payload == nil)
        #expect(after?.payloadDigest == digest(.sha256, payload))
        // The server verified the ticket with the payload and recorded the claim: another gate learns it.
        let otherGate = try bench.server.addDevice("gate-b")
        let page = try SignedDocument(
            jsonBytes: try await bench.server.fetch(APIPath.firstUses + "?since=0", token: otherGate)
        ).openFirstUsePage(trusting: [.demo]).page
        #expect(page.entries.contains { $0.ticketID == [0xf1] && $0.device == "validator-1" }, "\(page.entries)")
    }

    @Test("a batch of first uses whose payloads exceed one upload body is sent in several, all of them acknowledged")
    func largePayloadsSplitIntoBodies() async throws {
        let bench = try SyncBench()
        let store = try bench.store()
        // 400 first uses of 3 KB payloads: about 1.6 MB of base64, more than the server's 1 MiB body.
        var ids: [InspectionID] = []
        for index in 0..<400 {
            let verdict = Verdict(
                kind: .valid, reason: "Valid ticket.", signature: .valid, format: .fc1, issuer: "demo-transit",
                inspectedAt: Date().addingTimeInterval(Double(index)))
            var inspection = Inspection(
                source: "gate-reader", symbology: .qr, payloadByteCount: 3000,
                payloadDigest: [UInt8](repeating: UInt8(index % 256), count: 32), verdict: verdict)
            inspection.isFirstUse = true
            try store.inspectionJournal.write(
                InspectionRecord(inspection, payload: [UInt8](repeating: UInt8(index % 256), count: 3000)))
            ids.append(inspection.id)
        }
        let report = try await bench.round()
        #expect(report.inspectionsUploaded == 400, "\(report.summary)")
        #expect(try bench.store().inspectionJournal.unsentInspectionCount() == 0)
        #expect(try bench.store().inspectionJournal.allInspections().allSatisfy { $0.payload == nil })
    }

    @Test("a device over its claim rate (429 too-many-claims): the round goes on without the rest of its uploads")
    func claimRatePausesUploads() async throws {
        let bench = try SyncBench(starts: false)
        try await bench.server.start(arguments: ["--claim-burst", "10", "--claims-per-second", "0.01"])
        let store = try bench.store()
        func journalFirstUses(_ count: Int) throws {
            for index in 0..<count {
                let verdict = Verdict(
                    kind: .valid, reason: "Valid ticket.", signature: .valid, format: .fc1, issuer: "demo-transit",
                    inspectedAt: Date().addingTimeInterval(Double(index) / 1000))
                var inspection = Inspection(
                    source: "gate-reader", symbology: .qr, payloadByteCount: 10,
                    payloadDigest: [UInt8](repeating: UInt8(index % 256), count: 32), verdict: verdict)
                inspection.isFirstUse = true
                try store.inspectionJournal.write(
                    InspectionRecord(inspection, payload: [UInt8](repeating: 1, count: 10)))
            }
        }
        // The first batch takes the device's whole bucket of claims.
        try journalFirstUses(10)
        let first = try await bench.round()
        #expect(first.inspectionsUploaded == 10 && !first.uploadsPaused, "\(first.summary)")
        // The next batch meets 429: the round still ends well, and the first uses wait in the journal.
        try journalFirstUses(5)
        let second = try await bench.round()
        #expect(second.uploadsPaused && second.inspectionsUploaded == 0, "\(second.summary)")
        #expect(second.inspectionsUnsent == 5)
        #expect(second.summary.contains("the server takes no more first-use claims for now"))
        #expect(try bench.store().inspectionJournal.allInspections().filter { $0.payload != nil }.count == 5)
    }
}
