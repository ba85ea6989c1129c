import Daemon
import FareCore
import Foundation
import Glibc
import ScannerSimulation
import Signatures
import TestSupport
import Testing
import TrustStore

/// Logins and holder data as an inspector and an attacker meet them in the real `farecheck daemon` process, over
/// HTTP on loopback: the PIN secret and the lockout as the configuration file sets them, the legacy hash upgrade,
/// what a client without the session cookie gets, and what standard output (journald) carries.
@Suite("farecheck daemon, logins and holder data", .serialized, .timeLimit(.minutes(4)))
struct DaemonLoginTests {
    /// The holder written on the passenger's ticket: a name and a date of birth, as an inspector checks them.
    static let holder = "Erika Mustermann 1984-03-12"

    /// A bench with a PIN secret made by `farecheck staff secret`, inspector K-9 (PIN 482913) added with it by
    /// `farecheck staff add`, and inspector OLD-1 (PIN 135790) with a PBKDF2 hash as older versions made them.
    static func staffBench() throws -> (setup: DaemonBench, secret: String) {
        let setup = try DaemonBench()
        let secret = setup.bench.path("pin.secret")
        let made = try setup.bench.farecheck(["staff", "secret", "--out", secret])
        #expect(made.status == 0, "\(made.stderr)")
        let added = try setup.bench.farecheck(
            ["staff", "add", "K-9", "--name", "Kim Nord", "--pin-secret", secret], stdin: Array("482913\n".utf8))
        #expect(added.status == 0, "\(added.stderr)")
        #expect(!added.stderr.contains("no PIN secret"))
        let store = try TrustStore(path: setup.bench.db)
        try store.saveStaff(StaffRecord(staffID: "OLD-1", name: nil, pin: try PINHash.legacy(pin: "135790")))
        try store.close()
        return (setup, secret)
    }

    @Test("pin_secret_file: a good PIN logs in, a legacy PBKDF2 hash becomes scrypt over the secret, no cookie no data")
    func pinLoginWithSecret() async throws {
        let (setup, secret) = try Self.staffBench()
        let passenger = try setup.ticket("d7", extra: ["--holder", Self.holder])
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(
                scanner: scanner.devicePath, mode: "inspector",
                extra: """

                    [inspector]
                    pin_secret_file = "\(secret)"
                    """))
        let port = try #require(daemon.httpPort)
        #expect(!daemon.stderr.text.contains("no PIN secret"))
        #expect(try await EndpointBench.login(port: port, staffID: "K-9", pin: "482914").status == 401)
        let login = try await EndpointBench.login(port: port, staffID: "K-9", pin: "482913")
        #expect(login.status == 200, "\(login.text)")
        let cookie = try #require(login.cookie)
        let own = try await LoopbackHTTP.request(port: port, "GET", "/session", headers: ["Cookie": cookie])
        #expect(own.status == 200 && own.text.contains("Kim Nord"))

        // A passenger inspected in this session: their holder data is on the inspector's stream only.
        let stream = try await EventStreamClient(port: port, cookie: cookie)
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        scanner.scan(passenger)
        let verdict = try await stream.next(named: "verdict")
        #expect(verdict.data?.contains(Self.holder) == true)
        for path in ["/events", "/session"] {
            let bare = try await LoopbackHTTP.request(port: port, "GET", path)
            #expect(bare.status == 401, "\(path) without a cookie")
            #expect(!bare.text.contains("Mustermann") && !bare.text.contains("1984") && !bare.text.contains("K-9"))
        }

        // The legacy hash: refused with a wrong PIN (and left as it is), upgraded at the good one.
        #expect(try await EndpointBench.login(port: port, staffID: "OLD-1", pin: "135791").status == 401)
        #expect(try await EndpointBench.login(port: port, staffID: "OLD-1", pin: "135790").status == 200)
        #expect(await daemon.stop() == 0)
        #expect(daemon.stderr.lines.contains { $0.contains("PIN hash upgraded") && $0.contains("OLD-1") })
        let upgraded = try #require(try TrustStore(path: setup.bench.db).staff(withID: "OLD-1")?.pin)
        #expect(upgraded.function == .scrypt)
        #expect(upgraded.secretID == (try PINSecret(file: secret)).id)
        // A copy of the store alone no longer lets anyone check a guess.
        #expect(upgraded.check("135790", secret: nil) == .secretUnavailable)
    }

    @Test("[inspector] lockout_failures and lockout_seconds lock PIN guessing over HTTP, and the lock ends")
    func configuredLockout() async throws {
        let (setup, secret) = try Self.staffBench()
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let daemon = try await DaemonProcess.start(
            config: try setup.config(
                scanner: scanner.devicePath, mode: "inspector",
                extra: """

                    [inspector]
                    pin_secret_file = "\(secret)"
                    lockout_failures = 2
                    lockout_seconds = 2
                    """))
        let port = try #require(daemon.httpPort)
        #expect(try await EndpointBench.login(port: port, staffID: "K-9", pin: "000001").status == 401)
        #expect(try await EndpointBench.login(port: port, staffID: "K-9", pin: "000002").status == 401)
        // The third attempt (the default allows five) is refused without a check, the right PIN too.
        let locked = try await EndpointBench.login(port: port, staffID: "K-9", pin: "482913")
        #expect(locked.status == 429)
        let retryAfter = try #require(Int(locked.headers["retry-after"] ?? ""))
        #expect((1...2).contains(retryAfter))
        try await Task.sleep(for: .milliseconds(2200))
        #expect(try await EndpointBench.login(port: port, staffID: "K-9", pin: "482913").status == 200)
        #expect(await daemon.stop() == 0)
        #expect(daemon.stderr.lines.contains { $0.contains("Login refused") && $0.contains("locked") })
    }

    @Test("standard output carries no holder name or date of birth unless [log] holder_data = true")
    func holderDataOnStandardOutput() async throws {
        let setup = try DaemonBench()
        let passenger = try setup.ticket("d8", extra: ["--holder", Self.holder])
        for logHolderData in [false, true] {
            let scanner = try SimulatedSSIScanner()
            defer { scanner.stop() }
            let daemon = try await DaemonProcess.start(
                config: try setup.config(
                    scanner: scanner.devicePath,
                    extra: logHolderData ? "\n[log]\nholder_data = true" : ""))
            let socket = try await LineSocket.connect(path: setup.socket)
            #expect(await daemon.waitForSocketClients())
            #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
            scanner.scan(passenger)
            // The socket, a local consumer the operator chose, gets the whole verdict.
            let full = try setup.event(await socket.readLine())
            #expect(full.holder == Self.holder)
            #expect(full.holderCheck == TicketHolder(note: Self.holder))
            #expect(await daemon.stop() == 0)
            let printed = try #require(daemon.stdout.lines.first { $0.contains(full.id.rawValue) }, "no verdict line")
            #expect(try setup.event(printed).verdict == .valid)
            #expect(printed.contains("Mustermann") == logHolderData, "\(printed)")
            #expect(printed.contains("1984-03-12") == logHolderData, "\(printed)")
            #expect(printed.contains("holderCheck") == logHolderData, "\(printed)")
            // The daemon's own log lines never carry it.
            #expect(!daemon.stderr.text.contains("Mustermann"))
        }
    }
}
