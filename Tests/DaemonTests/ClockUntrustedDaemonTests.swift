import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// `farecheck daemon` on a device whose clock reads 1970 (an RTC reset at boot), on the real binary with
/// libfaketime: what every sink, the status, the metrics, systemd and the journal say.
@Suite("farecheck daemon with a clock at 1970", .serialized, .timeLimit(.minutes(2)))
struct ClockUntrustedDaemonTests {
    @Test("a genuine ticket at 1970: clock-untrusted everywhere, the gate never opens, the journal keeps both times")
    func daemonAt1970() async throws {
        let setup = try DaemonBench()
        let payload = try setup.ticket("c0")
        let hookOutput = setup.bench.path("hook.out")
        let notifyPath = setup.bench.path("notify.sock")
        let receiver = try NotifyReceiver(path: notifyPath)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        // Every verdict runs the hook, so that it shows what a gate controller would be told.
        let config = try setup.config(
            scanner: scanner.devicePath,
            extra: """
                [gate]
                command = ["/bin/sh", "-c", "echo \\"$FARECHECK_VERDICT $FARECHECK_VALID\\" >> \(hookOutput)"]
                verdicts = ["*"]
                """)
        let boot = Date(timeIntervalSince1970: 12)
        let daemon = try await DaemonProcess.start(
            config: config, environment: ["NOTIFY_SOCKET": notifyPath], clock: try FakeTime.startingAt(boot))
        let socket = try await LineSocket.connect(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })

        scanner.scan(payload)
        let event = try setup.event(await socket.readLine())
        #expect(event.verdict == .clockUntrusted, "\(event.reason)")
        #expect(!event.isValid)
        #expect(event.signature == .valid)
        #expect(event.ticketId != nil && event.product == "day", "the ticket is still shown")
        #expect(
            event.inspectedAt.timeIntervalSince1970 < 3600, "the fake clock was not in effect: \(event.inspectedAt)")
        #expect(event.reason.hasPrefix("The device clock reads 1970-01-01T00:00:"), "\(event.reason)")
        #expect(event.reason.contains(FarecheckRelease.date.formatted(.iso8601)))
        #expect(event.reason.contains("date of this farecheck release"))
        #expect(event.clockFloor == FarecheckRelease.date && event.clockFloorSource == .release)
        // A bad beep, never a good one.
        #expect(await scanner.waitUntil(timeout: .seconds(5)) { $0.commands.contains(.beep) })

        // systemd is told at once, in the READY=1 message's STATUS line.
        let ready = try #require(await receiver.receive { $0.hasPrefix("READY=1") })
        #expect(ready.contains("STATUS=Clock untrusted (gate mode): The device clock reads 1970"), "\(ready)")
        // The status and the metrics.
        let port = try #require(daemon.httpPort)
        let health = try await LoopbackHTTP.request(port: port, "GET", "/healthz")
        #expect(health.status == 503)
        let report = try VerdictEvent.decoder.decode(DaemonStatus.Report.self, from: Data(health.text.utf8))
        #expect(report.status == "degraded")
        #expect(report.clock?.trusted == false)
        #expect(report.clock?.floor == FarecheckRelease.date && report.clock?.floorSource == .release)
        #expect(report.clock?.message?.contains("set the clock (NTP)") == true)
        var samples: [String: Double] = [:]
        for line in try await LoopbackHTTP.request(port: port, "GET", "/metrics").text.split(separator: "\n")
        where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { samples[String(parts[0])] = value }
        }
        #expect(samples["farecheck_clock_untrusted"] == 1)
        #expect(samples["farecheck_clock_floor_timestamp_seconds"] == FarecheckRelease.date.timeIntervalSince1970)
        #expect(samples[#"farecheck_verdicts_total{verdict="clock-untrusted"}"#] == 1)
        #expect(await daemon.stderr.waitFor("clock untrusted: The device clock reads 1970"))

        // The gate hook heard it as not valid: a relay that opens on FARECHECK_VALID=1 stays shut.
        var heard = ""
        for _ in 0..<100 where heard.isEmpty {
            heard = (try? String(contentsOfFile: hookOutput, encoding: .utf8)) ?? ""
            if heard.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(heard == "clock-untrusted 0\n")
        #expect(await daemon.stop() == 0)

        // The journal: the device clock (1970) and the floor it was judged against.
        let record = try #require(try TrustStore(path: setup.bench.db).inspectionJournal.allInspections().first)
        #expect(record.verdict == "clock-untrusted" && record.signature == "valid")
        #expect(record.inspectedAt < 3_600_000)
        #expect(record.clockFloor == Int64(FarecheckRelease.date.timeIntervalSince1970 * 1000))
        #expect(record.clockFloorSource == "release")
    }
}

/// systemd's notification socket, as the test plays it: a datagram socket the daemon writes to.
final class NotifyReceiver {
    private let descriptor: Int32

    init(path: String) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0 else { throw DaemonProcess.Failure(message: "cannot bind \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    /// The first message that `matches`, within `timeout` seconds.
    func receive(timeout: Double = 5, where matches: (String) -> Bool) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 0) > 0 else {
                try? await Task.sleep(for: .milliseconds(5))
                continue
            }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count > 0, case let message = String(decoding: buffer[..<count], as: UTF8.self), matches(message) {
                return message
            }
        }
        return nil
    }
}
