import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

/// An FC1 ticket's claims are read in place (`CBORScanner`) on every scan, and through the decoded CBOR tree
/// whenever that reading meets anything irregular. These tests hold the two to the same answers: a ticket the
/// scanner reads is the ticket the tree gives, and whatever the tree refuses, the scanner leaves to it.
@Suite("FC1 claims read in place")
struct FC1ClaimScanningTests {
    /// Claims of every shape an issuer writes: all fields, the fewest, an activation, unknown claims and fields.
    static let genuine: [[UInt8]] = {
        let base = FC1Tests.claims
        var fewest = FC1.Claims(
            issuer: "x", ticketID: [1], issuedAt: Date(timeIntervalSince1970: 1_700_000_000), validFrom: nil,
            validUntil: Date(timeIntervalSince1970: 1_700_086_400), product: "single")
        fewest.passengers = 3
        var activated = base
        activated.activatedAt = Date(timeIntervalSince1970: 1_800_000_600)
        activated.activationDuration = 5400
        activated.reactivations = 2
        var long = base
        long.issuer = "a transit authority with a long name, über alles"
        long.holder = "Ñame Ünusual, ID ****9876"
        long.zones = (0..<30).map { "zone \($0)" }
        let extra = CBOREncoder.encode(
            .map([
                (.unsigned(1), .text("demo-transit")), (.unsigned(4), .unsigned(1_800_086_400)),
                (.negative(9), .array([.float(bits: 0x3C00, width: 2), .tagged(1, .unsigned(5)), .null])),
                (.unsigned(6), .unsigned(1_800_000_000)), (.unsigned(7), .bytes([9, 9])),
                (.text("xyz"), .map([(.bytes([1]), .bool(true))])),
                (.text("tkt"), .map([(.text("p"), .text("day")), (.text("zz"), .text("?")), (.unsigned(3), .null)])),
                (.unsigned(1), .unsigned(5)),  // a second iss, of another type: ignored, as the first wins
            ]))
        return [base.encoded(), fewest.encoded(), activated.encoded(), long.encoded(), extra]
    }()

    /// The same fields, compared as an inspector would see them.
    static func summary(_ ticket: Ticket) -> String {
        "\(ticket.issuer)|\(ticket.ticketID)|\(String(describing: ticket.validFrom))|\(String(describing: ticket.validUntil))|"
            + "\(String(describing: ticket.issuedAt))|\(String(describing: ticket.product))|\(String(describing: ticket.zones))|"
            + "\(String(describing: ticket.category))|\(String(describing: ticket.passengers))|\(String(describing: ticket.holder))|"
            + "\(String(describing: ticket.activatedAt))|\(String(describing: ticket.reactivations))|"
            + "\(ticket.details.map { "\($0.label)=\($0.value)" })|\(String(describing: ticket.holderCheck))"
    }

    @Test("every genuine shape is read in place, into the ticket the decoded tree gives")
    func genuineShapes() throws {
        for claims in Self.genuine {
            let scanned = try #require(FC1.ticketScanningClaims(claims))
            #expect(Self.summary(scanned) == Self.summary(try FC1.ticketDecodingClaims(claims)))
        }
    }

    @Test(
        "corrupted claims: whatever the scanner reads, the tree reads the same; what the tree refuses, so does the scanner"
    )
    func corruptedClaims() throws {
        var random = SeededRandomNumberGenerator(seed: 0xFC1)
        var scannedCount = 0
        var refusedCount = 0
        for round in 0..<6000 {
            var claims = Self.genuine[round % Self.genuine.count]
            switch round % 3 {
            case 0:
                for _ in 0...Int.random(in: 0..<3, using: &random) {
                    claims[Int.random(in: 0..<claims.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
                }
            case 1: claims = Array(claims.prefix(Int.random(in: 0..<claims.count, using: &random)))
            default:
                claims.insert(
                    UInt8.random(in: 0...255, using: &random), at: Int.random(in: 0...claims.count, using: &random))
            }
            let tree = Result { () throws(FormatError) in try FC1.ticketDecodingClaims(claims) }
            let scanned = FC1.ticketScanningClaims(claims)
            switch (tree, scanned) {
            case (.success(let ticket), .some(let read)):
                scannedCount += 1
                #expect(Self.summary(read) == Self.summary(ticket), "claims \(claims)")
            case (.failure, .some):
                Issue.record("the scanner read claims the tree refuses: \(claims)")
            case (.failure(let error), .none):
                refusedCount += 1
                // The public reading says what the tree says.
                #expect(throws: error) { try FC1.ticket(fromClaims: claims) }
            case (.success, .none):
                // Left to the tree (e.g. a date written as a float is not that, but the scanner may be stricter).
                #expect((try? FC1.ticket(fromClaims: claims)) != nil)
            }
        }
        // Both outcomes were exercised, not only one of them.
        #expect(scannedCount > 100)
        #expect(refusedCount > 100)
    }

    @Test("a date at the most negative integer CBOR holds is refused as a date, not a crash")
    func mostNegativeDate() {
        let claims = CBOREncoder.encode(
            .map([
                (.unsigned(1), .text("x")), (.unsigned(4), .negative(UInt64(Int64.max))), (.unsigned(7), .bytes([1])),
                (.text("tkt"), .map([(.text("p"), .text("day"))])),
            ]))
        #expect(throws: FormatError.malformed("claim exp (4) must be a date in whole seconds, found a integer")) {
            try FC1.ticket(fromClaims: claims)
        }
    }
}
