import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import Scanners
import TestSupport
import Testing
import TrustStore
import ValidationAPI

@testable import Presentation

/// A full disk on a real (tmpfs) filesystem: verdicts shown while it is full are journaled once space returns.
@Suite(
    "full disk", .serialized,
    .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
struct FullDiskTests {
    static func record(_ index: Int) -> InspectionRecord {
        let verdict = Verdict(
            kind: .valid, reason: "The ticket is genuine and valid now.", signature: .valid, format: .fc1,
            issuer: "demo-transit", keyID: "0a0b",
            ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: [UInt8(index % 256), 1]),
            inspectedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
        return InspectionRecord(
            Inspection(
                source: "front-door", symbology: .aztec, payloadByteCount: 300,
                payloadDigest: [UInt8](repeating: UInt8(index % 256), count: 32), verdict: verdict))
    }

    @Test("the journal on a full disk: records go to the reserve, survive a reopen, and are written once after")
    func journalReserveAcrossReopen() throws {
        let disk = try SmallFilesystem(kibibytes: 3 * 1024)
        let paths = InspectionJournal.paths(besideStore: disk.path + "/farecheck.sqlite")
        var shown: [InspectionID] = []
        do {
            let journal = try InspectionJournal(
                path: paths.journal, reservePath: paths.reserve, reserveBytes: 256 << 10)
            #expect(journal.reserveAvailable)
            let before = Self.record(0)
            #expect(journal.append(before) == .journaled)
            shown.append(before.id)
            disk.fill()
            #expect(disk.freeBytes < 4096)
            var kept: [InspectionJournal.Durability] = []
            for index in 1...150 {
                let record = Self.record(index)
                kept.append(journal.append(record))
                shown.append(record.id)
            }
            // The disk refused the database; the reserve took every record (none only in memory).
            #expect(kept.allSatisfy { $0 != .heldInMemory })
            #expect(kept.contains(.reserved))
            #expect(journal.pendingCount == kept.filter { $0 == .reserved }.count)
            #expect(journal.lastFailure != nil)
        }
        // A restart while the disk is still full: the waiting records are found in the reserve.
        let reopened = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 256 << 10)
        #expect(reopened.pendingCount > 0)
        disk.free()
        // The first write after space returns brings everything in, in order, once.
        let after = Self.record(151)
        #expect(reopened.append(after) == .journaled)
        shown.append(after.id)
        #expect(reopened.pendingCount == 0)
        #expect(reopened.lastFailure == nil)
        let journaled = try reopened.allInspections().map(\.id)
        #expect(journaled.count == shown.count)
        #expect(Set(journaled) == Set(shown))
        #expect(try reopened.allInspections().map(\.id) == shown)
    }

    @Test("reserve full too: the record is held in memory and written when space returns")
    func reserveFull() throws {
        let disk = try SmallFilesystem(kibibytes: 2 * 1024)
        let paths = InspectionJournal.paths(besideStore: disk.path + "/farecheck.sqlite")
        let journal = try InspectionJournal(path: paths.journal, reservePath: paths.reserve, reserveBytes: 2048)
        #expect(journal.append(Self.record(0)) == .journaled)
        disk.fill()
        var outcomes: [InspectionJournal.Durability] = []
        for index in 1...10 { outcomes.append(journal.append(Self.record(index))) }
        #expect(outcomes.contains(.reserved))
        #expect(outcomes.last == .heldInMemory)
        #expect(journal.pendingCount == 10)
        disk.free()
        try journal.drain()
        #expect(journal.pendingCount == 0)
        #expect(try journal.allInspections().count == 11)
    }
}

/// The daemon on a store whose filesystem fills up: every verdict shown is journaled once space returns.
@Suite(
    "farecheck daemon on a full disk", .serialized,
    .enabled(if: SmallFilesystem.canMount, "mounting a small tmpfs needs root (CAP_SYS_ADMIN); skipped here"))
struct DaemonFullDiskTests {
    /// The bench's store copied onto a small filesystem, and the daemon configured on it.
    struct Gate {
        let setup: DaemonBench
        let disk: SmallFilesystem
        let scanner: SimulatedSSIScanner
        let payloads: [[UInt8]]
        var store: String { disk.path + "/farecheck.sqlite" }

        init() throws {
            let setup = try DaemonBench()
            self.setup = setup
            payloads = try (0..<5).map { try setup.ticket(String(format: "d15c%02x", $0)) }
            disk = try SmallFilesystem(kibibytes: 3 * 1024)
            try FileManager.default.copyItem(atPath: setup.bench.db, toPath: disk.path + "/farecheck.sqlite")
            scanner = try SimulatedSSIScanner()
        }

        func start() async throws -> (DaemonProcess, LineSocket) {
            let daemon = try await DaemonProcess.start(
                config: try setup.config(scanner: scanner.devicePath, store: store))
            let socket = try await LineSocket.connect(path: setup.socket)
            #expect(await daemon.waitForSocketClients())
            #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
            return (daemon, socket)
        }

        /// Scans `count` tickets and returns the verdicts shown on the socket.
        func scan(_ count: Int, on socket: LineSocket) async throws -> [VerdictEvent] {
            var events: [VerdictEvent] = []
            for index in 0..<count {
                scanner.scan(payloads[index % payloads.count])
                events.append(try setup.event(await socket.readLine()))
            }
            return events
        }

        func health(_ daemon: DaemonProcess) async throws -> [String: Any] {
            let body = try #require(await daemon.get("/healthz"))
            return try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        }

        func journal() throws -> [JournalEntry] { try TrustStore(path: store).inspectionJournal.allInspections() }
    }

    @Test("full, restarted while full, then space freed: every verdict shown is journaled once, ok again by itself")
    func restartWhileFull() async throws {
        let gate = try Gate()
        defer { gate.scanner.stop() }
        var (daemon, socket) = try await gate.start()
        var shown = try await gate.scan(2, on: socket)
        #expect(shown.allSatisfy { !$0.warnings.contains("not-journaled") })
        gate.disk.fill()
        let whileFull = try await gate.scan(20, on: socket)
        shown += whileFull
        #expect(whileFull.allSatisfy { $0.warnings.contains("not-journaled") })
        #expect(whileFull.first?.warningMessages.last?.contains("reserve") == true)
        let degraded = try await gate.health(daemon)
        #expect(degraded["status"] as? String == "degraded")
        #expect(degraded["journalPending"] as? Int == 20)
        let metrics = await daemon.get("/metrics") ?? ""
        #expect(metrics.contains("farecheck_journal_pending 20"))
        #expect(await daemon.stop() == 0)

        // Restarted with the disk still full: it starts, and finds what waits.
        (daemon, socket) = try await gate.start()
        shown += try await gate.scan(3, on: socket)
        // The store needed room to open: the reserve gave some back, which may already have let part of what
        // waited into the journal. Nothing is lost either way: waiting and journaled add up to what was shown.
        let pending = try #require(try await gate.health(daemon)["journalPending"] as? Int)
        #expect(pending + (try gate.journal().count) == shown.count)

        gate.disk.free()
        let afterwards = try await gate.scan(1, on: socket)
        shown += afterwards
        #expect(!afterwards[0].warnings.contains("not-journaled"))
        let healthy = try await gate.health(daemon)
        #expect(healthy["status"] as? String == "ok" && healthy["journalPending"] as? Int == 0)
        #expect(await daemon.stop() == 0)

        let journaled = try gate.journal().map(\.id)
        #expect(journaled.count == shown.count, "each inspection once")
        #expect(Set(journaled) == Set(shown.map(\.id)))
    }

    @Test("space freed and no scan follows: ok again by itself, with every verdict journaled (the time is printed)")
    func recoversWithoutAScan() async throws {
        let gate = try Gate()
        defer { gate.scanner.stop() }
        let (daemon, socket) = try await gate.start()
        gate.disk.fill()
        let shown = try await gate.scan(10, on: socket)
        #expect(shown.allSatisfy { $0.warnings.contains("not-journaled") })
        #expect(try await gate.health(daemon)["status"] as? String == "degraded")

        // No scan after the space returns: the daemon's own retry has to notice. Polled every 10 ms; the
        // 10 s bound only keeps a broken retry from hanging the suite.
        gate.disk.free()
        let freed = ContinuousClock.now
        var healthy: [String: Any] = [:]
        while freed.duration(to: .now) < .seconds(10) {
            healthy = try await gate.health(daemon)
            if healthy["status"] as? String == "ok" { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let took = freed.duration(to: .now)
        #expect(healthy["status"] as? String == "ok" && healthy["journalPending"] as? Int == 0)
        print(
            "full disk: space returned → /healthz ok in \(took.formatted(.units(allowed: [.milliseconds]))) without a scan"
        )
        #expect(await daemon.stop() == 0)
        let journaled = try gate.journal().map(\.id)
        #expect(journaled.count == shown.count, "each inspection once")
        #expect(Set(journaled) == Set(shown.map(\.id)))
    }

    @Test("SIGKILL while the journal is full, restart with space: nothing shown is missing")
    func killedWhileFull() async throws {
        let gate = try Gate()
        defer { gate.scanner.stop() }
        let (daemon, socket) = try await gate.start()
        gate.disk.fill()
        let shown = try await gate.scan(15, on: socket)
        #expect(shown.allSatisfy { $0.warnings.contains("not-journaled") })
        #expect(await daemon.stop(signal: SIGKILL) == SIGKILL)
        gate.disk.free()
        let (again, _) = try await gate.start()
        let health = try await gate.health(again)
        #expect(health["journalPending"] as? Int == 0)
        #expect(await again.stop() == 0)
        let journaled = Set(try gate.journal().map(\.id))
        #expect(Set(shown.map(\.id)).subtracting(journaled).isEmpty)
    }
}
