import Daemon
import Foundation
import Glibc
import ScannerSimulation
import TestSupport
import Testing
import TrustStore

/// The real `farecheck daemon` process as an attacker on the same machine meets it: its files, its demo
/// directory, its log lines, its page's Host check, and what `--check` says about a weak configuration.
@Suite("farecheck daemon, security", .serialized, .timeLimit(.minutes(3)))
struct DaemonSecurityTests {
    static func mode(_ path: String) -> Int? {
        (try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test("store, journal and reserve are created 0600 under umask 0022; an old 0644 store is narrowed to 0640")
    func filesArePrivate() async throws {
        let setup = try DaemonBench()
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let previous = umask(0o022)
        defer { umask(previous) }
        let store = setup.bench.path("fresh/farecheck.sqlite")
        let daemon = try await DaemonProcess.start(
            config: try setup.config(scanner: scanner.devicePath, store: store))
        let journal = InspectionJournal.paths(besideStore: store)
        for path in [store, journal.journal, journal.reserve] {
            #expect(Self.mode(path) == 0o600, "\(path) is \(String(Self.mode(path) ?? 0, radix: 8))")
        }
        // The running daemon has both databases open in WAL mode: their -wal and -shm files exist, private too.
        for companion in [store + "-wal", store + "-shm", journal.journal + "-wal", journal.journal + "-shm"] {
            #expect(FileManager.default.fileExists(atPath: companion), "\(companion) missing")
            #expect(Self.mode(companion) == 0o600, "\(companion)")
        }
        #expect(await daemon.stop() == 0)

        // A store made world-readable (as farecheck made them before): the next open takes the bits for others.
        chmod(store, 0o644)
        chmod(journal.journal, 0o644)
        _ = try TrustStore(path: store)
        #expect(Self.mode(store) == 0o640)
        #expect(Self.mode(journal.journal) == 0o640)

        // A link planted where a store is to be made, pointing at a file that does not exist yet: not followed.
        let planted = setup.bench.path("planted.sqlite")
        let target = setup.bench.path("attacker-chosen.sqlite")
        try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: target)
        #expect(throws: StoreError.self) { _ = try TrustStore(path: planted) }
        #expect(!FileManager.default.fileExists(atPath: target))
    }

    @Test("--demo works in a new private directory with an unpredictable name; a planted link is not followed")
    func demoDirectoryIsPrivate() async throws {
        let bench = Workbench()
        let temporary = bench.path("tmp")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let daemon = try await DaemonProcess.start(
            arguments: ["daemon", "--demo", "--http", "127.0.0.1:0"], environment: ["TMPDIR": temporary])
        let made = try FileManager.default.contentsOfDirectory(atPath: temporary).filter {
            $0.hasPrefix("farecheck-demo-")
        }
        #expect(made.count == 1)
        let directory = temporary + "/" + (made.first ?? "")
        #expect(Self.mode(directory) == 0o700)
        // Not the process id, not a counter: 8 random characters.
        #expect(made.first?.count == "farecheck-demo-".count + 8)
        #expect(!(made.first ?? "").hasSuffix("\(daemon.process.processIdentifier)"))
        #expect(FileManager.default.fileExists(atPath: directory + "/demo.sqlite"))
        #expect(await daemon.stop() == 0)

        // A directory given with --out whose `tickets` is a link another user planted: refused, nothing written.
        let out = bench.path("out")
        let elsewhere = bench.path("elsewhere")
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: out + "/tickets", withDestinationPath: elsewhere)
        let refused = try bench.farecheck(["daemon", "--demo", "--http", "127.0.0.1:0", "--out", out])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("cannot create"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: elsewhere).isEmpty)
    }

    @Test("a staff id with a newline cannot forge a daemon log line; a foreign Host gets 421")
    func logInjectionAndHostCheck() async throws {
        let setup = try DaemonBench()
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(scanner: scanner.devicePath, mode: "inspector"))
        let port = try #require(daemon.httpPort)
        let forged = "K-1\n2026-01-01T00:00:00+0000 critical farecheck : [staff: ADMIN] Inspector logged in"
        let reply = try await EndpointBench.login(port: port, staffID: forged, pin: "123456")
        #expect(reply.status == 401)
        let rebinding = try await EndpointBench.login(
            port: port, staffID: "K-1", pin: "123456",
            headers: ["Host": "evil.example:\(port)", "Origin": "http://evil.example:\(port)"])
        #expect(rebinding.status == 421)
        let events = try await LoopbackHTTP.request(
            port: port, "GET", "/events", headers: ["Host": "evil.example"])
        #expect(events.status == 421)
        #expect(await daemon.stop() == 0)
        let lines = daemon.stderr.lines
        #expect(lines.contains { $0.contains("Login refused") && $0.contains(#"K-1\n2026-01-01"#) })
        #expect(!lines.contains { $0.hasPrefix("2026-01-01T00:00:00+0000 critical") })
    }

    /// A daemon in inspector mode whose page also listens with TLS (`[http] tls_listen`, with `extra` lines of
    /// `[http]`), and the TLS listener's port, read from its ready line.
    static func tlsDaemon(
        _ setup: DaemonBench, _ tls: TestTLS, scanner: SimulatedSSIScanner, extra: String = ""
    ) async throws -> (DaemonProcess, Int) {
        let daemon = try await DaemonProcess.start(
            config: try setup.config(
                scanner: scanner.devicePath, mode: "inspector",
                extra: """
                    tls_listen = "127.0.0.1:0"
                    tls_cert = "\(tls.certificate)"
                    tls_key = "\(tls.key)"
                    \(extra)
                    """))
        let ready = try #require(daemon.stderr.lines.first { $0.contains("ready in") })
        let range = try #require(ready.range(of: "https://127.0.0.1:"))
        return (daemon, try #require(Int(ready[range.upperBound...].prefix { $0.isNumber })))
    }

    @Test("[http] tls_listen serves the page over TLS beside the plain listener; its session cookie is Secure")
    func daemonTLSListener() async throws {
        let setup = try DaemonBench()
        let tls = try TestTLS()
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let (daemon, port) = try await Self.tlsDaemon(setup, tls, scanner: scanner, extra: "handshake_timeout = 2")
        let handshake = try tls.handshake(port: port, arguments: ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"])
        #expect(handshake.status == 0, "\(handshake.text)")
        let cbc = try tls.handshake(port: port, arguments: ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256"])
        #expect(cbc.status != 0)
        let page = try tls.handshake(
            port: port, arguments: ["-quiet"],
            stdin: "GET /session HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        #expect(page.text.contains("HTTP/1.1 401"))
        #expect(await daemon.stop() == 0)
    }

    @Test("the plain and the TLS listener share one audit limit: 30 lines a minute for the page, not 30 each")
    func oneAuditLimitForBothListeners() async throws {
        let setup = try DaemonBench()
        let tls = try TestTLS()
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let (daemon, tlsPort) = try await Self.tlsDaemon(setup, tls, scanner: scanner)
        let port = try #require(daemon.httpPort)
        // 25 refusals on each listener (no session cookie), within a few seconds.
        for _ in 0..<25 {
            #expect(try await LoopbackHTTP.request(port: port, "GET", "/events").status == 401)
        }
        let refusedOverTLS = try setup.bench.shell(
            "for i in $(seq 25); do timeout 10 curl -sk --max-time 5 -o /dev/null -w '%{http_code} ' "
                + "https://127.0.0.1:\(tlsPort)/events; done")
        #expect(refusedOverTLS.text.split(separator: " ").filter { $0 == "401" }.count == 25, "\(refusedOverTLS.text)")
        #expect(await daemon.stop() == 0)
        let audited = daemon.stderr.lines.filter { $0.contains("Refused without a session") }
        #expect(audited.count == 30, "\(audited.count) audit lines for 50 refusals")
    }

    @Test("--check: a plain listener on loopback beside a TLS one beyond it is fine; a plain one beyond it is not")
    func checkWithTLS() throws {
        let bench = Workbench()
        let tls = try TestTLS()
        let secret = bench.path("pin.secret")
        #expect(try bench.farecheck(["staff", "secret", "--out", secret]).status == 0)
        func check(listen: String) throws -> Run {
            let path = bench.path("farecheck-\(UUID().uuidString).toml")
            try """
            mode = "inspector"
            store = "\(bench.db)"

            [[source]]
            images = "\(bench.directory)"

            [http]
            listen = "\(listen)"
            tls_listen = "0.0.0.0:0"
            tls_cert = "\(tls.certificate)"
            tls_key = "\(tls.key)"

            [inspector]
            pin_secret_file = "\(secret)"
            """.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
            chmod(tls.key, 0o600)
            return try bench.farecheck(["daemon", "--check", "--config", path])
        }
        // (--check binds each listener: port 0 keeps it from meeting another program's. The one warning a new, empty
        // store draws is not about security.)
        let loopback = try check(listen: "127.0.0.1:0")
        #expect(loopback.status == 0, "\(loopback.stderr)")
        let warnings = loopback.stderr.split(separator: "\n").filter { $0.contains("warning") }
        #expect(warnings.allSatisfy { $0.contains("holds no keys") }, "\(loopback.stderr)")
        let beyond = try check(listen: "0.0.0.0:0")
        #expect(beyond.status == 0, "\(beyond.stderr)")
        #expect(beyond.stderr.contains("warning: the page listens on 0.0.0.0:0 without TLS"))
        #expect(beyond.stderr.contains("put [http] listen on loopback"))
    }

    @Test("--check refuses an http:// sync URL beyond loopback and warns about readable secrets and a page in clear")
    func checkWarns() throws {
        let bench = Workbench()
        let token = bench.path("token")
        try "secret-device-token".write(toFile: token, atomically: true, encoding: .utf8)
        chmod(token, 0o644)
        func config(url: String, listen: String) throws -> String {
            let path = bench.path("farecheck-\(UUID().uuidString).toml")
            try """
            mode = "inspector"
            store = "\(bench.db)"

            [[source]]
            images = "\(bench.directory)"

            [http]
            listen = "\(listen)"

            [sync]
            url = "\(url)"
            token_file = "\(token)"
            anchors = ["demo"]
            allow_demo_anchor = true
            """.write(toFile: path, atomically: true, encoding: .utf8)
            chmod(path, 0o600)
            return path
        }
        let plain = try bench.farecheck(
            ["daemon", "--check", "--config", try config(url: "http://validation.example.org", listen: "127.0.0.1:0")])
        #expect(plain.status != 0)
        #expect(plain.stderr.contains("https://"))

        let loopback = try bench.farecheck(
            ["daemon", "--check", "--config", try config(url: "http://127.0.0.1:9", listen: "0.0.0.0:0")])
        #expect(loopback.status == 0, "\(loopback.stderr)")
        #expect(loopback.stderr.contains("warning: [sync] token_file \(token) can be read by every user"))
        #expect(loopback.stderr.contains("warning: the page listens on 0.0.0.0:0 without TLS"))
        #expect(loopback.stderr.contains("warning: no PIN secret"))
        #expect(!loopback.stderr.contains("the configuration file"), "the configuration file itself is 0600")
    }
}
