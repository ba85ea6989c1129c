import Daemon
import FareCore
import Foundation
import GRDB
import Issuing
import Presentation
import ScannerSimulation
import Scanners
import Signatures
import Synchronization
import TicketFormats
import TrustStore
import ValidationAPI
import ValidationServer

/// `farecheck bench daemon`: the running daemon measured from outside, as a gate would see it.
///
/// A store is filled with `keys` filler keys and `revocations` revoked tickets beside the demo keys; a real
/// `farecheck daemon` child reads a simulated Zebra SSI scanner on a pseudo-terminal. Start-up is timed from
/// spawn to systemd's READY=1; memory is the idle daemon's VmRSS; latency runs from the scanner writing a
/// scan's last byte to the verdict line arriving on the unix socket, journal write (fsync) included. One scan
/// is sent at a time: the figure is latency, not queueing.
///
/// Then, with `duringSync` or `uploadBacklog`, a second daemon on the same store, which syncs with a real
/// `farecheck-server` (SQLite, 127.0.0.1, stopped when the run ends) and finds its journal holding
/// `uploadBacklog` earlier inspections to upload, while another process applies a signed delta of `duringSync`
/// revocations into the store: the scans go on until both are done, and those that arrived meanwhile make the
/// figure under sync, beside the disk's own fdatasync times taken meanwhile.
struct DaemonBenchmark {
    var scans: Int
    var keys: Int
    var revocations: Int
    /// Revoked tickets that a sync apply (another process, as `farecheck sync` would) writes into the daemon's
    /// store while the scans run; 0 for none.
    var duringSync: Int = 0
    /// Earlier inspections in the daemon's journal that its uploader sends to a `farecheck-server` on loopback while
    /// the scans (and the sync apply) run; 0 for none.
    var uploadBacklog: Int = 0
    /// Revoked tickets the `farecheck-server` holds before the daemon starts, which the daemon's own first round
    /// pulls and applies on its sync thread (giving way to its scans) while the scans run; 0 for none.
    var daemonPulls: Int = 0
    /// The anchor key that signs those pages.
    var anchorKeyPath: String = "Keys/demo-anchor.key"
    /// Whether that apply paces its writes to disk (`BulkWritePacing.standard`) or leaves them to SQLite, as before.
    var pacedApply = true
    /// The nice value of the server that takes the upload (a stand-in for a server on another machine).
    var serverNice: Int32 = 0
    /// Where that server keeps its database: nil for beside the daemon's files, on the same disk.
    var serverDirectory: String?

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
                        family: .fc1, issuer: IssuerID(key.issuer ?? "demo-transit"), keyID: KeyID(key.keyID.hexString),
                        algorithm: key.algorithm.name, spki: key.privateKey.publicKey.spkiDER, source: "demo"))
            }
        }
        guard let issuing else { throw CommandFailure.exit("bench: no demo key") }
        let filler = try PrivateKey.generate(.ecP256).publicKey.spkiDER
        let fillStarted = ContinuousClock.now
        for batch in stride(from: 0, to: keys, by: 10_000) {
            let records = (batch..<min(batch + 10_000, keys)).map { index in
                KeyRecord(
                    family: .fc1, issuer: "issuer-\(index % 100)", keyID: KeyID(String(format: "%016x", index)),
                    algorithm: "ES256", spki: filler, source: "bench")
            }
            try save { _ = try store.saveKeys(records) }
        }
        var generator = SystemRandomNumberGenerator()
        for batch in stride(from: 0, to: revocations, by: 50_000) {
            let records = (batch..<min(batch + 50_000, revocations)).map { _ in
                TicketRevocationRecord(
                    issuer: "demo-transit",
                    ticketID: TicketID((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }),
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

        let (encoderCost, handCost) = Self.lineCost(now: now)
        printLine(
            "  a verdict's JSON line (FC1, valid, as the scans below): JSONEncoder \(Self.format(encoderCost)), "
                + "as the daemon writes it (VerdictEvent.jsonLine) \(Self.format(handCost)), the same bytes")

        // Idle: the daemon alone, without sync.
        let idle = try BenchDaemon(directory: directory, storePath: storePath)
        defer { idle.kill() }
        printLine("  start-up, spawn to READY=1: \(Self.format(idle.startup)) (goal: under 500 ms)")
        try await Task.sleep(for: .seconds(1))
        let idleRSS = idle.residentKilobytes()
        printLine("  resident memory, idle: \(idleRSS.map { "\($0 / 1024) MB" } ?? "unknown") (goal: under 60 MB)")
        let (idleSyncMedian, idleSyncP99) = Self.fsyncCost(directory: directory)
        let quiet = try await measure(idle, payloads: payloads, count: scans) { _ in false }
        printLine(
            "  idle: scan → verdict on the socket, \(scans) scans (SSI over a pty, verify, replay lookup, journal fsync, "
                + "sinks): \(quiet.summary) (goal: p99 under 5 ms); this disk's 4 KiB write + fdatasync: median "
                + "\(Self.format(idleSyncMedian)), p99 \(Self.format(idleSyncP99)) (load \(Self.loadAverage()))")
        printLine(
            "    of which scan arrival → journal written, inside the daemon: \(quiet.journalSummary); "
                + "\(quiet.rate) scans/s end to end")
        printLine(
            "  resident memory after the scans: \(idle.residentKilobytes().map { "\($0 / 1024) MB" } ?? "unknown")")
        let stopping = ContinuousClock.now
        let status = idle.terminate()
        printLine("  SIGTERM → exited (status \(status)): \(Self.format(stopping.duration(to: .now)))")
        guard duringSync > 0 || uploadBacklog > 0 || daemonPulls > 0 else { return }
        try await measureUnderSync(directory: directory, storePath: storePath, payloads: payloads)
    }

    /// The second daemon run: the same store, a daemon that syncs with a real `farecheck-server` on loopback, a
    /// journal holding `uploadBacklog` earlier inspections (and the idle run's) for its uploader to send, and a sync
    /// apply of `duringSync` revocations into the store by another process, all while the scans run.
    private func measureUnderSync(directory: String, storePath: String, payloads: [[UInt8]]) async throws {
        var pagesDirectory: String?
        if duringSync > 0 {
            let pages = directory + "/pages"
            let written = try SyncBenchmark.writePages(
                revocations: duringSync, pageLimit: RevocationDelta.maximumPageLimit,
                signedBy: try SyncBenchmark.anchorKey(anchorKeyPath), into: pages)
            printLine(
                "  under sync: an apply of \(duringSync) revocations in \(written.pages) signed pages, "
                    + (pacedApply ? "written back paced (BulkWritePacing.standard)" : "unpaced (--unpaced)"))
            pagesDirectory = pages
        }
        let unsent = try Self.journalBacklog(uploadBacklog, storePath: storePath)
        let serverFiles = serverDirectory.map { $0 + "/farecheck-bench-server-\(getpid())" } ?? directory + "/server"
        let server = try BenchServer(directory: serverFiles, anchorKeyPath: anchorKeyPath)
        defer {
            server.stop()
            if serverDirectory != nil { try? FileManager.default.removeItem(atPath: serverFiles) }
        }
        if serverNice != 0 { server.renice(serverNice) }
        if daemonPulls > 0 {
            let filling = ContinuousClock.now
            try await server.revokeTickets(daemonPulls)
            printLine(
                "  under sync: the server holds \(daemonPulls) revoked tickets for the daemon's own round to pull and "
                    + "apply on its sync thread (filled in \(Self.format(filling.duration(to: .now))))")
        }
        printLine(
            "  under sync: the daemon's uploader sends \(unsent) journaled inspections to farecheck-server (SQLite) "
                + "on \(server.baseURL)"
                + (serverNice != 0 ? " (the server at nice \(serverNice), as if on another machine)" : "")
                + (serverDirectory.map { ", its database in \($0) (not on the daemon's disk)" } ?? ""))

        let daemon = try BenchDaemon(
            directory: directory, storePath: storePath, sync: (server.baseURL, server.tokenFile))
        defer { daemon.kill() }
        // Started together: the daemon's first sync round (and its upload) began at READY=1.
        let uploading = Mutex<(started: ContinuousClock.Instant, ended: ContinuousClock.Instant?)>((.now, nil))
        let applying = Mutex<(started: ContinuousClock.Instant?, ended: ContinuousClock.Instant?, status: Int32?)>(
            (nil, nil, nil))
        if let pagesDirectory {
            let arguments =
                [
                    "bench", "sync", "--apply-pages", pagesDirectory, "--apply-store", storePath, "--apply-report",
                    directory + "/apply-report.json", "--apply-without-verifier",
                ] + (pacedApply ? [] : ["--unpaced"])
            let thread = Thread {
                applying.withLock { $0.started = .now }
                let status = (try? SyncBenchmark.spawnSelf(arguments))?.0
                applying.withLock {
                    $0.ended = .now
                    $0.status = status
                }
            }
            thread.start()
        } else {
            applying.withLock { $0 = (.now, .now, 0) }
        }
        // The daemon's own apply of what it pulls: from READY=1 (its first round began) until the store holds it all.
        let pulling = Mutex<(started: ContinuousClock.Instant, ended: ContinuousClock.Instant?)>((.now, nil))
        if daemonPulls > 0 {
            let target = daemonPulls
            let pullWatch = Thread {
                let deadline = ContinuousClock.now + .seconds(900)
                while ContinuousClock.now < deadline, Self.syncedRevocations(storePath) < target {
                    Thread.sleep(forTimeInterval: 0.1)
                }
                pulling.withLock { $0.ended = .now }
            }
            pullWatch.start()
        } else {
            pulling.withLock { $0.ended = .now }
        }
        let uploadWatch = Thread {
            let deadline = ContinuousClock.now + .seconds(600)
            while ContinuousClock.now < deadline, server.storedInspections() < unsent {
                Thread.sleep(forTimeInterval: 0.1)
            }
            uploading.withLock { $0.ended = .now }
        }
        uploadWatch.start()
        // The disk's floor while the sync writes: a 4 KiB write + fdatasync every 50 ms, on the same disk.
        let floor = Mutex<[Duration]>([])
        let busy: @Sendable () -> Bool = {
            applying.withLock { $0.ended == nil } || uploading.withLock { $0.ended == nil }
                || pulling.withLock { $0.ended == nil }
        }
        let probe = Thread {
            let path = directory + "/fsync-probe-busy"
            let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            defer {
                close(descriptor)
                unlink(path)
            }
            let block = [UInt8](repeating: 0x5A, count: 4096)
            while busy() {
                let started = ContinuousClock.now
                _ = block.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                fdatasync(descriptor)
                let took = started.duration(to: .now)
                floor.withLock { $0.append(took) }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        probe.start()
        let loaded = try await measure(daemon, payloads: payloads, count: scans) { _ in busy() }
        while busy() { try await Task.sleep(for: .milliseconds(100)) }
        let load = Self.loadAverage()
        let apply = applying.withLock { $0 }
        let upload = uploading.withLock { $0 }
        let floorTimes = floor.withLock { $0 }.sorted()
        let floorText =
            floorTimes.isEmpty
            ? "none"
            : "median \(Self.format(Self.percentile(floorTimes, 0.5))), p99 \(Self.format(Self.percentile(floorTimes, 0.99)))"
        printLine(
            "  under sync: apply \(apply.started.flatMap { s in apply.ended.map { Self.format(s.duration(to: $0)) } } ?? "?") "
                + "(status \(apply.status.map(String.init) ?? "?")), upload of \(unsent) inspections "
                + "\(upload.ended.map { Self.format(upload.started.duration(to: $0)) } ?? "?")")
        if daemonPulls > 0 {
            let pull = pulling.withLock { $0 }
            printLine(
                "  under sync: the daemon's own round pulled and applied \(daemonPulls) revocations in "
                    + "\(pull.ended.map { Self.format(pull.started.duration(to: $0)) } ?? "?") (from READY=1)")
        }
        printLine(
            "  during sync + upload: scan → verdict, \(loaded.during.count) scans while either ran: "
                + "\(loaded.duringSummary) (goal: p99 under 5 ms); this disk's 4 KiB write + fdatasync meanwhile "
                + "(\(floorTimes.count) probes): \(floorText) (load \(load))")
        printLine("    of which scan arrival → journal written, inside the daemon: \(loaded.journalDuringSummary)")
        printLine("    all \(scans) scans of this run: \(loaded.summary)")
        _ = daemon.terminate()
    }

    /// Revocations sync brought into the validator's store at `path` (read-only; -1 when it cannot be read).
    static func syncedRevocations(_ path: String) -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: path, configuration: configuration) else { return -1 }
        defer { try? queue.close() }
        let counted = try? queue.read { db in
            try Int.fetchOne(
                db, sql: "SELECT count(*) FROM revoked_ticket WHERE source = ?", arguments: [TrustStore.syncSource])
        }
        return counted ?? -1
    }

    /// Latencies of one run of scans.
    struct Latencies {
        var all: [Duration] = []
        var during: [Duration] = []
        var journal: [Int] = []
        var journalDuring: [Int] = []
        var elapsed: Duration = .zero

        var summary: String { Self.describe(all) }
        var duringSummary: String { Self.describe(during) }
        var journalSummary: String { Self.describeMicros(journal) }
        var journalDuringSummary: String { Self.describeMicros(journalDuring) }
        var rate: String { String(format: "%.0f", Double(all.count) / DaemonBenchmark.seconds(elapsed)) }

        static func describe(_ values: [Duration]) -> String {
            guard !values.isEmpty else { return "none" }
            let sorted = values.sorted()
            return "median \(DaemonBenchmark.format(DaemonBenchmark.percentile(sorted, 0.5))), "
                + "p90 \(DaemonBenchmark.format(DaemonBenchmark.percentile(sorted, 0.9))), "
                + "p99 \(DaemonBenchmark.format(DaemonBenchmark.percentile(sorted, 0.99))), "
                + "max \(DaemonBenchmark.format(sorted.last ?? .zero))"
        }

        static func describeMicros(_ values: [Int]) -> String {
            guard !values.isEmpty else { return "none" }
            let sorted = values.sorted()
            return
                "median \(DaemonBenchmark.percentile(sorted, 0.5)) µs, p99 \(DaemonBenchmark.percentile(sorted, 0.99)) µs, "
                + "max \(sorted.last ?? 0) µs"
        }
    }

    /// Sends `count` scans one at a time (after 100 unmeasured), and more while `keepGoing` holds, to `daemon`;
    /// a scan also counts as `during` when `keepGoing` held as its verdict arrived.
    private func measure(
        _ daemon: BenchDaemon, payloads: [[UInt8]], count: Int, keepGoing: (Int) -> Bool
    ) async throws -> Latencies {
        let scanner = daemon.scanner
        let socket = try await VerdictSocketClient.connect(path: daemon.socketPath)
        guard await scanner.waitUntil(timeout: .seconds(10), { $0.isEnabled }) else {
            throw CommandFailure.exit("bench: the daemon never enabled the scanner")
        }
        var result = Latencies()
        result.all.reserveCapacity(count)
        let warmUp = min(100, count)
        let started = ContinuousClock.now
        let deadline = started + .seconds(900)
        var index = 0
        while index < count + warmUp || (keepGoing(index) && ContinuousClock.now < deadline) {
            scanner.scan(payloads[index % payloads.count])
            // Waits in poll() on this thread: the line is timed the moment it arrives, as a gate's blocking read
            // would see it (the client's `readLine` sleeps a millisecond between polls).
            guard let line = socket.waitForLine(timeout: 30) else {
                throw CommandFailure.exit("bench: no verdict for scan \(index)")
            }
            let arrived = ContinuousClock.now
            defer { index += 1 }
            guard index >= warmUp else { continue }
            // The simulator notes a send after its write returns; under load the verdict can come back first.
            while scanner.sendTimes.count <= index { try await Task.sleep(for: .microseconds(50)) }
            let latency = scanner.sendTimes[index].duration(to: arrived)
            let during = keepGoing(index)
            result.all.append(latency)
            if during { result.during.append(latency) }
            if let event = try? VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8)) {
                result.journal.append(event.latencyMicros)
                if during { result.journalDuring.append(event.latencyMicros) }
                if index == warmUp, event.verdict != .valid {
                    throw CommandFailure.exit("bench: the bench ticket verified \(event.verdict): \(event.reason)")
                }
            }
            if index % 1000 == 0, isatty(2) != 0 {
                FileHandle.standardError.write(Data("\r  \(index - warmUp) scans".utf8))
            }
        }
        if isatty(2) != 0 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        result.elapsed = started.duration(to: .now)
        return result
    }

    /// Journals `count` earlier inspections (the last day's, oldest first) into the store's journal in one
    /// transaction, as a validator that was offline for a while holds them; returns how many wait for upload.
    static func journalBacklog(_ count: Int, storePath: String) throws -> Int {
        let paths = InspectionJournal.paths(besideStore: storePath)
        let journal = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, role: .usesExisting)
        defer { try? journal.close() }
        let now = Date()
        try journal.write(
            (0..<count).map { index in
                let verdict = Verdict(
                    kind: .valid, reason: "Valid ticket.", signature: .valid, format: .fc1, issuer: "demo-transit",
                    inspectedAt: now.addingTimeInterval(-86_400 + Double(index) * 86_000 / Double(max(count, 1))))
                return InspectionRecord(
                    Inspection(
                        source: "bench-scanner", symbology: .aztec, payloadByteCount: 170,
                        payloadDigest: (0..<32).map { UInt8(truncatingIfNeeded: index >> ($0 % 4 * 8)) },
                        verdict: verdict))
            })
        return try journal.unsentInspectionCount()
    }

    /// The load average over the last minute, as `uptime` prints it.
    static func loadAverage() -> String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? "?"
        return String(text.split(separator: " ").first ?? "?")
    }

    static func percentile<T>(_ sorted: [T], _ fraction: Double) -> T {
        sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * fraction).rounded(.up)) - 1))]
    }

    /// Opens a bench store, or exits with the store's error.
    static func openStore(_ path: String, pacing: BulkWritePacing? = .standard) throws -> TrustStore {
        do {
            return try TrustStore(path: path, bulkWritePacing: pacing)
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

    /// What encoding one verdict's line costs, with `JSONEncoder` (``VerdictEvent/encoder``) and as the daemon
    /// writes it: the median of 5 rounds of 20 000 each, alternated.
    static func lineCost(now: Date) -> (encoder: Duration, handWritten: Duration) {
        let ticket = Ticket(
            format: .fc1, issuer: "demo-transit", ticketID: [0xBE, 0x4C, 0, 0, 0, 1], validFrom: now - 60,
            validUntil: now + 86400, issuedAt: now, product: "day", zones: ["A"], category: "adult",
            holder: "ID ****1234")
        let verdict = Verdict(
            kind: .valid, reason: "Valid: signed by key 0a of demo-transit, until tomorrow.", signature: .valid,
            format: .fc1, issuer: "demo-transit", keyID: "0a1b2c3d4e5f6071", ticket: ticket, inspectedAt: now)
        let event = VerdictEvent(
            Inspection(
                source: "/dev/pts/3", symbology: .aztec, payloadByteCount: 300, payloadDigest: [1], verdict: verdict,
                latency: .microseconds(1500)))
        let rounds = 20_000
        var encoder: [Duration] = []
        var handWritten: [Duration] = []
        var bytes = 0
        for _ in 0..<5 {
            var started = ContinuousClock.now
            for _ in 0..<rounds {
                bytes &+=
                    String(decoding: (try? VerdictEvent.encoder.encode(event)) ?? Data(), as: UTF8.self).utf8
                    .count
            }
            encoder.append(started.duration(to: .now) / rounds)
            started = ContinuousClock.now
            for _ in 0..<rounds { bytes &+= event.jsonLine.utf8.count }
            handWritten.append(started.duration(to: .now) / rounds)
        }
        precondition(bytes > 0)
        return (encoder.sorted()[2], handWritten.sorted()[2])
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
    init(directory: String, storePath: String, sync: (url: String, tokenFile: String)? = nil) throws {
        scanner = try SimulatedSSIScanner()
        socketPath = directory + "/verdicts.sock"
        try? FileManager.default.removeItem(atPath: socketPath)
        var config = """
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
        if let sync {
            config += """

                [sync]
                url = "\(sync.url)"
                device_id = "bench"
                token_file = "\(sync.tokenFile)"
                anchors = ["demo"]
                allow_demo_anchor = true
                interval = 3600
                """
        }
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

/// A real `farecheck-server serve` (SQLite) on a free loopback port with one device enrolled; stopped with SIGTERM,
/// and SIGKILL when it has not exited 5 s later.
final class BenchServer: Sendable {
    let baseURL: String
    let tokenFile: String
    private let database: String
    private let child: ServerChild

    init(directory: String, anchorKeyPath: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        database = directory + "/server.sqlite"
        let program = URL(fileURLWithPath: FarecheckProgram.path).deletingLastPathComponent()
            .appendingPathComponent("farecheck-server").path
        let (initialised, initOutput) = Self.run(program, ["init", "--db", database])
        guard initialised == 0 else { throw CommandFailure.exit("bench: farecheck-server init: \(initOutput)") }
        let (added, token) = Self.run(program, ["devices", "add", "--db", database, "bench"])
        guard added == 0 else { throw CommandFailure.exit("bench: farecheck-server devices add: \(token)") }
        tokenFile = directory + "/token"
        guard
            FileManager.default.createFile(
                atPath: tokenFile, contents: Data(token.trimmingCharacters(in: .whitespacesAndNewlines).utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw CommandFailure.exit("bench: cannot write \(tokenFile)") }
        child = try ServerChild(
            program: program,
            arguments: [
                "serve", "--listen", "127.0.0.1:0", "--db", database,
                "--anchor-key", anchorKeyPath, "--log-level", "error",
            ], log: directory + "/server.log")
        baseURL = child.baseURL
    }

    /// Gives the server (every thread of it) the nice value `value`.
    func renice(_ value: Int32) {
        let pid = child.process.processIdentifier
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        for thread in threads.compactMap({ id_t($0) }) {
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), thread, value)
        }
    }

    /// Revokes `count` generated tickets in the server's database (through the server's own store, in batches), for a
    /// validator's round to pull.
    func revokeTickets(_ count: Int) async throws {
        let store = try SQLiteServerStore.open(path: database, create: false)
        let revokedAt = Date()
        var next = 0
        while next < count {
            let batch = (next..<min(count, next + 50_000)).map { index in
                RevokedTicket(
                    issuer: "bench-pull", ticketID: TicketID(withUnsafeBytes(of: UInt64(index).bigEndian, Array.init)),
                    reason: nil, revokedAt: revokedAt)
            }
            try await store.revokeTickets(batch)
            next += batch.count
        }
    }

    /// Inspections the server holds (read from its database, -1 when it cannot be read).
    func storedInspections() -> Int {
        var configuration = Configuration()
        configuration.readonly = true
        guard let queue = try? DatabaseQueue(path: database, configuration: configuration) else { return -1 }
        defer { try? queue.close() }
        return (try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM inspection") ?? 0 }) ?? -1
    }

    /// Stops the server and waits for it.
    func stop() {
        let process = child.process
        guard process.isRunning else { return }
        process.terminate()
        let deadline = ContinuousClock.now + .seconds(5)
        while process.isRunning, ContinuousClock.now < deadline { usleep(20_000) }
        if process.isRunning { child.kill() }
        process.waitUntilExit()
    }

    /// Runs an admin command: its status and standard output (standard error goes to the bench's).
    private static func run(_ program: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// systemd's side of the notification socket, to time start-up to READY=1.
private final class NotificationSocket {
    let path: String
    private let descriptor: Int32

    init(path: String) throws {
        self.path = path
        // The idle daemon's, when the daemon under sync starts.
        unlink(path)
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
