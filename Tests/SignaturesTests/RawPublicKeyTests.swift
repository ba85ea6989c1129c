import Foundation
import SeededRandom
import Testing

@testable import Signatures

@Suite("Public keys from bare points")
struct RawPublicKeyTests {
    @Test("a P-256 key given as an uncompressed or compressed point checks the same signatures as its SPKI")
    func points() throws {
        let key = TestKeys.key(.ecP256)
        let message = Array("level 2 signed data".utf8)
        let signature = try key.signature(for: message, scheme: .ecdsa(.sha256, .der))
        // A P-256 SubjectPublicKeyInfo ends with the 65-byte uncompressed point.
        let uncompressed = Array(key.publicKey.spkiDER.suffix(65))
        #expect(uncompressed.first == 0x04)
        let compressed = [0x02 | (uncompressed[64] & 1)] + uncompressed[1...32]
        for point in [uncompressed, compressed] {
            let fromPoint = try PublicKey(ecPoint: point, curve: .p256)
            #expect(fromPoint.kind == .ecP256)
            #expect(fromPoint.isValidSignature(signature, for: message, scheme: .ecdsa(.sha256, .der)))
            #expect(!fromPoint.isValidSignature(signature, for: message + [0], scheme: .ecdsa(.sha256, .der)))
            // The SPKI it reports is read back as the same key.
            #expect(
                try PublicKey(spkiDER: fromPoint.spkiDER).isValidSignature(
                    signature, for: message, scheme: .ecdsa(.sha256, .der)))
        }
        #expect(EllipticCurve(pointByteCount: 33) == .p256)
        #expect(EllipticCurve(pointByteCount: 97) == .p384)
        #expect(EllipticCurve(pointByteCount: 40) == nil)
    }

    @Test("a point off the curve, of the wrong length or form is refused as an invalid key")
    func refusals() throws {
        var offCurve = Array(TestKeys.key(.ecP256).publicKey.spkiDER.suffix(65))
        offCurve[64] ^= 0x01
        for bytes in [offCurve, [0x05] + offCurve.dropFirst(), Array(offCurve.prefix(40)), []] {
            #expect(throws: SignatureError.self) { try PublicKey(ecPoint: bytes, curve: .p256) }
        }
        #expect(throws: SignatureError.self) { try PublicKey(ed25519: [1, 2, 3]) }
    }

    @Test("a key from a point gives OpenSSL's answer through a verify context on genuine and altered signatures")
    func sameAnswersAsTheContextPath() throws {
        let key = TestKeys.key(.ecP256)
        let uncompressed = Array(key.publicKey.spkiDER.suffix(65))
        let compressed = [0x02 | (uncompressed[64] & 1)] + uncompressed[1...32]
        var random = SeededRandomNumberGenerator(seed: 0x1E7E_1002)
        var valid = 0
        for round in 0..<60 {
            let message = (0..<(20 + round)).map { _ in UInt8.random(in: 0...255, using: &random) }
            for scheme in [SignatureScheme.ecdsa(.sha256, .der), .ecdsa(.sha256, .raw)] {
                var signature = try key.signature(for: message, scheme: scheme)
                if round % 3 != 0 {
                    // Altered where it hurts: a byte of the DER framing or of r or s, or one bit.
                    let index = Int.random(in: 0..<signature.count, using: &random)
                    signature[index] ^= UInt8(1) << UInt8.random(in: 0...7, using: &random)
                }
                let expected = key.publicKey.isValidSignatureThroughOpenSSL(signature, for: message, scheme: scheme)
                if expected { valid += 1 }
                for point in [uncompressed, compressed] {
                    let fromPoint = try PublicKey(ecPoint: point, curve: .p256)
                    #expect(fromPoint.supports(scheme))
                    #expect(
                        fromPoint.isValidSignature(signature, for: message, scheme: scheme) == expected,
                        "round \(round), \(scheme), \(point.count)-byte point")
                }
            }
        }
        // Every genuine signature (a third of the rounds) was valid, and most altered ones were not.
        #expect(valid >= 40 && valid < 60)
    }

    @Test("a P-384 point is a P-384 key, named as its SubjectPublicKeyInfo's key is, and checks SHA-384 signatures")
    func p384() throws {
        let key = try PrivateKey(pem: Self.p384PrivateKey)
        let message = Array("level 2 signed data".utf8)
        let signature = try key.signature(for: message, scheme: .ecdsa(.sha384, .der))
        let uncompressed = Array(key.publicKey.spkiDER.suffix(97))
        let fromPoint = try PublicKey(ecPoint: uncompressed, curve: .p384)
        #expect(fromPoint.kind == key.publicKey.kind)
        #expect(fromPoint.isValidSignature(signature, for: message, scheme: .ecdsa(.sha384, .der)))
        #expect(!fromPoint.isValidSignature(signature, for: message, scheme: .ecdsa(.sha256, .der)))
        #expect(try PublicKey(spkiDER: fromPoint.spkiDER) == key.publicKey)
        // The same 97 bytes are not a P-256 point, and a P-256 point is not one of P-384.
        #expect(throws: SignatureError.self) { try PublicKey(ecPoint: uncompressed, curve: .p256) }
        let p256Point = Array(TestKeys.key(.ecP256).publicKey.spkiDER.suffix(65))
        #expect(throws: SignatureError.self) { try PublicKey(ecPoint: p256Point, curve: .p384) }
    }

    @Test("one key from a point checks signatures on several threads at once")
    func concurrentChecks() async throws {
        let key = TestKeys.key(.ecP256)
        let message = Array("level 2 signed data".utf8)
        let signature = try key.signature(for: message, scheme: .ecdsa(.sha256, .der))
        let fromPoint = try PublicKey(ecPoint: Array(key.publicKey.spkiDER.suffix(65)), curve: .p256)
        let results = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var (valid, invalid) = (0, 0)
                    for index in 0..<50 {
                        let genuine = index % 2 == 0
                        let checked = fromPoint.isValidSignature(
                            signature, for: genuine ? message : message + [UInt8(index)], scheme: .ecdsa(.sha256, .der))
                        if checked == genuine { valid += 1 } else { invalid += 1 }
                    }
                    return (valid, invalid)
                }
            }
            var total = (0, 0)
            for await (valid, invalid) in group { total = (total.0 + valid, total.1 + invalid) }
            return total
        }
        #expect(results.0 == 200 && results.1 == 0)
    }

    /// A P-384 key made for these tests (`openssl ecparam -genkey -name secp384r1`).
    static let p384PrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MIG2AgEAMBAGByqGSM49AgEGBSuBBAAiBIGeMIGbAgEBBDDan6bWKvsl/QuRJiEw
        blnb3/Ka0yIMpK+f7oSKiVgUr3fyfo8TFFsEIG+hl/vFDiWhZANiAASRAOCX4jA+
        mANq7eDrY4AdYptAkJTvr94qTVjRd/7kErnWH+0SrYxjIn4QJb2Wf31e0aQ1RUQc
        qsYBZt0Zs27+zyb/vxVM0qialuRYKLHjrNpUZJBhaD+xi/hPqSEhaA8=
        -----END PRIVATE KEY-----
        """
}
