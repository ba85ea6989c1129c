import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What the on-demand throughput measurements of the signature and format tests share (`FARECHECK_BENCHMARK=1`): runs per
/// CPU second of the measuring thread, and `openssl speed`'s verify rate for the same algorithm, as a ratio.
public enum Throughput {
    /// Seconds each measurement runs (`FARECHECK_BENCHMARK_SECONDS`, else `fallback`).
    public static func seconds(default fallback: Double) -> Double {
        Double(ProcessInfo.processInfo.environment["FARECHECK_BENCHMARK_SECONDS"] ?? "") ?? fallback
    }

    /// Runs of `body` per CPU second of this thread (the divisor `openssl speed` uses); every run must succeed.
    public static func rate(seconds: Double, _ body: () -> Bool) -> Double {
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

    public static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// `openssl speed -mr -seconds N ALGORITHM`: verify/s, field `field` of the machine-readable line whose
    /// tag is `tag` (`+F2:` RSA, `+F3:` DSA, `+F4:` ECDSA: the fifth field; `+F6:` EdDSA: the sixth).
    public static func opensslVerifyRate(_ algorithm: String, tag: String, field: Int = 4, seconds: Double) throws
        -> Double
    {
        let output = try shell("openssl speed -mr -seconds \(Int(seconds.rounded(.up))) \(algorithm)")
        let line = try #require(
            String(decoding: output, as: UTF8.self).split(separator: "\n").first { $0.hasPrefix(tag) })
        let fields = line.split(separator: ":")
        return try #require(fields.count > field ? Double(fields[field]) : nil)
    }

    /// The standard output of a shell command.
    public static func shell(_ command: String) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
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
        return output
    }
}
