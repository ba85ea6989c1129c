import Foundation
import Signatures
import TestSupport
import Testing
import ValidationAPI

/// The signed envelope every key bundle and revocation page travels in: what a validator opens, and what it refuses.
@Suite("Signed documents")
struct SignedDocumentTests {
    let anchorKey = try! PrivateKey.generate(.ecP256)
    var anchor: TrustAnchor { try! TrustAnchor(publicKey: anchorKey.publicKey) }

    let bundle = KeyBundle(
        sequence: 3, issuedAt: Date(timeIntervalSince1970: 1_795_000_000),
        keys: [
            BundleKey(
                format: "fc1", issuer: "demo-transit", keyID: "a6615e0f615889bb", algorithm: "ES256",
                spki: [0x30, 0x59, 0x30], notAfter: Date(timeIntervalSince1970: 1_900_000_000))
        ])

    @Test("a signed bundle opens with its anchor and gives back the same bundle")
    func roundTrip() throws {
        let document = try SignedDocument.sign(bundle, with: anchorKey)
        #expect(document.anchor == anchor.id)
        #expect(document.algorithm == "ES256")
        let received = try SignedDocument(jsonBytes: document.jsonBytes())
        #expect(try received.open(as: KeyBundle.self, trusting: [anchor]) == bundle)
    }

    @Test("the envelope carries base64 payload and signature, and hex and base64 inside as documented")
    func envelopeShape() throws {
        let document = try SignedDocument.sign(bundle, with: anchorKey)
        let envelope = try #require(
            try JSONSerialization.jsonObject(with: Data(document.jsonBytes())) as? [String: Any])
        #expect(Set(envelope.keys) == ["anchor", "algorithm", "payload", "signature"])
        let payloadText = try #require(envelope["payload"] as? String)
        let payload = try #require(Data(base64Encoded: payloadText))
        #expect(Array(payload) == document.payload)
        let signatureText = try #require(envelope["signature"] as? String)
        #expect(Data(base64Encoded: signatureText)?.count == 64)
        let inner = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        let key = try #require((inner["keys"] as? [[String: Any]])?.first)
        #expect(key["spki"] as? String == "MFkw")
        #expect(key["notAfter"] as? String == "2030-03-17T17:46:40Z")
        #expect(key["notBefore"] == nil)
        #expect(inner["issuedAt"] as? String == "2026-11-18T11:06:40Z")
    }

    @Test("one changed payload byte is a bad signature")
    func tamperedPayload() throws {
        var document = try SignedDocument.sign(bundle, with: anchorKey)
        let index = try #require(document.payload.firstIndex(of: UInt8(ascii: "3")))
        document.payload[index] = UInt8(ascii: "9")
        let error = try #require(throws: BundleError.self) {
            try document.open(as: KeyBundle.self, trusting: [anchor])
        }
        #expect(error.code == .badSignature)
    }

    @Test("a document of another anchor is refused even when its signature is good")
    func unknownAnchor() throws {
        let document = try SignedDocument.sign(bundle, with: anchorKey)
        let error = try #require(throws: BundleError.self) {
            try document.open(as: KeyBundle.self, trusting: [TrustAnchor.demo])
        }
        #expect(error.code == .unknownAnchor)
        #expect(error.message.contains(anchor.id))
        // Claiming the pinned anchor's id does not help: the signature does not verify with its key.
        var impostor = document
        impostor.anchor = TrustAnchor.demo.id
        let forged = try #require(throws: BundleError.self) {
            try impostor.open(as: KeyBundle.self, trusting: [TrustAnchor.demo])
        }
        #expect(forged.code == .badSignature)
    }

    @Test("a well-signed payload that is not the expected document is undecodable")
    func undecodablePayload() throws {
        let document = try SignedDocument.sign(payload: Array(#"{"hello":"world"}"#.utf8), with: anchorKey)
        let error = try #require(throws: BundleError.self) {
            try document.open(as: KeyBundle.self, trusting: [anchor])
        }
        #expect(error.code == .undecodablePayload)
    }

    @Test("another algorithm than ES256 is refused, and a broken envelope is malformed")
    func algorithmAndEnvelope() throws {
        var document = try SignedDocument.sign(bundle, with: anchorKey)
        document.algorithm = "none"
        #expect(throws: BundleError.self) { try document.open(as: KeyBundle.self, trusting: [anchor]) }
        let error = try #require(throws: BundleError.self) {
            try SignedDocument(
                jsonBytes: Array(#"{"anchor":"x","algorithm":"ES256","payload":"%%%","signature":""}"#.utf8))
        }
        #expect(error.code == .malformedDocument)
    }

    @Test("a bundle older than the one held is a rollback; the same or a newer one is not")
    func rollback() throws {
        let error = try #require(throws: BundleError.self) { try bundle.checkNotRollback(holding: 4) }
        #expect(error.code == .rollback)
        try bundle.checkNotRollback(holding: 3)
        try bundle.checkNotRollback(holding: 2)
        try bundle.checkNotRollback(holding: nil)
        #expect(throws: BundleError.self) { try KeyBundle.checkSequence(1, holding: 2) }
    }

    @Test("only ECDSA P-256 keys sign or anchor documents")
    func anchorsAreP256() throws {
        let edKey = try PrivateKey.generate(.ed25519)
        #expect(throws: BundleError.self) { try SignedDocument.sign(bundle, with: edKey) }
        #expect(throws: BundleError.self) { try TrustAnchor(publicKey: edKey.publicKey) }
    }

    @Test("the embedded demo anchor is Keys/demo-anchor.pub.pem, and Keys/demo-anchor.key is its private half")
    func demoAnchorMatchesFiles() throws {
        let file = try String(contentsOfFile: "\(repositoryRoot)/Keys/demo-anchor.pub.pem", encoding: .utf8)
        #expect(DemoAnchor.publicKeyPEM == file)
        #expect(TrustAnchor.demo.id == DemoAnchor.id)
        let privateText = try String(contentsOfFile: "\(repositoryRoot)/Keys/demo-anchor.key", encoding: .utf8)
        let privateKey = try PrivateKey(pem: privateText)
        #expect(privateKey.publicKey == TrustAnchor.demo.publicKey)
        #expect(privateText.contains("# anchor: \(DemoAnchor.id)"))
    }
}
