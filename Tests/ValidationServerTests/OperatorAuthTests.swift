import FareCore
import Foundation
import TestSupport
import Testing
import ValidationAPI

@testable import ValidationServer

/// Who may read the operator report: operators, by session or token; never a device, a guess or a revoked
/// operator. And an operator is never a device.
@Suite("Who may read the operator report", .timeLimit(.minutes(5)))
struct OperatorAuthTests {
    static let figures = ["/report.json?day=2026-03-14", "/report.csv?day=2026-03-14"]

    /// A request from `source` (another loopback address stands for another client: the lockout slows addresses).
    static func get(
        _ fleet: ReportFleet, _ path: String, token: String? = nil, cookie: String? = nil, source: String? = nil
    ) async throws -> HTTPReply {
        var headers: [String: String] = [:]
        if let token { headers["Authorization"] = "Bearer \(token)" }
        if let cookie { headers["Cookie"] = cookie }
        return try await LoopbackHTTP.request(port: fleet.port, "GET", path, headers: headers, source: source)
    }

    /// Posts the login form as a browser does.
    static func logIn(
        _ fleet: ReportFleet, token: String, source: String? = nil, origin: String? = nil
    ) async throws -> HTTPReply {
        var headers = ["Content-Type": "application/x-www-form-urlencoded"]
        if let origin { headers["Origin"] = origin }
        let body = "token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        return try await LoopbackHTTP.request(
            port: fleet.port, "POST", "/report/login", headers: headers, body: Array(body.utf8), source: source)
    }

    static func expectUnauthorized(_ reply: HTTPReply, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(reply.status == 401, sourceLocation: sourceLocation)
        let body = try? WireFormat.decode(ErrorBody.self, from: reply.body)
        #expect(body?.error == "unauthorized", sourceLocation: sourceLocation)
        #expect(
            reply.headers["www-authenticate"] == "Bearer realm=\"farecheck-report\"", sourceLocation: sourceLocation)
        #expect(!reply.text.contains("tram-7"), sourceLocation: sourceLocation)
    }

    @Test(
        "no token, a device's token, a wrong token and a revoked operator's get 401 and the API's error body",
        arguments: Backend.available)
    func refusals(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        for path in Self.figures {
            Self.expectUnauthorized(try await Self.get(fleet, path))
            Self.expectUnauthorized(try await Self.get(fleet, path, token: fleet.deviceTokens["tram-7"]))
            Self.expectUnauthorized(try await Self.get(fleet, path, token: "fco_not-a-token", source: "127.0.0.3"))
            #expect(try await Self.get(fleet, path, token: fleet.operatorToken).status == 200)
        }
        // A device's token does not open the page either: it is no operator's token.
        let deviceLogin = try await Self.logIn(fleet, token: fleet.deviceTokens["bus-12"]!, source: "127.0.0.4")
        #expect(deviceLogin.status == 401)
        #expect(deviceLogin.text.contains("Unknown or revoked operator token."))
        #expect(deviceLogin.headers["set-cookie"] == nil)

        // An operator's token is no device's: the API refuses it, as it refuses any unknown token.
        let asDevice = try await send(.GET, "\(fleet.baseURL)/v1/keys", token: fleet.operatorToken)
        #expect(asDevice.status == 401)
        #expect(asDevice.errorBody?.error == "unauthorized")
        let upload = try await send(
            .POST, "\(fleet.baseURL)/v1/inspections", token: fleet.operatorToken,
            body: Array(#"{"records":[]}"#.utf8))
        #expect(upload.status == 401)

        // Revoked: the token and the sessions opened with it are refused from the next request on.
        let login = try await Self.logIn(fleet, token: fleet.operatorToken)
        let cookie = try #require(login.cookie)
        #expect(try await Self.get(fleet, Self.figures[0], cookie: cookie).status == 200)
        try fleet.bench.adminOK(["operators", "revoke", "alex@agency"])
        #expect(try fleet.bench.adminOK(["operators", "list"]).hasPrefix("alex@agency\trevoked\t"))
        for path in Self.figures {
            Self.expectUnauthorized(try await Self.get(fleet, path, token: fleet.operatorToken, source: "127.0.0.5"))
            Self.expectUnauthorized(try await Self.get(fleet, path, cookie: cookie))
        }
        let page = try await Self.get(fleet, "/report", cookie: cookie)
        #expect(page.text.contains("id=\"login-form\""))
        #expect(!page.text.contains("tram-7"))
        await fleet.stop()
    }

    @Test(
        "the login form sets an HttpOnly, SameSite=Strict session cookie that opens the page, and logout ends it",
        arguments: Backend.available)
    func sessions(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        // Without a session the page is the login form, with the page's strict policy.
        let anonymous = try await Self.get(fleet, "/report")
        #expect(anonymous.status == 200)
        #expect(anonymous.headers["content-type"] == "text/html; charset=utf-8")
        #expect(anonymous.text.contains("<form id=\"login-form\" method=\"post\" action=\"/report/login\">"))
        #expect(!anonymous.text.contains("tram-7"))
        #expect(anonymous.headers["content-security-policy"] == OperatorReportPage.securityPolicy)

        let wrong = try await Self.logIn(fleet, token: "fco_guess", source: "127.0.0.6")
        #expect(wrong.status == 401)
        #expect(wrong.text.contains("Unknown or revoked operator token."))

        let crossSite = try await Self.logIn(fleet, token: fleet.operatorToken, origin: "https://elsewhere.example")
        #expect(crossSite.status == 403)
        #expect(crossSite.headers["set-cookie"] == nil)

        let login = try await Self.logIn(fleet, token: fleet.operatorToken, origin: "http://127.0.0.1:\(fleet.port)")
        #expect(login.status == 303)
        #expect(login.headers["location"] == "/report")
        let setCookie = try #require(login.headers["set-cookie"])
        let attributes = Set(
            setCookie.split(separator: ";").dropFirst().map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(attributes == ["Path=/", "Max-Age=28800", "HttpOnly", "SameSite=Strict"])
        let cookie = try #require(login.cookie)
        #expect(!cookie.contains(fleet.operatorToken))

        let page = try await Self.get(fleet, "/report?day=2026-03-14", cookie: cookie)
        #expect(page.status == 200)
        #expect(page.text.contains("Logged in as <strong id=\"operator\">alex@agency</strong>"))
        #expect(page.headers["content-security-policy"] == OperatorReportPage.securityPolicy)
        #expect(page.headers["x-content-type-options"] == "nosniff")
        #expect(page.headers["cache-control"] == "no-store")
        // The page runs no script and loads nothing from elsewhere.
        #expect(!page.text.contains("<script"))
        #expect(!page.text.contains("http://") && !page.text.contains("https://"))
        // The hostile device id is text, never markup, wherever it appears.
        #expect(!page.text.contains("<b>"))
        #expect(page.text.contains("=cmd&lt;b&gt;&quot;x&quot;&amp;"))
        // A day that is no date is said so on the page, with the way back, not as a bare error.
        let badDay = try await Self.get(fleet, "/report?day=2026-02-30", cookie: cookie)
        #expect(badDay.status == 400)
        #expect(badDay.text.contains("day is a date as YYYY-MM-DD, e.g. 2026-03-14, not 2026-02-30."))
        #expect(badDay.text.contains("<a href=\"/report\">"))
        let css = try await Self.get(fleet, "/report.css")
        #expect(css.status == 200)
        #expect(css.headers["content-type"] == "text/css; charset=utf-8")
        #expect(try await Self.get(fleet, Self.figures[1], cookie: cookie).status == 200)

        let logout = try await LoopbackHTTP.request(
            port: fleet.port, "POST", "/report/logout", headers: ["Cookie": cookie])
        #expect(logout.status == 303)
        #expect(logout.headers["set-cookie"]?.contains("Max-Age=0") == true)
        #expect(try await Self.get(fleet, "/report", cookie: cookie).text.contains("id=\"login-form\""))
        Self.expectUnauthorized(try await Self.get(fleet, Self.figures[0], cookie: cookie))
        await fleet.stop()
    }

    @Test(
        "five wrong tokens from one address (a TLS proxy's) lock no operator out: a right token from it gets in",
        arguments: Backend.available)
    func lockoutPerToken(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        // Behind the proxy every client has its address: a guesser's five wrong tokens come from it.
        let proxy = "127.0.0.2"
        for attempt in 1...5 {
            Self.expectUnauthorized(
                try await Self.get(fleet, Self.figures[attempt % 2], token: "fco_guess-\(attempt)", source: proxy))
        }
        // The operator behind the same proxy still gets in, as a bearer token and in the form.
        #expect(try await Self.get(fleet, Self.figures[0], token: fleet.operatorToken, source: proxy).status == 200)
        let form = try await Self.logIn(fleet, token: fleet.operatorToken, source: proxy)
        #expect(form.status == 303)
        #expect(form.cookie != nil)
        // The failing address is only slowed: its next wrong token is answered late, with 429 and Retry-After.
        let slowed = try await Self.get(fleet, Self.figures[0], token: "fco_guess-6", source: proxy)
        #expect(slowed.status == 429)
        #expect(try WireFormat.decode(ErrorBody.self, from: slowed.body).error == "too-many-attempts")
        #expect(slowed.headers["retry-after"] == "1")
        #expect(try await Self.get(fleet, Self.figures[1], token: fleet.operatorToken, source: proxy).status == 200)

        // One token tried five times is locked wherever it comes from, before it is looked up.
        for source in ["127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"] {
            Self.expectUnauthorized(try await Self.get(fleet, Self.figures[0], token: "fco_same", source: source))
        }
        let locked = try await Self.get(fleet, Self.figures[0], token: "fco_same", source: "127.0.0.8")
        #expect(locked.status == 429)
        #expect(locked.headers["retry-after"] == "60")
        #expect(try WireFormat.decode(ErrorBody.self, from: locked.body).message.contains("this operator token"))
        let lockedForm = try await Self.logIn(fleet, token: "fco_same", source: "127.0.0.8")
        #expect(lockedForm.status == 429)
        #expect(lockedForm.text.contains("Too many wrong tries of this token: try again in 1 min 00 s."))
        #expect(lockedForm.headers["set-cookie"] == nil)
        // Its lock is the token's: the right one from that address and any other gets in.
        #expect(
            try await Self.get(fleet, Self.figures[0], token: fleet.operatorToken, source: "127.0.0.8").status == 200)
        #expect(try await Self.get(fleet, Self.figures[0], token: fleet.operatorToken).status == 200)
        await fleet.stop()
    }

    @Test("a revoked operator's token, tried five times, is refused before it is looked up")
    func lockoutPerOperator() async throws {
        let fleet = try await ReportFleet(.sqlite)
        try fleet.bench.adminOK(["operators", "revoke", "alex@agency"])
        for attempt in 1...5 {
            Self.expectUnauthorized(
                try await Self.get(fleet, Self.figures[0], token: fleet.operatorToken, source: "127.0.1.\(attempt)"))
        }
        let locked = try await Self.get(fleet, Self.figures[0], token: fleet.operatorToken, source: "127.0.1.9")
        #expect(locked.status == 429)
        #expect(locked.headers["retry-after"] == "60")
        await fleet.stop()
    }

    @Test("the lockout counts per token, per operator and per address, each on its own")
    func lockoutCounts() {
        let lockout = OperatorLockout()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        for second in 0..<4 {
            let failure = lockout.failed(
                token: [UInt8(second)], account: nil, address: "10.0.0.1", at: start + Double(second))
            #expect(failure == .init(lockedUntil: nil, addressSlowed: false, addressStarted: false))
        }
        let fifth = lockout.failed(token: [4], account: "sam", address: "10.0.0.1", at: start + 4)
        #expect(fifth == .init(lockedUntil: nil, addressSlowed: false, addressStarted: true))
        #expect(lockout.admit(.token([4]), at: start + 5) == .admitted)
        #expect(lockout.admit(.account("sam"), at: start + 5) == .admitted)
        // Four more tries of "sam" from elsewhere lock it, for a minute, then twice as long the next time.
        for second in 5..<8 {
            #expect(
                lockout.failed(token: [9], account: "sam", address: "10.0.0.\(second)", at: start + Double(second))
                    .lockedUntil == nil)
        }
        let locking = lockout.failed(token: [10], account: "sam", address: "10.0.0.8", at: start + 8)
        #expect(locking.lockedUntil == start + 68)
        #expect(!locking.addressSlowed && !locking.addressStarted)
        #expect(lockout.admit(.account("sam"), at: start + 67) == .locked(until: start + 68))
        #expect(lockout.admit(.account("sam"), at: start + 68) == .admitted)
        // The address's slowing ends with its lock's time; failures in the window start it again.
        #expect(lockout.failed(token: [11], account: nil, address: "10.0.0.1", at: start + 30).addressSlowed)
        #expect(!lockout.failed(token: [12], account: nil, address: "10.0.0.1", at: start + 70).addressSlowed)
    }

    @Test("operators add prints a token once and keeps only its hash; names are checked", arguments: Backend.available)
    func commands(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.adminOK(["operators", "add", "sam"]).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("fco_") && token.count == 47)
        #expect(try bench.admin(["operators", "add", "sam"]).status != 0)
        #expect(try bench.admin(["operators", "add", "two words"]).status != 0)
        #expect(try bench.admin(["operators", "revoke", "nobody"]).status != 0)
        let listed = try bench.adminOK(["operators", "list", "--json"])
        #expect(listed.contains("\"name\":\"sam\"") && listed.contains("\"state\":\"active\""))
        let stored = try await bench.withStore { store in
            try await store.operatorAccount(tokenHash: OperatorToken.hash(token))
        }
        #expect(stored?.name == "sam")
        // The database holds the hash, never the token.
        if backend == .sqlite {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: bench.path("server.sqlite")))
            #expect(bytes.range(of: Data(token.utf8)) == nil)
        }
    }
}
