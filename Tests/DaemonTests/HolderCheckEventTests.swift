import Daemon
import FareCore
import Foundation
import TestSupport
import Testing
import TicketFormats

@testable import Presentation

/// The holder check (`holderCheck`) in the event line and the CLI report: the fields of a real ticket, present where
/// holder data may be shown and nowhere else.
@Suite("The holder check in the event")
struct HolderCheckEventTests {
    /// The 2025 Deutschland-Ticket (U_FLEX) as the verifier would hand it on, judged valid.
    static func inspection() throws -> Inspection {
        let ticket = try UIC918_3.ticket(
            from: UICContainer(parsing: try Fixtures.bytes("uic/db-deutschland-ticket-2025.bin")))
        let verdict = Verdict(
            kind: .valid, reason: "Valid.", signature: .valid, format: .uic9183, issuer: "1080", keyID: "00002",
            ticket: ticket, inspectedAt: Date(timeIntervalSince1970: 1_740_700_000))
        return Inspection(
            id: "id-h", source: "/dev/ttyACM0", symbology: .aztec, payloadByteCount: 400, payloadDigest: [1],
            verdict: verdict)
    }

    static let holderCheck =
        #""holderCheck":{"dateOfBirth":"2001-01-01","familyName":"Mustermann","givenName":"Max","name":"Max Mustermann"}"#

    @Test("the event line carries the holder's fields beside the holder line, and reads back the same")
    func eventLine() throws {
        let event = VerdictEvent(try Self.inspection())
        #expect(event.jsonLine.contains(Self.holderCheck))
        #expect(event.jsonLine.contains(#""holder":"Max Mustermann, born 2001-01-01""#))
        let back = try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(event.jsonLine.utf8))
        #expect(back == event)
        #expect(back.holderCheck?.dateOfBirth == HolderDate(year: 2001, month: 1, day: 1))
    }

    @Test("without holder data (a gate's page, standard output) there is no holder check, as there is no holder line")
    func redacted() throws {
        let published = VerdictEvent(try Self.inspection()).published
        #expect(published.line(holderData: true).contains(Self.holderCheck))
        let redacted = published.line(holderData: false)
        #expect(!redacted.contains("holderCheck"))
        #expect(!redacted.contains("Mustermann") && !redacted.contains("2001-01-01"))
    }

    @Test("verify --json's report has the same holder check")
    func report() throws {
        let report = VerdictEvent.report(try Self.inspection())
        #expect(report.jsonLine.contains(Self.holderCheck))
    }

    @Test("a ticket without holder data has no holder check in the event")
    func none() throws {
        let ticket = Ticket(format: .fc1, issuer: "demo", ticketID: [1], product: "day")
        let inspection = Inspection(
            id: "id-n", source: "stdin", symbology: nil, payloadByteCount: 9, payloadDigest: [2],
            verdict: Verdict(
                kind: .valid, reason: "Valid.", signature: .valid, format: .fc1, issuer: "demo", keyID: "0a",
                ticket: ticket, inspectedAt: Date(timeIntervalSince1970: 1_800_000_000)))
        #expect(!VerdictEvent(inspection).jsonLine.contains("holderCheck"))
    }
}
