import FareCore
import Foundation
import QuirkyTickets
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// A payload is decoded once, by the verifier: the printed layout, the FCB tree and the unreadable records are read
/// from the ticket's decoding (`Ticket.decodedContent`), or, for a payload the verifier made no ticket of, from the
/// container it took apart (`TicketVerifier.inspect`). Either way they say what reading the bytes on their own says.
@Suite("One decoding of a payload, shown")
struct PayloadDecodingTests {
    /// What `PayloadDecoding` shows, beside what the byte-level readers show for the same payload.
    static func expectSameAsBytes(
        _ payload: [UInt8], _ inspected: VerifiedPayload, _ label: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (verdict, decoding) = (inspected.verdict, inspected.decoding)
        #expect(decoding.printedLayout == UIC918_3.layout(of: payload), "\(label)", sourceLocation: sourceLocation)
        #expect(decoding.fcb == FCBContent(payload: payload), "\(label)", sourceLocation: sourceLocation)
        let fromBytes: [UnreadableRecord]
        if let ticket = verdict.ticket {
            fromBytes = ticket.unreadableRecords
        } else if verdict.format == .uic9183 {
            fromBytes = UIC918_3.unreadableRecords(ofPayload: payload)
        } else if verdict.format == .uic9189 {
            fromBytes = DOSIPAS.unreadableBlocks(ofPayload: payload)
        } else {
            fromBytes = []
        }
        #expect(decoding.unreadableRecords == fromBytes, "\(label)", sourceLocation: sourceLocation)
    }

    @Test("UIC 918.3 tickets with U_FLEX and U_TLAY: layout and FCB tree from the verifier's decoding, not the bytes")
    func uicFromTheTicket() throws {
        let trust = try UICFixtures.trust()
        let cases = [
            (UICFixtures.cityMobil, utc("2021-01-11T12:00:00Z")),
            (UICFixtures.superSparpreis, utc("2022-04-22T12:00:00Z")),
            (UICFixtures.deutschlandTicket, utc("2025-02-28T12:00:00Z")),
        ]
        for (file, instant) in cases {
            let payload = try UICFixtures.bytes(file)
            let inspected = try TicketVerifier(trust: trust, clock: FixedClock(instant)).inspect(payload)
            let verdict = inspected.verdict
            #expect(verdict.kind == .valid, "\(file): \(verdict.reason)")
            #expect(verdict.ticket?.decodedContent is UICDecodedContent, "\(file)")
            Self.expectSameAsBytes(payload, inspected, file)
            // Given no bytes at all, the same: everything is read from the ticket's decoding.
            let fromTicket = PayloadDecoding(verdict: verdict, recognised: nil, failure: nil, payload: [])
            #expect(fromTicket.printedLayout == UIC918_3.layout(of: payload), "\(file)")
            #expect(fromTicket.fcb == FCBContent(payload: payload), "\(file)")
            #expect(fromTicket.unreadableRecords == verdict.ticket?.unreadableRecords, "\(file)")
        }
        // The samples between them have a drawn layout and a decoded FCB tree.
        let shown = try cases.map { file, _ in
            let payload = try UICFixtures.bytes(file)
            return (UIC918_3.layout(of: payload), FCBContent(payload: payload))
        }
        #expect(shown.contains { $0.0.lines?.isEmpty == false })
        #expect(shown.contains { if case .decoded = $0.1 { true } else { false } })
    }

    @Test("a layout that cannot be read, a forged ticket, a broken container: the same as reading the bytes")
    func uicWithoutATicket() throws {
        let issuer = try QuirkyIssuer.ecdsa()
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey)
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(utc("2026-03-15T12:00:00Z")))
        let from = UICDay(year: 2026, month: 3, day: 1)!
        let until = UICDay(year: 2026, month: 3, day: 31)!
        for quirks: Set<TicketQuirk> in [[], [.brokenLayout], [.paddedLayoutNumbers]] {
            let payload = try issuer.ticket(quirks, from: from, until: until)
            let inspected = try verifier.inspect(payload)
            let verdict = inspected.verdict
            #expect(verdict.kind == .valid, "\(quirks): \(verdict.reason)")
            Self.expectSameAsBytes(payload, inspected, "\(quirks)")
            #expect(
                PayloadDecoding(verdict: verdict, recognised: nil, failure: nil, payload: []).printedLayout
                    == UIC918_3.layout(of: payload))

            // Forged: no ticket is made, the bytes are read (the layout is shown under its verdict all the same).
            var forged = payload
            forged[24] ^= 0x10
            // The verifier hands over the container it took apart: the same as the bytes, not read again.
            let forgedInspected = try verifier.inspect(forged)
            let refused = forgedInspected.verdict
            #expect(refused.kind == .invalidSignature && refused.ticket == nil, "\(quirks): \(refused.reason)")
            Self.expectSameAsBytes(forged, forgedInspected, "\(quirks) forged")
            if quirks.contains(.brokenLayout) {
                #expect(forgedInspected.decoding.unreadableRecords.map(\.tag) == ["U_TLAY"])
            } else {
                #expect(forgedInspected.decoding.printedLayout.lines?.isEmpty == false)
            }

            // A container cut short: no format, no ticket; the reason the container cannot be read.
            let cut = Array(payload.prefix(70))
            let cutInspected = try verifier.inspect(cut)
            #expect(cutInspected.verdict.ticket == nil)
            Self.expectSameAsBytes(cut, cutInspected, "\(quirks) cut")
            guard case .containerUnreadable = cutInspected.decoding.printedLayout else {
                Issue.record("\(quirks): the cut container's layout is not unreadable")
                continue
            }
        }
    }

    @Test("DOSIPAS: the rail ticket's FCB tree from the verifier's decoding; without a ticket, from the bytes")
    func dosipas() throws {
        let trust = try DOSIPASFixtures.trust()
        var decoded = 0
        for name in DOSIPASFixtures.samples {
            let payload = try DOSIPASFixtures.bytes(name)
            for instant in [utc("2026-02-12T18:47:00Z"), Date()] {
                let inspected = try TicketVerifier(trust: trust, clock: FixedClock(instant)).inspect(payload)
                let verdict = inspected.verdict
                Self.expectSameAsBytes(payload, inspected, "\(name) \(verdict.kind)")
                if verdict.ticket != nil {
                    #expect(verdict.ticket?.decodedContent is DOSIPASDecodedContent, "\(name)")
                    #expect(
                        PayloadDecoding(verdict: verdict, recognised: nil, failure: nil, payload: []).fcb
                            == FCBContent(payload: payload))
                    if case .decoded = PayloadDecoding(verdict: verdict, recognised: nil, failure: nil, payload: []).fcb
                    {
                        decoded += 1
                    }
                }
            }
        }
        #expect(decoded > 0, "no sample's FCB tree came from a ticket")
    }
}
