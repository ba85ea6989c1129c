import FareCore
import Foundation
import Testing
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
            best.verdicts = max(best.verdicts, Self.rate { (try? verifier.verify(payload))?.kind == .valid })
            // A new verifier each time: the level-2 key is built from its compressed point for every scan, as
            // for a passenger seen for the first time.
            best.cold = max(
                best.cold,
                Self.rate {
                    let fresh = TicketVerifier(trust: trust, clock: FixedClock(instant))
                    return (try? fresh.verify(payload))?.kind == .valid
                })
            best.signatures = max(
                best.signatures,
                Self.rate {
                    guard let report = try? verifier.checkDOSIPASSignatures(barcode) else { return false }
                    return report.level1.isValid && report.level2.isValid
                })
            best.decode = max(best.decode, Self.rate { (try? DOSIPASBarcode(decoding: payload)) != nil })
            best.openssl = max(best.openssl, try Self.opensslECDSAP256Verifies())
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

    /// Runs per CPU second of this thread (the divisor `openssl speed` uses).
    static func rate(_ body: () -> Bool) -> Double {
        var count = 0
        var allValid = true
        let cpuStart = threadCPUSeconds()
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            for _ in 0..<20 { allValid = body() && allValid }
            count += 20
        }
        precondition(allValid, "a run did not give the expected result")
        return Double(count) / (threadCPUSeconds() - cpuStart)
    }

    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `openssl speed -mr -seconds N ecdsap256`: the verify/s field of the `+F4:` line.
    static func opensslECDSAP256Verifies() throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "speed", "-mr", "-seconds", "\(Int(seconds.rounded(.up)))", "ecdsap256"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        // The child inherits this thread's signal mask, and the test runner blocks most signals: `openssl speed`
        // would never see the SIGALRM that ends its measurement.
        var unblock = sigset_t()
        var previous = sigset_t()
        sigfillset(&unblock)
        pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = try #require(
            String(decoding: output, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("+F4:") })
        return try #require(Double(line.split(separator: ":")[4]))
    }
}
