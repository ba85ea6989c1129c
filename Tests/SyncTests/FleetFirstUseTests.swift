import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import Scanners
import Signatures
import TestSupport
import Testing
import TrustStore
import ValidationAPI

@testable import Presentation

/// Two gates, two `farecheck daemon` processes with their own stores and devices, against one reference server:
/// a screenshot of a single-use ticket shown at both passes once.
@Suite("the fleet: single use across gates", .serialized, .timeLimit(.minutes(5)))
struct FleetFirstUseTests {
    /// One gate: its own store and device token, a simulated SSI scanner, the verdict socket.
    struct Gate {
        let name: String
        let store: Workbench
        let daemon: DaemonProcess
        let scanner: SimulatedSSIScanner
        let socket: LineSocket

        static func start(
            _ name: String, bench: SyncBench, token: String, online: Bool = true, interval: Int = 3600,
            url: String? = nil
        ) async throws -> Gate {
            let store = Workbench()
            _ = try TrustStore(path: store.db)
            try token.write(toFile: store.path("device.token"), atomically: true, encoding: .utf8)
            chmod(store.path("device.token"), 0o600)
            let scanner = try SimulatedSSIScanner()
            let config = store.path("farecheck.toml")
            try """
            mode = "gate"
            validator = "\(name)"
            store = "\(store.db)"

            [verification]
            single_use_products = ["single"]

            [[scanner]]
            name = "\(name)-reader"
            device = "\(scanner.devicePath)"
            protocol = "ssi"

            [output]
            stdout = false
            socket = "\(store.path("verdicts.sock"))"

            [http]
            listen = "127.0.0.1:0"

            [sync]
            url = "\(url ?? bench.server.baseURL)"
            device_id = "\(name)"
            token_file = "\(store.path("device.token"))"
            anchors = ["\(SyncBench.demoAnchorPublic)"]
            allow_demo_anchor = true
            interval = \(interval)
            online_check = \(online)
            """.write(toFile: config, atomically: true, encoding: .utf8)
            let daemon = try await DaemonProcess.start(config: config)
            let socket: LineSocket
            do {
                socket = try await LineSocket.connect(path: store.path("verdicts.sock"))
            } catch {
                throw DaemonProcess.Failure(message: "\(name) did not start: \(error); \(daemon.stderr.text)")
            }
            #expect(await daemon.waitForSocketClients())
            #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
            return Gate(name: name, store: store, daemon: daemon, scanner: scanner, socket: socket)
        }

        func scan(_ payload: [UInt8]) async throws -> VerdictEvent {
            scanner.scan(payload)
            let line = try #require(await socket.readLine(timeout: 20), "no verdict: \(daemon.stderr.text)")
            return try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8))
        }

        /// Scans until the first sync round has brought the key (the verdict is no longer `unknown-key`).
        func scanOnceSynced(_ payload: [UInt8]) async throws -> VerdictEvent {
            var event = try await scan(payload)
            for _ in 0..<40 where event.verdict == .unknownKey {
                try await Task.sleep(for: .milliseconds(250))
                event = try await scan(payload)
            }
            return event
        }
    }

    @Test("a single ticket passes gate A, then is refused at gate B as used at A; a day ticket passes both")
    func screenshotAtTwoGates() async throws {
        let bench = try SyncBench()
        let gateA = try await Gate.start("gate-a", bench: bench, token: try bench.server.addDevice("gate-a"))
        let gateB = try await Gate.start("gate-b", bench: bench, token: try bench.server.addDevice("gate-b"))
        defer {
            gateA.scanner.stop()
            gateB.scanner.stop()
        }
        // Both gates synced (a day ticket, not single use, is valid on each: nothing is claimed for it).
        let day = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d4"))))
        #expect(try await gateA.scanOnceSynced(day).verdict == .valid)
        #expect(try await gateB.scanOnceSynced(day).verdict == .valid)

        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("5c", product: "single"))))
        let atA = try await gateA.scan(single)
        #expect(atA.verdict == .valid, "\(atA.reason)")
        // The screenshot at gate B a moment later: B has never seen it, the fleet has.
        let atB = try await gateB.scan(single)
        #expect(
            atB.verdict == .replayed && atB.decidedBy == .online,
            "\(atB.reason)\ngate A: \(gateA.daemon.stderr.text)\ngate B: \(gateB.daemon.stderr.text)")
        #expect(atB.reason.contains("already passed gate-a"), "\(atB.reason)")
        // And at A again: its own replay rule refuses it, as before.
        let againAtA = try await gateA.scan(single)
        #expect(againAtA.verdict == .replayed)

        #expect(await gateA.daemon.stop() == 0)
        #expect(await gateB.daemon.stop() == 0)
        // Each gate's journal holds what it showed, with who decided.
        let journalB = try TrustStore(path: gateB.store.db).inspectionJournal.allInspections()
        #expect(journalB.first { $0.id == atB.id }?.decidedBy == "online")
        #expect(journalB.first { $0.id == atB.id }?.verdict.known == .replayed)
    }

    @Test("offline: a single ticket passed at gate A is refused at gate B once both have synced, as used at A")
    func offlineAfterOneSync() async throws {
        let bench = try SyncBench()
        let gateA = try await Gate.start(
            "gate-a", bench: bench, token: try bench.server.addDevice("gate-a"), online: false, interval: 1)
        let gateB = try await Gate.start(
            "gate-b", bench: bench, token: try bench.server.addDevice("gate-b"), online: false, interval: 1)
        defer {
            gateA.scanner.stop()
            gateB.scanner.stop()
        }
        let day = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d5"))))
        #expect(try await gateA.scanOnceSynced(day).verdict == .valid)
        #expect(try await gateB.scanOnceSynced(day).verdict == .valid)

        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("6d", product: "single"))))
        let atA = try await gateA.scan(single)
        #expect(atA.verdict == .valid && atA.decidedBy == .offline)
        // Gate A uploads it with its next round, gate B learns it with its next: B's store says so.
        let storeB = try TrustStore(path: gateB.store.db)
        var learnt: FleetFirstUse?
        for _ in 0..<80 where learnt == nil {
            try await Task.sleep(for: .milliseconds(250))
            learnt = try storeB.fleetFirstUse(issuer: "demo-transit", ticketID: [0x6d], format: .fc1)
        }
        #expect(learnt?.device == "gate-a")
        // Gate B, with no online check at all, refuses the screenshot.
        let atB = try await gateB.scan(single)
        #expect(atB.verdict == .replayed && atB.decidedBy == .offline, "\(atB.reason)")
        #expect(atB.reason.contains("already passed gate-a") && atB.reason.contains("as of the last sync"))
        // Gate A never learns its own first use from the fleet (its journal has it).
        let storeA = try TrustStore(path: gateA.store.db)
        #expect(try storeA.fleetFirstUse(issuer: "demo-transit", ticketID: [0x6d], format: .fc1) == nil)

        #expect(await gateA.daemon.stop() == 0)
        #expect(await gateB.daemon.stop() == 0)
        // Nothing was passed twice: the server has no conflict.
        let conflicts = try bench.server.admin(["first-uses", "conflicts", "--json"])
        #expect(conflicts.jsonRecords.isEmpty && conflicts.hasPrefix("[]"), "\(conflicts)")
    }

    @Test("a stolen gate revoked on the server: its claims are withdrawn, and the other gate passes the ticket again")
    func revokedDeviceClaimsRefuseNobody() async throws {
        let bench = try SyncBench()
        let gateA = try await Gate.start(
            "gate-a", bench: bench, token: try bench.server.addDevice("gate-a"), online: false, interval: 1)
        let gateB = try await Gate.start(
            "gate-b", bench: bench, token: try bench.server.addDevice("gate-b"), online: false, interval: 1)
        defer {
            gateA.scanner.stop()
            gateB.scanner.stop()
        }
        let day = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d9"))))
        #expect(try await gateA.scanOnceSynced(day).verdict == .valid)
        #expect(try await gateB.scanOnceSynced(day).verdict == .valid)
        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("6e", product: "single"))))
        #expect(try await gateA.scan(single).verdict == .valid)
        let storeB = try TrustStore(path: gateB.store.db)
        #expect(
            await Self.eventually {
                try storeB.fleetFirstUse(issuer: "demo-transit", ticketID: [0x6e], format: .fc1)?.device == "gate-a"
            })

        // Gate A is stolen: the agency revokes it, which withdraws its claims nobody confirmed.
        let revoked = try bench.server.admin(["devices", "revoke", "gate-a"])
        #expect(revoked.contains("1 first-use claim withdrawn"), "\(revoked)")
        #expect(
            await Self.eventually {
                try storeB.fleetFirstUse(issuer: "demo-transit", ticketID: [0x6e], format: .fc1) == nil
            })
        let atB = try await gateB.scan(single)
        #expect(atB.verdict == .valid, "\(atB.reason)\n\(gateB.daemon.stderr.text)")
        #expect(await gateA.daemon.stop() == 0)
        #expect(await gateB.daemon.stop() == 0)
    }

    @Test(
        "a first use the server withdrew no longer makes a gate refuse the ticket; one it did not withdraw still does")
    func withdrawnFirstUse() async throws {
        let bench = try SyncBench()
        // The reference server for everything but the first-use pages, which the test signs with the same anchor.
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        let now = Date().formatted(.iso8601)
        func page(_ members: String) throws -> [UInt8] {
            try SignedDocument.sign(
                payload: Array(#"{"since":0,"next":1,"more":false,\#(members)}"#.utf8),
                with: PrivateKey(pem: try String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
            ).jsonBytes()
        }
        let claims = ["7a", "7b"].map {
            #"{"format":"fc1","issuer":"demo-transit","ticketID":"\#($0)","device":"gate-x","usedAt":"\#(now)","#
                + #""recordedAt":"\#(now)"}"#
        }
        // And one the validator cannot read (used before year 1): skipped and counted, the rest applied.
        let unreadable =
            #"{"format":"fc1","issuer":"demo-transit","ticketID":"7c","device":"gate-x","#
            + #""usedAt":"0000-12-31T00:00:00Z","recordedAt":"\#(now)"}"#
        proxy.set(
            .replay(try page(#""entries":[\#((claims + [unreadable]).joined(separator: ","))]"#)),
            forPathsStartingWith: APIPath.firstUses)
        let gate = try await Gate.start(
            "gate-a", bench: bench, token: try bench.server.addDevice("gate-a"), online: false, interval: 1,
            url: proxy.baseURL)
        defer { gate.scanner.stop() }
        let day = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d7"))))
        #expect(try await gate.scanOnceSynced(day).verdict == .valid)
        let store = try TrustStore(path: gate.store.db)
        #expect(
            await Self.eventually {
                try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x7b], format: .fc1) != nil
            })
        // Counted once the round has ended (the page was applied before).
        var skipped: Double?
        for _ in 0..<100 where (skipped ?? 0) < 1 {
            skipped = try await ClockFloorSyncTests.metric(gate.daemon, "farecheck_sync_entries_skipped_total")
            if (skipped ?? 0) < 1 { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect((skipped ?? 0) >= 1, "farecheck_sync_entries_skipped_total is \(String(describing: skipped))")
        let claimed = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("7b", product: "single"))))
        let refused = try await gate.scan(claimed)
        #expect(refused.verdict == .replayed && refused.reason.contains("already passed gate-x"), "\(refused.reason)")

        // The server withdraws gate-x's claim of 7a (a revoked device's, or an operator's forget).
        let withdrawal =
            #"{"format":"fc1","issuer":"demo-transit","ticketID":"7a","device":"gate-x","withdrawnAt":"\#(now)"}"#
        proxy.set(
            .replay(try page(#""entries":[],"withdrawals":[\#(withdrawal)]"#)), forPathsStartingWith: APIPath.firstUses)
        #expect(
            await Self.eventually {
                try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x7a], format: .fc1) == nil
            })
        let withdrawn = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("7a", product: "single"))))
        let passed = try await gate.scan(withdrawn)
        #expect(passed.verdict == .valid, "\(passed.reason)\n\(gate.daemon.stderr.text)")
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0x7b], format: .fc1) != nil)
        #expect(await gate.daemon.stop() == 0)
    }

    @Test("a gate whose online check meets a server trickling its answer gives its offline verdict, not waiting for it")
    func onlineCheckDeadlineHolds() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        // online_deadline_ms is 800 by default.
        let gate = try await Gate.start(
            "gate-a", bench: bench, token: try bench.server.addDevice("gate-a"), url: proxy.baseURL)
        defer { gate.scanner.stop() }
        let day = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d8"))))
        let synced = try await gate.scanOnceSynced(day)
        #expect(synced.verdict == .valid, "\(synced.reason)")

        // The server's answer now comes at a byte a second, its head at once.
        proxy.set(.trickle, forPathsStartingWith: APIPath.check)
        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("8a", product: "single"))))
        let event = try await gate.scan(single)
        let trickled = proxy.trickled
        #expect(event.verdict == .valid && event.decidedBy == .offline, "\(event.reason)")
        // The verdict came while the server's answer was still on its way: the gate did not wait for it. How close
        // to the deadline it came is DeadlineTests' (the checker on its own) and the benchmark's: here the gate, the
        // server, the proxy and the test share the machine, and under load they share it with a CPU hog too.
        #expect(trickled.started == 1 && trickled.finished == 0, "\(trickled)")
        // The trickled answer alone takes a second a byte: the verdict came before half of it.
        #expect(
            event.latencyMicros < trickled.bodyBytes * 500_000,
            "the verdict took \(event.latencyMicros) µs against a trickle of \(trickled.bodyBytes) s")
        #expect(await gate.daemon.stop() == 0)
    }

    /// Waits up to 20 seconds for `condition`, checking every 100 ms.
    static func eventually(_ condition: () throws -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if (try? condition()) == true { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return (try? condition()) == true
    }
}
