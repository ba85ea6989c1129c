import Foundation
import SeededRandom
import Testing

@testable import Signatures

/// An EC key checks ECDSA signatures from r and s themselves (`ECDSA_do_verify` on its `EC_KEY`), not through a
/// verify context and DER. Whatever the encoding and however a signature is altered, the answer must be OpenSSL's
/// through its verify context.
@Suite("ECDSA from r and s")
struct ECDSAIntegersTests {
    /// P-256 and P-384 keys as a key list or certificate gives them (SubjectPublicKeyInfo), with their hash.
    static let keys: [(PrivateKey, DigestAlgorithm)] = [
        (TestKeys.key(.ecP256), .sha256),
        ((try? PrivateKey(pem: RawPublicKeyTests.p384PrivateKey)) ?? TestKeys.key(.ecP256), .sha384),
    ]

    @Test("genuine and altered signatures, raw and DER, get OpenSSL's answer through its verify context")
    func sameAnswers() throws {
        var random = SeededRandomNumberGenerator(seed: 0xEC_D5A1)
        for (key, algorithm) in Self.keys {
            let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
            var valid = 0
            for round in 0..<60 {
                let message = (0..<(10 + 7 * round)).map { _ in UInt8.random(in: 0...255, using: &random) }
                for scheme in [SignatureScheme.ecdsa(algorithm, .der), .ecdsa(algorithm, .raw)] {
                    var signature = try key.signature(for: message, scheme: scheme)
                    if round % 3 != 0 {
                        let index = Int.random(in: 0..<signature.count, using: &random)
                        signature[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                    }
                    let expected = publicKey.isValidSignatureThroughOpenSSL(signature, for: message, scheme: scheme)
                    if expected { valid += 1 }
                    #expect(
                        publicKey.isValidSignature(signature, for: message, scheme: scheme) == expected,
                        "\(publicKey.kind), round \(round), \(scheme)")
                }
                // The message altered, the signature genuine: not valid either way.
                let signature = try key.signature(for: message, scheme: .ecdsa(algorithm, .raw))
                #expect(!publicKey.isValidSignature(signature, for: message + [1], scheme: .ecdsa(algorithm, .raw)))
            }
            // Every genuine signature (a third of the rounds, both encodings) was valid, and most altered ones not.
            #expect(valid >= 40 && valid < 70, "\(publicKey.kind): \(valid) valid")
        }
    }

    @Test("r or s of zero, of the group's order or above it, and of every byte 0xFF are not valid")
    func outOfRange() throws {
        // The order n of P-256 (SEC 2, 2.4.2).
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        let key = TestKeys.key(.ecP256)
        let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("an inspection".utf8)
        let genuine = try key.signature(for: message, scheme: .ecdsa(.sha256, .raw))
        let (r, s) = (Array(genuine.prefix(32)), Array(genuine.suffix(32)))
        #expect(publicKey.isValidSignature(r + s, for: message, scheme: .ecdsa(.sha256, .raw)))
        var orderPlusS = order
        orderPlusS[31] &+= 1  // n + 1 (no carry: n ends in 0x51)
        let zero = [UInt8](repeating: 0, count: 32)
        let ones = [UInt8](repeating: 0xFF, count: 32)
        for (name, signature) in [
            ("r = 0", zero + s), ("s = 0", r + zero), ("r = n", order + s), ("s = n", r + order),
            ("s = n + 1", r + orderPlusS), ("r = 2²⁵⁶ − 1", ones + s), ("s = 2²⁵⁶ − 1", r + ones),
        ] {
            #expect(!publicKey.isValidSignature(signature, for: message, scheme: .ecdsa(.sha256, .raw)), "\(name)")
            #expect(
                !publicKey.isValidSignatureThroughOpenSSL(signature, for: message, scheme: .ecdsa(.sha256, .raw)),
                "\(name)")
        }
        // s and n − s are both valid in ECDSA (no low-s rule), here as in OpenSSL.
        let negated = Self.subtract(s, from: order)
        #expect(
            publicKey.isValidSignature(r + negated, for: message, scheme: .ecdsa(.sha256, .raw))
                == publicKey.isValidSignatureThroughOpenSSL(r + negated, for: message, scheme: .ecdsa(.sha256, .raw)))
    }

    @Test("one key checks signatures on several threads at once")
    func concurrentChecks() async throws {
        let key = TestKeys.key(.ecP256)
        let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("a ticket".utf8)
        let signature = try key.signature(for: message, scheme: .ecdsa(.sha256, .raw))
        let agreed = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    (0..<50).filter { index in
                        let genuine = index % 2 == 0
                        let checked = publicKey.isValidSignature(
                            signature, for: genuine ? message : message + [UInt8(index)],
                            scheme: .ecdsa(.sha256, .raw))
                        return checked == genuine
                    }.count
                }
            }
            return await group.reduce(0, +)
        }
        #expect(agreed == 200)
    }

    /// `a − b` for big-endian magnitudes of one length, `a ≥ b`.
    static func subtract(_ b: [UInt8], from a: [UInt8]) -> [UInt8] {
        var result = a
        var borrow = 0
        for index in stride(from: a.count - 1, through: 0, by: -1) {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }
}
