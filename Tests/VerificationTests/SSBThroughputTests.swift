import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import Throughput
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// SSB payload → verdict throughput next to `openssl speed dsa2048`, on demand only:
/// `FARECHECK_BENCHMARK=1 swift test -c release --filter SSBThroughput`. It prints figures and asserts nothing
/// about time, which depends on the machine.
@Suite(
    "SSB verification throughput",
    .enabled(if: ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK"] != nil),
    .serialized
)
struct SSBThroughputTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK_SECONDS"] ?? "") ?? 1
    static let rounds = 3

    @Test("the SŽ NRT sample from bytes to verdict, next to the bare signature check and openssl speed dsa2048")
    func throughput() throws {
        let payload = try SSBVerifierFixtures.bytes(SSBVerifierFixtures.nrt)
        let verifier = TicketVerifier(
            trust: try SSBVerifierFixtures.trust(), clock: FixedClock(utc("2022-07-01T10:00:00Z")))
        let key = try SSBVerifierFixtures.szKey()
        let signed = Array(payload.prefix(58))
        let signature = Array(payload[58...])
        // `openssl speed dsa2048` uses parameters that verify as fast as a 160-bit q; SŽ's key has a 224-bit q,
        // slower by nature. A 2048/160 key (20 + 20 byte signature, SHA-1) gives the like-for-like figure.
        let generate =
            "openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:2048 -pkeyopt dsa_paramgen_q_bits:160 "
            + "-pkeyopt type:fips186_2 | openssl genpkey -paramfile /dev/stdin"
        let key160 = try PrivateKey(pem: String(decoding: try Throughput.shell(generate), as: UTF8.self))
        let signature160 = try key160.signature(for: signed, scheme: .dsa(.sha1, .raw))
        let payload160 = signed + signature160 + [UInt8](repeating: 0, count: 56 - signature160.count)
        var trust160 = TrustSnapshot()
        trust160.add(
            TrustedKey(
                family: .uic, issuer: "1179", keyID: "1", algorithm: nil, publicKey: key160.publicKey))
        let verifier160 = TicketVerifier(trust: trust160, clock: FixedClock(utc("2022-07-01T10:00:00Z")))
        var best = (verdicts: 0.0, signatures: 0.0, verdicts160: 0.0, openssl: 0.0)
        for _ in 0..<Self.rounds {
            best.verdicts = max(best.verdicts, Throughput.rate(seconds: Self.seconds) { (try? verifier.verify(payload))?.kind == .valid })
            best.verdicts160 = max(
                best.verdicts160, Throughput.rate(seconds: Self.seconds) { (try? verifier160.verify(payload160))?.kind == .valid })
            best.signatures = max(
                best.signatures, Throughput.rate(seconds: Self.seconds) { key.isValidSignature(signature, for: signed, scheme: .dsa(.sha224, .raw)) }
            )
            best.openssl = max(best.openssl, try Throughput.opensslVerifyRate("dsa2048", tag: "+F3:", seconds: Self.seconds))
        }
        print(
            String(
                format: "SSB (DSA 2048/224, SHA-224): payload → verdict %.0f/s, signature check alone %.0f/s; "
                    + "SSB with a DSA 2048/160 key: payload → verdict %.0f/s; openssl speed dsa2048 %.0f verify/s; "
                    + "verdicts %.1f %% (2048/224) and %.1f %% (2048/160) of openssl, signature check %.1f %%",
                best.verdicts, best.signatures, best.verdicts160, best.openssl, best.verdicts / best.openssl * 100,
                best.verdicts160 / best.openssl * 100, best.signatures / best.openssl * 100))
    }
}
