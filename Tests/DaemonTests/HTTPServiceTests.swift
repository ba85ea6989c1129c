import Daemon
import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// The daemon's HTTP endpoint, served for real on a loopback port and read as a client reads it.
@Suite(.timeLimit(.minutes(2)))
struct HTTPServiceTests {
    @Test func healthReportIsJSONAndSaysWhenDegraded() async throws {
        let bench = try EndpointBench()
        bench.status.markReady()
        bench.status.trustUpdated(at: Date(timeIntervalSince1970: 1_750_000_000))
        try await bench.run { port in
            let healthy = try await LoopbackHTTP.request(port: port, "GET", "/healthz")
            #expect(healthy.status == 200)
            #expect(healthy.headers["content-type"] == "application/json")
            let report = try JSONSerialization.jsonObject(with: Data(healthy.body)) as? [String: Any]
            #expect(report?["status"] as? String == "ok")
            #expect(report?["mode"] as? String == "inspector")
            #expect(report?["ready"] as? Bool == true)
            #expect(report?["trustUpdatedAt"] as? String == "2025-06-15T15:06:40Z")

            bench.status.addScanner(name: "front-door", device: "/dev/ttyACM0")
            let degraded = try await LoopbackHTTP.request(port: port, "GET", "/healthz")
            #expect(degraded.status == 503)
            let body = try JSONSerialization.jsonObject(with: Data(degraded.body)) as? [String: Any]
            #expect(body?["status"] as? String == "degraded")
            let scanners = body?["scanners"] as? [[String: Any]]
            #expect(scanners?.first?["name"] as? String == "front-door")
            #expect(scanners?.first?["connected"] as? Bool == false)
        }
    }

    @Test func metricsCountTheVerdictsRecorded() async throws {
        let bench = try EndpointBench()
        bench.metrics.verdict(.valid, latency: .microseconds(800))
        bench.metrics.verdict(.valid, latency: .milliseconds(3))
        bench.metrics.verdict(.revoked, latency: .milliseconds(1))
        try await bench.run { port in
            let reply = try await LoopbackHTTP.request(port: port, "GET", "/metrics")
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let samples = try PrometheusText.samples(reply.text)
            #expect(samples[#"farecheck_verdicts_total{verdict="valid"}"#] == 2)
            #expect(samples[#"farecheck_verdicts_total{verdict="revoked"}"#] == 1)
            #expect(samples[#"farecheck_verdicts_total{verdict="expired"}"#] == 0)
            #expect(samples["farecheck_journal_unsent"] == 2)
            #expect(samples["farecheck_trust_data_age_seconds"] == 90)
        }
    }

    @Test func eventStreamDeliversEachPublishedVerdict() async throws {
        // A gate's page: the stream is open to the page, without holder data.
        let bench = try EndpointBench(loginRequired: false)
        try await bench.run { port in
            let stream = try await EventStreamClient(port: port)
            #expect(stream.head.status == 200)
            #expect(stream.head.headers["content-type"] == "text/event-stream")
            // The stream opens by telling who is logged in: nobody yet.
            let session = try await stream.next(named: "session")
            #expect(session.data == "null")

            let revoked = EndpointBench.event(.revoked, reason: "Reported stolen by the holder.")
            bench.hub.publish(revoked)
            let first = try await stream.next(named: "verdict")
            #expect(first.data == revoked.line(holderData: false))
            #expect(try Self.decode(first) == Self.roundTripped(revoked.event.withoutHolderData))
            #expect(first.data?.contains("ID ****1234") == false)

            let valid = EndpointBench.event(.valid, reason: "Genuine and within its validity.")
            bench.hub.publish(valid)
            let second = try await stream.next(named: "verdict")
            #expect(try Self.decode(second) == Self.roundTripped(valid.event.withoutHolderData))
        }
    }

    /// The verdict event an SSE message carries.
    static func decode(_ message: ServerSentEvent) throws -> VerdictEvent {
        try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data((message.data ?? "").utf8))
    }

    /// `event` as every sink writes it: JSON dates are whole seconds.
    static func roundTripped(_ event: VerdictEvent) throws -> VerdictEvent {
        try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(event.jsonLine.utf8))
    }

    @Test func aStreamOpenedAfterAScanStartsWithIt() async throws {
        let bench = try EndpointBench()
        try bench.store.saveStaff(
            StaffRecord(staffID: "K-204", name: "Kim Berger", pin: try PINHash(pin: "482913", secret: nil)))
        try await bench.run { port in
            let login = try await EndpointBench.login(port: port, staffID: "K-204", pin: "482913")
            // A scan in this session, before the page (another tab, a reload) opens its stream.
            let earlier = EndpointBench.event(.expired, reason: "Expired yesterday at 23:59.")
            bench.hub.publish(earlier)
            // The inspector's own session sees the holder, to check it against an ID.
            let stream = try await EventStreamClient(port: port, cookie: login.cookie)
            let verdict = try await stream.next(named: "verdict")
            #expect(try Self.decode(verdict) == Self.roundTripped(earlier.event))
            #expect(verdict.data?.contains("ID ****1234") == true)
        }
    }

    @Test func inspectorLogsInWithStaffIDAndPIN() async throws {
        let bench = try EndpointBench()
        try bench.store.saveStaff(
            StaffRecord(staffID: "K-204", name: "Kim Berger", pin: try PINHash(pin: "482913", secret: nil)))
        try await bench.run { port in
            let none = try await LoopbackHTTP.request(port: port, "GET", "/session")
            #expect(none.status == 401)

            let wrong = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "application/json"],
                body: Array(#"{"staffID":"K-204","pin":"000000"}"#.utf8))
            #expect(wrong.status == 401)
            let refusal = try JSONSerialization.jsonObject(with: Data(wrong.body)) as? [String: Any]
            #expect(refusal?["error"] as? String == "Unknown staff id or wrong PIN.")

            let right = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "application/json"],
                body: Array(#"{"staffID":"K-204","pin":"482913"}"#.utf8))
            #expect(right.status == 200)
            let session = try JSONSerialization.jsonObject(with: Data(right.body)) as? [String: Any]
            #expect(session?["staffID"] as? String == "K-204")
            #expect(session?["name"] as? String == "Kim Berger")
            #expect(session?["method"] as? String == "pin")
            #expect(bench.sessions.current()?.staffID == "K-204")
            // The session token goes only into a cookie scripts cannot read and other sites' pages do not send.
            let setCookie = try #require(right.headers["set-cookie"])
            #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
            #expect(!setCookie.contains("Secure"), "the page is served without TLS here")
            let cookie = try #require(right.cookie)
            #expect(cookie.hasPrefix("farecheck_session=") && cookie.count > 40)

            let current = try await LoopbackHTTP.request(
                port: port, "GET", "/session", headers: ["Cookie": cookie])
            #expect(current.status == 200)
            #expect(current.text.contains(#""staffID":"K-204""#))
            // Another client, without the cookie, sees no session.
            #expect(try await LoopbackHTTP.request(port: port, "GET", "/session").status == 401)

            let logout = try await LoopbackHTTP.request(
                port: port, "POST", "/logout", headers: ["Cookie": cookie])
            #expect(logout.status == 204)
            #expect(logout.headers["set-cookie"]?.contains("Max-Age=0") == true)
            #expect(bench.sessions.current() == nil)
            // The token died with the session.
            #expect(
                try await LoopbackHTTP.request(port: port, "GET", "/session", headers: ["Cookie": cookie]).status
                    == 401)

            // A plain HTML form posts url-encoded fields.
            let form = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array("staffID=K-204&pin=482913".utf8))
            #expect(form.status == 200)
            #expect(bench.sessions.current()?.staffID == "K-204")
        }
        let log = bench.log.all
        #expect(log.contains { $0.contains("Inspector logged in") && $0.contains("K-204") })
        #expect(log.contains { $0.contains("Login refused") })
        #expect(!log.contains { $0.contains("482913") || $0.contains("000000") })
    }

    @Test func aLogoutReachesOpenStreamsAndEndsThem() async throws {
        let bench = try EndpointBench()
        try bench.store.saveStaff(
            StaffRecord(staffID: "K-311", name: nil, pin: try PINHash(pin: "135791", secret: nil)))
        try await bench.run { port in
            let login = try await EndpointBench.login(port: port, staffID: "K-311", pin: "135791")
            let stream = try await EventStreamClient(port: port, cookie: login.cookie)
            #expect(stream.head.status == 200)
            let loggedIn = try await stream.next(named: "session")
            #expect(loggedIn.data?.contains(#""staffID":"K-311""#) == true)
            bench.sessions.logout()
            #expect(try await stream.next(named: "session").data == "null")
            // The stream belonged to the session: it ends with it.
            while let event = try await stream.next() { #expect(event.event != "verdict") }
        }
    }

    @Test func badLoginRequestsAreRefused() async throws {
        let bench = try EndpointBench()
        try await bench.run { port in
            let large = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "application/json"],
                body: Array(#"{"staffID":"K-204","pin":""#.utf8) + [UInt8](repeating: 0x31, count: 20_000)
                    + Array(#""}"#.utf8))
            #expect(large.status == 413)

            let missing = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "application/json"],
                body: Array(#"{"staffID":"K-204"}"#.utf8))
            #expect(missing.status == 400)

            let plain = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: ["Content-Type": "text/plain"], body: Array("K-204".utf8))
            #expect(plain.status == 415)

            // Another site's page cannot log an inspector in or out through the handheld's loopback address.
            let crossSite = try await LoopbackHTTP.request(
                port: port, "POST", "/login",
                headers: ["Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"],
                body: Array("staffID=K-204&pin=2468".utf8))
            #expect(crossSite.status == 403)
            let fetched = try await LoopbackHTTP.request(
                port: port, "POST", "/logout", headers: ["Sec-Fetch-Site": "cross-site"])
            #expect(fetched.status == 403)
            let sameOrigin = try await LoopbackHTTP.request(
                port: port, "POST", "/logout", headers: ["Origin": "http://127.0.0.1:\(port)"])
            #expect(sameOrigin.status == 401, "the page's own origin, but no session cookie")
        }
    }

    @Test func unknownRoutesAreNotFound() async throws {
        let bench = try EndpointBench()
        try await bench.run { port in
            let admin = try await LoopbackHTTP.request(port: port, "GET", "/admin")
            #expect(admin.status == 404)
            let beyondEvents = try await LoopbackHTTP.request(port: port, "GET", "/events/extra")
            #expect(beyondEvents.status == 404)
        }
    }

    @Test func thePageIsOneSelfContainedDocument() async throws {
        let bench = try EndpointBench()
        bench.hub.publish(EndpointBench.event(.revoked, reason: "Reported stolen by the holder."))
        try await bench.run { port in
            let page = try await LoopbackHTTP.request(port: port, "GET", "/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            #expect(page.text.hasPrefix("<!doctype html>"))
            #expect(page.text.contains("Waiting for the first scan"))
            #expect(page.text.contains(#"role="status""#))
            #expect(page.text.contains(#"new EventSource("/events")"#))
            // Nothing is fetched from elsewhere, and verdicts are rendered by the script, not the server.
            #expect(!page.text.contains("http://") && !page.text.contains("https://"))
            #expect(!page.text.contains("src="))
            #expect(!page.text.contains("Reported stolen"))
        }
    }

    @Test func aStreamEndsWhenTheClientHangsUp() async throws {
        let bench = try EndpointBench(loginRequired: false)
        try await bench.run { port in
            let stream = try await EventStreamClient(port: port)
            _ = try await stream.next(named: "session")
            #expect(bench.hub.subscriberCount == 1)
            stream.hangUp()
            // The subscription goes as soon as the server notices; give it up to ten seconds.
            for _ in 0..<100 where bench.hub.subscriberCount > 0 {
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(bench.hub.subscriberCount == 0)
        }
    }

    @Test func gracefulShutdownEndsOpenStreams() async throws {
        let bench = try EndpointBench(loginRequired: false)
        var stream: EventStreamClient?
        try await bench.withRunningGroup { port, group in
            let client = try await EventStreamClient(port: port)
            _ = try await client.next(named: "session")
            stream = client
            await group.triggerGracefulShutdown()
        }
        // The service ended with the client still connected; its stream has ended cleanly.
        let client = try #require(stream)
        while let event = try await client.next() {
            #expect(event.event != "verdict")
        }
        #expect(bench.hub.subscriberCount == 0)
    }
}
