import Daemon
import FareCore
import Foundation
import ScannerSimulation
import Scanners
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// Replay detection stays exact while an online check is in flight: the validation API answers slowly (a fault
/// proxy delays `/v1/check`), and the second scan of a single-use ticket arrives before the first one's answer.
@Suite("replay while an online check is in flight", .serialized, .timeLimit(.minutes(5)))
struct ReplayRaceTests {
    /// A gate with two SSI scanners (front and rear door) and online checks through a slow proxy.
    func config(_ bench: SyncBench, proxy: FaultProxy, scanners: [SimulatedSSIScanner]) throws -> String {
        var text = """
            mode = "gate"
            validator = "race-gate"
            store = "\(bench.validator.db)"

            [output]
            stdout = false
            socket = "\(bench.validator.path("verdicts.sock"))"

            # A port the system chooses: the default 8080 may be taken (another test run, another program).
            [http]
            listen = "127.0.0.1:0"

            [sync]
            url = "\(proxy.baseURL)"
            device_id = "validator-1"
            token_file = "\(bench.tokenFile)"
            anchors = ["\(SyncBench.demoAnchorPublic)"]
            allow_demo_anchor = true
            interval = 3600
            online_check = true
            online_deadline_ms = 3000

            """
        for (index, scanner) in scanners.enumerated() {
            text += """

                [[scanner]]
                name = "door-\(index + 1)"
                device = "\(scanner.devicePath)"
                protocol = "ssi"

                """
        }
        let path = bench.validator.path("farecheck.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts the daemon and waits for its first sync round to bring the issuer key (a day ticket verifies).
    func start(_ bench: SyncBench, proxy: FaultProxy, scanners: [SimulatedSSIScanner]) async throws
        -> (DaemonProcess, LineSocket)
    {
        let daemon = try await DaemonProcess.start(config: try config(bench, proxy: proxy, scanners: scanners))
        let socket = try await daemon.connectSocket(path: bench.validator.path("verdicts.sock"))
        #expect(await daemon.waitForSocketClients())
        for scanner in scanners { #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled }) }
        let probe = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("0b0e"))))
        for _ in 0..<40 {
            scanners[0].scan(probe)
            let line = try #require(await socket.readLine(timeout: 20))
            if try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8)).verdict == .valid { break }
            try await Task.sleep(for: .milliseconds(250))
        }
        return (daemon, socket)
    }

    func events(_ count: Int, from socket: LineSocket) async throws -> [VerdictEvent] {
        var events: [VerdictEvent] = []
        for _ in 0..<count {
            let line = try #require(await socket.readLine(timeout: 20), "a verdict did not arrive")
            events.append(try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8)))
        }
        return events
    }

    @Test("one single-use ticket at two doors at once: exactly one valid, the other replayed")
    func twoScanners() async throws {
        let bench = try SyncBench()
        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("51de", product: "single"))))
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        let scanners = [try SimulatedSSIScanner(), try SimulatedSSIScanner()]
        defer { for scanner in scanners { scanner.stop() } }
        let (daemon, socket) = try await start(bench, proxy: proxy, scanners: scanners)
        // Each online check now takes 0.6 s: both scans are in the pipeline before either has its answer.
        proxy.set(.delay(0.6), forPathsStartingWith: "/v1/check")
        scanners[0].scan(single)
        scanners[1].scan(single)
        let verdicts = try await events(2, from: socket)
        #expect(verdicts.map(\.verdict).sorted { $0.rawValue < $1.rawValue } == [.replayed, .valid])
        #expect(Set(verdicts.map(\.device)) == ["door-1", "door-2"])
        #expect(await daemon.stop() == 0)
        let journaled = try TrustStore(path: bench.validator.db).inspectionJournal.allInspections().filter {
            $0.ticketID == [0x51, 0xde]
        }
        #expect(journaled.map(\.verdict.text).sorted() == ["replayed", "valid"])
    }

    @Test("one single-use ticket scanned twice in quick succession at one door: valid, then replayed")
    func quickDoubleScan() async throws {
        let bench = try SyncBench()
        let single = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("51df", product: "single"))))
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        let scanners = [try SimulatedSSIScanner()]
        defer { for scanner in scanners { scanner.stop() } }
        let (daemon, socket) = try await start(bench, proxy: proxy, scanners: scanners)
        proxy.set(.delay(0.6), forPathsStartingWith: "/v1/check")
        scanners[0].scan(single)
        scanners[0].scan(single)
        let verdicts = try await events(2, from: socket)
        #expect(verdicts.map(\.verdict) == [.valid, .replayed])
        #expect(await daemon.stop() == 0)
    }
}
