import FareCore
import Foundation
import RSATestKeys
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// Issuer TT's published keys and the real ticket `TTDNQL4XHVK` (Tests/Fixtures/rsp6), and tickets of the tests'
/// own issuer `ZZ`.
enum RSP6Fixtures {
    static let realTicket = try! Array(Fixtures.bytes("rsp6/tt-dnql4xhvk.txt"))

    /// TT's keys as `farecheck keys import --rsp6 TT.json` stores them.
    static func ttKeys() throws -> [TrustedKey] {
        try RSP6KeyFile.keys(parsing: Fixtures.bytes("rsp6/TT.json"), issuer: "TT").map {
            try RSP6KeyImport.trustedKey($0)
        }
    }

    static let issuer = RSP6TestIssuer()

    /// TT's keys and the test issuer's.
    static func trust() throws -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        for key in try ttKeys() { snapshot.add(key) }
        let own = try RSP6KeyFile.keys(parsing: issuer.keyFileJSON, issuer: issuer.issuerID)
        for key in own { snapshot.add(try RSP6KeyImport.trustedKey(key)) }
        return snapshot
    }
}

@Suite("UK RSP6 verification")
struct RSP6VerifierTests {
    let trust = try! RSP6Fixtures.trust()

    func verify(_ payload: [UInt8], at instant: Date, trust: TrustSnapshot? = nil) throws -> Verdict {
        try TicketVerifier(trust: trust ?? self.trust, clock: FixedClock(instant)).verify(payload)
    }

    @Test("the real TT ticket: genuine with TT's second key, valid on 28 December 2022 only, its fields in words")
    func realTicket() throws {
        let verdict = try verify(RSP6Fixtures.realTicket, at: utc("2022-12-28T17:30:00Z"))
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        #expect(verdict.format == .ukRSP6)
        #expect(verdict.signature == .valid)
        #expect(verdict.issuer == "TT")
        #expect(verdict.warnings.isEmpty, "\(verdict.warnings)")
        let keys = try RSP6Fixtures.ttKeys()
        #expect(verdict.keyID?.rawValue == keys[1].keyID.rawValue)
        let outcomes = Dictionary(uniqueKeysWithValues: verdict.keys.map { ($0.keyID, $0.outcome) })
        #expect(outcomes[keys[1].keyID] == .verified)
        // Keys are tried in the order they were imported: TT's first key fails before the second recovers it.
        #expect(outcomes[keys[0].keyID] == .failed)

        let ticket = try #require(verdict.ticket)
        #expect(ticket.ticketID.bytes == Array("TTDNQL4XHVK".utf8))
        #expect(ticket.product == "SDS")
        let details = Dictionary(ticket.details.map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(details["origin"] == "NLC 3820")
        #expect(details["destination"] == "NLC 3900")
        #expect(details["travel"] == "2022-12-28 (UK)")
        #expect(details["days of validity"] == "1 (the travel day only)")
        #expect(details["price"] == "£1.65")
        #expect(details["retailer"] == "4879")
        #expect(details["ticket reference"] == "TTDNQL4XHVK")

        // A verifier that has seen a TT ticket tries the key that recovered it first: one RSA operation.
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(utc("2022-12-28T17:30:00Z")))
        _ = try verifier.verify(RSP6Fixtures.realTicket)
        let again = try verifier.verify(RSP6Fixtures.realTicket)
        #expect(again.keys.map(\.outcome) == [.verified, .notTried])
        #expect(again.keys.first?.keyID == keys[1].keyID)

        #expect(try verify(RSP6Fixtures.realTicket, at: utc("2022-12-29T00:05:00Z")).kind == .expired)
        #expect(try verify(RSP6Fixtures.realTicket, at: utc("2022-12-27T23:50:00Z")).kind == .notYetValid)
    }

    @Test("a changed letter anywhere, or a changed reference in the clear header: invalid-signature")
    func alteredText() throws {
        let text = RSP6Fixtures.realTicket
        for index in stride(from: RSP6Barcode.headerLength, to: text.count, by: 11) {
            var altered = text
            altered[index] = altered[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : altered[index] - 1
            let verdict = try verify(altered, at: utc("2022-12-28T12:00:00Z"))
            #expect(verdict.kind == .invalidSignature, "letter \(index): \(verdict.reason)")
            #expect(verdict.reason.contains("altered or forged"))
        }
        var reference = text
        reference[4] = UInt8(ascii: "X")
        let verdict = try verify(reference, at: utc("2022-12-28T12:00:00Z"))
        #expect(verdict.kind == .invalidSignature)
        #expect(verdict.reason.contains("TTDNQL4XHVK"), "\(verdict.reason)")
        #expect(verdict.reason.contains("clear part was altered"))
    }

    @Test("an issuer without keys: unknown-key, telling how to import them")
    func unknownIssuer() throws {
        var text = RSP6Fixtures.realTicket
        text[13] = UInt8(ascii: "Q")
        text[14] = UInt8(ascii: "Q")
        let verdict = try verify(text, at: utc("2022-12-28T12:00:00Z"))
        #expect(verdict.kind == .unknownKey)
        #expect(verdict.signature == .unknownKey)
        #expect(verdict.issuer == "QQ")
        #expect(verdict.reason.contains("keys import --rsp6 QQ.json"), "\(verdict.reason)")
        // The same ticket with no RSP6 keys at all.
        #expect(
            try verify(RSP6Fixtures.realTicket, at: utc("2022-12-28T12:00:00Z"), trust: TrustSnapshot()).kind
                == .unknownKey)
    }

    @Test("our own tickets: types 1 and 2 padding, days of validity across the October clock change, reservations")
    func ownTickets() throws {
        // Day 10_523 after 1997-01-01 is 2025-10-24; three days of validity end on Sunday 26 October, the day
        // UK time goes back to GMT at 01:00 UTC.
        let ticket = RSP6TicketWriter.full(days: 10_523, minutes: 8 * 60 + 15, daysOfValidity: 3)
        let verdict = try verify(RSP6Fixtures.issuer.text(ticket), at: utc("2025-10-25T12:00:00Z"))
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        #expect(verdict.warnings.contains { $0.code == "booked-departure" && $0.message.contains("08:15") })
        let valid = try #require(verdict.ticket)
        #expect(valid.validFrom == utc("2025-10-23T23:00:00Z"))
        #expect(valid.validUntil == utc("2025-10-26T23:59:59Z"))
        #expect(valid.holder == "MS A SMITH")
        let details = Dictionary(valid.details.map { ($0.label, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(details["reservation 1"] == "GR 1234, coach C, seat A42")
        #expect(details["railcard"] == "discount code 617: ask for the railcard")
        #expect(details["days of validity"] == "3 (until 2025-10-26)")
        #expect(details["travel"] == "2025-10-24 08:15 UK time (booked departure)")

        // The same ticket in a type-2 block: its fields shown, never valid, never called forged.
        let type2 = try verify(RSP6Fixtures.issuer.text(ticket, padding: .type2), at: utc("2025-10-25T12:00:00Z"))
        #expect(type2.kind == .unsupported)
        #expect(type2.signature == .unsupported)
        #expect(type2.reason.contains("type 2"), "\(type2.reason)")
        #expect(type2.ticket?.holder == "MS A SMITH")
        let text = RSP6Fixtures.issuer.text(ticket)
        // 23:59 GMT on the last day is still valid; a minute into Monday (beyond the clock skew) is not.
        #expect(try verify(text, at: utc("2025-10-26T23:59:00Z")).kind == .valid)
        #expect(try verify(text, at: utc("2025-10-27T00:03:00Z")).kind == .expired)
        // 23:30 UTC on the 23rd is 00:30 BST on the 24th: the travel day has begun.
        #expect(try verify(text, at: utc("2025-10-23T23:30:00Z")).kind == .valid)
        #expect(try verify(text, at: utc("2025-10-23T22:50:00Z")).kind == .notYetValid)
    }

    @Test("why type 2 proves nothing: TT's public key alone turns counted numbers into a type-2 block, never valid")
    func typeTwoNeedsNoPrivateKey() throws {
        let key = try RSARawPublicKey(try RSP6Fixtures.ttKeys()[1].publicKey)
        // Numbers below the modulus, counted and hashed: no private key anywhere. About one in a hundred thousand
        // opens to `00 02`, eight non-zero bytes and a zero; the bound only stops a broken loop.
        var found: [UInt8]?
        var tries = 0
        while found == nil, tries < 3_000_000 {
            tries += 1
            let seed = withUnsafeBytes(of: UInt64(tries).bigEndian) { Array($0) }
            var c = (0..<4).flatMap { digest(.sha256, seed + [UInt8($0)]) }
            c[0] = 0
            if let block = try? key.publicOperation(c), RSP6Padding.unpad(block)?.padding == .type2 { found = c }
        }
        let c = try #require(found, "no type-2 block in \(tries) tries")
        // `06`, a reference of the forger's choosing, `00`, issuer TT, then the letters.
        let forged = Array("06FORGED00000TT".utf8) + RSP6Barcode.letters(forBlock: c)
        let verdict = try verify(forged, at: utc("2022-12-28T12:00:00Z"))
        #expect(verdict.kind == .unsupported, "after \(tries) tries: \(verdict.reason)")
        #expect(verdict.kind != .valid && verdict.signature != .valid)
        #expect(verdict.reason.contains("type 2"))
    }

    @Test("fields that do not settle validity give warnings: no purchase data, a limited-duration code")
    func warnings() throws {
        var writer = RSP6TicketWriter(bitCount: RSP6Ticket.fixedPartBits)
        writer.text("NOPURCHAS", at: 8, count: 9)
        writer.text("CDS", at: 73, count: 3)
        writer.dateTime(days: 10_523, minutes: 0, at: 211)
        writer.number(3, at: 379, width: 4)
        let text = RSP6Fixtures.issuer.text(writer.bytes, reference: "NOPURCHAS")
        let verdict = try verify(text, at: utc("2025-10-24T12:00:00Z"))
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        let codes = verdict.warnings.map(\.code)
        #expect(codes.contains("days-of-validity-not-stated"))
        #expect(codes.contains("limited-duration"))
        #expect(!codes.contains("booked-departure"))
        #expect(verdict.ticket?.validUntil == utc("2025-10-24T22:59:59Z"))
        #expect(verdict.ticket?.holder == nil)
    }

    @Test("bad blocks under a genuine key: wrong padding and short fields are named; a number too big is forged")
    func badBlocks() throws {
        let issuer = RSP6Fixtures.issuer
        let k = issuer.key.byteCount
        let at = utc("2025-10-24T12:00:00Z")
        // Type 3 padding: no key makes a well-formed block of it.
        let type3 =
            [0x00, 0x03] + [UInt8](repeating: 0xFF, count: k - 3 - 60) + [0x00] + [UInt8](repeating: 0x41, count: 60)
        let wrongPadding = try verify(issuer.text(rawBlock: type3), at: at)
        #expect(wrongPadding.kind == .invalidSignature)
        #expect(wrongPadding.keys.first { $0.issuer == "ZZ" }?.reason == "gives no well-formed PKCS#1 v1.5 block")
        // A well-formed block whose ticket is too short for its fixed part: malformed, the signature valid.
        let short = issuer.text([UInt8](repeating: 0x10, count: 20))
        let malformed = try verify(short, at: at)
        #expect(malformed.kind == .malformed)
        #expect(malformed.signature == .valid)
        #expect(malformed.reason.contains("fixed part takes 390 bits"), "\(malformed.reason)")
        // A number not below the modulus, and one longer than it: refused by every key, no crash.
        let header = issuer.header(reference: "ABC123XYZ")
        let tooBig = header + RSP6Barcode.letters(forBlock: [UInt8](repeating: 0xFF, count: k))
        let notBelow = try verify(tooBig, at: at)
        #expect(notBelow.kind == .invalidSignature)
        #expect(notBelow.keys.first?.reason.contains("not smaller than the RSA modulus") == true)
        // Longer than any block of the issuer's keys: a text run on, malformed (not forged), no key tried.
        let tooLong = header + RSP6Barcode.letters(forBlock: [UInt8](repeating: 0x5A, count: k + 3))
        let longer = try verify(tooLong, at: at)
        #expect(longer.kind == .malformed && longer.signature == .notChecked)
        #expect(longer.reason.contains("takes 213 to 218 letters"), "\(longer.reason)")
    }

    @Test("bad texts: another version is unsupported, a lowercase letter malformed, each with its reason")
    func badTexts() throws {
        let at = utc("2022-12-28T12:00:00Z")
        var version = RSP6Fixtures.realTicket
        version[1] = UInt8(ascii: "5")
        let unsupported = try verify(version, at: at)
        #expect(unsupported.kind == .unsupported)
        #expect(unsupported.reason.contains("\"05\""), "\(unsupported.reason)")
        var lower = RSP6Fixtures.realTicket
        lower[60] = UInt8(ascii: "k")
        let malformed = try verify(lower, at: at)
        #expect(malformed.kind == .malformed)
        #expect(malformed.reason.contains("not a letter A–Z"), "\(malformed.reason)")
        #expect(try verify(Array("06DNQL4XHVK00TT".utf8), at: at).kind != .valid)
        // A scanner's line end after the text changes nothing.
        #expect(try verify(RSP6Fixtures.realTicket + [0x0D, 0x0A], at: at).kind == .valid)
    }

    @Test(
        "real-world texts: a space, a 0 or other printable characters in the reserved characters read as they are",
        arguments: ["00", " 0", "0 ", "  ", "#A", "z~"])
    func reservedCharacters(reserved: String) throws {
        var real = RSP6Fixtures.realTicket
        real.replaceSubrange(11..<13, with: Array(reserved.utf8))
        let verdict = try verify(real, at: utc("2022-12-28T12:00:00Z"))
        #expect(verdict.kind == .valid, "\(reserved): \(verdict.reason)")
        #expect(try RSP6Barcode(parsing: real).unknownCharacters == reserved)
        let issuer = RSP6Fixtures.issuer
        var own = issuer.text(RSP6TicketWriter.full())
        own.replaceSubrange(11..<13, with: Array(reserved.utf8))
        #expect(try verify(own, at: utc("2025-10-24T12:00:00Z")).signature == .valid, "\(reserved)")
    }

    @Test("an RSP6 text broken on the way is malformed, never unsupported: its body cut short, run on, lowercased")
    func brokenBodies() throws {
        let at = utc("2022-12-28T12:00:00Z")
        let real = RSP6Fixtures.realTicket
        let broken: [(String, [UInt8])] = [
            ("cut short", Array(real.dropLast(10))), ("cut to 40 letters", Array(real.prefix(55))),
            ("run on", real + Array("QRS".utf8)), ("doubled", real + real.dropFirst(15)),
            ("lowercased", Array(real.prefix(15)) + real.dropFirst(15).map { $0 | 0x20 }),
            ("a space in the reference", Array(real.prefix(4)) + [0x20] + real.dropFirst(5)),
        ]
        for (what, text) in broken {
            let verdict = try verify(text, at: at)
            #expect(verdict.kind == .malformed, "\(what): \(verdict.kind) \(verdict.reason)")
        }
        let short = try verify(Array(real.dropLast(10)), at: at)
        #expect(short.reason.contains("has 208 letters") && short.reason.contains("cut short"), "\(short.reason)")
    }

    @Test("revocation by the ticket reference, and a validator that does not accept the format")
    func revocationAndFormats() throws {
        var trust = self.trust
        trust.revokeTicket(TicketID(Array("TTDNQL4XHVK".utf8)), issuer: "TT", Revocation(reason: "refunded"))
        let revoked = try verify(RSP6Fixtures.realTicket, at: utc("2022-12-28T12:00:00Z"), trust: trust)
        #expect(revoked.kind == .revoked)
        #expect(revoked.reason.contains("refunded"))
        var configuration = TicketVerifier.Configuration()
        configuration.acceptedFormats = [.uic9183]
        let refused = try TicketVerifier(
            trust: self.trust, clock: FixedClock(utc("2022-12-28T12:00:00Z")), configuration: configuration
        ).verify(RSP6Fixtures.realTicket)
        #expect(refused.kind == .unsupported)
        #expect(refused.reason.contains("UK RSP6"))
    }

    @Test("RSP6 key files: an issuer's array, a file keyed by issuer, and what is refused")
    func keyFiles() throws {
        let array = try Fixtures.bytes("rsp6/TT.json")
        #expect(try RSP6KeyFile.keys(parsing: array, issuer: "TT").count == 2)
        #expect(throws: FormatError.self) { try RSP6KeyFile.keys(parsing: array, issuer: nil) }
        #expect(RSP6KeyFile.issuer(fromFileName: "/keys/tt.json") == "TT")
        #expect(RSP6KeyFile.issuer(fromFileName: "keys.json") == nil)
        let combined = Array(#"{"TT": \#(String(decoding: array, as: UTF8.self)), "ZZ": []}"#.utf8)
        #expect(try RSP6KeyFile.keys(parsing: combined, issuer: nil).map(\.issuer) == ["TT", "TT"])
        #expect(try RSP6KeyFile.keys(parsing: combined, issuer: "TT").count == 2)
        #expect(throws: FormatError.self) { try RSP6KeyFile.keys(parsing: combined, issuer: "AB") }
        #expect(throws: FormatError.self) { try RSP6KeyFile.keys(parsing: Array(#"[{"n": "!!"}]"#.utf8), issuer: "TT") }
        #expect(throws: FormatError.self) { try RSP6KeyFile.keys(parsing: Array("not json".utf8), issuer: "TT") }
        // Key ids are made from the modulus: the same file gives the same ids, different keys different ids.
        let ids = try RSP6KeyFile.keys(parsing: array, issuer: "TT").map { RSP6KeyImport.keyID(modulus: $0.modulus) }
        #expect(ids.count == 2 && ids[0] != ids[1] && ids.allSatisfy { $0.count == 12 })
        #expect(try RSP6Fixtures.ttKeys().map(\.keyID.rawValue) == ids)
    }

    @Test("the verifier throws when the key directory fails on an RSP6 lookup")
    func directoryFailure() throws {
        struct BrokenDirectory: KeyDirectory, RevocationList {
            struct Gone: Error {}
            func key(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) throws -> TrustedKey? { nil }
            func keys(family: KeyFamily, issuer: IssuerID, keyID: KeyID) throws -> [TrustedKey] { [] }
            func keys(family: KeyFamily, issuer: IssuerID) throws -> [TrustedKey] { throw Gone() }
            func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) throws -> Revocation? { nil }
            func revocation(ofKey key: TrustedKey) throws -> Revocation? { nil }
        }
        let broken = BrokenDirectory()
        let verifier = TicketVerifier(keys: broken, revocations: broken, clock: FixedClock(utc("2022-12-28T12:00:00Z")))
        #expect(throws: VerifierError.self) { try verifier.verify(RSP6Fixtures.realTicket) }
    }
}
