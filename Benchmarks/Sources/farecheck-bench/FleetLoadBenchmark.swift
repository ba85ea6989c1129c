import ArgumentParser
import AsyncHTTPClient
import FareCore
import Foundation
import NIOCore
import NIOHTTP1
import Signatures
import Synchronization
import ValidationAPI

/// `farecheck-bench fleet`: simulated validators (sync rounds, inspection uploads, online checks that claim first
/// uses) against 1, 2 or 3 `farecheck-server` replicas on one PostgreSQL database, one replica killed in the middle;
/// then the database is counted: every inspection stored exactly once, every claimed ticket decided once.
///
/// A validator here is a schedule and a device token, not a store: it makes the requests a validator's sync round
/// makes (`GET /v1/keys`, `/v1/revocations`, `/v1/first-uses`, `POST /v1/inspections` with a few new records) every
/// sync period, compressed in time, and fails over as the product's client does (to the next server on a failed
/// connection, a timeout or a 5xx, the request tried again there). The database named is dropped and made again.
struct FleetLoadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Simulated validators against farecheck-server replicas on PostgreSQL, one killed midway.",
        discussion: """
            Needs PostgreSQL: --database-url names a database the bench may drop and create (its role needs \
            CREATEDB), e.g. postgres://farecheck:farecheck@127.0.0.1:5432/farecheck_fleet_bench. Loopback only.
            """)

    @Option(help: "Simulated validators.") var validators = 10_000
    @Option(help: "Their sync period in seconds (fleet time).") var syncPeriod = 300.0
    @Option(help: "Fleet seconds per wall-clock second.") var compression = 10.0
    @Option(help: "Online checks a second (wall clock), each claiming a single-use ticket's first use.")
    var checksPerSecond = 200.0
    @Option(help: "Replica counts to run, comma-separated.") var replicas = "1,2,3"
    @Option(help: "Wall-clock seconds of load per run.") var duration = 30.0
    @Option(help: "Seconds into a run with more than one replica when the first is killed (SIGKILL).")
    var killAfter = 15.0
    @Option(help: "New inspection records each validator uploads per round.") var recordsPerRound = 2
    @Option(help: "Requests in flight at most.") var inFlight = 256
    @Option(help: "The database to drop and create for each run (PostgreSQL URL).")
    var databaseURL =
        ProcessInfo.processInfo.environment["FARECHECK_BENCH_POSTGRES_URL"]
        ?? "postgres://farecheck:farecheck@127.0.0.1:5432/farecheck_fleet_bench"

    func run() async throws {
        let counts = replicas.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !counts.isEmpty, counts.allSatisfy({ (1...8).contains($0) }) else {
            throw ValidationError("--replicas must list replica counts from 1 to 8, e.g. 1,2,3")
        }
        guard let url = URL(string: databaseURL), ["127.0.0.1", "localhost", "::1"].contains(url.host ?? "") else {
            throw ValidationError("--database-url must be a PostgreSQL URL on loopback")
        }
        printLine(
            "fleet: \(validators) validators, sync every \(Int(syncPeriod)) s fleet time at \(compression)× "
                + "(a round every \(syncPeriod / compression) s each: \(Self.rate(Double(validators) * compression / syncPeriod)) rounds/s), "
                + "\(Self.rate(checksPerSecond)) online checks/s, \(Int(duration)) s a run; "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores")
        for count in counts {
            let run = FleetLoadRun(command: self, replicaCount: count)
            try await run.execute()
        }
    }

    static func rate(_ value: Double) -> String { String(format: "%.0f", value) }
}

/// One run: a fresh database, `replicaCount` servers, the load, the kill, the drain, the counts.
final class FleetLoadRun: @unchecked Sendable {
    let command: FleetLoadCommand
    let replicaCount: Int
    let directory: String
    let http: HTTPClient

    /// What happened, under one lock: latencies by kind, errors, failovers, what each check answered.
    struct Tally {
        var latencies: [String: [Double]] = [:]
        var requests = 0
        var errors: [String: Int] = [:]
        var failovers = 0
        var recordsAcknowledged = 0
        var winners: [String: Set<String>] = [:]
        var claims = 0
        var alreadyUsed = 0
        var roundsDone = 0
        var roundsLate = 0
    }

    let tally = Mutex(Tally())
    /// Per validator: the server it uses now, its pending (unacknowledged) records, its round number.
    struct Validator {
        var token: String
        var server: Int
        var pending: [InspectionRecord] = []
        var round = 0
    }

    let validators: Mutex<[Validator]>
    var servers: [ServerChild] = []
    var urls: [String] = []
    let killed = Mutex<Set<Int>>([])

    init(command: FleetLoadCommand, replicaCount: Int) {
        self.command = command
        self.replicaCount = replicaCount
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-fleet-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool = .init(idleTimeout: .seconds(30), concurrentHTTP1ConnectionsPerHostSoftLimit: 128)
        configuration.timeout = .init(connect: .seconds(2), read: .seconds(10))
        http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        validators = Mutex([])
    }

    func execute() async throws {
        do {
            try await load()
        } catch {
            await tearDown()
            throw error
        }
        await tearDown()
    }

    func tearDown() async {
        for server in servers { server.stop() }
        try? await http.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    func load() async throws {
        try prepareDatabase()
        try startServers()
        let started = ContinuousClock.now
        let deadline = started + .seconds(command.duration)
        async let rounds: Void = driveRounds(until: deadline)
        async let checks: Void = driveChecks(until: deadline)
        async let kill: Void = killFirstServer(at: started + .seconds(command.killAfter))
        _ = await (rounds, checks, kill)
        let loadSeconds =
            Double((ContinuousClock.now - started).components.seconds)
            + Double((ContinuousClock.now - started).components.attoseconds) / 1e18
        let drained = await drain()
        try report(loadSeconds: loadSeconds, drainedBatches: drained)
    }

    // MARK: Set-up

    var benchURL: String { command.databaseURL }

    /// The server URL of the maintenance database beside the bench one (to drop and create it).
    var adminURL: String {
        var components = URLComponents(string: benchURL)!
        components.path = "/postgres"
        return components.string!
    }

    var databaseName: String { String(URLComponents(string: benchURL)!.path.dropFirst()) }

    func prepareDatabase() throws {
        try psql(adminURL, "DROP DATABASE IF EXISTS \"\(databaseName)\" WITH (FORCE)")
        try psql(adminURL, "CREATE DATABASE \"\(databaseName)\"")
        try serverCommand(["init", "--database-url", benchURL])
        try serverCommand([
            "keys", "add", "Keys/demo-transit-es256.pub.pem", "--issuer", "demo-transit", "--database-url", benchURL,
        ])
        try serverCommand(["keys", "publish", "--anchor-key", "Keys/demo-anchor.key", "--database-url", benchURL])
        // Every validator a device of its own, its token's hash stored as `devices add` stores it.
        var generator = SystemRandomNumberGenerator()
        var lines: [String] = []
        var list: [FleetLoadRun.Validator] = []
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        for index in 0..<command.validators {
            let token = (0..<4).map { _ in String(generator.next() as UInt64, radix: 36) }.joined(separator: "-")
            lines.append("sim-\(index),\(digest(.sha256, Array(token.utf8)).hexString),false,\(now)")
            list.append(Validator(token: token, server: index % replicaCount))
        }
        let csv = directory + "/devices.csv"
        try lines.joined(separator: "\n").write(toFile: csv, atomically: true, encoding: .utf8)
        try psql(benchURL, "\\copy device (id, token_hash, revoked, created_at) FROM '\(csv)' CSV")
        validators.withLock { $0 = list }
    }

    func startServers() throws {
        for index in 0..<replicaCount {
            let server = try ServerChild(
                program: serverProgram,
                arguments: [
                    "serve", "--database-url", benchURL, "--listen", "127.0.0.1:0", "--anchor-key",
                    "Keys/demo-anchor.key",
                    "--log-level", "error",
                ], log: directory + "/server-\(index).log")
            servers.append(server)
            urls.append(server.baseURL)
        }
    }

    var serverProgram: String {
        URL(fileURLWithPath: FarecheckProgram.path).deletingLastPathComponent().appendingPathComponent(
            "farecheck-server"
        )
        .path
    }

    func psql(_ url: String, _ sql: String) throws {
        let (status, output) = Self.spawn("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-q", "-c", sql])
        guard status == 0 else { throw CommandFailure.exit("fleet: psql failed (\(sql.prefix(60))): \(output)") }
    }

    func serverCommand(_ arguments: [String]) throws {
        let (status, output) = Self.spawn(serverProgram, arguments)
        guard status == 0 else {
            throw CommandFailure.exit(
                "fleet: farecheck-server \(arguments.prefix(2).joined(separator: " ")): \(output)")
        }
    }

    static func spawn(_ program: String, _ arguments: [String]) -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    // MARK: Load

    /// Every validator's rounds, spread evenly over the (compressed) sync period, at most `inFlight` at once.
    func driveRounds(until deadline: ContinuousClock.Instant) async {
        let period = command.syncPeriod / command.compression
        let count = command.validators
        let started = ContinuousClock.now
        let slots = AsyncSlots(command.inFlight)
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while true {
                let due = started + .seconds(period * Double(next) / Double(count))
                if due >= deadline { break }
                if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
                if ContinuousClock.now - due > .seconds(1) { tally.withLock { $0.roundsLate += 1 } }
                await slots.acquire()
                let validator = next % count
                group.addTask {
                    await self.round(validator)
                    await slots.release()
                }
                next += 1
            }
        }
    }

    /// Online checks at a steady rate; each ticket is claimed by two different validators, so exactly one must win.
    func driveChecks(until deadline: ContinuousClock.Instant) async {
        guard command.checksPerSecond > 0 else { return }
        let started = ContinuousClock.now
        let slots = AsyncSlots(max(1, command.inFlight / 4))
        await withTaskGroup(of: Void.self) { group in
            var next = 0
            while true {
                let due = started + .seconds(Double(next) / command.checksPerSecond)
                if due >= deadline { break }
                if due > .now { try? await Task.sleep(until: due, clock: .continuous) }
                await slots.acquire()
                let index = next
                group.addTask {
                    await self.check(index)
                    await slots.release()
                }
                next += 1
            }
        }
    }

    func killFirstServer(at instant: ContinuousClock.Instant) async {
        guard replicaCount > 1 else { return }
        try? await Task.sleep(until: instant, clock: .continuous)
        servers[0].kill()
        killed.withLock { _ = $0.insert(0) }
        printLine("  [\(replicaCount) replicas] killed replica 1 (SIGKILL) at \(Int(command.killAfter)) s")
    }

    /// One sync round of a validator: keys, revocations, first uses, then its new and pending records.
    func round(_ index: Int) async {
        let (token, number) = validators.withLock { list -> (String, Int) in
            list[index].round += 1
            return (list[index].token, list[index].round)
        }
        _ = await request(index, "keys", .GET, APIPath.keys + "?since=1", token: token, body: nil)
        _ = await request(index, "revocations", .GET, APIPath.revocations + "?cursor=0", token: token, body: nil)
        let since = Int64(Date().timeIntervalSince1970 * 1000) - Int64(command.syncPeriod / command.compression * 1000)
        _ = await request(index, "first-uses", .GET, APIPath.firstUses + "?since=\(since)", token: token, body: nil)
        let records = (0..<command.recordsPerRound).map { serial in
            InspectionRecord(
                id: "sim-\(index)-\(number)-\(serial)", inspectedAt: Int64(Date().timeIntervalSince1970 * 1000),
                source: "door-1", symbology: "aztec", payloadDigest: Array(repeating: UInt8(serial), count: 32),
                format: "fc1", issuer: "demo-transit", ticketID: [UInt8(truncatingIfNeeded: index), UInt8(serial)],
                verdict: "valid", reason: "Valid ticket.", signature: "valid", warnings: [], inspector: nil,
                decidedBy: "offline")
        }
        let batch = validators.withLock { list -> [InspectionRecord] in
            list[index].pending += records
            return Array(list[index].pending.prefix(InspectionBatch.maximumRecordCount))
        }
        await upload(index, batch, token: token)
        tally.withLock { $0.roundsDone += 1 }
    }

    func upload(_ index: Int, _ batch: [InspectionRecord], token: String) async {
        guard let body = try? WireFormat.encode(InspectionBatch(records: batch)),
            let answer = await request(index, "inspections", .POST, APIPath.inspections, token: token, body: body),
            let acknowledgement = try? JSONDecoder().decode(BatchAcknowledgement.self, from: Data(answer))
        else { return }
        let accepted = Set(acknowledgement.accepted)
        validators.withLock { $0[index].pending.removeAll { accepted.contains($0.id) } }
        tally.withLock { $0.recordsAcknowledged += accepted.count }
    }

    func check(_ number: Int) async {
        // Ticket k is claimed by two validators (checks 2k and 2k+1), far apart in the fleet.
        let ticket = number / 2
        let index = (number % 2 == 0 ? ticket : ticket + command.validators / 2) % command.validators
        let token = validators.withLock { $0[index].token }
        let inspection: InspectionID = "check-\(number)"
        let request = OnlineCheckRequest(
            payload: Array("FC1:load".utf8), format: "fc1", issuer: "fleet-load",
            ticketID: withUnsafeBytes(of: UInt64(ticket).bigEndian, Array.init), keyID: "k1", claimFirstUse: true,
            inspectionID: inspection)
        guard let body = try? WireFormat.encode(request),
            let answer = await self.request(index, "check", .POST, APIPath.check, token: token, body: body),
            let response = try? WireFormat.decode(OnlineCheckResponse.self, from: answer)
        else { return }
        tally.withLock { tally in
            tally.claims += 1
            if response.firstUse?.claimed == true {
                tally.winners["\(ticket)", default: []].insert("sim-\(index)/\(inspection)")
            } else if response.verdict == "already-used" {
                tally.alreadyUsed += 1
            }
        }
    }

    /// One request to the validator's current server; on a failed connection, a timeout or a 5xx the validator
    /// fails over to the next server and tries once more there. Returns the body of a 2xx or 304 answer.
    func request(
        _ index: Int, _ kind: String, _ method: HTTPMethod, _ path: String, token: String, body: [UInt8]?
    ) async -> [UInt8]? {
        for attempt in 0..<2 {
            let server = validators.withLock { $0[index].server }
            var request = HTTPClientRequest(url: urls[server] + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer \(token)")
            if let body {
                request.headers.add(name: "Content-Type", value: "application/json")
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            let started = ContinuousClock.now
            var failure: String?
            var answer: [UInt8]?
            do {
                let response = try await http.execute(request, timeout: .seconds(10))
                let bytes = try await response.body.collect(upTo: 8 << 20)
                if response.status.code >= 500 {
                    failure = "HTTP \(response.status.code)"
                } else if response.status.code >= 400 {
                    tally.withLock { $0.errors["\(kind) HTTP \(response.status.code)", default: 0] += 1 }
                    return nil
                } else {
                    answer = Array(buffer: bytes)
                }
            } catch {
                failure = "\(type(of: error))"
            }
            let seconds =
                Double((ContinuousClock.now - started).components.attoseconds) / 1e18
                + Double((ContinuousClock.now - started).components.seconds)
            tally.withLock { tally in
                tally.requests += 1
                if failure == nil { tally.latencies[kind, default: []].append(seconds * 1000) }
            }
            if let answer { return answer }
            // Fail over: the next server not known to be dead, tried again at once.
            let dead = killed.withLock { $0 }
            validators.withLock { list in
                var next = (list[index].server + 1) % urls.count
                for _ in 0..<urls.count where dead.contains(next) { next = (next + 1) % urls.count }
                list[index].server = next
            }
            tally.withLock { tally in
                tally.failovers += 1
                if attempt == 1 { tally.errors["\(kind) \(failure ?? "failed")", default: 0] += 1 }
            }
        }
        return nil
    }

    /// After the load: every validator's pending records uploaded until none is left (bounded).
    func drain() async -> Int {
        var batches = 0
        for _ in 0..<5 {
            let pending = validators.withLock { list in list.indices.filter { !list[$0].pending.isEmpty } }
            if pending.isEmpty { break }
            for index in pending {
                let (token, batch) = validators.withLock { ($0[index].token, Array($0[index].pending.prefix(1000))) }
                await upload(index, batch, token: token)
                batches += 1
            }
        }
        return batches
    }

    // MARK: Counting

    func report(loadSeconds: Double, drainedBatches: Int) throws {
        let tally = self.tally.withLock { $0 }
        let generated = validators.withLock { list in list.reduce(0) { $0 + $1.round } } * command.recordsPerRound
        let unsent = validators.withLock { list in list.reduce(0) { $0 + $1.pending.count } }
        let stored = try queryInteger("SELECT count(*) FROM inspection")
        let distinct = try queryInteger("SELECT count(DISTINCT (device_id, id)) FROM inspection")
        let firstUses = try queryInteger("SELECT count(*) FROM first_use WHERE issuer = 'fleet-load'")
        let ticketsWon = tally.winners.count
        let decidedTwice = tally.winners.values.filter { $0.count > 1 }.count
        let all = tally.latencies.values.flatMap { $0 }.sorted()
        func percentile(_ values: [Double], _ p: Double) -> String {
            guard !values.isEmpty else { return "-" }
            return String(format: "%.1f", values[min(values.count - 1, Int(Double(values.count) * p))])
        }
        let prefix = "  [\(replicaCount) replica\(replicaCount == 1 ? "" : "s")]"
        printLine(
            "\(prefix) \(tally.requests) requests in \(String(format: "%.1f", loadSeconds)) s: "
                + "\(String(format: "%.0f", Double(tally.requests) / loadSeconds)) requests/s; latency p50 "
                + "\(percentile(all, 0.5)) ms, p99 \(percentile(all, 0.99)) ms; \(tally.roundsDone) sync rounds "
                + "(\(tally.roundsLate) started over 1 s late), \(tally.claims) online checks")
        for kind in tally.latencies.keys.sorted() {
            let values = tally.latencies[kind]!.sorted()
            printLine(
                "\(prefix)   \(kind): \(values.count) answered, p50 \(percentile(values, 0.5)) ms, p99 "
                    + "\(percentile(values, 0.99)) ms")
        }
        let errors =
            tally.errors.isEmpty
            ? "none" : tally.errors.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", ")
        printLine("\(prefix) failovers \(tally.failovers); errors after failover: \(errors)")
        printLine(
            "\(prefix) inspections: \(generated) made, \(stored) stored (\(distinct) distinct), \(unsent) unsent after "
                + "the drain (\(drainedBatches) batches); lost \(generated - stored - unsent), doubled "
                + "\(stored - distinct)")
        printLine(
            "\(prefix) first uses: \(ticketsWon) tickets won by a check, \(firstUses) recorded, "
                + "\(tally.alreadyUsed) checks answered already-used, \(decidedTwice) tickets won twice")
    }

    func queryInteger(_ sql: String) throws -> Int {
        let (status, output) = Self.spawn("/usr/bin/psql", [benchURL, "-tAc", sql])
        guard status == 0, let value = Int(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw CommandFailure.exit("fleet: psql: \(output)")
        }
        return value
    }
}

/// At most N tasks at once.
actor AsyncSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(_ count: Int) { free = count }

    func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { free += 1 } else { waiting.removeFirst().resume() }
    }
}

/// A `farecheck-server serve` child: started, its URL read from its first line, killed or stopped.
final class ServerChild: @unchecked Sendable {
    let process = Process()
    let baseURL: String

    init(program: String, arguments: [String], log: String) throws {
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        var line = Data()
        let handle = out.fileHandleForReading
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard let range = text.range(of: #"http://[0-9.:]+"#, options: .regularExpression) else {
            process.terminate()
            throw CommandFailure.exit("fleet: the server did not start: \(text)")
        }
        baseURL = String(text[range])
    }

    func kill() { Foundation.kill(process.processIdentifier, SIGKILL) }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
