import Foundation
import Signatures

/// `farecheck-bench pin`: what one PIN check costs, and so what an offline search of every PIN costs an attacker
/// who has a copy of the store and the PIN secret, or a copy of a store whose PINs were hashed without a secret.
struct PINBenchmark {
    let runs: Int

    func run() throws {
        let secret = try PINSecret(bytes: Array(try PINSecret.generateText().utf8))
        let scrypt = try PINHash(pin: "482913", secret: secret)
        let legacy = try PINHash.legacy(pin: "482913")
        let parameters = PINHash.Parameters.standard
        printLine(
            "PIN check, scrypt N=\(parameters.cost) r=\(parameters.blockSize) p=\(parameters.parallelism) "
                + "(\(parameters.memoryBytes >> 20) MiB) over HMAC-SHA256 with the PIN secret, \(runs) runs, one core:")
        let (scryptTime, scryptCPU) = median { _ = scrypt.check("000000", secret: secret) }
        printLine("  \(Self.format(scryptTime)) per check (\(Self.format(scryptCPU)) of this thread's CPU time)")
        printLine(
            "  offline search (CPU time): 10^6 PINs (6 digits) \(Self.duration(scryptCPU * 1_000_000)) per core, "
                + "10^4 (4 digits) \(Self.duration(scryptCPU * 10_000))")
        // Without a PIN secret configured the hash is scrypt over the PIN alone: a copy of the store is then all a
        // search needs, and this is what it costs.
        let bare = try PINHash(pin: "482913", secret: nil)
        let (bareTime, bareCPU) = median { _ = bare.check("000000", secret: nil) }
        printLine("PIN check, the same scrypt without a PIN secret (what a copied store alone gives), \(runs) runs:")
        printLine(
            "  \(Self.format(bareTime)) per check (\(Self.format(bareCPU)) CPU); 10^6 PINs "
                + "\(Self.duration(bareCPU * 1_000_000)) per core, 10^4 \(Self.duration(bareCPU * 10_000))")
        let (legacyTime, legacyCPU) = median { _ = legacy.check("000000", secret: nil) }
        printLine("PIN check, PBKDF2-HMAC-SHA256 100,000 iterations (before scrypt), \(runs) runs:")
        printLine(
            "  \(Self.format(legacyTime)) per check (\(Self.format(legacyCPU)) CPU); 10^6 PINs "
                + "\(Self.duration(legacyCPU * 1_000_000)) per core, 10^4 \(Self.duration(legacyCPU * 10_000))")
    }

    /// The median wall-clock time and the median CPU time of this thread of `runs` calls of `body`, in seconds.
    /// The CPU time is what a search costs an attacker per core; it holds on a machine others are loading too.
    private func median(_ body: () -> Void) -> (wall: Double, cpu: Double) {
        body()  // warm up: OpenSSL fetches the KDF and allocates on first use
        var times: [Double] = []
        var cpuTimes: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            let cpuStart = Self.threadCPUTime()
            body()
            cpuTimes.append(Self.threadCPUTime() - cpuStart)
            let elapsed = start.duration(to: .now).components
            times.append(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        }
        return (times.sorted()[times.count / 2], cpuTimes.sorted()[cpuTimes.count / 2])
    }

    private static func threadCPUTime() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func format(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

    static func duration(_ seconds: Double) -> String {
        if seconds < 120 { return String(format: "%.0f s", seconds) }
        if seconds < 7200 { return String(format: "%.0f min", seconds / 60) }
        if seconds < 172_800 { return String(format: "%.1f h", seconds / 3600) }
        return String(format: "%.1f days", seconds / 86400)
    }
}
