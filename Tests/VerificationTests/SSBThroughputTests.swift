import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// What the SSB throughput figures measure (`farecheck-bench formats`, beside `openssl speed dsa2048`): SŽ's sample
/// from bytes to verdict, and its signature check alone. Speed is measured by the benchmark, never here.
@Suite("SSB verification throughput inputs")
struct SSBThroughputTests {
    @Test("the SŽ NRT sample is valid, its signature holds, and a changed byte of it is refused")
    func throughput() throws {
        let payload = try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt)
        let verifier = TicketVerifier(
            trust: try SSBVerifierFixtures.trust(), clock: FixedClock(utc("2022-07-01T10:00:00Z")))
        let key = try SSBVerifierFixtures.szKey()
        let signed = Array(payload.prefix(58))
        let signature = Array(payload[58...])
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(key.isValidSignature(signature, for: signed, scheme: .dsa(.sha224, .raw)))
        var changed = payload
        changed[20] ^= 0x01
        #expect(try verifier.verify(changed).kind != .valid)
        #expect(!key.isValidSignature(signature, for: Array(changed.prefix(58)), scheme: .dsa(.sha224, .raw)))
    }
}
