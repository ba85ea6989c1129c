import Foundation
import Testing

@testable import Signatures

/// ECDSA and DSA checks reuse verify contexts between calls (`VerifyContextPool`). A gate checks from several
/// threads with one issuer key: good signatures must stay good and bad ones bad, whatever order they come in.
@Suite("verify contexts kept between checks")
struct VerifyContextPoolTests {
    @Test(
        "one key checked from eight threads at once, good and bad signatures interleaved",
        arguments: [KeyKind.ecP256, .dsa(bits: 2048, qBits: 256)])
    func concurrentChecks(kind: KeyKind) async throws {
        let key = try PrivateKey.generate(kind)
        let scheme: SignatureScheme = kind == .ecP256 ? .es256 : .dsa(.sha256, .raw)
        let message = Array("a ticket".utf8)
        let good = try key.signature(for: message, scheme: scheme)
        var altered = good
        altered[altered.count / 2] ^= 0x01
        let bad = altered
        let publicKey = key.publicKey
        let answers = await withTaskGroup(of: [Bool].self) { group in
            for task in 0..<8 {
                group.addTask {
                    (0..<200).map { index in
                        publicKey.isValidSignature((index + task) % 3 == 0 ? bad : good, for: message, scheme: scheme)
                            == ((index + task) % 3 != 0)
                    }
                }
            }
            var all: [Bool] = []
            for await answers in group { all += answers }
            return all
        }
        #expect(answers.count == 1600)
        #expect(answers.allSatisfy { $0 })
    }
}
