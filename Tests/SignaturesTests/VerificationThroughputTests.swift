import Foundation
import Signatures
import Testing
import Throughput

/// Verification throughput next to `openssl speed`, on demand only: `FARECHECK_BENCHMARK=1 swift test -c release
/// --filter VerificationThroughput`. It prints figures and asserts nothing about time, which depends on the machine.
@Suite(
    "Verification throughput",
    .enabled(if: ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK"] != nil),
    .serialized
)
struct VerificationThroughputTests {
    /// Seconds per measurement; each figure is the best of `rounds` interleaved runs, because a virtual
    /// machine's neighbours only ever slow a run down.
    static let seconds = Double(ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK_SECONDS"] ?? "") ?? 2
    static let rounds = 3

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

    @Test("isValidSignature against openssl speed", arguments: Case.all)
    func throughput(_ testCase: Case) throws {
        // A COSE Sig_structure of a typical FC1 ticket is about 150 bytes.
        let message = [UInt8](repeating: 0x5A, count: 150)
        let key = TestKeys.key(testCase.kind)
        let signature = try key.signature(for: message, scheme: testCase.scheme)
        let publicKey = key.publicKey
        var best = (ours: 0.0, openssl: 0.0)
        for _ in 0..<Self.rounds {
            best.ours = max(
                best.ours,
                Throughput.rate(seconds: Self.seconds) {
                    publicKey.isValidSignature(signature, for: message, scheme: testCase.scheme)
                })
            best.openssl = max(best.openssl, try Self.opensslSpeed(testCase))
        }
        print(
            String(
                format: "%@: farecheck %.0f verify/s, openssl speed %@ %.0f verify/s, %.1f %%",
                testCase.name, best.ours, testCase.speedAlgorithm, best.openssl, best.ours / best.openssl * 100
            )
        )
    }

    static func opensslSpeed(_ testCase: Case) throws -> Double {
        try Throughput.opensslVerifyRate(
            testCase.speedAlgorithm, tag: testCase.speedLine, field: testCase.speedField, seconds: seconds)
    }
}
