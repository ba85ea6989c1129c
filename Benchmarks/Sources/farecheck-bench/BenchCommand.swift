import ArgumentParser
import FareCore
import Foundation
import Issuing
import ScannerSimulation
import Scanners
import Symbols
import TicketFormats
import ValidationAPI
import Verification

/// `farecheck bench`: the speed figures docs/benchmarks.md reports, measured on this machine.
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Measure verify throughput and scan time on this machine, beside OpenSSL, ZXingReader and zbarimg.",
        discussion: """
            verify: a warm verifier on one core, payload bytes to verdict (FC1 text form: base45, \
            inflate, COSE, signature, claims, policies), beside `openssl speed` for the bare signature \
            verification of the same algorithm. scan: a 1280×720 photo-like image holding one ticket, \
            `farecheck scan` beside `ZXingReader` and `zbarimg` on the same file. sync: a revocation delta \
            of --revocations entries applied page by page (time, peak memory, verify latency meanwhile), \
            and lookups in a store of --store-entries revoked tickets. pin: one PIN check (scrypt, and the \
            PBKDF2 of earlier versions) and what an offline search of every 6-digit PIN costs. blocklist: a VDV-KA \
            and a DTVG blocklist of --blocklist-entries entries each, imported by `farecheck revoke` (time, peak \
            memory), looked up as the daemon does, and imported by `farecheck-server revoke`. formats: bare \
            signature checks, DOSIPAS, ERA SSB and VDV-KA samples from bytes to verdict (--fixtures), beside \
            `openssl speed`, heap allocations per verdict, and the trusted-time floor's cost per verdict (--json, \
            --max-allocations, --allocations-only). startup: `farecheck scan` and `farecheck verify --image` as \
            whole processes, beside `farecheck --version`, ZXingReader and zbarimg.
            """
    )

    enum Part: String, ExpressibleByArgument, CaseIterable {
        case verify, uic, formats, scan, startup, scanner, daemon, sync, pin, blocklist, claims, all
    }

    @Argument(help: "verify, uic, formats, scan, startup, scanner, daemon, sync, pin, blocklist, claims or all.")
    var part: Part = .all
    @Option(help: "Simulated scans for the scanner latency figure.") var scans: Int = 10_000
    @Option(name: .customLong("uic-key-list"), help: "The UIC key list to time the import of.")
    var uicKeyList: String = "Tests/Fixtures/uic/uic-publickeys-snapshot.xml"
    @Option(help: "The sample tickets and key lists for the formats figures.")
    var fixtures: String = "Tests/Fixtures"
    @Option(help: "Seconds to run each verify measurement.") var seconds: Double = 3
    @Option(help: "Runs of each scan measurement.") var runs: Int = 10
    @Flag(help: "Skip the comparison with external tools.") var noCompare = false
    @Option(help: "Filler keys in the store for the daemon figures.") var keys: Int = 100_000
    @Option(
        help: """
            Revoked tickets in the store for the daemon figures (default 100,000), or in the delta for the sync \
            figures (default 1,000,000).
            """)
    var revocations: Int?
    @Option(help: "Revoked tickets in the store for the sync lookup figures.") var storeEntries: Int = 10_000_000
    @Option(help: "Entries in each blocklist (VDV-KA, DTVG) for the blocklist figures.")
    var blocklistEntries: Int = 1_000_000
    @Option(
        name: .customLong("during-sync"),
        help: "With daemon: revocations a sync apply writes into the daemon's store while the scans run (0: none).")
    var duringSync: Int = 0
    @Option(
        name: .customLong("upload-backlog"),
        help: """
            With daemon and --during-sync: earlier inspections in the journal that the daemon uploads to a \
            farecheck-server on loopback while the sync applies (0: no upload).
            """)
    var uploadBacklog: Int = 50_000
    @Option(
        name: .customLong("daemon-pulls"),
        help: """
            With daemon: revoked tickets a farecheck-server on loopback holds, which the daemon's own first sync round \
            pulls and applies (on its sync thread, giving way to its scans) while the scans run (0: none).
            """)
    var daemonPulls: Int = 0
    @Option(help: "Entries per revocation page for the sync figures (as farecheck sync asks the server).")
    var pageLimit: Int = RevocationDelta.maximumPageLimit
    @Option(help: "The trust anchor's private key that signs the sync figures' pages.")
    var anchorKey: String = "Keys/demo-anchor.key"
    // The applying child of the sync figures: bench sync runs this program again with these.
    @Option(help: .hidden) var applyPages: String?
    @Option(help: .hidden) var applyStore: String?
    @Option(help: .hidden) var applyReport: String?
    @Flag(help: .hidden) var applyWithoutVerifier = false
    @Flag(
        help: """
            With sync, or daemon and --during-sync: apply the revocation pages without pacing their writes to disk \
            (as before issue 27's BulkWritePacing), for comparison.
            """)
    var unpaced = false
    @Option(
        help: ArgumentHelp(
            """
            With daemon and --during-sync: the nice value of the farecheck-server that takes the upload. It stands in \
            for the agency's server, which runs on another machine, not on the gate's cores (default 0: it competes \
            with the daemon as an equal).
            """, valueName: "n"))
    var serverNice: Int32 = 0
    @Option(
        help: ArgumentHelp(
            """
            With daemon and --during-sync: the directory in which the farecheck-server that takes the upload keeps its \
            database. By default it is beside the daemon's, on the same disk; a directory on another disk or on tmpfs \
            (/dev/shm) stands in for the agency's server on another machine, whose writes do not queue on the gate's \
            disk.
            """, valueName: "directory"))
    var serverDirectory: String?
    @Option(
        help: ArgumentHelp(
            "Write the verify and formats figures (rates, ratios, allocations per verdict) as JSON to FILE (- for "
                + "standard output).", valueName: "file"))
    var json: String?
    @Option(
        name: .customLong("max-allocations"),
        help: ArgumentHelp(
            """
            A JSON file written by --json (Benchmarks/allocation-baseline.json): exit with status 1 when a verify or \
            formats figure allocates more per verdict than its baseline, plus two allocations and 10 %.
            """, valueName: "file"))
    var maxAllocations: String?
    @Flag(help: "With verify and formats: count allocations per verdict only, without timing (seconds, not minutes).")
    var allocationsOnly = false
    @Option(
        help: ArgumentHelp(
            "With formats and uic: measure only the figures whose name contains TEXT (to profile one, e.g. under perf).",
            valueName: "text"))
    var only: String?

    func run() async throws {
        if let applyPages, let applyStore, let applyReport {
            return try await SyncBenchmark.applyPages(
                pagesDirectory: applyPages, storePath: applyStore, reportPath: applyReport,
                verifying: !applyWithoutVerifier, paced: !unpaced)
        }
        printLine("machine: \(MachineDescription.current)")
        let figures = FigureLog()
        if part == .verify || part == .all || part == .formats {
            try AllocationCount.selfCheck()
        }
        if part == .verify || part == .all { try benchVerify(figures) }
        if part == .uic || part == .all {
            try UICBenchmark(seconds: seconds, compare: !noCompare, keyList: uicKeyList, only: only).run()
        }
        if part == .formats || part == .all {
            try FormatsBenchmark(
                seconds: seconds, compare: !noCompare, fixtures: fixtures, allocationsOnly: allocationsOnly,
                only: only, figures: figures
            ).run()
        }
        if let json { try figures.write(to: json) }
        if let maxAllocations, !(try figures.meetsAllocationBaseline(maxAllocations)) { throw ExitCode(1) }
        if part == .scan || part == .all { try ScanBenchmark(runs: runs, compare: !noCompare).run() }
        if part == .startup || part == .all { try StartupBenchmark(runs: max(runs, 20), compare: !noCompare).run() }
        if part == .pin || part == .all { try PINBenchmark(runs: max(runs, 20)).run() }
        if part == .scanner || part == .all {
            let result = try await SerialLatencyBenchmark.run(scans: scans)
            printLine(
                "scanner latency, simulated Zebra SSI scanner on a pseudo-terminal, last byte on the wire → event in the consumer:"
            )
            printLine("  \(result)")
        }
        if part == .daemon || part == .all {
            try await DaemonBenchmark(
                scans: scans, keys: keys, revocations: revocations ?? 100_000, duringSync: duringSync,
                uploadBacklog: duringSync > 0 ? uploadBacklog : 0, daemonPulls: daemonPulls, anchorKeyPath: anchorKey,
                pacedApply: !unpaced,
                serverNice: serverNice, serverDirectory: serverDirectory
            ).run()
        }
        if part == .sync || part == .all {
            guard (1...RevocationDelta.maximumPageLimit).contains(pageLimit) else {
                throw ValidationError("--page-limit must be from 1 to \(RevocationDelta.maximumPageLimit).")
            }
            try SyncBenchmark(
                revocations: revocations ?? 1_000_000, storeEntries: storeEntries, pageLimit: pageLimit,
                anchorKeyPath: anchorKey, paced: !unpaced
            ).run()
        }
        if part == .blocklist || part == .all { try BlocklistBenchmark(entries: blocklistEntries).run() }
        if part == .claims || part == .all { try await ClaimBenchmark(seconds: seconds).run() }
    }

    private func benchVerify(_ figures: FigureLog) throws {
        printLine(
            "verify throughput per CPU second, one thread (FC1 text form, payload bytes → verdict), median of \(Self.rounds) rounds alternating with `openssl speed`:"
        )
        for (name, verifier, payload) in try Self.fc1Verdicts() {
            let body = {
                let verdict = try verifier.verify(payload)
                precondition(verdict.isValid)
            }
            let allocations = try AllocationCount.perCall(body)
            let reference = Self.fc1SpeedNames[name]
            var figure = Figure(name: "verify: \(name)", allocationsPerCall: allocations)
            if allocationsOnly {
                printLine(Self.line(name, width: 6, allocations: allocations))
            } else {
                let (rate, bare) = try Self.compared(seconds: seconds, reference: noCompare ? nil : reference, body)
                figure.record(rate: rate, reference: reference.map { "openssl speed \($0)" }, bare: bare)
                printLine(
                    Self.line(
                        name, width: 6, rate: rate, reference: bare.map { ("openssl speed", $0) },
                        allocations: allocations))
            }
            figures.add(figure)
        }
    }

    /// `openssl speed`'s names for the FC1 algorithms.
    static let fc1SpeedNames = ["ES256": "ecdsap256", "EdDSA": "ed25519", "PS256": "rsa2048"]

    /// An FC1 QR ticket (text form) for each demo issuing key (ES256, EdDSA, PS256), with a warm verifier that
    /// finds it valid: the algorithm's name, the verifier and the payload.
    static func fc1Verdicts() throws -> [(String, TicketVerifier, [UInt8])] {
        var verdicts: [(String, TicketVerifier, [UInt8])] = []
        for demo in DemoKeys.issuingKeys {
            let key = try IssuingKey.parse(demo.text, source: demo.file)
            var trust = TrustSnapshot()
            trust.add(
                TrustedKey(
                    family: .fc1, issuer: "demo-transit", keyID: KeyID(key.keyID.hexString),
                    algorithm: key.algorithm.name, publicKey: key.privateKey.publicKey))
            let now = Date()
            let claims = FC1.Claims(
                issuer: "demo-transit", ticketID: Array(0..<16), issuedAt: now, validFrom: now.addingTimeInterval(-60),
                validUntil: now.addingTimeInterval(86400), product: "day", zones: ["A", "B"], category: "adult",
                holder: "ID ****1234"
            )
            let payload = try key.payload(for: claims, barcode: .qr)
            let verifier = TicketVerifier(trust: trust, clock: FixedClock(now))
            guard (try? verifier.verify(payload))?.kind == .valid else {
                throw CommandFailure.exit("bench: the \(key.algorithm.name) ticket does not verify")
            }
            verdicts.append((key.algorithm.name, verifier, payload))
        }
        return verdicts
    }

    /// Rounds of each measurement: the two figures are taken alternately, so that a neighbour's load on a
    /// shared machine falls on both alike, and the medians are compared.
    static let rounds = 3

    /// Our rate and `openssl speed`'s for `reference` (an `openssl speed` algorithm name), alternating.
    static func compared(seconds: Double, reference: String?, _ body: () throws -> Void) throws -> (Double, Double?) {
        try compared(
            seconds: seconds,
            anchor: reference.map(OpenSSLSpeed.anchor), body)
    }

    /// The same against any anchor: `anchor` measures for the given seconds and returns its rate, or nil.
    static func compared(
        seconds: Double, anchor: ((Double) -> Double?)?, _ body: () throws -> Void
    ) throws -> (Double, Double?) {
        var ours: [Double] = []
        var theirs: [Double] = []
        for _ in 0..<rounds {
            if let anchor, let bare = anchor(seconds / Double(rounds)) { theirs.append(bare) }
            ours.append(try rate(seconds: seconds / Double(rounds), body))
        }
        return (median(ours), theirs.isEmpty ? nil : median(theirs))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }

    /// `  NAME  farecheck N/s   REFERENCE N/s   ratio P %   A allocations`.
    static func line(
        _ name: String, width: Int, rate: Double, reference: (String, Double)?, allocations: Double? = nil
    ) -> String {
        var line = "  \(name.padding(toLength: width, withPad: " ", startingAt: 0)) farecheck \(format(rate))/s"
        if let (label, bare) = reference {
            line += "   \(label) \(format(bare))/s   ratio \(String(format: "%.0f", rate / bare * 100)) %"
        }
        if let allocations { line += "   \(FigureLog.format(allocations)) allocations" }
        return line
    }

    /// `  NAME  A allocations per call`, for `--allocations-only`.
    static func line(_ name: String, width: Int, allocations: Double) -> String {
        "  \(name.padding(toLength: width, withPad: " ", startingAt: 0)) \(FigureLog.format(allocations)) allocations"
    }

    /// Calls `body` repeatedly for about `seconds` of this thread's CPU time and returns calls per CPU second.
    ///
    /// CPU time rather than wall time, as `openssl speed` counts by default: the two figures then compare
    /// the same thing even when other processes share the machine.
    static func rate(seconds: Double, _ body: () throws -> Void) throws -> Double {
        // Warm-up, so that first-use costs (provider fetches, caches) stay out of the figure.
        for _ in 0..<50 { try body() }
        let start = threadCPUSeconds()
        var count = 0
        while threadCPUSeconds() - start < seconds {
            for _ in 0..<50 { try body() }
            count += 50
        }
        return Double(count) / (threadCPUSeconds() - start)
    }

    /// CPU time used by the calling thread, in seconds.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    static func format(_ rate: Double) -> String { String(format: "%8.0f", rate) }
}

/// A line saying what machine a figure was measured on.
enum MachineDescription {
    static var current: String {
        let cpuinfo = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)) ?? ""
        let model =
            cpuinfo.split(separator: "\n").first { $0.hasPrefix("model name") }?
            .split(separator: ":", maxSplits: 1).last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = ProcessInfo.processInfo.physicalMemory / (1 << 30)
        return "\(model), \(cores) cores, \(memory) GiB, \(ProcessInfo.processInfo.operatingSystemVersionString)"
    }
}

/// Runs another program and returns its standard output, or `nil` when it cannot run.
func runTool(_ path: String, _ arguments: [String]) -> String? {
    runToolBytes(path, arguments).map { String(decoding: $0, as: UTF8.self) }
}

/// Runs another program and returns its standard output byte for byte, or `nil` when it cannot run.
func runToolBytes(_ path: String, _ arguments: [String]) -> [UInt8]? {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    do {
        try withSignalsUnblocked { try process.run() }
    } catch {
        return nil
    }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Array(data)
}

/// Runs `body` (which starts a child process) with every signal unblocked on this thread.
///
/// A child inherits the spawning thread's signal mask, and the threads of Swift's concurrency runtime
/// block most signals: `openssl speed` would then never see the SIGALRM that ends each measurement.
func withSignalsUnblocked<T>(_ body: () throws -> T) rethrows -> T {
    var all = sigset_t()
    var previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_UNBLOCK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}

/// Finds a program on `$PATH`.
func findTool(_ name: String) -> String? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
    return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
}

/// `openssl speed` as the reference for bare signature verification.
enum OpenSSLSpeed {
    /// Verify operations per second that `openssl speed ALGORITHM` reports (e.g. `ecdsap256`, `dsa1024`).
    static func verifyRate(_ algorithm: String, seconds: Int) -> Double? {
        verifyRates(seconds: seconds, algorithms: [algorithm]).values.first
    }

    /// `openssl speed ALGORITHM` as an anchor for `BenchCommand.compared`: run for the seconds given (at least one,
    /// whole seconds as speed takes them).
    static func anchor(_ algorithm: String) -> (Double) -> Double? {
        { seconds in verifyRate(algorithm, seconds: max(1, Int(seconds.rounded()))) }
    }

    /// Verify operations per second for `openssl speed` algorithm names; keys ES256, EdDSA, PS256
    /// (RSA-2048 PKCS#1, the nearest it has), DSA1024, DSA2048.
    static func verifyRates(seconds: Int, algorithms: [String]) -> [String: Double] {
        guard let openssl = findTool("openssl"),
            let output = runTool(openssl, ["speed", "-seconds", "\(seconds)"] + algorithms)
        else { return [:] }
        var rates: [String: Double] = [:]
        for line in output.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard let last = fields.last.flatMap({ Double($0) }) else { continue }
            if line.contains("(nistp256)") { rates["ES256"] = last }
            if line.contains("(Ed25519)") { rates["EdDSA"] = last }
            if line.hasPrefix("rsa 2048 bits") { rates["PS256"] = last }
            if line.hasPrefix("rsa 1024 bits") { rates["RSA1024"] = last }
            if line.hasPrefix("dsa 1024 bits") { rates["DSA1024"] = last }
            if line.hasPrefix("dsa 2048 bits") { rates["DSA2048"] = last }
        }
        return rates
    }
}
