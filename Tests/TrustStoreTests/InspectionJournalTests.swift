import FareCore
import Foundation
import GRDB
import Testing

@testable import TrustStore

@Suite("Inspection journal")
struct InspectionJournalTests {
    let directory = TemporaryDirectory()

    func verdict(_ kind: VerdictKind, ticket id: [UInt8], at seconds: TimeInterval) -> Verdict {
        Verdict(
            kind: kind, reason: "reason", signature: .valid, format: "fc1", issuer: "demo-transit", keyID: "0a0b",
            ticket: Ticket(format: "fc1", issuer: "demo-transit", ticketID: id),
            inspectedAt: Date(timeIntervalSince1970: seconds)
        )
    }

    @Test("an inspection written is read back after reopening, once even when written twice")
    func durableAndIdempotent() throws {
        let path = directory.path + "/j.sqlite"
        let record = InspectionRecord(
            id: "inspection-1", verdict: verdict(.valid, ticket: [1, 2], at: 1_800_000_000.25), device: "/dev/ttyACM0",
            symbology: .aztec, payloadDigest: [UInt8](repeating: 0xAB, count: 32), inspector: "staff-7"
        )
        do {
            let store = try TrustStore(path: path)
            try store.journal(record)
            try store.journal(record)
        }
        let reopened = try TrustStore(path: path)
        let found = try reopened.inspections(
            ofTicket: [1, 2], issuer: "demo-transit", since: Date(timeIntervalSince1970: 0))
        #expect(found == [record])
        #expect(found.first?.inspectedDate == Date(timeIntervalSince1970: 1_800_000_000.25))
        let count = try DatabaseQueue(path: path).read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection")
        }
        #expect(count == 1)
    }

    @Test("replay lookup finds a ticket's inspections inside the window only, newest first")
    func replayWindow() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        for (index, seconds) in [1000.0, 2000, 3000].enumerated() {
            try store.journal(
                InspectionRecord(
                    id: "r\(index)", verdict: verdict(.valid, ticket: [9], at: seconds), device: "d", symbology: .qr,
                    payloadDigest: [1]
                ))
        }
        try store.journal(
            InspectionRecord(
                id: "other", verdict: verdict(.valid, ticket: [8], at: 2500), device: "d", symbology: .qr,
                payloadDigest: [2]))
        let recent = try store.inspections(
            ofTicket: [9], issuer: "demo-transit", since: Date(timeIntervalSince1970: 1500))
        #expect(recent.map(\.id) == ["r2", "r1"])
        #expect(try store.inspections(ofTicket: [9], issuer: "other-transit", since: .distantPast).isEmpty)
    }

    @Test("records stay unsent until the server acknowledged them")
    func unsent() throws {
        let store = try TrustStore(path: directory.path + "/j.sqlite")
        for index in 0..<5 {
            try store.journal(
                InspectionRecord(
                    id: "u\(index)", verdict: verdict(.expired, ticket: [UInt8(index)], at: Double(100 + index)),
                    device: "d",
                    symbology: nil, payloadDigest: [3]
                ))
        }
        #expect(try store.unsentInspections(limit: 3).map(\.id) == ["u0", "u1", "u2"])
        try store.markInspectionsSent(["u0", "u1"])
        #expect(try store.unsentInspections(limit: 10).map(\.id) == ["u2", "u3", "u4"])
    }
}
