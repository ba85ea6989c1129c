import Signatures
import Testing

@Suite("Signing and verifying")
struct SignVerifyTests {
    @Test("a signature verifies with the signer's public key", arguments: SchemeCase.all)
    func roundTrip(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        #expect(testCase.key.publicKey.isValidSignature(signature, for: sampleMessage, scheme: testCase.scheme))
    }

    @Test("the empty message can be signed and verified", arguments: SchemeCase.all)
    func emptyMessage(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: [], scheme: testCase.scheme)
        #expect(testCase.key.publicKey.isValidSignature(signature, for: [], scheme: testCase.scheme))
        #expect(!testCase.key.publicKey.isValidSignature(signature, for: [0], scheme: testCase.scheme))
    }

    @Test("a flipped bit anywhere in the message fails", arguments: SchemeCase.all)
    func flippedMessageBit(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        for bit in [0, 7, 100, sampleMessage.count * 8 - 1] {
            let tampered = sampleMessage.flippingBit(bit)
            #expect(!testCase.key.publicKey.isValidSignature(signature, for: tampered, scheme: testCase.scheme))
        }
    }

    @Test("a flipped bit anywhere in the signature fails", arguments: SchemeCase.all)
    func flippedSignatureBit(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        // Every byte, at a bit that changes its value: DER headers, integer bodies, raw halves.
        for byte in signature.indices {
            let tampered = signature.flippingBit(byte * 8 + byte % 8)
            #expect(
                !testCase.key.publicKey.isValidSignature(tampered, for: sampleMessage, scheme: testCase.scheme),
                "flipped bit in byte \(byte)"
            )
        }
    }

    @Test("another key of the same kind does not verify", arguments: SchemeCase.all)
    func wrongKey(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        let other = TestKeys.otherKey(testCase.kind).publicKey
        #expect(!other.isValidSignature(signature, for: sampleMessage, scheme: testCase.scheme))
    }

    @Test("verifying under another scheme than the signature's fails", arguments: SchemeCase.all)
    func wrongScheme(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        let allSchemes: [SignatureScheme] =
            [.eddsa]
            + DigestAlgorithm.allCases.flatMap { digest in
                [.ecdsa(digest, .raw), .ecdsa(digest, .der), .rsaPSS(digest), .dsa(digest, .raw), .dsa(digest, .der)]
            }
        for other in allSchemes where other != testCase.scheme {
            // A DSA raw signature is also read as raw by the other hash only; nothing but the exact scheme passes.
            #expect(
                !testCase.key.publicKey.isValidSignature(signature, for: sampleMessage, scheme: other),
                "accepted as \(other)"
            )
        }
    }

    @Test("schemes that do not fit the key kind are refused for signing")
    func signingWithWrongScheme() {
        #expect(throws: SignatureError.self) {
            try TestKeys.ed25519.signature(for: sampleMessage, scheme: .es256)
        }
        do {
            _ = try TestKeys.ecP256.signature(for: sampleMessage, scheme: .ps256)
            Issue.record("an EC key made an RSA-PSS signature")
        } catch {
            #expect(error.code == .schemeDoesNotFitKey)
            #expect(error.message.contains("ECDSA P-256"))
        }
    }

    @Test("raw ECDSA signatures are 64 bytes, also when r or s is short")
    func rawECDSAWidth() throws {
        // About 1 in 128 signatures has an r or s with a leading zero byte; 400 signatures meet a few.
        for index in 0..<400 {
            let message = Array("ticket \(index)".utf8)
            let raw = try TestKeys.ecP256.signature(for: message, scheme: .es256)
            #expect(raw.count == 64)
            #expect(TestKeys.ecP256.publicKey.isValidSignature(raw, for: message, scheme: .es256))
        }
    }

    @Test("raw DSA signatures are twice the size of q")
    func rawDSAWidth() throws {
        #expect(try TestKeys.dsa1024.signature(for: sampleMessage, scheme: .dsa(.sha1, .raw)).count == 40)
        #expect(try TestKeys.dsa2048q224.signature(for: sampleMessage, scheme: .dsa(.sha224, .raw)).count == 56)
        #expect(try TestKeys.dsa2048q256.signature(for: sampleMessage, scheme: .dsa(.sha256, .raw)).count == 64)
    }

    @Test("a precomputed digest verifies like the message", arguments: SchemeCase.all.filter { $0.scheme != .eddsa })
    func precomputedDigest(_ testCase: SchemeCase) throws {
        let signature = try testCase.key.signature(for: sampleMessage, scheme: testCase.scheme)
        let algorithm = try #require(testCase.scheme.digestAlgorithm)
        let messageDigest = digest(algorithm, sampleMessage)
        let publicKey = testCase.key.publicKey
        #expect(publicKey.isValidSignature(signature, forDigest: messageDigest, scheme: testCase.scheme))
        #expect(
            !publicKey.isValidSignature(signature, forDigest: messageDigest.flippingBit(3), scheme: testCase.scheme))
        #expect(
            !publicKey.isValidSignature(signature, forDigest: Array(messageDigest.dropLast()), scheme: testCase.scheme))
    }

    @Test("EdDSA signs messages, not digests")
    func eddsaRefusesDigests() throws {
        let signature = try TestKeys.ed25519.signature(for: sampleMessage, scheme: .eddsa)
        let publicKey = TestKeys.ed25519.publicKey
        #expect(!publicKey.isValidSignature(signature, forDigest: digest(.sha512, sampleMessage), scheme: .eddsa))
    }

    @Test("one key verifies from many tasks at once")
    func concurrentVerification() async throws {
        let ecdsa = try TestKeys.ecP256.signature(for: sampleMessage, scheme: .es256)
        let eddsa = try TestKeys.ed25519.signature(for: sampleMessage, scheme: .eddsa)
        let pss = try TestKeys.rsa2048.signature(for: sampleMessage, scheme: .ps256)
        let (ecKey, edKey, rsaKey) = (TestKeys.ecP256.publicKey, TestKeys.ed25519.publicKey, TestKeys.rsa2048.publicKey)
        let results = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let good =
                        ecKey.isValidSignature(ecdsa, for: sampleMessage, scheme: .es256)
                        && edKey.isValidSignature(eddsa, for: sampleMessage, scheme: .eddsa)
                        && rsaKey.isValidSignature(pss, for: sampleMessage, scheme: .ps256)
                    let bad = ecKey.isValidSignature(ecdsa, for: sampleMessage.flippingBit(index), scheme: .es256)
                    return good && !bad
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == 64)
        #expect(results.allSatisfy { $0 })
    }
}
