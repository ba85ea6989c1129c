import FareCore
import Foundation
import Signatures
import Testing
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
            trust: try SSBVerifierFixtures.trust(), clock: FixedClock(date("2022-07-01T10:00:00Z")))
        let key = try SSBVerifierFixtures.szKey()
        let signed = Array(payload.prefix(58))
        let signature = Array(payload[58...])
        var best = (verdicts: 0.0, signatures: 0.0, openssl: 0.0)
        for _ in 0..<Self.rounds {
            best.verdicts = max(best.verdicts, Self.rate { (try? verifier.verify(payload))?.kind == .valid })
            best.signatures = max(
                best.signatures, Self.rate { key.isValidSignature(signature, for: signed, scheme: .dsa(.sha224, .raw)) }
            )
            best.openssl = max(best.openssl, try Self.opensslSpeed())
        }
        print(
            String(
                format: "SSB (DSA 2048/224, SHA-224): payload → verdict %.0f/s, signature check alone %.0f/s, "
                    + "openssl speed dsa2048 %.0f verify/s; verdicts %.1f %% of openssl, signature check %.1f %%",
                best.verdicts, best.signatures, best.openssl, best.verdicts / best.openssl * 100,
                best.signatures / best.openssl * 100))
    }

    /// Calls per CPU second of this thread, the divisor `openssl speed` uses (user time).
    static func rate(_ body: () -> Bool) -> Double {
        var count = 0
        var allTrue = true
        let cpuStart = threadCPUSeconds()
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < end {
            for _ in 0..<20 { allTrue = body() && allTrue }
            count += 20
        }
        precondition(allTrue, "a check did not succeed")
        return Double(count) / (threadCPUSeconds() - cpuStart)
    }

    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Verifications per second from `openssl speed -mr dsa2048` (field 4 of its `+F3:` line).
    static func opensslSpeed() throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl", "speed", "-mr", "-seconds", "\(Int(seconds.rounded(.up)))", "dsa2048"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        // A child inherits the spawning thread's signal mask, and the test runner's threads block most signals:
        // `openssl speed` would then never see the SIGALRM that ends each measurement.
        var unblock = sigset_t()
        var previous = sigset_t()
        sigfillset(&unblock)
        pthread_sigmask(SIG_UNBLOCK, &unblock, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let line = try #require(
            String(decoding: output, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix("+F3:") })
        let fields = line.split(separator: ":")
        return try #require(fields.count > 4 ? Double(fields[4]) : nil)
    }
}
