import AsyncHTTPClient
import FareCore
import Foundation
import Glibc
import Logging
import ScannerSimulation
import Sync
import Synchronization
import TestSupport
import Testing
import TrustStore

/// A `farecheck-server serve` process on a reference server's database: one replica of a fleet's server.
final class ReplicaServer: @unchecked Sendable {
    let process: Process
    let baseURL: String

    private init(process: Process, baseURL: String) {
        self.process = process
        self.baseURL = baseURL
    }

    /// Starts a replica on `server`'s database (SQLite file or PostgreSQL), on a free loopback port.
    static func start(sharing server: ReferenceServer) async throws -> ReplicaServer {
        let name = UUID().uuidString
        let outputPath = server.directory + "/replica-\(name).out"
        let logPath = server.directory + "/replica-\(name).err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ReferenceServer.binary)
        process.arguments =
            [
                "serve", "--listen", "127.0.0.1:0", "--log-level", "warning", "--anchor-key",
                ReferenceServer.demoAnchorKey,
            ] + (server.databaseURL.map { ["--database-url", $0] } ?? ["--db", server.database])
        process.currentDirectoryURL = URL(fileURLWithPath: server.directory)
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardInput = FileHandle.nullDevice
        try startUnblocked(process)
        for _ in 0..<1200 where process.isRunning {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: " ") {
                return ReplicaServer(process: process, baseURL: String(text[range.upperBound..<end]))
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw DaemonProcess.Failure(message: "the replica did not start: \(log)")
    }

    /// Kills it at once (SIGKILL: no graceful shutdown, connections cut mid-request) and waits for it.
    func kill() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    deinit {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Log lines, as a test reads them back.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }

    /// A logger that writes here.
    func logger() -> Logger {
        Logger(label: "farecheck.sync.test") { _ in LineLogHandler(lines: self) }
    }
}

/// A log handler that keeps each message in `LogLines`.
struct LineLogHandler: LogHandler {
    let lines: LogLines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.append("\(event.level) \(event.message)")
    }
}

/// Validators with several server URLs, against replicas of `farecheck-server` on one database (SQLite file,
/// PostgreSQL): a server killed mid-sync loses nothing, and sends nothing twice.
@Suite("Sync failover between replicas", .serialized, .timeLimit(.minutes(5)))
struct FailoverTests {
    /// A bench whose own server is not started, and two replicas on its database.
    static func replicas(_ database: ServerDatabase) async throws -> (SyncBench, ReplicaServer, ReplicaServer) {
        let bench = try SyncBench(starts: false, postgresAdminURL: database.postgresAdminURL)
        let first = try await ReplicaServer.start(sharing: bench.server)
        let second = try await ReplicaServer.start(sharing: bench.server)
        return (bench, first, second)
    }

    @Test(
        "the first server SIGKILLed in the middle of uploads: rounds go on on the second, every inspection arrives once",
        arguments: ServerDatabase.available)
    func killedMidSync(database: ServerDatabase) async throws {
        let (bench, first, second) = try await Self.replicas(database)
        let log = LogLines()
        let configuration = ValidationAPIClient.Configuration(
            baseURL: first.baseURL, replicas: [second.baseURL], token: bench.token, deviceID: "validator-1",
            requestTimeout: .seconds(10))
        let store = try bench.store()
        var journaled: [InspectionID] = []
        var reports: [SyncReport] = []
        let servers = ServerPool(urls: configuration.baseURLs, logger: log.logger())
        try await HTTPClient.withHTTPClient(configuration: try configuration.httpClientConfiguration()) { http in
            let client = ValidationAPIClient(configuration: configuration, http: http, servers: servers)
            // Small batches: many uploads in each round.
            let round = SyncRound(client: client, store: store, anchors: [.demo], uploadBatchSize: 5)
            for index in 0..<6 {
                let count = index == 3 ? 300 : 20
                let before = try store.inspectionJournal.unsentInspectionCount()
                journaled += try bench.journalInspections(count)
                guard index == 3 else {
                    let started = ContinuousClock.now
                    reports.append(try await round.run())
                    print("round \(index): \(count) inspections in \(ContinuousClock.now - started) (\(database))")
                    continue
                }
                // Round 3: the first server is killed once it has acknowledged a batch of this round.
                let unsent = before + count
                let killer = Task {
                    let watcher = try TrustStore(path: bench.validator.db)
                    for _ in 0..<20000 {
                        if try watcher.inspectionJournal.unsentInspectionCount() < unsent { break }
                        try await Task.sleep(for: .milliseconds(1))
                    }
                    first.kill()
                    return try watcher.inspectionJournal.unsentInspectionCount()
                }
                let started = ContinuousClock.now
                reports.append(try await round.run())
                // A figure for docs/fleet.md, never asserted.
                print("failover round: \(count) inspections in \(ContinuousClock.now - started) (\(database))")
                let unsentAtKill = try await killer.value
                #expect(unsentAtKill > 0, "the kill came after the round's uploads (\(unsentAtKill) left)")
            }
        }
        #expect(reports.count == 6)
        #expect(reports.allSatisfy { $0.inspectionsUnsent == 0 && $0.inspectionsRefused == 0 })
        #expect(reports.map(\.inspectionsUploaded).reduce(0, +) == journaled.count)
        #expect(try store.inspectionJournal.unsentInspectionCount() == 0, "nothing left unsent on the validator")
        #expect(servers.currentURL == second.baseURL, "the rounds after the kill stay on the second server")

        // The database behind both holds every inspection exactly once.
        let held = try bench.server.inspections().compactMap { $0["id"] as? String }
        #expect(held.count == journaled.count)
        #expect(Set(held) == Set(journaled.map(\.rawValue)))
        #expect(Dictionary(grouping: held, by: { $0 }).values.allSatisfy { $0.count == 1 })

        // The failover was logged once.
        let failovers = log.all.filter { $0.contains("sync: server \(first.baseURL) unreachable") }
        #expect(failovers.count == 1, "\(log.all)")
        #expect(failovers.first?.hasSuffix("; using \(second.baseURL)") == true, "\(failovers)")
    }

    @Test("a 401 from the first server is an answer: not failed over, the second server is not asked")
    func unauthorizedDoesNotFailOver() async throws {
        let (bench, first, second) = try await Self.replicas(.sqlite)
        let log = LogLines()
        let configuration = ValidationAPIClient.Configuration(
            baseURL: first.baseURL, replicas: [second.baseURL], token: "not-a-device-token",
            requestTimeout: .seconds(10))
        let servers = ServerPool(urls: configuration.baseURLs, logger: log.logger())
        _ = try bench.journalInspections(3)
        let store = try bench.store()
        let error = try await HTTPClient.withHTTPClient(configuration: try configuration.httpClientConfiguration()) {
            http in
            let client = ValidationAPIClient(configuration: configuration, http: http, servers: servers)
            do {
                let round = SyncRound(client: client, store: store, anchors: [.demo])
                _ = try await round.run()
                return nil as SyncError?
            } catch let error as SyncError {
                return error
            }
        }
        #expect(error?.code == .unauthorized, "\(String(describing: error))")
        #expect(servers.currentURL == first.baseURL && !servers.hasFailedOver)
        #expect(log.all.isEmpty, "\(log.all)")
    }

    @Test(
        "with both servers gone a round fails after one try on each (logged once each); a server up again serves the next"
    )
    func allDown() async throws {
        let (bench, first, second) = try await Self.replicas(.sqlite)
        let log = LogLines()
        let configuration = ValidationAPIClient.Configuration(
            baseURL: first.baseURL, replicas: [second.baseURL], token: bench.token, requestTimeout: .seconds(10))
        // A back-off far longer than two failed connections take on a loaded machine: the second server's failure
        // finds the first one still left alone (100 ms was once not enough, the first one was tried again).
        let servers = ServerPool(
            urls: configuration.baseURLs, backoff: ServerSelection.Backoff(first: .seconds(10)),
            logger: log.logger())
        let store = try bench.store()
        try await HTTPClient.withHTTPClient(configuration: try configuration.httpClientConfiguration()) { http in
            let client = ValidationAPIClient(configuration: configuration, http: http, servers: servers)
            let round = SyncRound(client: client, store: store, anchors: [.demo])
            _ = try await round.run()
            first.kill()
            second.kill()
            _ = try bench.journalInspections(4)
            do {
                _ = try await round.run()
                Issue.record("a round with both servers killed succeeded")
            } catch let error as SyncError {
                #expect(error.code == .unreachable, "\(error)")
            }
            #expect(log.all.count == 2, "one line per server: \(log.all)")
            #expect(log.all.last?.contains("all 2 servers are down") == true, "\(log.all)")
            // The first server's address again: a replica back after a restart (on another port here, so the
            // bench starts its own server and the validator is pointed at it for this last round).
            try bench.server.start()
            let again = ValidationAPIClient(
                configuration: ValidationAPIClient.Configuration(
                    baseURL: second.baseURL, replicas: [bench.server.baseURL], token: bench.token,
                    requestTimeout: .seconds(10)),
                http: http)
            let last = SyncRound(client: again, store: store, anchors: [.demo])
            let report = try await last.run()
            #expect(report.inspectionsUploaded == 4)
            #expect(again.servers.currentURL == bench.server.baseURL)
        }
        #expect(try bench.server.inspections().count == 4)
    }

    @Test("farecheck sync with two --url: the first unreachable, the round is done on the second")
    func syncCommandFailsOver() async throws {
        let bench = try SyncBench()
        // A loopback port nothing listens on: the replica that is down.
        let down = "http://127.0.0.1:\(try LoopbackPort.unused())"
        _ = try bench.journalInspections(2)
        let run = try bench.validator.farecheck(
            [
                "sync", "--url", down, "--url", bench.server.baseURL, "--token-file", bench.tokenFile,
                "--demo-anchor", "--db", bench.validator.db,
            ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.text.contains("inspections: 2 uploaded, 0 waiting"), "\(run.text)")
        #expect(run.stderr.contains("sync: server \(down) unreachable"), "\(run.stderr)")
        #expect(run.stderr.contains("using \(bench.server.baseURL)"), "\(run.stderr)")
        let twice = try bench.validator.farecheck(
            [
                "sync", "--url", bench.server.baseURL, "--url", bench.server.baseURL + "/", "--token-file",
                bench.tokenFile, "--demo-anchor", "--db", bench.validator.db,
            ])
        #expect(twice.status == 2 && twice.stderr.contains("is given twice"), "\(twice.stderr)")
    }

    @Test("a daemon with urls: once the server it uses is killed, the next online check goes to the other")
    func daemonOnlineCheckFailsOver() async throws {
        let (bench, first, second) = try await Self.replicas(.sqlite)
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("b8"))))
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = bench.validator.path("farecheck.toml")
        try """
        mode = "gate"
        validator = "failover-gate"
        store = "\(bench.validator.db)"

        [[scanner]]
        name = "front-door"
        device = "\(scanner.devicePath)"
        protocol = "ssi"

        [output]
        stdout = false
        socket = "\(bench.validator.path("verdicts.sock"))"

        [http]
        listen = "127.0.0.1:0"

        [sync]
        urls = ["\(first.baseURL)", "\(second.baseURL)"]
        device_id = "validator-1"
        token_file = "\(bench.tokenFile)"
        anchors = ["\(SyncBench.demoAnchorPublic)"]
        allow_demo_anchor = true
        interval = 3600
        online_check = true
        online_deadline_ms = 5000
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: bench.validator.path("verdicts.sock"))
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        let gate = DaemonSyncTests.Gate(daemon: daemon, scanner: scanner, socket: socket)
        // The first round (on the first server) brings the key.
        var event = try await gate.scan(payload)
        for _ in 0..<40 where event.verdict != .valid {
            try await Task.sleep(for: .milliseconds(250))
            event = try await gate.scan(payload)
        }
        #expect(event.verdict == .valid)

        // The server the daemon uses now: the first, unless a request to it failed already (a keep-alive
        // connection closed under a request, say), which the daemon logged; past any back-off (at most 1.2 s).
        try await Task.sleep(for: .milliseconds(1500))
        let movedAway = daemon.stderr.text.contains("using \(second.baseURL)")
        let (used, other) = movedAway ? (second, first) : (first, second)
        used.kill()
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "b8", "--reason", "stolen"])
        // The check sent to the killed server fails: the offline verdict stands, and the server is left alone …
        event = try await gate.scan(payload)
        #expect(
            event.verdict == .valid && event.decidedBy == .offline,
            "\(event.verdict) \(event.reason) \(event.decidedBy): \(daemon.stderr.text)")
        // … and the next check, on the second server, learns of the revocation.
        event = try await gate.scan(payload)
        #expect(event.verdict == .revoked && event.decidedBy == .online, "\(daemon.stderr.text)")
        #expect(event.reason.contains("stolen"))
        #expect(await daemon.stderr.waitFor("sync: server \(used.baseURL) unreachable"), "\(daemon.stderr.text)")
        #expect(await daemon.stderr.waitFor("using \(other.baseURL)"))
        #expect(await daemon.stop() == 0, "\(daemon.stderr.text)")
    }
}
