import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

@Suite("Base45 and zlib")
struct TransportTests {
    @Test(
        "RFC 9285 examples",
        arguments: [("AB", "BB8"), ("Hello!!", "%69 VD92EX0"), ("base-45", "UJCLQE7W581"), ("ietf!", "QED8WEX0")])
    func base45Examples(plain: String, encoded: String) throws {
        #expect(String(decoding: Base45.encode(Array(plain.utf8)), as: UTF8.self) == encoded)
        #expect(try Base45.decode(Array(encoded.utf8)) == Array(plain.utf8))
    }

    @Test("base45 errors name the offset")
    func base45Errors() {
        #expect(throws: FormatError.malformed("base45 text has an invalid character 0x61 at offset 1")) {
            try Base45.decode(Array("Ba8".utf8))
        }
        #expect(throws: FormatError.self) { try Base45.decode(Array("GGW".utf8)) }  // 65536+: too big for two bytes
        #expect(throws: FormatError.self) { try Base45.decode(Array("BB8A".utf8)) }  // dangling character
    }

    @Test("a refusal reads as its code, then the reason")
    func formatErrorLogLine() {
        let error = #expect(throws: FormatError.self) { try Base45.decode(Array("Ba8".utf8)) }
        #expect(error?.description == "malformed: base45 text has an invalid character 0x61 at offset 1")
    }

    @Test("every byte string round-trips through base45")
    func base45RoundTrip() throws {
        var generator = SeededRandomNumberGenerator(seed: 7)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(try Base45.decode(Base45.encode(bytes)) == bytes)
        }
    }

    @Test("zlib round trip, and streams that are truncated or followed by junk are malformed")
    func zlibRoundTrip() throws {
        let data = Array(String(repeating: "farecheck ", count: 500).utf8)
        let compressed = Zlib.deflate(data)
        #expect(Zlib.looksLikeZlib(compressed))
        #expect(try Zlib.inflate(compressed) == data)
        #expect(throws: FormatError.self) { try Zlib.inflate(Array(compressed.dropLast(6))) }
        #expect(throws: FormatError.self) { try Zlib.inflate(compressed + [0x00]) }
        var corrupted = compressed
        corrupted[5] ^= 0xFF
        #expect(throws: FormatError.self) { try Zlib.inflate(corrupted) }
    }

    @Test("a zlib bomb is stopped at the 64 KiB cap")
    func zlibBomb() {
        let bomb = Zlib.deflate([UInt8](repeating: 0, count: 10 * 1024 * 1024))
        #expect(bomb.count < 20_000)
        #expect(
            throws: FormatError.malformed(
                "zlib stream inflates past the 64 KiB limit (a compression bomb, not a ticket)")
        ) {
            try Zlib.inflate(bomb)
        }
        // Exactly at the cap is fine.
        #expect((try? Zlib.inflate(Zlib.deflate([UInt8](repeating: 1, count: 64 * 1024))))?.count == 64 * 1024)
    }
}
