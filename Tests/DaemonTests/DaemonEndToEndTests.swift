import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import Scanners
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// A store with an issuing key, tickets issued by the real CLI, and a daemon configuration around them.
final class DaemonBench {
    let bench = Workbench()
    var key: String { bench.path("issuer.key") }
    var socket: String { bench.path("verdicts.sock") }

    init() throws {
        let generated = try bench.farecheck(["keys", "generate", "--issuer", "demo-transit", "--out", key])
        guard generated.status == 0 else { throw DaemonProcess.Failure(message: generated.stderr) }
    }

    /// Issues a ticket and returns its payload bytes.
    func ticket(_ id: String, product: String = "day", extra: [String] = []) throws -> [UInt8] {
        let out = bench.path("\(id).bin")
        let issued = try bench.farecheck(
            [
                "issue", "--key", key, "--barcode", "aztec", "--ticket-id", id, "--product", product, "--payload-out",
                out,
            ]
                + extra)
        guard issued.status == 0 else { throw DaemonProcess.Failure(message: issued.stderr) }
        return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Writes a configuration for one simulated SSI scanner and returns its path.
    func config(scanner: String, mode: String = "gate", store: String? = nil, extra: String = "") throws -> String {
        let text = """
            mode = "\(mode)"
            validator = "test-gate"
            store = "\(store ?? bench.db)"

            [[scanner]]
            name = "front-door"
            device = "\(scanner)"
            protocol = "ssi"

            [output]
            stdout = true
            socket = "\(socket)"

            [http]
            listen = "127.0.0.1:0"
            \(extra)
            """
        let path = bench.path("farecheck.toml")
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func event(_ line: String?) throws -> VerdictEvent {
        let line = try #require(line, "no verdict line arrived")
        return try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8))
    }
}

@Suite("farecheck daemon, end to end", .serialized)
struct DaemonEndToEndTests {
    @Test("an SSI scanner on a pseudo-terminal: verdicts on the socket and stdout, beeps, journal, clean SIGTERM")
    func scannerToSinksToJournal() async throws {
        let setup = try DaemonBench()
        let day = try setup.ticket("d1")
        let single = try setup.ticket("51", product: "single")
        let stolen = try setup.ticket("57")
        #expect(
            try setup.bench.farecheck([
                "revoke", "--ticket-id", "57", "--issuer", "demo-transit", "--reason", "reported stolen",
            ]).status == 0)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(
                scanner: scanner.devicePath, extra: "language = \"de\"\ntime_zone = \"Europe/Berlin\""))
        let socket = try await LineSocket.connect(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        let port = try #require(daemon.httpPort, "no HTTP port in \(daemon.stderr.text)")
        let stream = try await EventStreamClient(port: port)
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })

        var events: [VerdictEvent] = []
        for payload in [day, day, single, single, stolen, Array("not a ticket".utf8)] {
            scanner.scan(payload)
            events.append(try setup.event(await socket.readLine()))
        }
        #expect(events.map(\.verdict) == [.valid, .valid, .valid, .replayed, .revoked, .unsupported])
        #expect(events[0].device == "front-door" && events[0].product == "day" && events[0].warnings.isEmpty)
        // A day ticket seen again is information at a gate; a single ticket seen again is refused.
        #expect(events[1].warnings == ["seen-before"])
        #expect(events[1].warningMessages.first?.contains("front-door") == true)
        #expect(events[3].reason.contains("already passed front-door"))
        #expect(events[4].reason.contains("reported stolen"))
        // Every verdict beeped on the scanner (good or bad).
        #expect(
            await scanner.waitUntil(timeout: .seconds(5)) { $0.commands.filter { $0 == .beep }.count >= events.count })

        // The same verdicts as server-sent events, in order.
        var streamed: [VerdictEvent] = []
        while streamed.count < events.count {
            let sse = try await stream.next(named: "verdict")
            streamed.append(try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data((sse.data ?? "").utf8)))
        }
        #expect(streamed.map(\.id) == events.map(\.id))

        // Prometheus metrics count what happened.
        let metrics = try await LoopbackHTTP.request(port: port, "GET", "/metrics")
        #expect(metrics.status == 200)
        let samples = try PrometheusText.samples(metrics.text)
        #expect(samples[#"farecheck_verdicts_total{verdict="valid"}"#] == 3)
        #expect(samples[#"farecheck_verdicts_total{verdict="replayed"}"#] == 1)
        #expect(samples[#"farecheck_verdicts_total{verdict="revoked"}"#] == 1)
        #expect(samples[#"farecheck_scans_total{device="front-door"}"#] == 6)
        #expect(samples[#"farecheck_scanner_connected{scanner="front-door"}"#] == 1)
        #expect(samples["farecheck_inspection_latency_seconds_count"] == 6)
        #expect((samples["farecheck_trust_data_age_seconds"] ?? -1) >= 0)
        #expect(samples["farecheck_journal_unsent"] == 6)
        let health = try await LoopbackHTTP.request(port: port, "GET", "/healthz")
        #expect(health.status == 200 && health.text.contains(#""status":"ok""#))
        // The page speaks the configured language, in the configured time zone.
        let page = try await LoopbackHTTP.request(port: port, "GET", "/")
        #expect(page.text.contains(#"data-language="de" data-time-zone="Europe/Berlin""#))

        // SIGTERM: everything stops promptly, the journal is closed with its write-ahead log emptied.
        let started = Date()
        #expect(await daemon.stop(signal: SIGTERM, timeout: 2) == 0, "\(daemon.stderr.text)")
        #expect(Date().timeIntervalSince(started) < 2)
        let wal = (try? FileManager.default.attributesOfItem(atPath: setup.bench.db + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0)
        #expect(!FileManager.default.fileExists(atPath: setup.socket))

        // Standard output carried the same verdicts, one JSON line each.
        let printed = try daemon.stdout.lines.map { try setup.event($0) }
        #expect(printed.map(\.id) == events.map(\.id))
        // The journal holds each inspection once, as shown.
        let journal = try TrustStore(path: setup.bench.db).inspectionJournal.allInspections()
        #expect(journal.map(\.id) == events.map(\.id))
        #expect(journal.map(\.verdict.known) == events.map(\.verdict))
        #expect(journal.allSatisfy { $0.source == "front-door" && $0.sentAt == nil })
    }

    @Test("SIGKILL in the middle of a stream of scans: every verdict that reached a sink is in the journal")
    func killedMidStream() async throws {
        let setup = try DaemonBench()
        let payloads = try (0..<6).map { try setup.ticket(String(format: "a0%02x", $0)) }
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(config: try setup.config(scanner: scanner.devicePath))
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        for index in 0..<200 { scanner.scan(payloads[index % payloads.count]) }
        var seen: [InspectionID] = []
        while seen.count < 40, let line = await socket.readLine(timeout: 10) { seen.append(try setup.event(line).id) }
        #expect(seen.count == 40)
        #expect(await daemon.stop(signal: SIGKILL) == SIGKILL)
        // What else reached a sink before the kill: the rest of the socket stream and stdout.
        while let line = await socket.readLine(timeout: 0.5) { seen.append(try setup.event(line).id) }
        let printed = daemon.stdout.lines.compactMap { try? setup.event($0).id }
        let shown = Set(seen).union(printed)
        #expect(shown.count >= 40)

        let journal = Set(try TrustStore(path: setup.bench.db).inspectionJournal.allInspections().map(\.id))
        #expect(shown.subtracting(journal).isEmpty, "shown but not journaled: \(shown.subtracting(journal))")

        // Restarted on the same store, the daemon goes on where it stopped.
        let again = try await DaemonProcess.start(config: try setup.config(scanner: scanner.devicePath))
        let socketAgain = try await again.connectSocket(path: setup.socket)
        #expect(await again.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        scanner.scan(payloads[0])
        var next = try setup.event(await socketAgain.readLine())
        // Scans still queued in the simulated scanner from before the kill may come first.
        while !next.warnings.contains("seen-before") || next.ticketId != "a000" {
            next = try setup.event(await socketAgain.readLine())
        }
        #expect(next.verdict == .valid)
        #expect(await again.stop() == 0)
    }

    @Test("a socket client that stops reading loses older lines, whole ones, and holds up neither scans nor others")
    func socketClientThatStopsReading() async throws {
        let setup = try DaemonBench()
        let payloads = try (0..<4).map { try setup.ticket(String(format: "b0%02x", $0)) }
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(config: try setup.config(scanner: scanner.devicePath))
        let stalled = try await daemon.connectSocket(path: setup.socket)
        let reader = try await LineSocket.connect(path: setup.socket)
        #expect(await daemon.waitForSocketClients(2))
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        // More lines than the stalled client's socket and the daemon's 64 KiB of unsent lines hold (lines of about
        // 700 bytes; a unix socket buffers about 200 KiB).
        let count = 600
        for index in 0..<count { scanner.scan(payloads[index % payloads.count]) }
        var ids: [InspectionID] = []
        while ids.count < count, let line = await reader.readLine(timeout: 20) { ids.append(try setup.event(line).id) }
        #expect(ids.count == count, "the reading client got \(ids.count) of \(count) verdicts")
        #expect(Set(ids).count == count)

        // Now the stalled client reads: each line whole, in order, not all of them, and the latest verdicts last.
        var kept: [InspectionID] = []
        while let line = await stalled.readLine(timeout: 1) { kept.append(try setup.event(line).id) }
        #expect(!kept.isEmpty && kept.count < count, "the stalled client got \(kept.count) of \(count)")
        let order = kept.compactMap { ids.firstIndex(of: $0) }
        #expect(order.count == kept.count && order == order.sorted())
        #expect(kept.suffix(10) == ids.suffix(10))

        // Both still connected, the daemon stops at once.
        let started = Date()
        #expect(await daemon.stop(signal: SIGTERM, timeout: 2) == 0, "\(daemon.stderr.text)")
        #expect(Date().timeIntervalSince(started) < 2)
        #expect(await reader.readLine(timeout: 1) == nil)
    }

    @Test("the gate hook runs with the verdict in its environment; a hook that hangs is killed")
    func gateHook() async throws {
        let setup = try DaemonBench()
        let day = try setup.ticket("9a7e")
        let script = setup.bench.path("open-gate.sh")
        let record = setup.bench.path("gate.log")
        try """
        #!/bin/sh
        if [ "$FARECHECK_PRODUCT" = "hang" ]; then sleep 30; fi
        echo "$FARECHECK_VERDICT $FARECHECK_VALID $FARECHECK_TICKET_ID $FARECHECK_DEVICE" >> \(record)
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let hang = try setup.ticket("4a", product: "hang")
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = try setup.config(
            scanner: scanner.devicePath,
            extra: """

                [gate]
                command = ["\(script)"]
                timeout = 0.5
                verdicts = ["*"]
                """)
        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        scanner.scan(hang)
        _ = try setup.event(await socket.readLine())
        scanner.scan(day)
        _ = try setup.event(await socket.readLine())
        scanner.scan(Array("garbage".utf8))
        _ = try setup.event(await socket.readLine())
        let deadline = Date().addingTimeInterval(10)
        var lines: [String] = []
        while Date() < deadline {
            lines = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
            if lines.count >= 2 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(lines == ["valid 1 9a7e front-door", "unsupported 0  front-door"])
        #expect(await daemon.stderr.waitFor("was killed"), "\(daemon.stderr.text)")
        #expect(await daemon.stop() == 0)
    }

    @Test(
        "the gate hook's event line carries the verdict without the holder's name, unless [gate] holder_data says so",
        arguments: [false, true])
    func gateHookHolderData(holderData: Bool) async throws {
        let setup = try DaemonBench()
        let ticket = try setup.ticket("7b01", extra: ["--holder", "Kim Berger"])
        let script = setup.bench.path("relay.sh")
        let record = setup.bench.path("relay.log")
        try """
        #!/bin/sh
        printf '%s\\n' "$FARECHECK_EVENT" >> \(record)
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = try setup.config(
            scanner: scanner.devicePath,
            extra: "\n[gate]\ncommand = [\"\(script)\"]\n" + (holderData ? "holder_data = true\n" : ""))
        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        scanner.scan(ticket)
        let shown = try setup.event(await socket.readLine())
        #expect(shown.verdict == .valid && shown.holder == "Kim Berger", "\(shown.reason)")
        let deadline = Date().addingTimeInterval(10)
        var line = ""
        while Date() < deadline {
            line = ((try? String(contentsOfFile: record, encoding: .utf8)) ?? "").trimmingCharacters(in: .newlines)
            if !line.isEmpty { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let event = try setup.event(line)
        #expect(event.id == shown.id && event.verdict == .valid && event.ticketId == "7b01")
        #expect(line.contains("Kim Berger") == holderData, "\(line)")
        #expect((event.holder != nil) == holderData)
        #expect(await daemon.stop() == 0)
    }

    @Test("inspector mode: scans are refused until an inspector logs in with a staff badge, then recorded with them")
    func inspectorSession() async throws {
        let setup = try DaemonBench()
        // Badges are signed by a key of their own, trusted for staff badges only.
        let badgeKey = setup.bench.path("badge.key")
        let generated = try setup.bench.farecheck(
            ["keys", "generate", "--issuer", "demo-staff", "--purpose", "staff-badge", "--out", badgeKey])
        #expect(generated.status == 0, "\(generated.stderr)")
        for staff in ["insp-17", "insp-gone"] {
            let added = try setup.bench.farecheck(["staff", "add", staff], stdin: Array("204816\n".utf8))
            #expect(added.status == 0, "\(added.stderr)")
        }
        #expect(try setup.bench.farecheck(["staff", "remove", "insp-gone"]).status == 0)
        func badge(_ id: String, holder: String, key: String, product: String = "staff-badge") throws -> [UInt8] {
            let out = setup.bench.path("\(id).bin")
            let issued = try setup.bench.farecheck([
                "issue", "--key", key, "--barcode", "aztec", "--ticket-id", id, "--product", product,
                "--holder", holder, "--payload-out", out,
            ])
            guard issued.status == 0 else { throw DaemonProcess.Failure(message: issued.stderr) }
            return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
        let goodBadge = try badge("b0", holder: "insp-17", key: badgeKey)
        let removedBadge = try badge("b1", holder: "insp-gone", key: badgeKey)
        let unknownBadge = try badge("b2", holder: "never-added", key: badgeKey)
        let ticketKeyBadge = try badge("b3", holder: "insp-17", key: setup.key)
        let badgeKeyTicket = try badge("d9", holder: "A. Rider", key: badgeKey, product: "day")
        let day = try setup.ticket("d4")
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(scanner: scanner.devicePath, mode: "inspector"))
        let socket = try await LineSocket.connect(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        scanner.scan(day)
        let refused = try setup.event(await socket.readLine())
        #expect(refused.verdict == .refused)
        #expect(refused.reason.contains("log in"))
        // Genuine badges for ids not in the staff list (removed, or never added) log nobody in.
        for stale in [removedBadge, unknownBadge] {
            scanner.scan(stale)
            let answer = try setup.event(await socket.readLine())
            #expect(answer.verdict == .refused)
            #expect(answer.reason.contains("not in the staff list"))
        }
        // A badge signed by a ticket issuer's key is not trusted for logging in.
        scanner.scan(ticketKeyBadge)
        let wrongKey = try setup.event(await socket.readLine())
        #expect(wrongKey.verdict == .wrongIssuer)
        scanner.scan(day)
        #expect(try setup.event(await socket.readLine()).verdict == .refused)

        scanner.scan(goodBadge)
        let login = try setup.event(await socket.readLine())
        #expect(login.verdict == .valid && login.reason.hasPrefix("Logged in: insp-17"))
        scanner.scan(day)
        let inspected = try setup.event(await socket.readLine())
        #expect(inspected.verdict == .valid && inspected.inspector == "insp-17")
        // And a staff-badge key never makes a passenger's ticket valid.
        scanner.scan(badgeKeyTicket)
        #expect(try setup.event(await socket.readLine()).verdict == .wrongIssuer)

        // Removing the inspector ends the session: the next scan is refused.
        #expect(try setup.bench.farecheck(["staff", "remove", "insp-17"]).status == 0)
        try await Task.sleep(for: .milliseconds(1100))
        scanner.scan(day)
        let afterRemoval = try setup.event(await socket.readLine())
        #expect(afterRemoval.verdict == .refused)
        #expect(await daemon.stop() == 0)
        let journal = try TrustStore(path: setup.bench.db).inspectionJournal.allInspections()
        #expect(!journal.contains { $0.id == refused.id })
        #expect(journal.contains { $0.id == inspected.id && $0.inspector == "insp-17" })
        #expect(!journal.contains { $0.id == afterRemoval.id })
    }

    @Test("under systemd: READY=1 on the notification socket once listening, STOPPING=1 at shutdown")
    func systemdNotify() async throws {
        let setup = try DaemonBench()
        let notifyPath = setup.bench.path("notify.sock")
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(receiver) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(notifyPath.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(scanner: scanner.devicePath),
            environment: ["NOTIFY_SOCKET": notifyPath, "WATCHDOG_USEC": "400000"])
        func receive() async -> String? {
            var poller = pollfd(fd: receiver, events: Int16(POLLIN), revents: 0)
            let deadline = Date().addingTimeInterval(5)
            while poll(&poller, 1, 0) <= 0 {
                guard Date() < deadline else { return nil }
                try? await Task.sleep(for: .milliseconds(5))
            }
            var buffer = [UInt8](repeating: 0, count: 512)
            let count = recv(receiver, &buffer, buffer.count, 0)
            return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
        }
        var messages: [String] = []
        while messages.count < 3, let message = await receive() { messages.append(message) }
        #expect(messages.contains { $0.hasPrefix("READY=1") })
        #expect(messages.contains("WATCHDOG=1"))
        #expect(await daemon.stop() == 0)
        while let message = await receive() {
            messages.append(message)
            if message == "STOPPING=1" { break }
        }
        #expect(messages.last == "STOPPING=1")
    }

    @Test("a bad configuration is refused at start, naming the key and the reason")
    func badConfiguration() throws {
        let bench = Workbench()
        let cases: [(String, String)] = [
            ("mode = \"bus\"\n[[scanner]]\ndevice = \"auto\"", "mode: must be \"gate\" or \"inspector\""),
            ("[[scanner]]\ndevice = \"auto\"\nprotocol = \"usb\"", "scanner[1].protocol: must be one of"),
            (
                "[[scanner]]\ndevice = \"auto\"\n[verification]\nreplay_windw = 10",
                "verification.replay_windw: unknown key"
            ),
            ("[[scanner]]\ndevice = \"auto\"\n[gate]\ntimeout = 2", "gate.command: is required"),
            ("mode = \"gate\"", "no [[scanner]], [[camera]] or [[source]]"),
            ("[[scanner]\n", "line 1"),
        ]
        for (text, expected) in cases {
            let path = bench.path("bad.toml")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let run = try bench.farecheck(["daemon", "--config", path, "--check"])
            #expect(run.status == 2, "\(text)")
            #expect(run.stderr.contains(expected), "\(run.stderr)")
        }
        let missing = try bench.farecheck(["daemon", "--config", bench.path("none.toml")])
        #expect(missing.status == 2 && missing.stderr.contains("no such file"))
    }

    @Test("a verdict or format name it does not know: refused by --check and at start, with the valid names")
    func unknownNames() throws {
        let bench = Workbench()
        let cases: [(text: String, expected: String, valid: [String])] = [
            (
                "[[source]]\nimages = \"\(bench.path("images"))\"\n[gate]\ncommand = [\"/bin/true\"]\n"
                    + "verdicts = [\"vaild\"]",
                "gate.verdicts: unknown verdict \"vaild\"", VerdictKind.allCases.map(\.rawValue) + ["\"*\""]
            ),
            (
                "[[source]]\nimages = \"\(bench.path("images"))\"\n[verification]\nformats = [\"fc2\"]",
                "verification.formats: unknown format \"fc2\"", TicketFormat.allCases.map(\.name)
            ),
        ]
        for (text, expected, valid) in cases {
            let path = bench.path("unknown.toml")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            for arguments in [["daemon", "--config", path, "--check"], ["daemon", "--config", path]] {
                let run = try bench.farecheck(arguments)
                #expect(run.status == 2, "\(arguments): \(run.stdout)")
                #expect(run.stderr.contains(expected), "\(run.stderr)")
                for name in valid { #expect(run.stderr.contains(name), "\(name): \(run.stderr)") }
            }
        }
    }
}
