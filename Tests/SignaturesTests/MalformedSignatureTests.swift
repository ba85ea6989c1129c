import Signatures
import Testing

@Suite("Malformed signatures")
struct MalformedSignatureTests {
    static let garbage: [[UInt8]] = [
        [],
        [0],
        [0x30],
        [0x30, 0x00],
        [0x30, 0x80, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01, 0x00, 0x00],
        [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01],
        [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0x01, 0x01],
        [0x30, 0x82, 0xFF, 0xFF, 0x02, 0x01, 0x01, 0x02],
        [UInt8](repeating: 0, count: 64),
        [UInt8](repeating: 0xFF, count: 64),
        [UInt8](repeating: 0x30, count: 50),
        (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 37) },
        [UInt8](repeating: 0xAB, count: 1 << 20),
    ]

    @Test("garbage, empty and oversized signatures are not valid", arguments: SchemeCase.all)
    func garbageIsInvalid(_ testCase: SchemeCase) {
        let publicKey = testCase.key.publicKey
        for signature in Self.garbage {
            #expect(
                !publicKey.isValidSignature(signature, for: sampleMessage, scheme: testCase.scheme),
                "accepted \(signature.count) bytes"
            )
        }
    }

    @Test("a signature with a byte added or removed is not valid", arguments: SchemeCase.all)
    func truncatedOrExtended(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        let publicKey = testCase.key.publicKey
        #expect(!publicKey.isValidSignature(Array(signature.dropLast()), for: sampleMessage, scheme: testCase.scheme))
        #expect(!publicKey.isValidSignature(Array(signature.dropFirst()), for: sampleMessage, scheme: testCase.scheme))
        #expect(!publicKey.isValidSignature(signature + [1], for: sampleMessage, scheme: testCase.scheme))
    }

    @Test("DER signatures followed by zero padding are valid, as in UIC 918.3's 50-byte field")
    func derWithZeroPadding() throws {
        let cases: [(PrivateKey, SignatureScheme)] = [
            (TestKeys.dsa1024, .dsa(.sha1, .der)),
            (TestKeys.dsa2048q256, .dsa(.sha256, .der)),
            (TestKeys.ecP256, .ecdsa(.sha256, .der)),
        ]
        for (key, scheme) in cases {
            let der = try key.signature(for: sampleMessage, scheme: scheme)
            for padding in [1, 4, 64 - der.count % 64] {
                let padded = der + [UInt8](repeating: 0, count: padding)
                #expect(key.publicKey.isValidSignature(padded, for: sampleMessage, scheme: scheme))
                // Padding must be zeros: anything else after the DER sequence is not a signature.
                var dirty = padded
                dirty[dirty.count - 1] = 0x01
                #expect(!key.publicKey.isValidSignature(dirty, for: sampleMessage, scheme: scheme))
            }
        }
    }

    @Test("UIC 918.3 v1 fields pad DSA-1024 signatures to 50 bytes")
    func uicVersion1Field() throws {
        let der = try TestKeys.dsa1024.signature(for: sampleMessage, scheme: .dsa(.sha1, .der))
        #expect(der.count <= 48)
        let field = der + [UInt8](repeating: 0, count: 50 - der.count)
        #expect(TestKeys.dsa1024.publicKey.isValidSignature(field, for: sampleMessage, scheme: .dsa(.sha1, .der)))
    }

    @Test("DER with superfluous leading zeros or a missing sign byte still says the same r and s")
    func lenientIntegerEncodings() throws {
        let key = TestKeys.ecP256
        let raw = try key.signature(for: sampleMessage, scheme: .es256)
        let (r, s) = (Array(raw[..<32]), Array(raw[32...]))
        // r and s written as 33-byte INTEGERs with a zero in front, whatever their top bit.
        func integer(_ bytes: [UInt8]) -> [UInt8] { [0x02, UInt8(bytes.count)] + bytes }
        let padded = integer([0] + r) + integer([0] + s)
        #expect(
            key.publicKey.isValidSignature(
                [0x30, UInt8(padded.count)] + padded, for: sampleMessage, scheme: .ecdsa(.sha256, .der)))
        // r and s written as bare 32-byte magnitudes, as some encoders do even with the top bit set.
        let bare = integer(r) + integer(s)
        #expect(
            key.publicKey.isValidSignature(
                [0x30, UInt8(bare.count)] + bare, for: sampleMessage, scheme: .ecdsa(.sha256, .der)))
    }

    @Test("raw ECDSA signatures of another length than 64 bytes are not valid for P-256")
    func rawECDSALength() throws {
        let key = TestKeys.ecP256
        let raw = try key.signature(for: sampleMessage, scheme: .es256)
        // The same integers, each zero-padded to 33 bytes: r ‖ s by value, but not COSE's fixed width.
        let wide = [0] + raw[..<32] + [0] + raw[32...]
        #expect(!key.publicKey.isValidSignature(Array(wide), for: sampleMessage, scheme: .es256))
    }

    @Test("an RSA-PSS signature must be exactly as long as the modulus, even when it starts with a zero byte")
    func rsaSignatureLength() throws {
        // PSS signatures are randomised; about one in 256 starts with a zero byte, which OpenSSL alone would
        // also accept with that byte cut off.
        var signature: [UInt8] = []
        for _ in 0..<4000 {
            signature = try TestKeys.rsa2048.signature(for: sampleMessage, scheme: .ps256)
            if signature.first == 0 { break }
        }
        try #require(signature.first == 0)
        let publicKey = TestKeys.rsa2048.publicKey
        #expect(publicKey.isValidSignature(signature, for: sampleMessage, scheme: .ps256))
        #expect(!publicKey.isValidSignature(Array(signature.dropFirst()), for: sampleMessage, scheme: .ps256))
        #expect(!publicKey.isValidSignature([0] + signature, for: sampleMessage, scheme: .ps256))
    }

    @Test("raw DSA signatures are split in half, so zero-padded halves are read as UIC v2 fields are")
    func rawDSAHalves() throws {
        let key = TestKeys.dsa1024
        let raw = try key.signature(for: sampleMessage, scheme: .dsa(.sha1, .raw))
        #expect(raw.count == 40)
        // A 64-byte field with 32-byte halves carrying a 160-bit q's integers.
        let zeros = [UInt8](repeating: 0, count: 12)
        let field = zeros + raw[..<20] + zeros + raw[20...]
        #expect(key.publicKey.isValidSignature(Array(field), for: sampleMessage, scheme: .dsa(.sha1, .raw)))
        #expect(!key.publicKey.isValidSignature(Array(field.dropLast()), for: sampleMessage, scheme: .dsa(.sha1, .raw)))
    }

    @Test("a failed check leaves no error on OpenSSL's queue for the next caller")
    func failuresLeaveNoErrors() throws {
        for signature in Self.garbage.prefix(8) {
            _ = TestKeys.ecP256.publicKey.isValidSignature(signature, for: sampleMessage, scheme: .ecdsa(.sha256, .der))
            _ = TestKeys.ed25519.publicKey.isValidSignature(signature, for: sampleMessage, scheme: .eddsa)
            _ = TestKeys.rsa2048.publicKey.isValidSignature(signature, for: sampleMessage, scheme: .ps256)
        }
        // An operation that fails right after must report only its own cause.
        do {
            _ = try PublicKey(spkiDER: [0x30, 0x03, 0x02, 0x01, 0x01])
            Issue.record("garbage read as a key")
        } catch {
            #expect(error.code == .invalidKey)
            let queue = try #require(error.cause as? OpenSSLError)
            #expect(!queue.entries.isEmpty)
            #expect(
                !queue.entries.contains { $0.contains("signature") || $0.contains("ECDSA") || $0.contains("EdDSA") })
        }
    }
}
