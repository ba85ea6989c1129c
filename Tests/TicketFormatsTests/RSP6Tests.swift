import FareCore
import Foundation
import RSATestKeys
import SeededRandom
import Signatures
import TestSupport
import Testing

@testable import TicketFormats

@Suite("UK RSP6: the text, the RSA block, the ticket's bits")
struct RSP6Tests {
    static let resources = Fixtures.url("rsp6")

    /// The published keys of issuer TT, as (n, e).
    static func ttKeys() throws -> [RSARawPublicKey] {
        let data = try Data(contentsOf: resources.appendingPathComponent("TT.json"))
        let objects = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: String]])
        return try objects.map { object in
            let n = try #require(object["n"].flatMap { Data(base64Encoded: $0) })
            let e = try #require(object["e"].flatMap { Data(base64Encoded: $0) })
            return try RSARawPublicKey(modulus: Array(n), exponent: Array(e))
        }
    }

    @Test("a real TT ticket: the header, the block recovered by TT's second key (type 1), the fields")
    func realTicket() throws {
        let text = try String(contentsOf: Self.resources.appendingPathComponent("tt-dnql4xhvk.txt"), encoding: .utf8)
        let payload = Array(text.utf8)
        #expect(RSP6Barcode.isBarcode(payload))
        let barcode = try RSP6Barcode(parsing: payload)
        #expect(barcode.version == "06")
        #expect(barcode.reference == "DNQL4XHVK")
        #expect(barcode.issuerID == "TT")
        #expect(barcode.ticketReference == "TTDNQL4XHVK")
        #expect(barcode.unknownCharacters == "00")

        let keys = try Self.ttKeys()
        #expect(keys.count == 2)
        let key = keys[1]
        let c = try #require(barcode.rsaInput(byteCount: key.modulusByteCount))
        let recovered = try key.publicOperation(c)
        let (inside, padding) = try #require(RSP6Padding.unpad(recovered))
        #expect(padding == .type1)
        // The bytes KDE Itinerary's own test reads from this ticket.
        let expected =
            "0092ec6c538a36ad00c30c39c99a6c24826ca0828c2ec800c07d128a00000000000000000000000000000000000000018251"
            + "466a000a530b8000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
            + "00000000000000007737378f24651de7"
        #expect(Array(inside).hexString == expected)
        // The first key makes no such block from it.
        let first = try keys[0].publicOperation(try #require(barcode.rsaInput(byteCount: 128)))
        #expect(RSP6Padding.unpad(first) == nil)

        let ticket = try RSP6Ticket(decoding: inside)
        #expect(ticket.reference == barcode.reference)
        #expect(ticket.version == 0)
        #expect(ticket.ticketType == "AAA")
        #expect(ticket.fareLabel == "SDS")
        #expect(ticket.origin == "3820" && ticket.destination == "3900")
        #expect(ticket.retailer == "4879")
        #expect(ticket.passengerName == nil)
        #expect(ticket.travelDay == UICDay(year: 2022, month: 12, day: 28))
        #expect(!ticket.departureTimeIsSet)
        #expect(ticket.purchase?.daysOfValidity == 0)
        #expect(ticket.purchase?.pricePence == 165)
        #expect(ticket.reservations.isEmpty)
        // One day, 28 December 2022 in UK time (GMT in winter).
        #expect(ticket.validFrom == utc("2022-12-28T00:00:00Z"))
        #expect(ticket.validUntil == utc("2022-12-28T23:59:59Z"))
    }

    @Test("every field written and read back: purchase data, a reservation, a free text")
    func roundTrip() throws {
        let ticket = try RSP6Ticket(decoding: RSP6TicketWriter.full()[...])
        #expect(ticket.reference == "ABC123XYZ")
        #expect(ticket.version == 1)
        #expect(ticket.ticketType == "SOR" && ticket.fareLabel == "OFF")
        #expect(ticket.origin == "5426" && ticket.destination == "1072" && ticket.retailer == "0429")
        #expect(ticket.couponType == 2 && ticket.discountCode == 617 && ticket.routeCode == 738)
        #expect(ticket.departureTimeIsSet)
        // Day 10 555 since 1997-01-01 is 2025-11-25; 08:15 GMT.
        #expect(ticket.departure == utc("2025-11-25T08:15:00Z"))
        #expect(ticket.passengerID == 4242 && ticket.passengerName == "MS A SMITH" && ticket.passengerGender == 2)
        #expect(ticket.restrictionCode == "TE")
        #expect(ticket.purchase?.purchasedAt == utc("2025-11-23T19:02:00Z"))
        #expect(ticket.purchase?.pricePence == 12_345 && ticket.purchase?.reference == "P7Q8R9S0")
        #expect(ticket.purchase?.daysOfValidity == 3)
        #expect(ticket.reservations.count == 1)
        let seat = try #require(ticket.reservations.first)
        #expect(seat.trainOperator == "GR" && seat.trainNumber == 1_234 && seat.coach == "C" && seat.seat == "A42")
        #expect(ticket.freeText == "VALID VIA LONDON")
        #expect(ticket.validFrom == utc("2025-11-25T00:00:00Z"))
        #expect(ticket.validUntil == utc("2025-11-27T23:59:59Z"))
    }

    @Test("UK time: summer time, the doubled and the skipped hour, validity across the October change")
    func ukTime() throws {
        // 2024-03-31: clocks go forward at 01:00 GMT; 2024-10-27: back at 01:00 GMT (02:00 BST).
        let march = UICDay(year: 2024, month: 3, day: 31)!
        let october = UICDay(year: 2024, month: 10, day: 27)!
        #expect(UKTime.date(march, hour: 0, minute: 30) == utc("2024-03-31T00:30:00Z"))
        #expect(UKTime.date(march, hour: 1, minute: 30) == utc("2024-03-31T01:30:00Z"), "the skipped hour: GMT")
        #expect(UKTime.date(march, hour: 2, minute: 30) == utc("2024-03-31T01:30:00Z"))
        #expect(UKTime.date(october, hour: 1, minute: 30) == utc("2024-10-27T00:30:00Z"), "the doubled hour: BST")
        #expect(UKTime.date(october, hour: 2, minute: 30) == utc("2024-10-27T02:30:00Z"))
        #expect(UKTime.date(UICDay(year: 2024, month: 7, day: 1)!, hour: 12, minute: 0) == utc("2024-07-01T11:00:00Z"))
        #expect(UKTime.localFields(of: utc("2024-07-01T23:30:00Z")).day == UICDay(year: 2024, month: 7, day: 2))

        // A two-day ticket from Saturday 26 October 2024 (BST) to Sunday 27 (GMT after 01:00 UTC).
        let days =
            UICTime.daysFromCivil(year: 2024, month: 10, day: 26) - UICTime.daysFromCivil(year: 1997, month: 1, day: 1)
        let ticket = try RSP6Ticket(decoding: RSP6TicketWriter.full(days: days, minutes: 0, daysOfValidity: 2)[...])
        #expect(ticket.validFrom == utc("2024-10-25T23:00:00Z"))
        #expect(ticket.validUntil == utc("2024-10-27T23:59:59Z"))
        // Days of validity 0 reads as one day.
        let oneDay = try RSP6Ticket(decoding: RSP6TicketWriter.full(days: days, minutes: 0, daysOfValidity: 0)[...])
        #expect(oneDay.validUntil == utc("2024-10-26T22:59:59Z"))
    }

    @Test("base 26: any RSA input, zero bytes at either end included, survives letters and back")
    func base26() throws {
        var random = SeededRandomNumberGenerator(seed: 26)
        for length in [1, 2, 16, 64, 128, 256] {
            for trial in 0..<20 {
                var c = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
                // Zero bytes at the start (a small c) and at the end (the number's top bytes are zero).
                if trial % 4 == 1 { c[0] = 0 }
                if trial % 4 == 2 { c[length - 1] = 0 }
                if c.allSatisfy({ $0 == 0 }) { c[0] = 1 }
                let letters = RSP6Barcode.letters(forBlock: c)
                #expect(letters.allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) })
                let text = Array("06ABCDEFGHI00ZZ".utf8) + letters
                let barcode = try RSP6Barcode(parsing: text)
                #expect(barcode.rsaInput(byteCount: length) == c, "length \(length)")
                #expect(barcode.rsaInput(byteCount: barcode.block.count - 1) == nil)
            }
        }
        // "A" is zero: trailing As (the most significant digits) change nothing.
        #expect(RSP6Barcode.blockBytes(Array("BA".utf8)[...]) == [1])
        #expect(RSP6Barcode.blockBytes(Array("AB".utf8)[...]) == [26])
    }

    @Test("base 26: the limb conversion gives the bytes a digit-by-digit conversion gives, at every length")
    func base26AgainstDigits() throws {
        var random = SeededRandomNumberGenerator(seed: 2_626)
        // Lengths around the 13-letter steps, up to the longest text read; all As (zero), all Zs, and random.
        var lengths = Array(1...40) + [64, 103, 104, 105, 168, 169, 170, 217, 218, 219, 871, 872, 899, 900]
        lengths += (0..<20).map { _ in Int.random(in: 1...RSP6Barcode.maximumLetters, using: &random) }
        for length in lengths {
            let texts: [[UInt8]] = [
                Array(repeating: UInt8(ascii: "A"), count: length),
                Array(repeating: UInt8(ascii: "Z"), count: length),
                (0..<length).map { _ in UInt8.random(in: UInt8(ascii: "A")...UInt8(ascii: "Z"), using: &random) },
                (0..<length).map { index in index == length - 1 ? UInt8(ascii: "B") : UInt8(ascii: "A") },
            ]
            for letters in texts {
                #expect(RSP6Barcode.blockBytes(letters[...]) == Self.digitByDigit(letters), "length \(length)")
                // As the scanned text holds them: after the header, in a larger array.
                let text = Array("06ABCDEFGHI00ZZ".utf8) + letters
                #expect(try RSP6Barcode(parsing: text).block == Self.digitByDigit(letters))
            }
        }
    }

    /// The base-26 number's little-endian bytes without its top zero bytes, one letter at a time (most significant,
    /// the last, first): number = number × 26 + letter over bytes.
    static func digitByDigit(_ letters: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        for letter in letters.reversed() {
            var carry = Int(letter - UInt8(ascii: "A"))
            for index in bytes.indices {
                let value = Int(bytes[index]) * 26 + carry
                bytes[index] = UInt8(value & 0xFF)
                carry = value >> 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        return bytes
    }

    @Test("6-bit texts: read in one pass as the SSB reader reads them, blanks, spaces and the end of the bytes")
    func sixBitTexts() {
        var random = SeededRandomNumberGenerator(seed: 6)
        for trial in 0..<40 {
            // Every third byte a pattern that makes spaces (value 0), so that texts are blank or trimmed.
            let bytes = (0..<Int.random(in: 1...24, using: &random)).map { index in
                trial % 3 == 0 || index % 3 == 0 ? 0 : UInt8.random(in: 0...255, using: &random)
            }
            let bits = SSBBitReader(Array(repeating: 0xAA, count: 3) + bytes)
            let slice = SSBBitReader(bits.bytes[3...])
            for offset in 0...(bytes.count * 8 + 2) {
                for count in 0...16 {
                    let fast = Result { () throws(FormatError) in
                        try slice.trimmedText("field", at: offset, count: count, .ascii)
                    }
                    // The reference: the text with its trailing spaces cut (`text`), then its leading ones.
                    let reference = Result { () throws(FormatError) -> String? in
                        let kept = try slice.text("field", at: offset, count: count, .ascii).drop { $0 == " " }
                        return kept.isEmpty ? nil : String(kept)
                    }
                    #expect(
                        String(describing: fast) == String(describing: reference), "offset \(offset), count \(count)")
                }
            }
        }
    }

    @Test("bad texts: a clear error naming what is wrong, never a crash")
    func badTexts() throws {
        let good = Array("06DNQL4XHVK00TT".utf8) + Array(repeating: UInt8(ascii: "Q"), count: 200)
        #expect(try RSP6Barcode(parsing: good).issuerID == "TT")

        func refusal(_ payload: [UInt8]) -> FormatError? {
            do {
                _ = try RSP6Barcode(parsing: payload)
                return nil
            } catch { return error }
        }
        var lower = good
        lower[40] = UInt8(ascii: "q")
        #expect(refusal(lower)?.message.contains("character 40 of the RSP6 text is \"q\", not a letter A–Z") == true)
        #expect(!RSP6Barcode.isBarcode(lower))
        var digit = good
        digit[100] = UInt8(ascii: "7")
        #expect(refusal(digit)?.code == .malformed)
        #expect(refusal(Array("06DNQL4XHVK00TT".utf8))?.message.contains("has 15 characters") == true)
        var version = good
        version[1] = UInt8(ascii: "7")
        #expect(refusal(version)?.code == .unsupported)
        #expect(refusal(version)?.message.contains("\"07\"") == true)
        var control = good
        control[5] = 0x0A
        #expect(refusal(control)?.message.contains("character 5 of the RSP6 header is byte 10") == true)
        let long = Array("06DNQL4XHVK00TT".utf8) + Array(repeating: UInt8(ascii: "Z"), count: 901)
        #expect(refusal(long)?.message.contains("901 letters") == true)
        #expect(!RSP6Barcode.isBarcode(Array("06".utf8)))
        #expect(!RSP6Barcode.isBarcode(Array("#UT01".utf8) + Array(repeating: 0x41, count: 100)))
    }

    @Test("PKCS#1 blocks: types 1 and 2 open; wrong type, short padding, no separator, a non-FF in type 1 do not")
    func padding() {
        let payload: [UInt8] = [0x01, 0x02, 0x03]
        let type1: [UInt8] = [0, 1] + Array(repeating: 0xFF, count: 8) + [0] + payload
        #expect(RSP6Padding.unpad(type1).map { Array($0.payload) } == payload)
        #expect(RSP6Padding.unpad(type1)?.padding == .type1)
        let type2: [UInt8] = [0, 2, 7, 9, 3, 1, 5, 8, 2, 4, 0] + payload
        #expect(RSP6Padding.unpad(type2)?.padding == .type2)
        #expect(RSP6Padding.unpad([0, 3] + Array(repeating: 0xFF, count: 8) + [0] + payload) == nil)
        #expect(RSP6Padding.unpad([0, 1] + Array(repeating: 0xFF, count: 7) + [0] + payload) == nil)
        #expect(RSP6Padding.unpad([0, 1] + Array(repeating: 0xFF, count: 12)) == nil)
        #expect(
            RSP6Padding.unpad([0, 1] + Array(repeating: 0xFF, count: 4) + [0xFE] + [0xFF, 0xFF, 0xFF, 0] + payload)
                == nil)
        #expect(RSP6Padding.unpad([1, 1] + Array(repeating: 0xFF, count: 8) + [0] + payload) == nil)
        #expect(RSP6Padding.unpad([]) == nil)
    }

    @Test("a ticket cut short: the field its flags announce is named, with its bits")
    func truncatedTicket() throws {
        let full = RSP6TicketWriter.full()
        #expect(throws: FormatError.self) { try RSP6Ticket(decoding: full[..<40]) }
        do {
            _ = try RSP6Ticket(decoding: full[..<60])
            Issue.record("a ticket without its purchase data's end was read")
        } catch {
            #expect(error.message.contains("purchase"), "\(error.message)")
            #expect(error.message.contains("lies past the end"), "\(error.message)")
        }
        // A minute past the day's end.
        var writer = RSP6TicketWriter(bitCount: RSP6Ticket.fixedPartBits)
        writer.dateTime(days: 10, minutes: 1_500, at: 211)
        #expect(throws: FormatError.self) { try RSP6Ticket(decoding: writer.bytes[...]) }
    }
}

@Suite("RSA keys as RSP6 needs them")
struct RSP6KeyTests {
    @Test("an RSA public key gives back its modulus and exponent; a raw key made from them recovers the same block")
    func components() throws {
        let keys = try RSP6Tests.ttKeys()
        for raw in keys {
            let key = try raw.publicKey()
            let (modulus, exponent) = try #require(key.rsaComponents)
            #expect(modulus == raw.modulus)
            #expect(exponent == raw.exponent)
            let again = try RSARawPublicKey(key)
            let input = [UInt8](repeating: 0, count: 127) + [42]
            #expect(try again.publicOperation(input) == raw.publicOperation(input))
        }
        #expect(try PrivateKey.generate(.ecP256).publicKey.rsaComponents == nil)
    }
}
