import FareCore
import Foundation
import QuirkyTickets
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// What the inspector reads as the product of an FCB ticket: a BahnCard's own name, class and number; a DB ticket's
/// product (`productIdIA5`) beside its tariff. Signed UIC 918.3 tickets whose `U_FLEX` (v3) is written here.
@Suite("FCB products as the inspector reads them: customer cards and product ids")
struct FCBProductTests {
    static let issuer = try! QuirkyIssuer.ecdsa()
    let inside = utc("2026-06-15T12:00:00Z")
    let after = utc("2027-01-02T12:00:00Z")

    func verify(_ payload: [UInt8], at instant: Date) throws -> Verdict {
        var trust = TrustSnapshot()
        trust.add(Self.issuer.trustedKey)
        return try TicketVerifier(trust: trust, clock: FixedClock(instant)).verify(payload)
    }

    /// A signed ticket with `U_HEAD` and a `U_FLEX` 03 holding `document`.
    func signedTicket(_ id: String, _ document: FCBTestValue) throws -> [UInt8] {
        let issuer = Self.issuer
        let flex = try FCBTestWriter.fcbV3(
            .sequence([
                "issuingDetail": .sequence([
                    "issuerNum": .integer(1080), "issuingYear": .integer(2026), "issuingDay": .integer(32),
                    "issuingTime": .integer(600), "specimen": .boolean(false), "securePaperTicket": .boolean(false),
                    "activated": .boolean(true), "issuerPNR": .text(id),
                ]),
                "transportDocument": .list([.sequence(["ticket": document])]),
            ]))
        let head = UICHead(issuerCode: issuer.issuerCode, ticketKey: id, issuedAt: utc("2026-02-01T09:00:00Z"))
        return try UIC918_3.encode(
            records: [head.record(), UICRecord(id: "U_FLEX", version: "03", body: flex)],
            version: issuer.headerVersion, issuerCode: issuer.issuerCode, keyID: issuer.keyID
        ) { compressed in try issuer.privateKey.signature(for: compressed, scheme: issuer.scheme) }
    }

    @Test("a BahnCard (customerCard): its own name is the product, with its class and number; valid in its year")
    func bahnCard() throws {
        let card = try signedTicket(
            "BC25-2026",
            .choice(
                "customerCard",
                .sequence([
                    "cardIdIA5": .text("7081411234567890"), "validFromYear": .integer(2026),
                    "validFromDay": .integer(1), "validUntilDay": .integer(365),
                    "classCode": .enumerated(2), "cardType": .integer(25),
                    "cardTypeDescr": .text("BahnCard 25 (2. Klasse)"),
                ])))
        let verdict = try verify(card, at: inside)
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        let ticket = try #require(verdict.ticket)
        #expect(ticket.product == "BahnCard 25 (2. Klasse)")
        #expect(ticket.documents.map(\.kind) == ["customerCard"])
        #expect(ticket.documents.first?.summary == "BahnCard 25 (2. Klasse), 2nd class, card 7081411234567890")
        #expect(ticket.details.contains { $0.label == "document card" && $0.value == "7081411234567890" })
        // The card's window is its year: past it the card is expired, as any ticket.
        #expect(try verify(card, at: after).kind == .expired)

        // A card with a number only, no description: the number is still shown, the product is the kind.
        let bare = try signedTicket(
            "BC-BARE",
            .choice(
                "customerCard",
                .sequence(["cardIdNum": .integer(7_081_411_234_567_891), "validFromYear": .integer(2026)])))
        let plain = try #require(try verify(bare, at: inside).ticket)
        #expect(plain.documents.first?.summary == "card 7081411234567891")
        #expect(plain.product == nil)
    }

    @Test("productIdIA5 beside the tariff (DB: Super Sparpreis, ICE Fahrkarte); a numeric product id only in details")
    func productIDs() throws {
        let tariff: FCBTestValue = .sequence([
            "tariffDesc": .text("Super Sparpreis"), "restrictedToCountryOfResidence": .boolean(false),
        ])
        let named = try signedTicket(
            "SSP-1",
            .choice(
                "openTicket",
                .sequence([
                    "productIdIA5": .text("ICE Fahrkarte"), "returnIncluded": .boolean(false),
                    "validFromDay": .integer(0), "validUntilDay": .integer(200), "tariffs": .list([tariff]),
                ])))
        let ticket = try #require(try verify(named, at: inside).ticket)
        #expect(ticket.product == "Super Sparpreis")
        #expect(ticket.documents.first?.summary == "Super Sparpreis, ICE Fahrkarte, 2nd class, 1 passenger")
        #expect(ticket.details.contains { $0.label == "document product id" && $0.value == "ICE Fahrkarte" })

        let numbered = try signedTicket(
            "D-1",
            .choice(
                "openTicket",
                .sequence([
                    "productIdNum": .integer(9999), "returnIncluded": .boolean(false),
                    "validUntilDay": .integer(200), "tariffs": .list([tariff]),
                ])))
        let numberedTicket = try #require(try verify(numbered, at: inside).ticket)
        #expect(numberedTicket.documents.first?.summary == "Super Sparpreis, 2nd class, 1 passenger")
        #expect(numberedTicket.details.contains { $0.label == "document product id" && $0.value == "9999" })
    }
}
