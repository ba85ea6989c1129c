import Foundation
import SeededRandom
import Testing

@testable import Signatures

@Suite("DSA with tables of the key's powers")
struct DSAFixedBaseTests {
    static let keys: [(PrivateKey, DigestAlgorithm)] = [
        (TestKeys.dsa1024, .sha1), (TestKeys.dsa1024, .sha256), (TestKeys.dsa2048q224, .sha224),
        (TestKeys.dsa2048q224, .sha256), (TestKeys.dsa2048q256, .sha256), (TestKeys.dsa2048q256, .sha1),
    ]

    @Test(
        "the tables give OpenSSL's answer on genuine signatures and on signatures altered in r, s or the digest",
        arguments: 0..<6)
    func sameAnswersAsOpenSSL(keyIndex: Int) throws {
        let (key, algorithm) = Self.keys[keyIndex]
        let tables = try #require(DSAFixedBase(pkey: key.publicKey.pkey))
        var random = SeededRandomNumberGenerator(seed: 0xD5A0 + UInt64(keyIndex))
        var valid = 0
        for round in 0..<40 {
            let message = (0..<(10 + round)).map { _ in UInt8.random(in: 0...255, using: &random) }
            var signature = try key.signature(for: message, scheme: .dsa(algorithm, .raw))
            var digest = Signatures.digest(algorithm, message)
            switch round % 4 {
            case 1:
                // One bit of r or s.
                let index = Int.random(in: 0..<signature.count, using: &random)
                signature[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            case 2:
                // One bit of the digest: past q's bytes it is cut off, and the signature stays valid.
                let index = Int.random(in: 0..<digest.count, using: &random)
                digest[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
            default:
                break
            }
            let expected = key.publicKey.isValidSignatureThroughOpenSSL(
                signature, forDigest: digest, scheme: .dsa(algorithm, .raw))
            if expected { valid += 1 }
            let half = signature.count / 2
            let answer = digest.withUnsafeBufferPointer {
                tables.isValid(r: signature[..<half], s: signature[half...], digest: $0)
            }
            #expect(answer == expected, "round \(round)")
        }
        #expect(valid >= 20)
    }

    @Test("r or s of zero, of q or above, or with q added, is not valid", arguments: 0..<3)
    func outOfRange(keyIndex: Int) throws {
        let (key, algorithm) = Self.keys[keyIndex * 2]
        let tables = try #require(DSAFixedBase(pkey: key.publicKey.pkey))
        let q = try #require(PublicKey.bigNumber("q", of: key.publicKey.pkey))
        let message = Array("a DSA-signed UIC ticket".utf8)
        let signature = try key.signature(for: message, scheme: .dsa(algorithm, .raw))
        let half = signature.count / 2
        let (r, s) = (Array(signature[..<half]), Array(signature[half...]))
        let digest = Signatures.digest(algorithm, message)
        func check(_ r: [UInt8], _ s: [UInt8]) -> Bool? {
            digest.withUnsafeBufferPointer { tables.isValid(r: r[...], s: s[...], digest: $0) }
        }
        #expect(check(r, s) == true)
        #expect(check([0], s) == false)
        #expect(check(r, [0]) == false)
        #expect(check(q, s) == false)
        #expect(check(r, q) == false)
        #expect(check(Self.add(r, q), s) == false)
        #expect(check(r, Self.add(s, q)) == false)
        #expect(check(r, [UInt8](repeating: 0xFF, count: 300)) == false)
    }

    @Test("a key checks with its tables after a few checks, with OpenSSL's answers, including raw and DER forms")
    func throughPublicKey() throws {
        let key = TestKeys.dsa2048q224
        let publicKey = try PublicKey(spkiDER: key.publicKey.spkiDER)
        let message = Array("U_HEAD and 0080BL".utf8)
        for scheme in [SignatureScheme.dsa(.sha224, .raw), .dsa(.sha224, .der)] {
            let signature = try key.signature(for: message, scheme: scheme)
            for round in 0..<(2 * DSAFixedBase.tableUse) {
                let checked = round % 2 == 0 ? message : message + [UInt8(round)]
                #expect(
                    publicKey.isValidSignature(signature, for: checked, scheme: scheme)
                        == publicKey.isValidSignatureThroughOpenSSL(signature, for: checked, scheme: scheme))
                #expect(publicKey.isValidSignature(signature, for: checked, scheme: scheme) == (round % 2 == 0))
            }
        }
        let made = publicKey.dsaTablesMade
        #expect(made)
    }

    /// a + b for big-endian magnitudes.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        let count = max(a.count, b.count) + 1
        let a = [UInt8](repeating: 0, count: count - a.count) + a
        let b = [UInt8](repeating: 0, count: count - b.count) + b
        var sum = [UInt8](repeating: 0, count: count)
        var carry = 0
        for index in stride(from: count - 1, through: 0, by: -1) {
            let value = Int(a[index]) + Int(b[index]) + carry
            sum[index] = UInt8(value & 0xFF)
            carry = value >> 8
        }
        return sum
    }
}
