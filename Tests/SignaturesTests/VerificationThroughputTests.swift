import Foundation
import Signatures
import Testing

/// What the verification throughput figures measure (`farecheck-bench formats`, beside `openssl speed`): each
/// algorithm's check of a signed 150-byte message, which must hold for the message signed and fail for any other.
/// Speed is measured by the benchmark, never here.
@Suite("Verification throughput inputs")
struct VerificationThroughputTests {
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var kind: KeyKind
        var scheme: SignatureScheme
        /// The `openssl speed` algorithm, and the `-mr` result line prefix with the field holding verify/s.
        var speedAlgorithm: String
        var speedLine: String
        var speedField: Int
        var testDescription: String { name }

        static let all = [
            Case(
                name: "ES256", kind: .ecP256, scheme: .es256, speedAlgorithm: "ecdsap256", speedLine: "+F4:",
                speedField: 4),
            Case(
                name: "EdDSA", kind: .ed25519, scheme: .eddsa, speedAlgorithm: "ed25519", speedLine: "+F6:",
                speedField: 5),
            Case(
                name: "PS256 (RSA-2048)", kind: .rsa(bits: 2048), scheme: .ps256, speedAlgorithm: "rsa2048",
                speedLine: "+F2:", speedField: 4),
            Case(
                name: "DSA-1024/160 SHA-1",
                kind: .dsa(bits: 1024, qBits: 160),
                scheme: .dsa(.sha1, .der),
                speedAlgorithm: "dsa1024",
                speedLine: "+F3:",
                speedField: 4
            ),
            // `openssl speed dsa2048` uses fixed test parameters with what performs as a 160-bit q (a 2048/160 key
            // verifies as fast); UIC's DSA-2048 keys have a 256-bit q and are about a third slower by nature.
            Case(
                name: "DSA-2048/256 SHA-256",
                kind: .dsa(bits: 2048, qBits: 256),
                scheme: .dsa(.sha256, .raw),
                speedAlgorithm: "dsa2048",
                speedLine: "+F3:",
                speedField: 4
            ),
        ]
    }

    @Test(
        "the benchmark's signature checks hold for the message signed, and fail for a changed byte or another key",
        arguments: Case.all)
    func throughput(_ testCase: Case) throws {
        // A COSE Sig_structure of a typical FC1 ticket is about 150 bytes.
        let message = [UInt8](repeating: 0x5A, count: 150)
        let key = TestKeys.key(testCase.kind)
        let signature = try key.signature(for: message, scheme: testCase.scheme)
        #expect(key.publicKey.isValidSignature(signature, for: message, scheme: testCase.scheme))
        var changed = message
        changed[75] ^= 0x01
        #expect(!key.publicKey.isValidSignature(signature, for: changed, scheme: testCase.scheme))
        #expect(
            !TestKeys.otherKey(testCase.kind).publicKey.isValidSignature(
                signature, for: message, scheme: testCase.scheme))
    }
}
