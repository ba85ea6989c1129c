import Foundation
import ScannerSimulation
import Scanners
import Testing

@Suite struct SerialLatencyBenchmarkTests {
    /// The benchmark runs the production path end to end and every scan arrives intact; its figures are
    /// `farecheck-bench scanner`'s, never asserted here. FARECHECK_SERIAL_BENCH_SCANS=10000 runs the full measurement.
    @Test func theBenchmarkDeliversEveryScanAndReportsPercentiles() async throws {
        let requested = ProcessInfo.processInfo.environment["FARECHECK_SERIAL_BENCH_SCANS"].flatMap { Int($0) }
        let scans = requested ?? 100
        let result = try await SerialLatencyBenchmark.run(scans: scans, warmUp: requested == nil ? 10 : 200)
        #expect(result.scans == scans)
        #expect(result.packetsPerScan == 2)
        #expect(result.median <= result.p99)
    }
}
