import Signatures
import Testing

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
}
