import FareCore
import SeededRandom
import Testing

/// Byte identifiers as people see and type them (key ids, ticket ids, digests), and bytes read as text.
@Suite("Hex and UTF-8 text of bytes")
struct BytesTests {
    @Test("bytes are written as lowercase hex, two digits a byte, by any sequence of bytes alike")
    func hexString() {
        #expect([0x00, 0x0a, 0xab, 0xff].hexString == "000aabff")
        #expect([UInt8]().hexString == "")
        var random = SeededRandomNumberGenerator(seed: 50)
        for count in [1, 7, 32, 1000] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            // The Array form is written straight into the string; any other sequence goes the generic way.
            #expect(bytes.hexString == bytes.lazy.map { $0 }.hexString)
            #expect(bytes.hexString == bytes[...].hexString)
            #expect([UInt8](hex: bytes.hexString) == bytes)
        }
    }

    @Test("hex is read in either case, with 0x, spaces and colons as people copy it; anything else is refused")
    func readingHex() {
        #expect([UInt8](hex: "DEADbeef") == [0xde, 0xad, 0xbe, 0xef])
        #expect([UInt8](hex: "0xA6615E0F") == [0xa6, 0x61, 0x5e, 0x0f])
        #expect([UInt8](hex: "a6:61:5e 0f") == [0xa6, 0x61, 0x5e, 0x0f])
        #expect([UInt8](hex: "") == [])
        for refused in ["abc", "0x1", "zz", "de-ad", "0xx0", "d e a"] {
            #expect([UInt8](hex: refused) == nil, "\(refused)")
        }
    }

    @Test("bytes are text only when they are valid UTF-8, read exactly as the standard library reads them")
    func utf8Validating() {
        #expect(String(utf8Validating: Array("FC1:NCF".utf8)) == "FC1:NCF")
        #expect(String(utf8Validating: Array("Zürich → Bern 🚆".utf8)) == "Zürich → Bern 🚆")
        for invalid: [UInt8] in [[0xC3, 0x28], [0xFF], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0x41, 0xC0, 0x80]] {
            #expect(String(utf8Validating: invalid) == nil, "\(invalid)")
        }
        var random = SeededRandomNumberGenerator(seed: 9)
        for _ in 0..<2_000 {
            // Half the bytes ASCII, so that valid text is common.
            let bytes = (0..<Int.random(in: 0...12, using: &random)).map { _ in
                let byte = UInt8.random(in: 0...255, using: &random)
                return Bool.random(using: &random) ? byte >> 1 : byte
            }
            #expect(String(utf8Validating: bytes) == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }
}
