import Daemon
import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TrustStore

/// The page's defences, probed as an attacker on the same host or network would, over HTTP on loopback: sessions
/// per client, the Host check, the login lockout, unknown staff ids, audit lines, holder data, connection limits
/// and TLS.
@Suite(.timeLimit(.minutes(3)))
struct PageSecurityTests {
    /// A bench with two inspectors (PIN 482913 and 246802).
    static func bench(
        loginRequired: Bool = true, options: HTTPService.Options = .init(),
        pinPolicy: InspectorSessions.PINPolicy = .init(), lockoutRules: LoginLockoutRules = .init(),
        sessionTimeout: TimeInterval = 8 * 3600
    ) throws -> EndpointBench {
        let bench = try EndpointBench(
            loginRequired: loginRequired, options: options, pinPolicy: pinPolicy, lockoutRules: lockoutRules,
            sessionTimeout: sessionTimeout)
        try bench.store.saveStaff(
            StaffRecord(
                staffID: "K-204", name: "Kim Berger", pin: try PINHash(pin: "482913", secret: pinPolicy.secret)))
        try bench.store.saveStaff(
            StaffRecord(staffID: "B-7", name: "Bo Lind", pin: try PINHash(pin: "246802", secret: pinPolicy.secret)))
        return bench
    }

    @Test("without the session cookie, /logout, /events and /session answer 401 and change nothing")
    func noCookieNoSession() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let login = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913")
            #expect(login.status == 200)
            for (method, path) in [("POST", "/logout"), ("GET", "/events"), ("GET", "/session")] {
                let bare = try await LoopbackHTTP.request(port: port, method, path)
                #expect(bare.status == 401, "\(method) \(path) without a cookie")
                let forged = try await LoopbackHTTP.request(
                    port: port, method, path, headers: ["Cookie": "farecheck_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
                #expect(forged.status == 401, "\(method) \(path) with a made-up token")
                #expect(!bare.text.contains("Kim Berger") && !forged.text.contains("Kim Berger"))
            }
            // Nobody was logged out by those.
            #expect(bench.sessions.current()?.staffID == "K-204")
            let own = try await LoopbackHTTP.request(
                port: port, "GET", "/session", headers: ["Cookie": try #require(login.cookie)])
            #expect(own.status == 200)
        }
        // Audited: each refusal but the page's own question "who am I?" without a cookie (asked at every load).
        let audit = bench.log.all.filter { $0.contains("Refused without a session") }
        #expect(audit.count == 5)
        #expect(audit.contains { $0.contains("/logout") && $0.contains("127.0.0.1") })
    }

    @Test("a DNS-rebinding page (Host and Origin evil.example) gets 421 everywhere, login included")
    func foreignHostIsRefused() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let rebinding = ["Host": "evil.example:\(port)", "Origin": "http://evil.example:\(port)"]
            let login = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913", headers: rebinding)
            #expect(login.status == 421)
            #expect(login.headers["set-cookie"] == nil)
            #expect(bench.sessions.current() == nil)
            for path in ["/", "/events", "/session", "/healthz", "/metrics"] {
                let reply = try await LoopbackHTTP.request(port: port, "GET", path, headers: rebinding)
                #expect(reply.status == 421, "GET \(path)")
            }
            // The page's own names still work.
            for host in ["localhost:\(port)", "127.0.0.1:\(port)", "LOCALHOST"] {
                let reply = try await LoopbackHTTP.request(port: port, "GET", "/healthz", headers: ["Host": host])
                #expect(reply.status != 421, "Host \(host)")
            }
        }
    }

    @Test("configured host names replace the defaults")
    func configuredHosts() async throws {
        let bench = try Self.bench(options: .init(hosts: AllowedHosts(["handheld-17.example"])))
        try await bench.run { port in
            let named = try await LoopbackHTTP.request(
                port: port, "GET", "/healthz", headers: ["Host": "handheld-17.example:\(port)"])
            #expect(named.status != 421)
            let other = try await LoopbackHTTP.request(port: port, "GET", "/healthz", headers: ["Host": "x.test"])
            #expect(other.status == 421)
        }
    }

    @Test("60 guesses sent at once: at most the limit (5) are checked, the rest are refused with 429")
    func lockoutRace() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for guess in 0..<60 {
                    group.addTask {
                        try await EndpointBench.login(port: port, staffID: "K-204", pin: String(format: "%06d", guess))
                            .status
                    }
                }
                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.count == 60)
            #expect(statuses.filter { $0 == 401 }.count <= 5)
            #expect(statuses.filter { $0 == 429 }.count >= 55)
            #expect(bench.sessions.pinDerivations <= 5)
            // Locked now: even the right PIN is not checked.
            let right = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913")
            #expect(right.status == 429)
            #expect(Int(right.headers["retry-after"] ?? "") ?? 0 >= 1)
        }
    }

    @Test("another inspector's good login does not reset a staff id's failures")
    func lockoutNotResetByAnotherAccount() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            for round in 0..<2 {
                for guess in 0..<2 {
                    let wrong = try await EndpointBench.login(
                        port: port, staffID: "B-7", pin: "00000\(round * 2 + guess)", source: "127.0.0.\(2 + guess)")
                    #expect(wrong.status == 401)
                }
                // The attacker's own account, from yet another address: it must not clear B-7's count.
                let own = try await EndpointBench.login(
                    port: port, staffID: "K-204", pin: "482913", source: "127.0.0.9")
                #expect(own.status == 200)
            }
            let fifth = try await EndpointBench.login(port: port, staffID: "B-7", pin: "000009", source: "127.0.0.4")
            #expect(fifth.status == 401)
            // Five failures for B-7: locked, whatever the address, and the right PIN is not even checked.
            let locked = try await EndpointBench.login(port: port, staffID: "B-7", pin: "246802", source: "127.0.0.5")
            #expect(locked.status == 429)
            #expect(bench.sessions.current()?.staffID == "K-204")
            // The lock is B-7's, not everyone's: K-204 still logs in.
            let other = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913", source: "127.0.0.6")
            #expect(other.status == 200)
        }
    }

    @Test("one client address guessing across many staff ids is locked; other clients are not")
    func perAddressLockout() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            for index in 0..<5 {
                let guess = try await EndpointBench.login(
                    port: port, staffID: "X-\(index)", pin: "123456", source: "127.0.0.7")
                #expect(guess.status == 401)
            }
            let fromAttacker = try await EndpointBench.login(
                port: port, staffID: "K-204", pin: "482913", source: "127.0.0.7")
            #expect(fromAttacker.status == 429)
            let fromInspector = try await EndpointBench.login(
                port: port, staffID: "K-204", pin: "482913", source: "127.0.0.8")
            #expect(fromInspector.status == 200)
        }
    }

    @Test("locks grow: the second lock of a staff id lasts twice the first")
    func growingLocks() async throws {
        let bench = try Self.bench(lockoutRules: LoginLockoutRules(failuresBeforeLock: 2, firstLock: 1))
        try await bench.run { port in
            var retries: [Int] = []
            for lock in 0..<2 {
                for guess in 0..<2 {
                    let wrong = try await EndpointBench.login(
                        port: port, staffID: "B-7", pin: "99999\(guess)", source: "127.0.1.\(lock * 2 + guess + 1)")
                    #expect(wrong.status == 401)
                }
                let locked = try await EndpointBench.login(
                    port: port, staffID: "B-7", pin: "246802", source: "127.0.1.9")
                #expect(locked.status == 429)
                retries.append(Int(locked.headers["retry-after"] ?? "") ?? 0)
                try await Task.sleep(for: .seconds(lock == 0 ? 1.2 : 0))
            }
            #expect(retries == [1, 2])
        }
    }

    @Test("an unknown staff id costs the same PIN derivation as a known one with a wrong PIN")
    func unknownIDsDoTheSameWork() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let before = bench.sessions.pinDerivations
            let unknown = try await EndpointBench.login(
                port: port, staffID: "NOBODY", pin: "482913", source: "127.0.2.1")
            let afterUnknown = bench.sessions.pinDerivations
            let known = try await EndpointBench.login(port: port, staffID: "K-204", pin: "000000", source: "127.0.2.2")
            let afterKnown = bench.sessions.pinDerivations
            #expect(unknown.status == 401 && known.status == 401)
            #expect(unknown.text == known.text, "the refusals must not tell the two apart")
            #expect(afterUnknown - before == 1)
            #expect(afterKnown - afterUnknown == 1)
        }
        // The audit log tells them apart (for the operator), with the client's address.
        let audit = bench.log.all.filter { $0.contains("Login refused") }
        #expect(audit.contains { $0.contains("unknown-staff-id") && $0.contains("127.0.2.1") })
        #expect(audit.contains { $0.contains("wrong-pin") && $0.contains("127.0.2.2") })
    }

    @Test("a staff id with a newline is escaped in the audit line; audit lines are rate-limited")
    func auditLinesAreEscapedAndLimited() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let forged = "K-204\n2026-01-01T00:00:00+0000 notice farecheck : Inspector logged in [staff: ADMIN]"
            let reply = try await EndpointBench.login(port: port, staffID: forged, pin: "482913")
            #expect(reply.status == 401)
            for index in 0..<40 {
                _ = try await EndpointBench.login(
                    port: port, staffID: "flood-\(index)", pin: "000000", source: "127.0.3.\(index + 1)")
            }
        }
        let lines = bench.log.all
        #expect(!lines.contains { $0.contains("\n") })
        #expect(lines.contains { $0.contains(#"K-204\n2026-01-01"#) })
        let refused = lines.filter { $0.contains("Login refused") }
        #expect(refused.count <= 30, "\(refused.count) audit lines in one minute")
    }

    @Test("holder data: none on a gate's page unless configured; an inspector's stream has it")
    func holderDataOnlyWhereAllowed() async throws {
        let event = EndpointBench.event(.valid, reason: "Genuine.", holder: "Max Mustermann, born 2001-01-01")
        let gate = try Self.bench(loginRequired: false)
        gate.hub.publish(event)
        try await gate.run { port in
            let stream = try await EventStreamClient(port: port)
            let verdict = try await stream.next(named: "verdict")
            #expect(verdict.data?.contains("Mustermann") == false)
            #expect(verdict.data?.contains("Genuine.") == true)
        }
        let configured = try Self.bench(loginRequired: false, options: .init(gateHolderData: true))
        configured.hub.publish(event)
        try await configured.run { port in
            let stream = try await EventStreamClient(port: port)
            #expect(try await stream.next(named: "verdict").data?.contains("Mustermann") == true)
        }
        let inspector = try Self.bench()
        try await inspector.run { port in
            let login = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913")
            // A verdict of this session (a new stream replays only those).
            inspector.hub.publish(
                EndpointBench.event(.valid, reason: "Genuine.", holder: "Max Mustermann, born 2001-01-01"))
            let stream = try await EventStreamClient(port: port, cookie: login.cookie)
            #expect(try await stream.next(named: "verdict").data?.contains("Mustermann") == true)
        }
    }

    @Test("a new stream replays the last verdict only to the session it was made in, never to the next inspector")
    func replayOnlyToItsSession() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let kim = try #require(try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913").cookie)
            bench.hub.publish(EndpointBench.event(.valid, reason: "Valid.", holder: "Erika Mustermann 1984-03-12"))
            // A second page of the same session (Kim's phone and tablet) is shown the passenger at once.
            let again = try await EventStreamClient(port: port, cookie: kim)
            #expect(try await again.next(named: "verdict").data?.contains("Mustermann") == true)

            // Kim logs out; Bo logs in on the handheld: his new page shows nothing of Kim's passenger.
            let logout = try await LoopbackHTTP.request(port: port, "POST", "/logout", headers: ["Cookie": kim])
            #expect(logout.status == 204)
            let bo = try #require(try await EndpointBench.login(port: port, staffID: "B-7", pin: "246802").cookie)
            let next = try await EventStreamClient(port: port, cookie: bo)
            #expect(try await next.next(named: "session").data?.contains("B-7") == true)
            bench.hub.publish(
                EndpointBench.event(.valid, reason: "Bo's first.", holder: "Bo's passenger", inspector: "B-7"))
            let first = try await next.next(named: "verdict")
            #expect(first.data?.contains("Bo's passenger") == true, "\(first.data ?? "")")
            #expect(first.data?.contains("Mustermann") == false)
            let boOut = try await LoopbackHTTP.request(port: port, "POST", "/logout", headers: ["Cookie": bo])
            #expect(boOut.status == 204)

            // Kim again, after a logout: a new session, so not even Kim's own earlier passenger is replayed.
            let kimAgain = try #require(
                try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913").cookie)
            let fresh = try await EventStreamClient(port: port, cookie: kimAgain)
            #expect(try await fresh.next(named: "session").data?.contains("K-204") == true)
            bench.hub.publish(EndpointBench.event(.valid, reason: "Kim's next.", holder: "Next passenger"))
            #expect(try await fresh.next(named: "verdict").data?.contains("Next passenger") == true)
        }
    }

    @Test("a logout or a timeout ends open streams at once: no verdict made after it reaches them")
    func streamsEndWithTheSession() async throws {
        // Long enough for a login (a scrypt derivation, slow on a loaded machine) and the stream's opening.
        let bench = try Self.bench(sessionTimeout: 3)
        try await bench.run { port in
            let cookie = try #require(
                try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913").cookie)
            // The idle time counts from here (the login itself may have taken a while on a loaded machine).
            #expect(bench.sessions.touch() != nil)
            let stream = try await EventStreamClient(port: port, cookie: cookie)
            try #require(stream.head.status == 200)
            #expect(try await stream.next(named: "session").data?.contains("K-204") == true)
            bench.sessions.logout()
            // Published right after the logout, well before a once-a-second look would notice it.
            bench.hub.publish(EndpointBench.event(.valid, reason: "After logout.", holder: "Late passenger"))
            var frames: [ServerSentEvent] = []
            while let frame = try await stream.next() { frames.append(frame) }
            #expect(frames.contains { $0.event == "session" && $0.data == "null" })
            #expect(!frames.contains { $0.event == "verdict" }, "\(frames.map { $0.data ?? "" })")

            // Idle past the timeout: a verdict published then is not sent; the stream ends.
            let again = try #require(
                try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913").cookie)
            #expect(bench.sessions.touch() != nil)
            let idle = try await EventStreamClient(port: port, cookie: again)
            try #require(idle.head.status == 200)
            #expect(try await idle.next(named: "session").data?.contains("K-204") == true)
            try await Task.sleep(for: .milliseconds(3100))
            bench.hub.publish(EndpointBench.event(.valid, reason: "After timeout.", holder: "Late passenger"))
            var idleFrames: [ServerSentEvent] = []
            while let frame = try await idle.next() { idleFrames.append(frame) }
            #expect(!idleFrames.contains { $0.event == "verdict" }, "\(idleFrames.map { $0.data ?? "" })")
        }
    }

    @Test("removing an inspector from the staff list ends their live session and stream")
    func removalEndsTheSession() async throws {
        let bench = try Self.bench()
        try await bench.run { port in
            let login = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913")
            let cookie = try #require(login.cookie)
            let stream = try await EventStreamClient(port: port, cookie: cookie)
            #expect(try await stream.next(named: "session").data?.contains("K-204") == true)
            try bench.store.removeStaff(withID: "K-204")
            #expect(try await stream.next(named: "session").data == "null")
            let after = try await LoopbackHTTP.request(port: port, "GET", "/session", headers: ["Cookie": cookie])
            #expect(after.status == 401)
            #expect(bench.sessions.current() == nil)
        }
    }

    @Test("a PBKDF2 hash from an older farecheck is replaced by scrypt over the secret at the next good login")
    func legacyHashIsUpgraded() async throws {
        let secret = try PINSecret(bytes: Array(try PINSecret.generateText().utf8))
        let bench = try Self.bench(pinPolicy: .init(secret: secret))
        try bench.store.saveStaff(StaffRecord(staffID: "OLD-1", name: nil, pin: try PINHash.legacy(pin: "135790")))
        try await bench.run { port in
            #expect(try await EndpointBench.login(port: port, staffID: "OLD-1", pin: "999999").status == 401)
            #expect(try bench.store.staff(withID: "OLD-1")?.pin.function == .pbkdf2SHA256)
            #expect(try await EndpointBench.login(port: port, staffID: "OLD-1", pin: "135790").status == 200)
            let upgraded = try #require(try bench.store.staff(withID: "OLD-1")?.pin)
            #expect(upgraded.function == .scrypt)
            #expect(upgraded.secretID == secret.id)
            #expect(upgraded.parameters == .standard)
            // Without the secret the new hash cannot be checked: a copy of the store alone is not enough.
            #expect(upgraded.check("135790", secret: nil) == .secretUnavailable)
            #expect(upgraded.check("135790", secret: secret) == .match)
            #expect(try await EndpointBench.login(port: port, staffID: "OLD-1", pin: "135790").status == 200)
        }
        #expect(bench.log.all.contains { $0.contains("PIN hash upgraded") })
    }

    @Test("a stalled request head, an idle connection and a stalled TLS handshake are closed")
    func stalledConnectionsAreClosed() async throws {
        let tls = try TestTLS()
        let limits = ConnectionLimits(
            requestTimeout: .seconds(1), idleTimeout: .seconds(4), handshakeTimeout: .seconds(1), maxConnections: 64)
        let plain = try Self.bench(options: .init(limits: limits))
        try await plain.run { port in
            // Raw sockets: no HTTP client sends half a request head, or connects and says nothing.
            let partial = try RawTCPConnection(port: port)
            try partial.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".utf8))
            let started = ContinuousClock.now
            #expect(await partial.next(within: 8) == .closed, "closed without a response")
            // By the request deadline (1 s), well before the idle timeout (4 s).
            #expect(started.duration(to: .now) < .seconds(3))

            let idle = try RawTCPConnection(port: port)
            #expect(await idle.next(within: 8) == .closed)
        }
        let secure = try Self.bench(
            options: .init(tls: try PageTLS.context(certificateFile: tls.certificate, keyFile: tls.key), limits: limits)
        )
        try await secure.run { port in
            let silent = try RawTCPConnection(port: port)
            try silent.send([0x16, 0x03, 0x01])  // the first bytes of a ClientHello, then nothing
            let started = ContinuousClock.now
            #expect(await silent.next(within: 8) == .closed)
            #expect(started.duration(to: .now) < .seconds(3))
        }
    }

    @Test("a cap on connections: past it, a client waits until one closes")
    func connectionCap() async throws {
        let limits = ConnectionLimits(
            requestTimeout: .seconds(30), idleTimeout: .seconds(30), handshakeTimeout: .seconds(5), maxConnections: 2)
        let bench = try Self.bench(options: .init(limits: limits))
        try await bench.run { port in
            // Raw sockets: two connections held open without a request, and a third whose wait is timed.
            let first = try RawTCPConnection(port: port)
            let second = try RawTCPConnection(port: port)
            // Let the server accept both before the third arrives.
            try await Task.sleep(for: .milliseconds(300))
            let third = try RawTCPConnection(port: port)
            try third.send(Array("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
            #expect(await third.next(within: 1) == .quiet)
            first.hangUp()
            second.hangUp()
            var answered: [UInt8] = []
            if case .bytes(let bytes) = await third.next(within: 10) { answered = bytes }
            #expect(String(decoding: answered, as: UTF8.self).hasPrefix("HTTP/1.1 "))
        }
    }

    @Test("TLS: 1.2 with AEAD suites only, 1.1 and CBC refused; the session cookie is Secure")
    func tlsListener() async throws {
        let tls = try TestTLS()
        let bench = try Self.bench(
            options: .init(tls: try PageTLS.context(certificateFile: tls.certificate, keyFile: tls.key)))
        try await bench.run { port in
            let good = try tls.handshake(port: port, arguments: ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"])
            #expect(good.status == 0, "\(good.stderr)")
            for refused in [
                ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA"], ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-SHA"],
                ["-tls1_2", "-cipher", "AES128-GCM-SHA256"], ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"],
            ] {
                let run = try tls.handshake(port: port, arguments: refused)
                #expect(run.status != 0, "handshake with \(refused) must fail")
            }
            let body = #"{"staffID":"K-204","pin":"482913"}"#
            let request =
                "POST /login HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
            let login = try tls.handshake(port: port, arguments: ["-quiet"], stdin: request)
            #expect(login.text.contains("HTTP/1.1 200"))
            let cookieLine = login.text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("set-cookie:") }
            #expect(cookieLine?.contains("; Secure") == true)
            #expect(cookieLine?.contains("HttpOnly") == true)
        }
    }
}

/// A self-signed certificate for 127.0.0.1 made with the openssl command, and `openssl s_client` as the client.
final class TestTLS {
    let bench = Workbench()
    var certificate: String { bench.path("page.crt") }
    var key: String { bench.path("page.key") }

    init() throws {
        let made = try bench.shell(
            "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 "
                + "-keyout '\(key)' -out '\(certificate)' 2>&1")
        guard made.status == 0 else { throw LoopbackError(description: "openssl req: \(made.text)") }
    }

    /// `openssl s_client` against 127.0.0.1:`port`, at most 10 seconds; status 0 when the handshake succeeded.
    func handshake(port: Int, arguments: [String], stdin: String = "") throws -> Run {
        let input = bench.path("request-\(UUID().uuidString)")
        try stdin.write(toFile: input, atomically: true, encoding: .utf8)
        let quoted = arguments.map { "'\($0)'" }.joined(separator: " ")
        return try bench.shell(
            "timeout 10 openssl s_client -connect 127.0.0.1:\(port) -servername localhost \(quoted) < '\(input)' 2>&1")
    }
}
