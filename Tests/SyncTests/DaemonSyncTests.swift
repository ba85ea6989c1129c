import AsyncHTTPClient
import Daemon
import Foundation
import Glibc
import ScannerSimulation
import Scanners
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// `farecheck daemon` with `[sync]` against the reference server: a scanner, the sync worker, metrics.
@Suite("farecheck daemon with [sync]", .serialized, .timeLimit(.minutes(5)))
struct DaemonSyncTests {
    /// A daemon configuration with one simulated SSI scanner and a [sync] table.
    func config(_ bench: SyncBench, scanner: String, sync: String) throws -> String {
        let text = """
            mode = "gate"
            validator = "sync-gate"
            store = "\(bench.validator.db)"

            [[scanner]]
            name = "front-door"
            device = "\(scanner)"
            protocol = "ssi"

            [output]
            stdout = false
            socket = "\(bench.validator.path("verdicts.sock"))"

            [http]
            listen = "127.0.0.1:0"

            [sync]
            url = "\(bench.server.baseURL)"
            device_id = "validator-1"
            token_file = "\(bench.tokenFile)"
            anchors = ["\(SyncBench.demoAnchorPublic)"]
            allow_demo_anchor = true
            \(sync)
            """
        let path = bench.validator.path("farecheck.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A started daemon with one simulated SSI scanner and a [sync] table, its verdict socket connected.
    struct Gate {
        let daemon: DaemonProcess
        let scanner: SimulatedSSIScanner
        let socket: LineSocket

        /// Scans `payload` and reads its verdict.
        func scan(_ payload: [UInt8]) async throws -> VerdictEvent {
            scanner.scan(payload)
            let line = try #require(
                await socket.readLine(timeout: 20), "no verdict; the daemon said: \(daemon.stderr.text)")
            return try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8))
        }
    }

    /// Starts the daemon with `sync` added to its [sync] table; the caller stops the scanner.
    func startGate(_ bench: SyncBench, sync: String) async throws -> Gate {
        let scanner = try SimulatedSSIScanner()
        let daemon = try await DaemonProcess.start(
            config: try config(bench, scanner: scanner.devicePath, sync: sync))
        let socket = try await daemon.connectSocket(path: bench.validator.path("verdicts.sock"))
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        return Gate(daemon: daemon, scanner: scanner, socket: socket)
    }

    func metrics(port: Int) async throws -> [String: Double] {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(10))
        let text = String(buffer: try await response.body.collect(upTo: 1 << 20))
        return try PrometheusText.samples(text)
    }

    @Test("a ticket revoked on the server is revoked at the gate after a sync round; /metrics shows the last sync")
    func revokedAfterSync() async throws {
        let bench = try SyncBench()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("f6"))))
        let gate = try await startGate(bench, sync: "interval = 1\nstale_after = 3600")
        defer { gate.scanner.stop() }
        let daemon = gate.daemon
        let port = try #require(daemon.httpPort)
        func scan() async throws -> VerdictEvent { try await gate.scan(payload) }
        // The first round brings the key (until it has completed, the data counts as never synced: stale).
        var event = try await scan()
        for _ in 0..<30 where event.verdict != .valid || event.warnings.contains("stale-trust-data") {
            try await Task.sleep(for: .milliseconds(500))
            event = try await scan()
        }
        #expect(event.verdict == .valid && event.decidedBy == .offline)
        #expect(!event.warnings.contains("stale-trust-data"))

        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "f6", "--reason", "stolen"])
        for _ in 0..<30 where event.verdict != .revoked {
            try await Task.sleep(for: .milliseconds(500))
            event = try await scan()
        }
        #expect(event.verdict == .revoked)
        #expect(event.reason.contains("stolen"))

        let samples = try await metrics(port: port)
        #expect((samples["farecheck_last_sync_timestamp_seconds"] ?? 0) > 0)
        #expect(samples["farecheck_sync_failures_total"] == 0)
        #expect((samples["farecheck_trust_data_age_seconds"] ?? -1) >= 0)
        #expect(await daemon.stop() == 0, "\(daemon.stderr.text)")
    }

    @Test("past stale_after without a good sync, verdicts carry stale-trust-data; online check decides revoked")
    func staleAndOnline() async throws {
        let bench = try SyncBench()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("a7"))))
        // One round at start, the next an hour away: the data goes stale after a second.
        let gate = try await startGate(bench, sync: "interval = 3600\nstale_after = 1\nonline_check = true")
        defer { gate.scanner.stop() }
        let daemon = gate.daemon
        func scan() async throws -> VerdictEvent { try await gate.scan(payload) }
        var event = try await scan()
        for _ in 0..<30 where event.verdict != .valid {
            try await Task.sleep(for: .milliseconds(500))
            event = try await scan()
        }
        #expect(event.verdict == .valid)
        // A second after the round completed the data is stale: the round ends after its key is usable (a loaded
        // machine stretches the rest of it), so the scans go on until then, for at most 20 s.
        for _ in 0..<40 where !event.warnings.contains("stale-trust-data") {
            try await Task.sleep(for: .milliseconds(500))
            event = try await scan()
        }
        #expect(event.warnings.contains("stale-trust-data"), "\(event.warnings)")

        // Revoked on the server after the last sync: the online check knows.
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "a7", "--reason", "refunded"])
        event = try await scan()
        #expect(event.verdict == .revoked && event.decidedBy == .online)
        #expect(event.reason.contains("refunded"))
        #expect(await daemon.stop() == 0, "\(daemon.stderr.text)")
        // The journal records which verdict decided.
        let journal = try TrustStore(path: bench.validator.db).inspectionJournal.allInspections()
        #expect(journal.first { $0.id == event.id }?.decidedBy == "online")
        #expect(journal.filter { $0.id != event.id }.allSatisfy { $0.decidedBy == "offline" })
        // And the server learns it with the upload.
        _ = try await bench.round()
        let uploaded = try bench.server.inspections()
        #expect(uploaded.first { $0["id"] as? String == event.id.rawValue }?["decidedBy"] as? String == "online")
        #expect(
            uploaded.filter { $0["id"] as? String != event.id.rawValue }.allSatisfy {
                $0["decidedBy"] as? String == "offline"
            })
    }

    @Test("an inspection the server refuses is counted in /metrics and /healthz and named in the daemon's log")
    func refusedInspectionVisible() async throws {
        let bench = try SyncBench()
        // The server holds validator-1's record "shared-id" already (sent from a journal kept elsewhere) …
        let elsewhere = Workbench()
        _ = try TrustStore(path: elsewhere.db)
        try InspectionConflictTests.journal("shared-id", kind: .valid, at: 1_800_000_000, in: elsewhere.db)
        #expect(try await bench.round(storePath: elsewhere.db).inspectionsUploaded == 1)
        // … and this validator's journal has other content under the same id.
        try InspectionConflictTests.journal("shared-id", kind: .revoked, at: 1_800_000_005, in: bench.validator.db)

        let gate = try await startGate(bench, sync: "interval = 1\nstale_after = 3600")
        defer { gate.scanner.stop() }
        let daemon = gate.daemon
        let port = try #require(daemon.httpPort)
        var samples = try await metrics(port: port)
        // Each gauge is read on its own at the scrape: wait for a scrape after the round on both.
        for _ in 0..<40 where samples["farecheck_journal_refused"] != 1 || samples["farecheck_journal_unsent"] != 0 {
            try await Task.sleep(for: .milliseconds(500))
            samples = try await metrics(port: port)
        }
        #expect(samples["farecheck_journal_refused"] == 1)
        #expect(samples["farecheck_journal_unsent"] == 0, "the refused record does not wait to be sent")
        // /healthz counts after the round has reported (a moment after the journal changed).
        func refusedInHealth() async -> Int? {
            guard let health = await daemon.get("/healthz"),
                let report = try? JSONSerialization.jsonObject(with: Data(health.utf8)) as? [String: Any]
            else { return nil }
            return report["journalRefused"] as? Int
        }
        var refused = await refusedInHealth()
        for _ in 0..<40 where refused != 1 {
            try await Task.sleep(for: .milliseconds(250))
            refused = await refusedInHealth()
        }
        #expect(refused == 1)
        #expect(await daemon.stderr.waitFor("the server refused inspection shared-id"), "\(daemon.stderr.text)")
        #expect(await daemon.stderr.waitFor("1 refused by the server"))
        #expect(await daemon.stop() == 0, "\(daemon.stderr.text)")
        #expect(try bench.server.inspections().count == 1, "the server kept its first record only")
    }
}
