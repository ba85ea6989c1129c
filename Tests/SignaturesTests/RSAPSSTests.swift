import Foundation
import RSATestKeys
import SeededRandom
import Testing

@testable import Signatures

/// PS256 signatures are checked by farecheck's own EMSA-PSS verification on the raw RSA operation (`RSAPSS`),
/// not OpenSSL's. These tests hold it to OpenSSL's answer on the same key and bytes: genuine signatures, and
/// signatures crafted to be wrong in each way the encoding can be (made with the raw private operation).
@Suite("RSASSA-PSS: farecheck's check answers as OpenSSL's")
struct RSAPSSTests {
    /// EMSA-PSS-ENCODE (RFC 8017 §9.1.1) with SHA-256, written for the tests, with knobs to break it.
    struct Encoding {
        var saltLength = 32
        var trailer: UInt8 = 0xBC
        var setTopBit = false
        var separator: UInt8 = 0x01
        var paddingByte: UInt8 = 0
        var flipHash = false

        func block(for message: [UInt8], modulusBits: Int, using random: inout SeededRandomNumberGenerator) -> [UInt8] {
            let k = (modulusBits + 7) / 8
            let emBits = modulusBits - 1
            let emLength = (emBits + 7) / 8
            let h = 32
            let salt = (0..<saltLength).map { _ in UInt8.random(in: 0...255, using: &random) }
            var hash = digest(.sha256, [UInt8](repeating: 0, count: 8) + digest(.sha256, message) + salt)
            let dbLength = emLength - h - 1
            var db = [UInt8](repeating: 0, count: dbLength - saltLength - 1) + [separator] + salt
            if dbLength - saltLength - 1 > 0 { db[0] = paddingByte }
            var mask: [UInt8] = []
            var counter: UInt32 = 0
            while mask.count < dbLength {
                mask += digest(.sha256, hash + withUnsafeBytes(of: counter.bigEndian) { Array($0) })
                counter += 1
            }
            var masked = zip(db, mask).map { $0 ^ $1 }
            let zeroBits = 8 * emLength - emBits
            masked[0] &= UInt8(truncatingIfNeeded: 0xFF >> zeroBits)
            // The highest bit EM may not have, with the rest of that byte cleared so that EM stays below n.
            if setTopBit, zeroBits > 0 { masked[0] = 0x80 >> (zeroBits - 1) }
            if flipHash { hash[5] ^= 0x10 }
            return [UInt8](repeating: 0, count: k - emLength) + masked + hash + [trailer]
        }
    }

    static func answers(_ key: PublicKey, _ signature: [UInt8], _ message: [UInt8]) -> (ours: Bool, openssl: Bool) {
        (
            key.isValidSignature(signature, for: message, scheme: .ps256),
            key.isValidSignatureThroughOpenSSL(signature, for: message, scheme: .ps256)
        )
    }

    @Test(
        "genuine and crafted PS256 signatures get OpenSSL's answer",
        arguments: [(2048, UInt32(65_537)), (1545, 65_537), (3072, 65_537), (2048, 3)])
    func craftedSignatures(bits: Int, exponent: UInt32) throws {
        let signer = TestRSAKey(bits: bits, exponent: exponent)
        let raw = try RSARawPublicKey(modulus: signer.modulus, exponent: signer.exponent)
        let key = try raw.publicKey()
        // 1545 bits: a size of 8n + 1 (OpenSSL makes what is asked for there; it rounds 2049 down to 2048), where
        // the encoded message is a byte shorter than the modulus.
        let modulusBits = raw.bits
        #expect(modulusBits == bits)
        var random = SeededRandomNumberGenerator(seed: UInt64(bits) << 32 | UInt64(exponent))
        let variants: [(String, Encoding, Bool)] = [
            ("genuine", Encoding(), true),
            ("salt of 0 bytes", Encoding(saltLength: 0), false),
            ("salt of 20 bytes", Encoding(saltLength: 20), false),
            ("salt of 31 bytes", Encoding(saltLength: 31), false),
            ("salt of 33 bytes", Encoding(saltLength: 33), false),
            ("salt of 64 bytes", Encoding(saltLength: 64), false),
            ("trailer 0xBD", Encoding(trailer: 0xBD), false),
            ("top bit set", Encoding(setTopBit: true), false),
            ("separator 0x02", Encoding(separator: 0x02), false),
            ("padding byte not zero", Encoding(paddingByte: 0x01), false),
            ("hash altered", Encoding(flipHash: true), false),
        ]
        for round in 0..<8 {
            let message = (0..<(40 + round * 37)).map { _ in UInt8.random(in: 0...255, using: &random) }
            for (name, encoding, genuine) in variants where !(encoding.setTopBit && modulusBits % 8 == 1) {
                let signature = signer.privateOperation(
                    encoding.block(for: message, modulusBits: modulusBits, using: &random))
                let (ours, openssl) = Self.answers(key, signature, message)
                #expect(ours == openssl, "\(name), RSA-\(bits) e=\(exponent)")
                #expect(ours == genuine, "\(name), RSA-\(bits) e=\(exponent)")
                if genuine {
                    // The same signature over another message, and the signature with one bit flipped.
                    var other = message
                    other[0] ^= 1
                    #expect(Self.answers(key, signature, other) == (false, false))
                    var altered = signature
                    altered[Int.random(in: 0..<altered.count, using: &random)] ^= 0x04
                    let answer = Self.answers(key, altered, message)
                    #expect(answer.ours == answer.openssl && !answer.ours)
                }
            }
            // A random number below the modulus, and bytes of the wrong length.
            var noise = (0..<signer.byteCount).map { _ in UInt8.random(in: 0...255, using: &random) }
            noise[0] = 0
            #expect(Self.answers(key, noise, message) == (false, false))
            #expect(Self.answers(key, Array(noise.dropFirst()), message) == (false, false))
            // The modulus itself, and above it: not signatures.
            #expect(Self.answers(key, signer.modulus, message) == (false, false))
            #expect(Self.answers(key, [UInt8](repeating: 0xFF, count: signer.byteCount), message) == (false, false))
        }
    }

    @Test("signatures OpenSSL makes with PrivateKey verify through farecheck's check")
    func openSSLSignatures() throws {
        for bits in [2048, 3072] {
            let signer = try PrivateKey.generate(.rsa(bits: bits))
            for length in [0, 1, 150, 1000] {
                let message = [UInt8](repeating: UInt8(length & 0xFF), count: length)
                let signature = try signer.signature(for: message, scheme: .ps256)
                #expect(Self.answers(signer.publicKey, signature, message) == (true, true))
            }
        }
    }
}
