import Daemon
import FareCore
import Foundation
import ScannerSimulation
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI

@testable import Presentation

/// The trusted-time floor through sync, the CLI and the daemon, on the real binaries with a wrong clock
/// (libfaketime): a device clock hours behind what the agency's signed data says.
@Suite("A clock it can doubt: sync, CLI and daemon", .serialized, .timeLimit(.minutes(3)))
struct ClockFloorSyncTests {
    static let threeHours: TimeInterval = 3 * 3600

    @Test(
        "after a sync, farecheck verify by a clock 3 h behind is clock-untrusted (signature valid); --at and the right clock are not"
    )
    func verifyBehindTheFloor() throws {
        let bench = try SyncBench()
        let ticket = try bench.ticket("c1")
        let before = Date()
        let synced = try bench.syncCommand()
        #expect(synced.status == 0, "\(synced.stderr)")
        // The key bundle's and the revocation page's signing times and the server's Date: now, give or take.
        let floor = try #require(try bench.store().storedTimeFloor())
        #expect(floor.instant >= before.addingTimeInterval(-2) && floor.instant <= Date())
        #expect([.keyBundle, .revocations, .serverReply].contains(floor.source))

        let behind = try FakeTime.startingAt(Date().addingTimeInterval(-Self.threeHours))
        let doubted = try bench.validator.farecheck(
            ["verify", "--payload-file", ticket, "--json", "--db", bench.validator.db], clock: behind)
        #expect(doubted.status == 1, "\(doubted.stderr)")
        let line = try #require(doubted.jsonLines.first, "\(doubted.text) \(doubted.stderr)")
        #expect(line["verdict"] as? String == "clock-untrusted")
        #expect(line["signature"] as? String == "valid")
        #expect(line["ticketId"] as? String != nil, "the ticket is shown")
        let reason = line["reason"] as? String ?? ""
        #expect(reason.contains("set the clock (NTP)"), "\(reason)")
        #expect(reason.contains(floor.instant.formatted(.iso8601)), "\(reason)")
        #expect(line["clockFloor"] as? String == floor.instant.formatted(.iso8601))
        // The fake clock really was in effect: the verdict is dated three hours back.
        let inspected = try #require((line["inspectedAt"] as? String).flatMap { try? Date($0, strategy: .iso8601) })
        #expect(abs(inspected.timeIntervalSinceNow + Self.threeHours) < 120, "\(inspected)")
        // The text form says it too.
        let text = try bench.validator.farecheck(
            ["verify", "--payload-file", ticket, "--db", bench.validator.db], clock: behind)
        #expect(text.text.hasPrefix("CLOCK-UNTRUSTED  The device clock reads"), "\(text.text)")
        #expect(text.text.contains("the device clock is behind"))

        // An RTC reset to 1970 (a gate booting without its battery): clock-untrusted too, never expired or valid.
        let reset = try FakeTime.startingAt(Date(timeIntervalSince1970: 3_600))
        let at1970 = try bench.validator.farecheck(
            ["verify", "--payload-file", ticket, "--json", "--db", bench.validator.db], clock: reset)
        #expect(at1970.status == 1, "\(at1970.stderr)")
        let line1970 = try #require(at1970.jsonLines.first, "\(at1970.text) \(at1970.stderr)")
        #expect(line1970["verdict"] as? String == "clock-untrusted", "\(at1970.text)")
        #expect(line1970["signature"] as? String == "valid")
        #expect((line1970["inspectedAt"] as? String)?.hasPrefix("1970-01-01") == true, "\(at1970.text)")

        // An explicit instant is not the device clock: nothing to doubt.
        let at = try bench.validator.farecheck(
            [
                "verify", "--payload-file", ticket, "--json", "--db", bench.validator.db, "--at",
                Date().formatted(.iso8601),
            ], clock: behind)
        #expect(at.jsonLines.first?["verdict"] as? String == "valid", "\(at.text)")
        // The clock put right: valid, no restart of anything.
        #expect(try bench.verdict(ticket) == "valid")
    }

    @Test("a device clock 3 h behind still syncs, but the server's times do not move the floor, and it says why")
    func syncBehindTheServer() throws {
        let bench = try SyncBench()
        let behind = try FakeTime.startingAt(Date().addingTimeInterval(-Self.threeHours))
        let run = try bench.syncCommand(clock: behind)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.text.contains("bundle 1 applied"))
        for source in [
            "key bundle 1 is dated", "the revocation page after cursor 0 is dated", "the server's reply is dated",
        ] {
            #expect(run.stderr.contains(source), "\(run.stderr)")
        }
        #expect(run.stderr.contains("the trusted-time floor is not moved"))
        #expect(run.stderr.contains("Is the device clock behind?"))
        #expect(try bench.store().storedTimeFloor() == nil)
        // The same sync by the right clock takes them.
        #expect(try bench.syncCommand().status == 0)
        #expect(try bench.store().storedTimeFloor() != nil)
    }

    @Test(
        "a daemon with [sync] 3 h behind the floor: clock-untrusted, said everywhere; stepped right, valid again without a restart"
    )
    func daemonSteppedRight() async throws {
        let bench = try SyncBench()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("d1"))))
        #expect(try bench.syncCommand().status == 0)
        let floor = try #require(try bench.store().trustedTimeFloor())
        let clockFile = bench.validator.path("clock.rc")
        try FakeTime.set("-3h", in: clockFile)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try DaemonSyncTests().config(bench, scanner: scanner.devicePath, sync: "interval = 3600"),
            clock: try FakeTime.following(file: clockFile))
        let socket = try await LineSocket.connect(path: bench.validator.path("verdicts.sock"))
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        func scan() async throws -> VerdictEvent {
            scanner.scan(payload)
            let line = try #require(await socket.readLine(timeout: 20), "no verdict: \(daemon.stderr.text)")
            return try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8))
        }

        let doubted = try await scan()
        #expect(doubted.verdict == .clockUntrusted, "\(doubted.reason)")
        #expect(doubted.signature == .valid)
        #expect(doubted.ticketId != nil)
        #expect(doubted.clockFloor != nil && doubted.clockFloor! >= floor.instant)
        #expect(abs(doubted.inspectedAt.timeIntervalSinceNow + Self.threeHours) < 120)
        let health = try #require(await Self.health(daemon))
        #expect(health.status == "degraded")
        #expect(health.clock?.trusted == false)
        #expect(health.clock?.message?.contains("set the clock (NTP)") == true)
        #expect(try await Self.metric(daemon, "farecheck_clock_untrusted") == 1)
        // The sync round the daemon ran at start, by its clock 3 h behind: nothing moved the floor forward.
        #expect(await daemon.stderr.waitFor("the trusted-time floor is not moved"), "\(daemon.stderr.text)")
        #expect(await daemon.stderr.waitFor("clock untrusted"))

        // NTP steps the clock right: seen within the watch's second, no restart.
        try FakeTime.set("+0", in: clockFile)
        var trusted = false
        for _ in 0..<100 where !trusted {
            trusted = await Self.health(daemon)?.clock?.trusted == true
            if !trusted { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(trusted, "the daemon still doubts a clock put right: \(daemon.stderr.text)")
        #expect(await Self.health(daemon)?.status == "ok")
        #expect(try await Self.metric(daemon, "farecheck_clock_untrusted") == 0)
        let judged = try await scan()
        #expect(judged.verdict == .valid, "\(judged.reason)")
        #expect(judged.clockFloor == nil)
        #expect(await daemon.stderr.waitFor("is trusted"), "\(daemon.stderr.text)")
        #expect(await daemon.stop() == 0)

        // The journal keeps both times for each: what the clock read, and what it should at least have read.
        let records = try bench.store().inspectionJournal.allInspections()
        let untrusted = try #require(records.first { $0.verdict == "clock-untrusted" })
        #expect(untrusted.inspectedDate.timeIntervalSinceNow < -Self.threeHours + 300)
        #expect((untrusted.clockFloor ?? 0) >= Int64(floor.instant.timeIntervalSince1970 * 1000))
        let valid = try #require(records.first { $0.verdict == "valid" })
        #expect(valid.clockFloor != nil && valid.clockFloorSource != nil)
    }

    /// `/healthz` as the daemon serves it.
    static func health(_ daemon: DaemonProcess) async -> DaemonStatus.Report? {
        guard let body = await daemon.get("/healthz") else { return nil }
        return try? VerdictEvent.decoder.decode(DaemonStatus.Report.self, from: Data(body.utf8))
    }

    /// One sample of `/metrics`.
    static func metric(_ daemon: DaemonProcess, _ name: String) async throws -> Double? {
        let text = try #require(await daemon.get("/metrics"))
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ")[1])
        }
        return nil
    }
}
