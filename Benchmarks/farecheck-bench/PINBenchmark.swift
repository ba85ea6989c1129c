import Foundation
import Signatures

/// `farecheck-bench pin`: what one PIN check costs, and so what an offline search of every PIN costs an attacker
/// who has a copy of the store and the PIN secret (without the secret there is nothing to search).
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
        let scryptTime = median { _ = scrypt.check("000000", secret: secret) }
        printLine("  \(Self.format(scryptTime)) per check")
        printLine(
            "  offline search: 10^6 PINs (6 digits) \(Self.duration(scryptTime * 1_000_000)) per core, "
                + "10^4 (4 digits) \(Self.duration(scryptTime * 10_000))")
        let legacyTime = median { _ = legacy.check("000000", secret: nil) }
        printLine("PIN check, PBKDF2-HMAC-SHA256 100,000 iterations (before scrypt), \(runs) runs:")
        printLine("  \(Self.format(legacyTime)) per check; 10^6 PINs \(Self.duration(legacyTime * 1_000_000)) per core")
    }

    /// The median time of `runs` calls of `body`, in seconds.
    private func median(_ body: () -> Void) -> Double {
        body()  // warm up: OpenSSL fetches the KDF and allocates on first use
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            body()
            let elapsed = start.duration(to: .now).components
            times.append(Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18)
        }
        return times.sorted()[times.count / 2]
    }

    static func format(_ seconds: Double) -> String { String(format: "%.1f ms", seconds * 1000) }

    static func duration(_ seconds: Double) -> String {
        if seconds < 120 { return String(format: "%.0f s", seconds) }
        if seconds < 7200 { return String(format: "%.0f min", seconds / 60) }
        if seconds < 172_800 { return String(format: "%.1f h", seconds / 3600) }
        return String(format: "%.1f days", seconds / 86400)
    }
}
