import FareCore
import Foundation
import Testing

@testable import TicketFormats

/// Bytes from a string of `0` and `1` (spaces ignored), padded with 0 bits to whole octets.
private func bits(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var count = 0
    for character in text where character == "0" || character == "1" {
        if count % 8 == 0 { bytes.append(0) }
        if character == "1" { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
        count += 1
    }
    return bytes
}

/// `value` as `width` binary digits.
private func binary(_ value: Int, _ width: Int) -> String {
    (0..<width).map { (value >> (width - 1 - $0)) & 1 == 1 ? "1" : "0" }.joined()
}

/// Decodes a complete encoding, or gives the error's message.
private func decode(_ bytes: [UInt8], _ type: PERType) -> Result<PERValue, FormatError> {
    Result { () throws(FormatError) -> PERValue in try PERDecoder.decode(bytes, as: type) }
}

private func message(_ result: Result<PERValue, FormatError>) -> String? {
    if case .failure(let error) = result { return error.message }
    return nil
}

private func value(_ result: Result<PERValue, FormatError>) -> PERValue? {
    try? result.get()
}

@Suite("UPER decoder")
struct PERDecoderTests {
    @Test("constrained integers at their bounds, with negative lower bounds and in 0 bits")
    func constrainedIntegers() {
        #expect(value(decode(bits("000"), .integer(0, 7)))?.integer == 0)
        #expect(value(decode(bits("111"), .integer(0, 7)))?.integer == 7)
        #expect(value(decode(bits(binary(1079, 15)), .integer(1, 32000)))?.integer == 1080)
        // (-60..60): 121 values in 7 bits; −4 is sent as 56.
        #expect(value(decode(bits("0111000"), .integer(-60, 60)))?.integer == -4)
        #expect(value(decode(bits("0000000"), .integer(-60, 60)))?.integer == -60)
        #expect(value(decode(bits("1111000"), .integer(-60, 60)))?.integer == 60)
        let beyond = decode(bits("1111001"), .integer(-60, 60))
        #expect(message(beyond)?.contains("the value 61 is outside -60..60") == true, "\(beyond)")
        #expect(message(beyond)?.contains("at bit 0") == true)
        // lb = ub: no bits at all, so an empty encoding is complete.
        #expect(value(decode([], .integer(5, 5)))?.integer == 5)
        // (-367..700): 11 bits, the v3 validFromDay.
        #expect(value(decode(bits(binary(367 - 1, 11)), .integer(-367, 700)))?.integer == -1)
        // The widest range there is: 64 bits, no trap.
        #expect(value(decode([UInt8](repeating: 0xFF, count: 8), .integer(Int.min, Int.max)))?.integer == Int.max)
        #expect(value(decode([UInt8](repeating: 0x00, count: 8), .integer(Int.min, Int.max)))?.integer == Int.min)
        #expect(
            message(decode([], .integer(0, 7)))?.contains("3 bits are needed but the data ends after 0 bits") == true)
    }

    @Test("unconstrained integers: two's complement, sign-extended, long ones kept as bytes")
    func unconstrainedIntegers() {
        #expect(value(decode([0x02, 0x00, 0x80], .unconstrainedInteger))?.integer == 128)
        #expect(value(decode([0x01, 0xFF], .unconstrainedInteger))?.integer == -1)
        #expect(value(decode([0x01, 0x7F], .unconstrainedInteger))?.integer == 127)
        #expect(value(decode([0x02, 0xFF, 0x7F], .unconstrainedInteger))?.integer == -129)
        let eight: [UInt8] = [0x08, 0x80, 0, 0, 0, 0, 0, 0, 0]
        #expect(value(decode(eight, .unconstrainedInteger))?.integer == Int.min)
        let nine: [UInt8] = [0x09, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]
        guard case .bigInteger(let bytes)? = value(decode(nine, .unconstrainedInteger)) else {
            Issue.record("a 9-octet integer is not kept as bytes")
            return
        }
        #expect(bytes == [0x01, 0, 0, 0, 0, 0, 0, 0, 0])
        #expect(message(decode([0x00], .unconstrainedInteger))?.contains("has no octets") == true)
        #expect(message(decode([0x03, 0x01], .unconstrainedInteger)) != nil)
    }

    @Test("length determinants at 127, 128 and 16383; fragments refused")
    func lengthDeterminants() {
        for count in [0, 1, 127, 128, 16_383] {
            let header: [UInt8] = count < 128 ? [UInt8(count)] : [0x80 | UInt8(count >> 8), UInt8(count & 0xFF)]
            let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0) }
            #expect(value(decode(header + payload, .octetString(nil)))?.octets == payload, "\(count)")
            // One octet short: malformed, not a crash.
            #expect(message(decode(header + payload.dropLast(), .octetString(nil))) != nil || count == 0)
        }
        #expect(bits("10000000 10011111") == [0x80, 0x9F])
        let fragment = message(decode([0xC1] + [UInt8](repeating: 0, count: 16), .octetString(nil)))
        #expect(fragment?.contains("fragmented") == true)
    }

    @Test("BOOLEAN, NULL, ENUMERATED with and without extension marker")
    func booleansAndEnumerations() {
        #expect(value(decode(bits("1"), .boolean))?.boolean == true)
        #expect(value(decode(bits("0"), .boolean))?.boolean == false)
        guard case .null? = value(decode([], .null)) else {
            Issue.record("NULL does not decode from no bits")
            return
        }
        let gender = PEREnumeration("GenderType", ["unspecified", "female", "male", "other"], extensible: true)
        #expect(value(decode(bits("0 10"), .enumerated(gender)))?.enumeratedIndex == 2)
        // Extension bit set: a normally small number of a newer schema's value, past the root values.
        #expect(value(decode(bits("1 0 000011"), .enumerated(gender)))?.enumeratedIndex == 7)
        let table = PEREnumeration("CodeTableType", ["a", "b", "c", "d", "e"], extensible: false)
        #expect(value(decode(bits("100"), .enumerated(table)))?.enumeratedIndex == 4)
        #expect(message(decode(bits("101"), .enumerated(table)))?.contains("value 5 of CodeTableType") == true)
    }

    @Test("strings: IA5 fixed and ranged sizes without a length, UTF-8 by octets, BIT STRING, OID")
    func strings() {
        // "EUR" in SIZE(3): 21 bits, no length.
        let eur = "1000101 1010101 1010010"
        #expect(value(decode(bits(eur), .ia5String(PERSize(3, 3))))?.text == "EUR")
        // SIZE(1..2): a 1-bit length (0 → 1 character).
        #expect(value(decode(bits("1 1000001 1000010"), .ia5String(PERSize(1, 2))))?.text == "AB")
        #expect(value(decode(bits("00000010 1010101 0110001"), .ia5String(nil)))?.text == "U1")
        let theophile = Array("Théophile".utf8)
        #expect(value(decode([UInt8(theophile.count)] + theophile, .utf8String(nil)))?.text == "Théophile")
        #expect(message(decode([0x02, 0xC3, 0x28], .utf8String(nil)))?.contains("not valid UTF-8") == true)
        guard case .bits(let packed, let count)? = value(decode(bits("00000101 10110"), .bitString(nil))) else {
            Issue.record("BIT STRING does not decode")
            return
        }
        #expect(count == 5 && packed == [0b1011_0000])
        guard case .bits(_, 4)? = value(decode(bits("1010"), .bitString(PERSize(4, 4)))) else {
            Issue.record("a fixed-size BIT STRING reads a length")
            return
        }
        let oid: [UInt8] = [0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        #expect(value(decode(oid, .objectIdentifier))?.objectIdentifier == "1.2.840.10045.3.1.7")
        #expect(message(decode([0x02, 0x2A, 0x86], .objectIdentifier))?.contains("cut inside an arc") == true)
    }

    @Test("SEQUENCE OF with and without SIZE, and lists of empty items bounded")
    func lists() {
        let small = PERType.sequenceOf(.integer(0, 3), PERSize(1, 3))
        // SIZE(1..3): a 2-bit count (value − 1).
        #expect(value(decode(bits("10 01 10 11"), small))?.items.compactMap(\.integer) == [1, 2, 3])
        #expect(message(decode(bits("11 00 00 00 00"), small))?.contains("outside SIZE(1..3)") == true)
        #expect(value(decode([0x02] + bits("0000 0011"), .sequenceOf(.integer(0, 15), nil)))?.items.count == 2)
        // 16383 items of no bits each: refused by the decoder's budget, not looped over forever.
        let empty = message(decode([0xBF, 0xFF], .sequenceOf(.null, nil)))
        #expect(empty?.contains("more values than the data could hold") == true)
    }

    static let inner = PERSequence(
        "Inner", extensible: true,
        [PERComponent("a", .integer(0, 7)), PERComponent("b", .boolean, .optional)],
        additions: [PERComponent("c", .integer(0, 255), .optional)])
    static let outer = PERType.sequence(
        PERSequence(
            "Outer", extensible: false,
            [
                PERComponent("flag", .boolean, .defaulted(.boolean(true))),
                PERComponent("items", .sequenceOf(.sequence(inner), nil)),
                PERComponent("count", .integer(1, 200), .defaulted(.integer(1))),
            ]))

    @Test("SEQUENCE: presence bitmap, defaults, extension additions present, absent and unknown")
    func sequences() throws {
        // Outer bitmap 00 (both defaults); one item: ext 0, bitmap 1, a = 5, b = 1.
        let plain = try #require(value(decode(bits("00 00000001 0 1 101 1"), Self.outer))?.record)
        #expect(plain["flag"]?.boolean == true && plain["count"]?.integer == 1)
        #expect((0..<3).map(plain.isPresent(at:)) == [false, true, false])
        let item = try #require(plain["items"]?.items.first?.record)
        #expect(item["a"]?.integer == 5 && item["b"]?.boolean == true && item["c"] == nil)

        // Extension bit set, one known addition present: n − 1 = 0, presence 1, open type of 1 octet = 200.
        let known = bits("00 00000001 1 0 011 0 000000 1 00000001 11001000")
        let withAddition = try #require(value(decode(known, Self.outer))?.record)
        let extended = try #require(withAddition["items"]?.items.first?.record)
        #expect(extended["a"]?.integer == 3 && extended["b"] == nil && extended["c"]?.integer == 200)
        #expect(extended.unknownAdditions == 0)

        // Three additions, the first absent, two present that this schema does not know: skipped by length.
        let unknown = bits("00 00000001 1 0 011 0 000010 0 1 1 00000001 10101010 00000010 11111111 00000000")
        let skipped = try #require(value(decode(unknown, Self.outer))?.record)
        let newer = try #require(skipped["items"]?.items.first?.record)
        #expect(newer["a"]?.integer == 3 && newer["c"] == nil && newer.unknownAdditions == 2)

        // An open type that claims more octets than there are: malformed, with the path.
        let overrun = message(decode(bits("00 00000001 1 0 011 0 000000 1 00001000 11001000"), Self.outer))
        #expect(overrun?.contains("items[0].c") == true, "\(overrun ?? "")")
        #expect(overrun?.contains("open type of 8 octets") == true)
    }

    @Test("CHOICE: root alternatives, an unknown extension alternative kept as bytes")
    func choices() {
        let choice = PERType.choice(
            PERChoice(
                "Region", extensible: true,
                [PERComponent("zone", .integer(0, 255)), PERComponent("line", .boolean), PERComponent("x", .null)]))
        guard case .choice(1, .boolean(true))? = value(decode(bits("0 01 1"), choice)) else {
            Issue.record("root alternative 1 does not decode")
            return
        }
        guard
            case .choice(3, .octets([0xAB, 0xCD]))? = value(
                decode(bits("1 0 000000 00000010 10101011 11001101"), choice))
        else {
            Issue.record("an extension alternative is not kept as its bytes")
            return
        }
        #expect(message(decode(bits("0 11"), choice))?.contains("alternative 3 of Region does not exist") == true)
    }

    @Test("a v3 U_FLEX record with an extension addition it does not know still decodes")
    func unknownAdditionInRealRecord() throws {
        let body = try FCBFixture.deutschlandTicketFlex().body
        var reader = PERBitReader(body)
        _ = try reader.decode(FCBVersion.v3.schema)
        let end = reader.position
        // Set UicRailTicketData's extension bit and append one addition: n − 1 = 0, present, 2 octets.
        var text = (0..<end).map { (body[$0 / 8] >> (7 - UInt8($0 % 8))) & 1 == 1 ? "1" : "0" }.joined()
        text.replaceSubrange(text.startIndex...text.startIndex, with: "1")
        text += "0 000000 1 00000010 11011110 10101101"
        let ticket = try FCBTicket(decoding: bits(text), version: .v3)
        #expect(ticket.data.root.unknownAdditions == 1)
        #expect(ticket.documents.first?.productName == "Deutschland-Ticket")
        #expect(ticket.holder?.name == "Max Mustermann")
    }

    @Test("errors name the bit offset and the field path")
    func errorPaths() throws {
        var body = try FCBFixture.deutschlandTicketFlex().body
        body = Array(body.prefix(100))
        do {
            _ = try FCBData(decoding: body, version: .v3, subject: "the sample")
            Issue.record("a cut record decoded")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.hasPrefix("the sample breaks at bit "), "\(error.message)")
            #expect(error.message.contains(" in transportDocument[0].ticket.openTicket."), "\(error.message)")
        }
        // Octets after a complete value are not padding.
        let extra = message(decode([0x80, 0x00], .boolean))
        #expect(extra?.contains("1 octets follow the end of the value") == true, "\(extra ?? "")")
    }

    @Test("a self-containing type nested too deep is refused, not followed down the stack")
    func recursionDepth() {
        // A ViaStationType-like type: a list of itself.
        let nested = PERType.sequence(
            PERSequence("Via", extensible: false, [PERComponent("route", .sequenceOf(.recursive(Self.via), nil))]))
        // Each level: a list of one item → 8 bits of count; 100 levels deep, then an empty list.
        let deep = [UInt8](repeating: 0x01, count: 100) + [0x00]
        #expect(message(decode(deep, nested))?.contains("nested more than 32 deep") == true)
        let shallow: [UInt8] = [0x01, 0x01, 0x00]
        #expect(value(decode(shallow, nested)) != nil)
    }

    @Test("numbers of 1 to 64 bits read at every bit offset are the bits written there, most significant first")
    func readsAtEveryOffset() throws {
        // A fixed pseudo-random pattern: each number read is checked against the pattern's bits one by one.
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let bytes: [UInt8] = (0..<24).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        func bit(_ offset: Int) -> UInt64 { UInt64(bytes[offset / 8] >> (7 - UInt8(offset % 8)) & 1) }
        for offset in 0..<64 {
            for count in 1...64 {
                var reader = PERBitReader(bytes, position: offset)
                let read = try reader.readBits(count)
                let expected = (0..<count).reduce(UInt64(0)) { $0 << 1 | bit(offset + $1) }
                #expect(read == expected, "\(count) bits at \(offset)")
                #expect(reader.position == offset + count)
            }
        }
        // One bit short: an error, and the position is where the read started.
        var reader = PERBitReader(bytes, position: bytes.count * 8 - 6)
        #expect(throws: FormatError.self) { try reader.readBits(7) }
        #expect(reader.position == bytes.count * 8 - 6)
    }

    @Test("IA5 and UTF-8 strings read at every bit offset, short and long, and invalid UTF-8 refused")
    func stringsAtEveryOffset() throws {
        let short = "U2"
        let long = "Deutschland-Ticket 2. Klasse"
        let accented = "Zürich HB – Genève"
        for shift in 0..<8 {
            for text in [short, long] {
                // An IA5String without SIZE: an 8-bit length, then 7 bits a character; `shift` bits before it.
                let ascii = Array(text.utf8)
                let encoded =
                    String(repeating: "1", count: shift) + binary(ascii.count, 8)
                    + ascii.map { binary(Int($0), 7) }.joined()
                var reader = PERBitReader(bits(encoded), position: shift)
                #expect(try reader.decode(.ia5String(nil)).text == text, "IA5 \(text) after \(shift) bits")
            }
            for text in [short, accented] {
                let utf8 = Array(text.utf8)
                let encoded =
                    String(repeating: "0", count: shift) + binary(utf8.count, 8)
                    + utf8.map { binary(Int($0), 8) }.joined()
                var reader = PERBitReader(bits(encoded), position: shift)
                #expect(try reader.decode(.utf8String(nil)).text == text, "UTF-8 \(text) after \(shift) bits")
            }
            // A lone continuation octet is not UTF-8.
            var reader = PERBitReader(
                bits(String(repeating: "0", count: shift) + binary(1, 8) + "10000000"), position: shift)
            #expect(throws: FormatError.self) { try reader.decode(.utf8String(nil)) }
        }
    }

    @Test("a copy of a record keeps its slots when the original's change")
    func recordCopiesAreValues() throws {
        let type = PERSequence(
            "Pair", extensible: false,
            [PERComponent("a", .integer(0, 7), .optional), PERComponent("b", .integer(0, 7), .defaulted(.integer(3)))])
        var record = try #require(value(decode(bits("10 101"), .sequence(type)))?.record)
        let copy = record
        record.values[0] = .integer(1)
        record.values[1] = .integer(6)
        #expect(record["a"]?.integer == 1 && record["b"]?.integer == 6)
        #expect(copy["a"]?.integer == 5 && copy["b"]?.integer == 3)
        #expect(copy.isPresent(at: 0) && !copy.isPresent(at: 1))
        #expect(copy.values.count == 2 && copy.values.compactMap { $0?.integer } == [5])
    }

    static let via: PERRecursion = PERRecursion("Via") { PERDecoderTests.viaType }
    static let viaType = PERType.sequence(
        PERSequence("Via", extensible: false, [PERComponent("route", .sequenceOf(.recursive(via), nil))]))
}
