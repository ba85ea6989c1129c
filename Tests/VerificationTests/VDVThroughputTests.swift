import FareCore
import Foundation
import Signatures
import Testing
import Throughput
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// VDV-KA payload → verdict with a warm certificate cache, next to `openssl speed rsa1024`, on demand only:
/// `FARECHECK_BENCHMARK=1 swift test -c release --filter VDVThroughput`. It prints figures and asserts
/// nothing about time, which depends on the machine.
@Suite(
    "VDV-KA verification throughput",
    .enabled(if: ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK"] != nil),
    .serialized
)
struct VDVThroughputTests {
    /// Seconds per measurement; each figure is the best of `rounds` interleaved runs, because a virtual
    /// machine's neighbours only ever slow a run down.
    static let seconds = Double(ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK_SECONDS"] ?? "") ?? 1
    static let rounds = 3

    @Test("payload → verdict (warm cache, one RSA-1024 recovery each) against openssl speed rsa1024")
    func throughput() throws {
        let pki = VDVTestPKI.shared
        // `openssl speed` verifies with e = 65537; the test PKI's usual issuer has the sample's 31-bit
        // exponent, which costs about twice the multiplications, so this issuer key is a 65537 one.
        let issuer = TestRSAKey(bits: 1024)
        let body = VDVWriter.body(
            profile: 4, authority: pki.subCAReference,
            holder: VDVWriter.samHolder(organisation: VDVTestPKI.organisation, samID: VDVTestPKI.samID), role: 0x22,
            expiry: (2031, 12, 31), key: issuer)
        let payload = VDVWriter.barcode(
            entitlement: VDVWriter.entitlement(
                number: 42, organisation: VDVTestPKI.organisation, from: VDVTestPKI.from, until: VDVTestPKI.until,
                samID: VDVTestPKI.samID),
            issuerKey: issuer, certificate: VDVWriter.signedCertificate(body, signer: pki.subCA),
            caReference: pki.subCAReference)
        let verifier = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(VDVTestPKI.inspection), vdvCertificates: try pki.authorities())
        let vrr = try VDVFixtures.ticket()
        let vrrVerifier = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(try Date("2023-03-15T12:00:00Z", strategy: .iso8601)),
            vdvCertificates: try VDVFixtures.authorities())
        let cache = try #require(verifier.vdvCertificateCache)
        var best = (ours: 0.0, cold: 0.0, vrr: 0.0, openssl: 0.0)
        for _ in 0..<Self.rounds {
            best.ours = max(best.ours, Throughput.rate(seconds: Self.seconds) { (try? verifier.verify(payload).kind) == .valid })
            // Cold: the issuer certificate recovered every time (an RSA-1536 operation more).
            best.cold = max(
                best.cold,
                Throughput.rate(seconds: Self.seconds) {
                    cache.removeAll()
                    return (try? verifier.verify(payload).kind) == .valid
                })
            best.vrr = max(best.vrr, Throughput.rate(seconds: Self.seconds) { (try? vrrVerifier.verify(vrr).kind) == .valid })
            best.openssl = max(best.openssl, try Throughput.opensslVerifyRate("rsa1024", tag: "+F2:", seconds: Self.seconds))
        }
        print(
            String(
                format:
                    "VDV-KA payload → verdict: farecheck %.0f verdicts/s warm (e = 65537), openssl speed rsa1024 %.0f verify/s, %.1f %%; cold cache %.0f verdicts/s; VRR sample (e = 0x40000081) %.0f verdicts/s warm",
                best.ours, best.openssl, best.ours / best.openssl * 100, best.cold, best.vrr))
    }
}
