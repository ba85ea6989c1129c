import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

@Suite("CBOR")
struct CBORTests {
    @Test(
        "RFC 8949 appendix A examples decode and re-encode byte for byte",
        arguments: [
            ("00", CBOR.unsigned(0)), ("17", .unsigned(23)), ("1818", .unsigned(24)), ("1903e8", .unsigned(1000)),
            ("1a000f4240", .unsigned(1_000_000)), ("1b000000e8d4a51000", .unsigned(1_000_000_000_000)),
            ("20", .negative(0)), ("3863", .int(-100)), ("4401020304", .bytes([1, 2, 3, 4])),
            ("6449455446", .text("IETF")),
            ("83010203", .array([.unsigned(1), .unsigned(2), .unsigned(3)])),
            ("a201020304", .map([(.unsigned(1), .unsigned(2)), (.unsigned(3), .unsigned(4))])),
            ("d818456449455446", .tagged(24, .bytes(Array("dIETF".utf8)))), ("f4", .bool(false)), ("f6", .null),
            ("f93c00", .float(bits: 0x3C00, width: 2)),
        ])
    func appendixA(hex: String, expected: CBOR) throws {
        let bytes = try #require([UInt8](hex: hex))
        let decoded = try CBORDecoder.decode(bytes)
        #expect(decoded == expected)
        #expect(CBOREncoder.encode(decoded) == bytes)
    }

    @Test("truncated items are malformed and name the offset")
    func truncated() {
        let full: [UInt8] = [0x83, 0x01, 0x02, 0x43, 0xAA, 0xBB, 0xCC]
        for cut in 1..<full.count {
            #expect(throws: FormatError.self) { try CBORDecoder.decode(Array(full.prefix(cut))) }
        }
        #expect(throws: FormatError.malformed("CBOR length 3 at byte 4 runs past the end of the data (2 bytes left)")) {
            try CBORDecoder.decode([0x83, 0x01, 0x02, 0x43, 0xAA, 0xBB])
        }
    }

    @Test("a huge length prefix is refused before anything is allocated")
    func hugeLength() {
        // A byte string claiming 2^64-1 bytes, an array claiming 2^32 elements, a map claiming 2^63 pairs.
        for bytes: [UInt8] in [
            [0x5B, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00],
            [0x9A, 0xFF, 0xFF, 0xFF, 0xFF, 0x00],
            [0xBB, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        ] {
            #expect(throws: FormatError.self) { try CBORDecoder.decode(bytes) }
        }
    }

    @Test("nesting deeper than the limit is malformed, not a stack overflow")
    func deepNesting() {
        let bomb = [UInt8](repeating: 0x81, count: 100_000) + [0x00]
        #expect(throws: FormatError.self) { try CBORDecoder.decode(bomb) }
    }

    @Test("trailing bytes, bad UTF-8, indefinite lengths and reserved values are refused")
    func otherRefusals() {
        #expect(throws: FormatError.self) { try CBORDecoder.decode([0x01, 0x02]) }
        #expect(throws: FormatError.self) { try CBORDecoder.decode([0x62, 0xC3, 0x28]) }
        #expect(throws: FormatError.unsupported("indefinite-length CBOR at byte 0 is not accepted in tickets")) {
            try CBORDecoder.decode([0x9F, 0x01, 0xFF])
        }
        #expect(throws: FormatError.self) { try CBORDecoder.decode([0x1C]) }
        #expect(throws: FormatError.self) { try CBORDecoder.decode([]) }
    }

    @Test(
        "random bytes decode to a value that encodes back to a value equal to it, or are refused as malformed or unsupported with a reason"
    )
    func fuzz() throws {
        var generator = SeededRandomNumberGenerator(seed: 42)
        var decoded = 0
        var refused = 0
        for length in 0..<2000 {
            let bytes = (0..<(length % 64)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            do {
                let value = try CBORDecoder.decode(bytes)
                decoded += 1
                // What was read is what the bytes say: written out and read again, it is the same value.
                #expect(try CBORDecoder.decode(CBOREncoder.encode(value)) == value, "\(bytes)")
            } catch {
                refused += 1
                #expect(error.code == .malformed || error.code == .unsupported, "\(bytes): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(decoded > 0 && refused > 0)
    }

    /// The input on which the long `fuzz-cose` campaign stopped: libFuzzer's 2 GiB RSS limit after 4.2 million
    /// runs. Alone it is an ordinary bad input (3 ms, 55 MB with AddressSanitizer); looping the whole corpus
    /// 220,000 times in a normal build keeps the memory flat, so the growth is the fuzzing build's own.
    @Test("the input a fuzz campaign stopped on is refused, by CBOR, COSE and the FC1 claims alike")
    func fuzzCampaignInput() throws {
        let base64 =
            "2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2oKBYdra2tra2tra2tra2tra2tra2tra2tra2tra2tva2tra2"
            + "tra2tra2tra2tra2tra2tra2tra2tphoWFiwZWVkAAAU2VxdWVuY2UAAAAAAJWVldra2tra2tra2tra2tra2tra2tra2tra2tra2tra2tra2"
            + "traxdra2tra2tra2tralQAAAAAw0NAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMNgwMDAwMDAwMDAwQ2xvczAwMDAwMDAwMNrb2towMA=="
        let bytes = try #require(Data(base64Encoded: base64).map { Array($0) })
        #expect(throws: FormatError.self) { try CBORDecoder.decode(bytes) }
        #expect(throws: FormatError.self) { try COSESign1(decoding: bytes) }
        #expect(throws: FormatError.self) { try FC1.ticket(fromClaims: bytes) }
    }
}
