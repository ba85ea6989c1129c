import Daemon
import FareCore
import Foundation
import Issuing
import ScannerSimulation
import Scanners
import Signatures
import Synchronization
import TicketFormats
import TrustStore
import ValidationAPI

/// `farecheck bench daemon`: the running daemon measured from outside, as a gate would see it.
///
/// A store is filled with `keys` filler keys and `revocations` revoked tickets beside the demo keys; a real
/// `farecheck daemon` child reads a simulated Zebra SSI scanner on a pseudo-terminal. Start-up is timed from
/// spawn to systemd's READY=1; memory is the idle daemon's VmRSS; latency runs from the scanner writing a
/// scan's last byte to the verdict line arriving on the unix socket, journal write (fsync) included. One scan
/// is sent at a time: the figure is latency, not queueing.
struct DaemonBenchmark {
    var scans: Int
    var keys: Int
    var revocations: Int
    /// Revoked tickets that a sync apply (another process, as `farecheck sync` would) writes into the daemon's
    /// store while the scans run; 0 for none.
    var duringSync: Int = 0
    /// The anchor key that signs those pages.
    var anchorKeyPath: String = "Keys/demo-anchor.key"

    func run() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "farecheck-bench-daemon-\(getpid())"
        )
        .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let storePath = directory + "/bench.sqlite"
        let store = try Self.openStore(storePath)

        // Trust data: the demo keys, filler keys, revoked tickets.
        var issuing: IssuingKey?
        for demo in DemoKeys.issuingKeys {
            let key = try IssuingKey.parse(demo.text, source: demo.file)
            if issuing == nil { issuing = key }
            try save {
                try store.saveKey(
                    KeyRecord(
                        family: .fc1, issuer: key.issuer ?? "demo-transit", keyID: key.keyID.hexString,
                        algorithm: key.algorithm.name, spki: key.privateKey.publicKey.spkiDER, source: "demo"))
            }
        }
        guard let issuing else { throw CommandFailure.exit("bench: no demo key") }
        let filler = try PrivateKey.generate(.ecP256).publicKey.spkiDER
        let fillStarted = ContinuousClock.now
        for batch in stride(from: 0, to: keys, by: 10_000) {
            let records = (batch..<min(batch + 10_000, keys)).map { index in
                KeyRecord(
                    family: .fc1, issuer: "issuer-\(index % 100)", keyID: String(format: "%016x", index),
                    algorithm: "ES256", spki: filler, source: "bench")
            }
            try save { _ = try store.saveKeys(records) }
        }
        var generator = SystemRandomNumberGenerator()
        for batch in stride(from: 0, to: revocations, by: 50_000) {
            let records = (batch..<min(batch + 50_000, revocations)).map { _ in
                TicketRevocationRecord(
                    issuer: "demo-transit",
                    ticketID: (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) },
                    reason: "bench")
            }
            try save { try store.revokeTickets(records) }
        }
        try save { try store.close() }
        printLine(
            "daemon: store with \(keys + DemoKeys.issuingKeys.count) keys and \(revocations) revoked tickets "
                + "(filled in \(Self.format(fillStarted.duration(to: .now))))")

        // Tickets: distinct ids, so that replay detection looks each up and finds nothing.
        let now = Date()
        let payloads = try (0..<min(scans, 2_000)).map { index in
            try issuing.payload(
                for: FC1.Claims(
                    issuer: "demo-transit",
                    ticketID: [0xBE, 0x4C] + withUnsafeBytes(of: UInt32(index).bigEndian, Array.init),
                    issuedAt: now, validFrom: now.addingTimeInterval(-60), validUntil: now.addingTimeInterval(86400),
                    product: "day", zones: ["A"], category: "adult", holder: "ID ****1234"),
                barcode: .aztec)
        }

        var pagesDirectory: String?
        if duringSync > 0 {
            let pages = directory + "/pages"
            let written = try SyncBenchmark.writePages(
                revocations: duringSync, pageLimit: RevocationDelta.maximumPageLimit,
                signedBy: try SyncBenchmark.anchorKey(anchorKeyPath), into: pages)
            printLine("  during the scans, sync applies \(duringSync) revocations in \(written.pages) signed pages")
            pagesDirectory = pages
        }

        let daemon = try BenchDaemon(directory: directory, storePath: storePath)
        defer { daemon.kill() }
        let scanner = daemon.scanner
        printLine("  start-up, spawn to READY=1: \(Self.format(daemon.startup)) (goal: under 500 ms)")
        try await Task.sleep(for: .seconds(1))
        let idleRSS = daemon.residentKilobytes()
        printLine("  resident memory, idle: \(idleRSS.map { "\($0 / 1024) MB" } ?? "unknown") (goal: under 60 MB)")

        let socket = try await VerdictSocketClient.connect(path: daemon.socketPath)
        guard await scanner.waitUntil(timeout: .seconds(10), { $0.isEnabled }) else {
            throw CommandFailure.exit("bench: the daemon never enabled the scanner")
        }
        // The sync apply runs in a process of its own, into the daemon's store, while the scans go on.
        let applying = Mutex<(started: ContinuousClock.Instant?, ended: ContinuousClock.Instant?, status: Int32?)>(
            (nil, nil, nil))
        if let pagesDirectory {
            let arguments = [
                "bench", "sync", "--apply-pages", pagesDirectory, "--apply-store", storePath, "--apply-report",
                directory + "/apply-report.json",
            ]
            let thread = Thread {
                applying.withLock { $0.started = .now }
                let status = (try? SyncBenchmark.spawnSelf(arguments))?.0
                applying.withLock {
                    $0.ended = .now
                    $0.status = status
                }
            }
            thread.start()
            try await Task.sleep(for: .milliseconds(500))
        }
        var latencies: [Duration] = []
        var duringApply: [Duration] = []
        var journalLatencies: [Int] = []
        latencies.reserveCapacity(scans)
        let warmUp = min(100, scans)
        let benchStarted = ContinuousClock.now
        for index in 0..<(scans + warmUp) {
            scanner.scan(payloads[index % payloads.count])
            guard let line = await socket.readLine(timeout: 30) else {
                throw CommandFailure.exit("bench: no verdict for scan \(index)")
            }
            let arrived = ContinuousClock.now
            guard index >= warmUp else { continue }
            // The simulator notes a send after its write returns; under load the verdict can come back first.
            while scanner.sendTimes.count <= index { try await Task.sleep(for: .microseconds(50)) }
            let sent = scanner.sendTimes[index]
            latencies.append(sent.duration(to: arrived))
            if pagesDirectory != nil, applying.withLock({ $0.ended == nil }) {
                duringApply.append(sent.duration(to: arrived))
            }
            if let event = try? VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8)) {
                journalLatencies.append(event.latencyMicros)
                if index == warmUp, event.verdict != .valid {
                    throw CommandFailure.exit("bench: the bench ticket verified \(event.verdict): \(event.reason)")
                }
            }
            if index % 1000 == 0, isatty(2) != 0 {
                FileHandle.standardError.write(Data("\r  \(index - warmUp)/\(scans) scans".utf8))
            }
        }
        if isatty(2) != 0 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        let elapsed = benchStarted.duration(to: .now)
        latencies.sort()
        journalLatencies.sort()
        func percentile<T>(_ sorted: [T], _ fraction: Double) -> T {
            sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
        }
        printLine(
            "  scan → verdict on the socket, \(scans) scans (SSI over a pty, verify, replay lookup, journal fsync, sinks): "
                + "median \(Self.format(percentile(latencies, 0.5))), p90 \(Self.format(percentile(latencies, 0.9))), "
                + "p99 \(Self.format(percentile(latencies, 0.99))), max \(Self.format(latencies.last ?? .zero)) (goal: p99 under 5 ms)"
        )
        printLine(
            "  of which scan arrival → journal written, inside the daemon: median \(percentile(journalLatencies, 0.5)) µs, "
                + "p99 \(percentile(journalLatencies, 0.99)) µs; \(String(format: "%.0f", Double(scans) / Self.seconds(elapsed))) scans/s end to end"
        )
        if pagesDirectory != nil {
            while applying.withLock({ $0.ended == nil }) { try await Task.sleep(for: .milliseconds(100)) }
            let run = applying.withLock { $0 }
            duringApply.sort()
            let took = run.started.flatMap { start in run.ended.map { start.duration(to: $0) } } ?? .zero
            printLine(
                "  sync apply of \(duringSync) revocations into the same store: \(Self.format(took)) "
                    + "(status \(run.status.map(String.init) ?? "?")); \(duringApply.count) scans while it ran: "
                    + (duringApply.isEmpty
                        ? "none"
                        : "median \(Self.format(percentile(duringApply, 0.5))), p99 \(Self.format(percentile(duringApply, 0.99))), "
                            + "max \(Self.format(duringApply.last ?? .zero)) (goal: p99 under 10 ms)"))
        }
        let (syncMedian, syncP99) = Self.fsyncCost(directory: directory)
        printLine(
            "  this disk's floor: one 4 KiB write + fdatasync takes median \(Self.format(syncMedian)), p99 \(Self.format(syncP99)) "
                + "(every verdict waits for one before any sink fires)")
        let busyRSS = daemon.residentKilobytes()
        printLine("  resident memory after the run: \(busyRSS.map { "\($0 / 1024) MB" } ?? "unknown")")
        let stopping = ContinuousClock.now
        let status = daemon.terminate()
        printLine("  SIGTERM → exited (status \(status)): \(Self.format(stopping.duration(to: .now)))")
    }

    /// Opens a bench store, or exits with the store's error.
    static func openStore(_ path: String) throws -> TrustStore {
        do {
            return try TrustStore(path: path)
        } catch {
            throw CommandFailure.exit(error.description)
        }
    }

    private func save(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as StoreError {
            throw CommandFailure.exit(error.description)
        }
    }

    /// What durability costs on this disk, independent of farecheck: 200 appends each followed by fdatasync.
    static func fsyncCost(directory: String) -> (median: Duration, p99: Duration) {
        let path = directory + "/fsync-probe"
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        defer {
            close(descriptor)
            unlink(path)
        }
        let block = [UInt8](repeating: 0x5A, count: 4096)
        var times: [Duration] = []
        for _ in 0..<200 {
            let started = ContinuousClock.now
            _ = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            fdatasync(descriptor)
            times.append(started.duration(to: .now))
        }
        times.sort()
        return (times[times.count / 2], times[min(times.count - 1, Int(Double(times.count) * 0.99))])
    }

    static func residentMemory(of pid: pid_t) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func format(_ duration: Duration) -> String {
        let microseconds = seconds(duration) * 1e6
        if microseconds < 1000 { return String(format: "%.0f µs", microseconds) }
        if microseconds < 10_000_000 { return String(format: "%.2f ms", microseconds / 1000) }
        return String(format: "%.1f s", microseconds / 1e6)
    }
}

/// A real `farecheck daemon` child on a store, reading a simulated Zebra SSI scanner on a pseudo-terminal and
/// writing verdicts to a unix socket, started as systemd would (NOTIFY_SOCKET) and ready when this returns.
final class BenchDaemon {
    let scanner: SimulatedSSIScanner
    let socketPath: String
    /// Spawn to READY=1.
    let startup: Duration
    private let process = Process()

    /// Writes the configuration into `directory`, spawns the daemon on `storePath` and waits for READY=1.
    init(directory: String, storePath: String) throws {
        scanner = try SimulatedSSIScanner()
        socketPath = directory + "/verdicts.sock"
        let config = """
            mode = "gate"
            validator = "bench"
            store = "\(storePath)"
            [verification]
            replay_window = 60
            [[scanner]]
            name = "bench-scanner"
            device = "\(scanner.devicePath)"
            protocol = "ssi"
            [output]
            stdout = false
            socket = "\(socketPath)"
            [http]
            listen = "127.0.0.1:0"
            """
        try config.write(toFile: directory + "/farecheck.toml", atomically: true, encoding: .utf8)

        let notify = try NotificationSocket(path: directory + "/notify.sock")
        let spawned = ContinuousClock.now
        process.executableURL = URL(fileURLWithPath: FarecheckProgram.path)
        process.arguments = ["daemon", "--config", directory + "/farecheck.toml", "--log-level", "warning"]
        process.environment = ProcessInfo.processInfo.environment.merging(["NOTIFY_SOCKET": notify.path]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            scanner.stop()
            throw error
        }
        guard notify.waitForReady(timeout: 30) else {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            scanner.stop()
            throw CommandFailure.exit("bench: the daemon never got ready")
        }
        startup = spawned.duration(to: .now)
    }

    /// The daemon's VmRSS in KiB.
    func residentKilobytes() -> Int? {
        DaemonBenchmark.residentMemory(of: process.processIdentifier)
    }

    /// Stops the daemon with SIGTERM and returns its exit status.
    func terminate() -> Int32 {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGTERM) }
        process.waitUntilExit()
        scanner.stop()
        return process.terminationStatus
    }

    /// Kills the daemon if it still runs (on the way out of a failed measurement).
    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        scanner.stop()
    }
}

/// systemd's side of the notification socket, to time start-up to READY=1.
private final class NotificationSocket {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw CommandFailure.exit("bench: cannot bind \(path)") }
    }

    deinit { close(descriptor) }

    func waitForReady(timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0, String(decoding: buffer[..<count], as: UTF8.self).hasPrefix("READY=1") { return true }
        }
        return false
    }
}
