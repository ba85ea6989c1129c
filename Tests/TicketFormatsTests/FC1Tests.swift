import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

@Suite("FC1 envelope and claims")
struct FC1Tests {
    static let claims = FC1.Claims(
        issuer: "demo-transit", ticketID: [0xC0, 0xFF, 0xEE], issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
        validFrom: Date(timeIntervalSince1970: 1_800_000_000), validUntil: Date(timeIntervalSince1970: 1_800_086_400),
        product: "day", zones: ["A", "B"], category: "adult", holder: "ID ****1234"
    )

    /// A COSE message with a fake signature: these tests are about the envelope, not cryptography.
    static func message(payload: [UInt8] = claims.encoded()) -> [UInt8] {
        COSESign1.sign(algorithm: .es256, keyID: [1, 2, 3, 4], payload: payload) { _ in [UInt8](repeating: 7, count: 64)
        }
    }

    @Test("every transport is recognised and yields the same COSE message")
    func transports() throws {
        let cose = Self.message()
        for transport: FC1.Transport in [.text(prefix: "FC1:"), .zlib, .plain] {
            let payload = FC1.encode(cose: cose, transport: transport)
            guard case .fc1(let message, let found) = try PayloadDetector().recognise(payload) else {
                Issue.record("not recognised as FC1")
                return
            }
            #expect(found == transport)
            #expect(message.keyID == [1, 2, 3, 4])
            #expect(message.algorithmID == -7)
            #expect(message.signature == [UInt8](repeating: 7, count: 64))
            #expect(message.payload == Self.claims.encoded())
        }
    }

    @Test("text payloads only use QR's alphanumeric characters")
    func alphanumeric() {
        let payload = FC1.encode(cose: Self.message(), transport: .text(prefix: "FC1:"))
        #expect(payload.allSatisfy { Base45.values[Int($0)] != 0xFF || $0 == UInt8(ascii: ":") })
    }

    @Test("claims read back into the ticket, with the validity window")
    func claimsRoundTrip() throws {
        let ticket = try FC1.ticket(fromClaims: Self.claims.encoded())
        #expect(ticket.issuer == "demo-transit")
        #expect(ticket.ticketID == [0xC0, 0xFF, 0xEE])
        #expect(ticket.product == "day")
        #expect(ticket.zones == ["A", "B"])
        #expect(ticket.category == "adult")
        #expect(ticket.holder == "ID ****1234")
        #expect(ticket.passengers == 1)
        #expect(ticket.validFrom == Date(timeIntervalSince1970: 1_800_000_000))
        #expect(ticket.validUntil == Date(timeIntervalSince1970: 1_800_086_400))
    }

    @Test("activation: valid from activation for its duration, capped by exp")
    func activation() throws {
        var claims = Self.claims
        claims.activatedAt = Date(timeIntervalSince1970: 1_800_080_000)
        claims.activationDuration = 7200
        let ticket = try FC1.ticket(fromClaims: claims.encoded())
        #expect(ticket.validFrom == claims.activatedAt)
        #expect(ticket.validUntil == claims.validUntil)  // a + d is past exp
        claims.activationDuration = 600
        #expect(try FC1.ticket(fromClaims: claims.encoded()).validUntil == Date(timeIntervalSince1970: 1_800_080_600))
    }

    @Test(
        "claims of the wrong type are malformed and name the claim",
        arguments: [
            (CBOR.map([(.unsigned(1), .unsigned(5))]), "claim iss (1) must be text, found a integer"),
            (.map([(.unsigned(1), .text("x"))]), "claim exp (4) is missing"),
            (
                .map([(.unsigned(1), .text("x")), (.unsigned(4), .text("tomorrow"))]),
                "claim exp (4) must be a date in whole seconds, found a text string"
            ),
            (
                .map([(.unsigned(1), .text("x")), (.unsigned(4), .unsigned(9)), (.unsigned(7), .text("id"))]),
                "claim cti (7) must be a byte string, found a text string"
            ),
            (
                .map([(.unsigned(1), .text("x")), (.unsigned(4), .unsigned(9)), (.unsigned(7), .bytes([1]))]),
                "claim tkt, the ticket itself, is missing"
            ),
            (
                .map([
                    (.unsigned(1), .text("x")), (.unsigned(4), .unsigned(9)), (.unsigned(7), .bytes([1])),
                    (.text("tkt"), .map([(.text("p"), .text("day")), (.text("z"), .text("A"))])),
                ]), "ticket field z must be an array, found a text string"
            ),
            (.array([]), "CWT claims must be a map, found a array"),
        ])
    func wrongTypes(claims: CBOR, message: String) {
        #expect(throws: FormatError.malformed(message)) { try FC1.ticket(fromClaims: CBOREncoder.encode(claims)) }
    }

    @Test("prefixes: another prefix is unsupported, configured prefixes are accepted")
    func prefixes() throws {
        let cose = Self.message()
        let other = FC1.encode(cose: cose, transport: .text(prefix: "HC1:"))
        #expect(
            throws: FormatError.unsupported("the prefix \"HC1:\" is not an accepted ticket prefix (accepted: FC1:)")
        ) {
            try PayloadDetector().recognise(other)
        }
        let detector = PayloadDetector(acceptedPrefixes: ["FC1:", "HC1:"])
        guard case .fc1(_, .text(prefix: "HC1:")) = try detector.recognise(other) else {
            Issue.record("configured prefix not accepted")
            return
        }
    }

    @Test("broken envelopes are malformed or unsupported, never a crash")
    func brokenEnvelopes() {
        let detector = PayloadDetector()
        let cose = Self.message()
        #expect(throws: FormatError.self) { try detector.recognise([]) }
        #expect(throws: FormatError.self) { try detector.recognise(Array(cose.dropLast(10))) }
        #expect(throws: FormatError.self) { try detector.recognise(Array("FC1:ABC".utf8)) }
        #expect(throws: FormatError.self) {
            try detector.recognise(Array("FC1:".utf8) + Base45.encode(Array("not zlib".utf8)))
        }
        #expect(throws: FormatError.self) { try detector.recognise(Zlib.deflate(Array("plain text".utf8))) }
        // A tag other than 18 (COSE_Sign) and a Sign1 array of the wrong shape.
        #expect(throws: FormatError.self) { try detector.recognise(CBOREncoder.encode(.tagged(98, .array([])))) }
        #expect(throws: FormatError.self) {
            try detector.recognise(CBOREncoder.encode(.array([.bytes([]), .map([]), .bytes([])])))
        }
        #expect(throws: FormatError.self) {
            try detector.recognise(CBOREncoder.encode(.array([.text("x"), .map([]), .bytes([]), .bytes([])])))
        }
        // A changed byte anywhere gives what an inspector can act on: a ticket (whose signature then decides), or
        // a malformed or unsupported verdict with a sentence saying why; never a crash, never another error.
        var generator = SeededRandomNumberGenerator(seed: 99)
        var refusals = 0
        var unexplained: [String] = []
        func refused(_ error: FormatError) {
            refusals += 1
            if !(error.code == .malformed || error.code == .unsupported) || error.message.isEmpty {
                unexplained.append(error.description)
            }
        }
        for _ in 0..<3000 {
            var bytes = cose
            bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
            do {
                if case .fc1(let message, _) = try detector.recognise(bytes) {
                    do {
                        _ = try FC1.ticket(fromClaims: message.payload)
                    } catch {
                        refused(error)
                    }
                }
            } catch {
                refused(error)
            }
        }
        #expect(refusals > 0)
        #expect(unexplained.isEmpty, "refusals without a malformed or unsupported reason: \(unexplained.prefix(3))")
    }
}
