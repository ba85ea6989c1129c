import FareCore
import Foundation
import Testing
import Throughput
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// DOSIPAS verification speed next to `openssl speed`, on demand only: `FARECHECK_BENCHMARK=1 swift test -c release
/// --filter DOSIPASThroughput`. It prints figures and asserts nothing about time, which depends on the machine.
@Suite(
    "DOSIPAS throughput",
    .enabled(if: ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK"] != nil),
    .serialized
)
struct DOSIPASThroughputTests {
    static let seconds = Double(ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK_SECONDS"] ?? "") ?? 2
    static let rounds = 3

    @Test("cts-ticket payload → verdict (two ECDSA P-256 checks) against openssl speed ecdsap256 verify ÷ 2")
    func payloadToVerdict() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        let instant = ISO8601DateFormatter().date(from: "2026-02-12T18:47:00Z")!
        let trust = try DOSIPASFixtures.trust()
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(instant))
        let barcode = try DOSIPASBarcode(decoding: payload)
        var best = (verdicts: 0.0, cold: 0.0, signatures: 0.0, decode: 0.0, openssl: 0.0)
        for _ in 0..<Self.rounds {
            best.verdicts = max(best.verdicts, Throughput.rate(seconds: Self.seconds) { (try? verifier.verify(payload))?.kind == .valid })
            // A new verifier each time: the level-2 key is built from its compressed point for every scan, as
            // for a passenger seen for the first time.
            best.cold = max(
                best.cold,
                Throughput.rate(seconds: Self.seconds) {
                    let fresh = TicketVerifier(trust: trust, clock: FixedClock(instant))
                    return (try? fresh.verify(payload))?.kind == .valid
                })
            best.signatures = max(
                best.signatures,
                Throughput.rate(seconds: Self.seconds) {
                    guard let report = try? verifier.checkDOSIPASSignatures(barcode) else { return false }
                    return report.level1.isValid && report.level2.isValid
                })
            best.decode = max(best.decode, Throughput.rate(seconds: Self.seconds) { (try? DOSIPASBarcode(decoding: payload)) != nil })
            best.openssl = max(best.openssl, try Throughput.opensslVerifyRate("ecdsap256", tag: "+F4:", seconds: Self.seconds))
        }
        let goal = best.openssl / 2
        print(
            String(
                format:
                    "DOSIPAS cts-ticket: %.0f verdicts/s (%.1f µs) with its level-2 key known, %.0f/s (%.1f µs) with "
                    + "the key built from its point; both signatures alone %.0f/s, header decode %.0f/s; openssl "
                    + "speed ecdsap256 %.0f verify/s → %.0f pairs/s; verdicts at %.1f %% (known key) and %.1f %% "
                    + "(key built) of the pairs",
                best.verdicts, 1e6 / best.verdicts, best.cold, 1e6 / best.cold, best.signatures, best.decode,
                best.openssl, goal, best.verdicts / goal * 100, best.cold / goal * 100
            ))
    }
}
