import Daemon
import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TrustStore

@testable import Daemon
@testable import Presentation

/// The page's answers marked as what they are, and ticket text kept from reordering the journal (issue 47).
@Suite(.timeLimit(.minutes(3)))
struct PageEdgeTests {
    @Test("every answer of the page, a refusal included, carries nosniff and Referrer-Policy: no-referrer")
    func answersAreMarked() async throws {
        let bench = try PageSecurityTests.bench()
        try await bench.run { port in
            var replies = [
                ("GET /", try await LoopbackHTTP.request(port: port, "GET", "/")),
                ("GET /healthz", try await LoopbackHTTP.request(port: port, "GET", "/healthz")),
                ("GET /metrics", try await LoopbackHTTP.request(port: port, "GET", "/metrics")),
                ("GET /session", try await LoopbackHTTP.request(port: port, "GET", "/session")),
                (
                    "GET / from a rebinding page",
                    try await LoopbackHTTP.request(port: port, "GET", "/", headers: ["Host": "evil.example"])
                ),
            ]
            replies.append(
                ("POST /login", try await EndpointBench.login(port: port, staffID: "K-204", pin: "000000")))
            #expect(replies.map(\.1.status) == [200, 200, 200, 401, 421, 401])
            for (request, reply) in replies {
                #expect(reply.headers["x-content-type-options"] == "nosniff", "\(request)")
                #expect(reply.headers["referrer-policy"] == "no-referrer", "\(request)")
            }
        }
    }

    @Test(
        "the login form, posted without script under no-referrer (Origin: null, Sec-Fetch-Site: same-origin), logs in")
    func formLoginUnderNoReferrer() async throws {
        let bench = try PageSecurityTests.bench()
        try await bench.run { port in
            let form = ["Content-Type": "application/x-www-form-urlencoded", "Origin": "null"]
            // Without the browser's word that it is the page's own, a null origin is not taken.
            let unknown = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: form, body: Array("staffID=K-204&pin=482913".utf8))
            #expect(unknown.status == 403)
            let own = try await LoopbackHTTP.request(
                port: port, "POST", "/login", headers: form.merging(["Sec-Fetch-Site": "same-origin"]) { $1 },
                body: Array("staffID=K-204&pin=482913".utf8))
            #expect(own.status == 200)
            #expect(bench.sessions.current()?.staffID == "K-204")
        }
    }

    @Test(
        "a bidi override or zero-width character from a ticket never reaches the journal's line raw; the line decodes the same"
    )
    func journalLineEscapesFormatting() throws {
        let formatting = [
            "\u{202E}", "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
            "\u{200E}", "\u{200F}", "\u{061C}", "\u{200B}", "\u{200C}", "\u{200D}", "\u{2060}", "\u{FEFF}", "\u{AD}",
            "\u{2028}", "\u{2029}", "\u{E0041}",
        ]
        var event = VerdictEvent(VerdictEventFormTests.fixtures()[0])
        let text = "Kim \(formatting.joined())\"Berger\"\\ 🚆 exe.gpj"
        event.holder = text
        event.reason = "Valid ticket of \(text)."
        event.issuer = "10\u{202E}80"
        event.explanation = "Ticket of \(Explanation.verbatim(text))."
        let line = StandardOutputSink.journalLine(event.jsonLine)
        let raw = line.unicodeScalars.filter { PrintableText.isInvisibleFormatting($0) }
        #expect(raw.isEmpty, "\(raw.map { String($0.value, radix: 16) })")
        #expect(line.contains(#"10\u202e80"#))
        #expect(line.contains(#"\udb40\udc41"#), "a character beyond the BMP as its UTF-16 pair")
        #expect(line.contains("🚆"), "other text passes as it is")
        let decoded = try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(line.utf8))
        #expect(decoded == event)
        // A line without such characters is the very line.
        let plain = VerdictEvent(VerdictEventFormTests.fixtures()[1])
        #expect(StandardOutputSink.journalLine(plain.jsonLine) == plain.jsonLine)
    }
}
