import FareCore
import Foundation
import Hummingbird
import Logging
import NIOCore
import ValidationAPI

/// The paths of the operator report.
public enum OperatorPath {
    /// The page (HTML): the login form without a session, the report with one.
    public static let page = "/report"
    /// The report's style sheet, the one file the page loads.
    public static let styleSheet = "/report.css"
    /// The login form posts here (`token`), and gets the session cookie.
    public static let login = "/report/login"
    /// The logout form posts here.
    public static let logout = "/report/logout"
    /// The figures as JSON (`OperatorReport`), documented in `API/openapi.yaml`.
    public static let json = "/report.json"
    /// The figures as CSV (`OperatorReportCSV`), documented in `API/openapi.yaml`.
    public static let csv = "/report.csv"
    /// The session cookie's name.
    static let cookie = "farecheck_report"
}

/// Why an operator's request is not served.
private enum OperatorRefusal: Error {
    /// No session and no token, an unknown or revoked one: 401.
    case unauthorized
    /// Too many wrong tries of this token (or this operator): 429 until then.
    case locked(until: Date)
    /// A wrong token from an address that keeps sending them, answered late: 429 until then.
    case slowed(until: Date)
}

extension APIServer {
    /// Adds the operator report's routes: the page, its style sheet, login and logout, and the figures as JSON and
    /// CSV. They answer to operators only (a session cookie or an operator's bearer token), never to a device.
    func addOperatorRoutes(to router: Router<APIRequestContext>) {
        router.get(RouterPath(OperatorPath.page)) { request, context in await page(request, context) }
        router.get(RouterPath(OperatorPath.styleSheet)) { _, _ in
            var headers = Self.pageHeaders
            headers[.contentType] = "text/css; charset=utf-8"
            headers[.cacheControl] = "no-cache"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: OperatorReportPage.styleSheet)))
        }
        router.post(RouterPath(OperatorPath.login)) { request, context in await login(request, context) }
        router.post(RouterPath(OperatorPath.logout)) { request, _ in logout(request) }
        router.get(RouterPath(OperatorPath.json)) { request, context in
            await figures(request, context) { report in
                Self.json(.ok, report, headers: [.cacheControl: "no-store"])
            }
        }
        router.get(RouterPath(OperatorPath.csv)) { request, context in
            await figures(request, context) { report in
                var headers = Self.pageHeaders
                headers[.contentType] = "text/csv; charset=utf-8; header=present"
                // The file name holds the day only: a device id is text from a validator, not for a header.
                headers[.contentDisposition] = "attachment; filename=\"farecheck-report-\(report.day).csv\""
                return Response(
                    status: .ok, headers: headers,
                    body: ResponseBody(byteBuffer: ByteBuffer(string: OperatorReportCSV.table(report))))
            }
        }
    }

    // MARK: Pages

    /// The headers of every page: nothing loads from elsewhere, nothing frames it, nothing is cached.
    static let pageHeaders: HTTPFields = [
        .contentSecurityPolicy: OperatorReportPage.securityPolicy, .xContentTypeOptions: "nosniff",
        .reportFrameOptions: "DENY", .reportReferrerPolicy: "same-origin", .cacheControl: "no-store",
    ]

    private static func html(_ status: HTTPResponse.Status, _ document: String, headers: HTTPFields = [:])
        -> Response
    {
        var fields = pageHeaders
        fields[.contentType] = "text/html; charset=utf-8"
        for field in headers { fields.append(field) }
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: document)))
    }

    /// The page in the language the request gets (`ReportLanguages.words`), and the cookie that keeps a language
    /// the request chose (`lang`), if it chose one the report speaks.
    private func reportPage(_ request: Request) -> (page: OperatorReportPage, keep: String?) {
        let languages = configuration.reportLanguages
        let asked = request.uri.queryParameters["lang"].map(String.init)
        let chosen = asked ?? request.cookies[ReportLanguages.cookie]?.value
        let words = languages.words(chosen: chosen, acceptLanguage: request.headers[.acceptLanguage])
        let page = OperatorReportPage(words: words, languages: languages.languages.catalogs)
        guard let asked, LanguageTag(asked).flatMap(languages.catalog(for:)) != nil else { return (page, nil) }
        // A year, for the report's paths only; not a secret, but no script reads it either.
        let cookie =
            "\(ReportLanguages.cookie)=\(words.language); Path=/report; Max-Age=31536000; HttpOnly; SameSite=Strict"
            + (configuration.tls == nil ? "" : "; Secure")
        return (page, cookie)
    }

    private func page(_ request: Request, _ context: APIRequestContext) async -> Response {
        let (page, keep) = reportPage(request)
        let kept: HTTPFields = keep.map { [.setCookie: $0] } ?? [:]
        let account: OperatorRecord
        do {
            // The page takes the session only: a token is typed into the login form, never put in a URL.
            account = try await sessionOperator(request)
        } catch {
            return Self.html(.ok, page.login(message: nil), headers: kept)
        }
        do {
            let query = try reportQuery(request)
            let report = try await store.operatorReport(query)
            let devices = try await store.devices().map(\.id)
            let trust = try await trustSourceRows()
            return Self.html(
                .ok, page.report(report, operatorName: account.name, devices: devices, trust: trust), headers: kept)
        } catch let failure as APIFailure {
            // The API's own sentence, in English (a day or zone typed into the address by hand).
            return Self.html(failure.status, page.problem(english: failure.body.message), headers: kept)
        } catch {
            logger.error("report failed: \(error)")
            return Self.html(
                .internalServerError, page.problem(page.words.text("databaseFailed")), headers: kept)
        }
    }

    private func login(_ request: Request, _ context: APIRequestContext) async -> Response {
        let page = reportPage(request).page
        guard Self.isSameOrigin(request) else {
            return Self.html(.forbidden, page.login(message: page.words.text("otherSite")))
        }
        let now = configuration.now()
        var request = request
        let body = (try? await request.collectBody(upTo: 4096)).map { String(buffer: $0) } ?? ""
        let token = FormBody.field("token", in: body)?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        do {
            let account = try await operatorAccount(token: token, request, context)
            let session = try sessions.open(tokenHash: OperatorToken.hash(token), at: now)
            logger.info("operator logged in to the report", metadata: ["operator": "\(account.name)"])
            return Response(
                status: .seeOther,
                headers: [
                    .location: OperatorPath.page, .setCookie: sessionCookie(session.cookie, maxAge: sessions.lifetime),
                    .cacheControl: "no-store",
                ])
        } catch OperatorRefusal.locked(let until) {
            return Self.lockedPage(page, until: until, now: now, because: "lockedToken")
        } catch OperatorRefusal.slowed(let until) {
            return Self.lockedPage(page, until: until, now: now, because: "lockedAddress")
        } catch OperatorRefusal.unauthorized {
            return Self.html(
                .unauthorized, page.login(message: page.words.text("unknownToken")),
                headers: [.wwwAuthenticate: "Bearer realm=\"farecheck-report\""])
        } catch {
            logger.error("operator login failed: \(error)")
            return Self.html(.internalServerError, page.login(message: page.words.text("databaseFailed")))
        }
    }

    private func logout(_ request: Request) -> Response {
        guard Self.isSameOrigin(request) else {
            let page = reportPage(request).page
            return Self.html(.forbidden, page.problem(page.words.text("otherSite")))
        }
        if let cookie = request.cookies[OperatorPath.cookie]?.value { sessions.close(cookie: cookie) }
        return Response(
            status: .seeOther,
            headers: [
                .location: OperatorPath.page, .setCookie: sessionCookie("", maxAge: 0), .cacheControl: "no-store",
            ])
    }

    /// The login form saying why it is locked (the entry `reason`, whose `{0}` is the wait) and for how long.
    private static func lockedPage(_ page: OperatorReportPage, until: Date, now: Date, because reason: String)
        -> Response
    {
        let seconds = max(1, Int(until.timeIntervalSince(now).rounded(.up)))
        let wait = OperatorReportPage.duration(milliseconds: Int64(seconds) * 1000)
        return html(
            .tooManyRequests, page.login(message: page.words.text(reason, wait)), headers: [.retryAfter: "\(seconds)"])
    }

    // MARK: Figures (JSON and CSV)

    /// The policy of the figures and their refusals (JSON, CSV): data that loads nothing, runs nothing and is
    /// framed nowhere, should a browser ever render it.
    static let figuresSecurityPolicy = "default-src 'none'; frame-ancestors 'none'"

    /// Authenticates an operator by session or bearer token, reads the figures, and answers with `render`; every
    /// refusal is the API's error body. Every answer is marked as data: `X-Content-Type-Options: nosniff`, so that
    /// no browser reads a device id in it as markup or script, and `figuresSecurityPolicy`.
    private func figures(
        _ request: Request, _ context: APIRequestContext, _ render: (OperatorReport) -> Response
    ) async -> Response {
        var response = await unmarkedFigures(request, context, render)
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.contentSecurityPolicy] = Self.figuresSecurityPolicy
        return response
    }

    private func unmarkedFigures(
        _ request: Request, _ context: APIRequestContext, _ render: (OperatorReport) -> Response
    ) async -> Response {
        do {
            if request.headers[.authorization] != nil {
                let token = try bearerToken(request, context)
                _ = try await operatorAccount(token: token, request, context)
            } else {
                _ = try await sessionOperator(request)
            }
            return render(try await store.operatorReport(try reportQuery(request)))
        } catch OperatorRefusal.unauthorized {
            return APIFailure(
                .unauthorized, "unauthorized",
                "The report needs an operator's session (log in at /report) or bearer token.",
                headers: [.wwwAuthenticate: "Bearer realm=\"farecheck-report\""]
            ).response
        } catch let refusal as OperatorRefusal {
            let (until, reason) =
                switch refusal {
                case .locked(let until): (until, "Too many wrong tries of this operator token")
                case .slowed(let until): (until, "Too many wrong operator tokens from this address")
                case .unauthorized: (configuration.now(), "")
                }
            let seconds = max(1, Int(until.timeIntervalSince(configuration.now()).rounded(.up)))
            return APIFailure(
                .tooManyRequests, "too-many-attempts", "\(reason); try again in \(seconds) s.",
                headers: [.retryAfter: "\(seconds)"]
            ).response
        } catch let failure as APIFailure {
            return failure.response
        } catch {
            logger.error("report failed: \(error)", metadata: ["path": "\(request.uri.path)"])
            return APIFailure(
                .internalServerError, "storage-failure", "The server could not reach its database; try again later."
            ).response
        }
    }

    /// `day` (`YYYY-MM-DD`; the server's today in UTC when absent), `device` (a registered id; every device when
    /// absent or empty, as the page's filter sends "all devices") and `tz` (`UTC` or `±HH:MM`; UTC when absent) of
    /// the request.
    private func reportQuery(_ request: Request) throws -> ReportQuery {
        let parameters = request.uri.queryParameters
        var day = ReportDay(containing: configuration.now())
        if let text = parameters["day"] {
            guard let named = ReportDay(text: text) else {
                throw APIFailure(
                    .badRequest, "bad-request",
                    "day is a date as YYYY-MM-DD, e.g. 2026-03-14, not \(PrintableText(String(text.prefix(40))))."
                )
            }
            day = named
        }
        var device: String?
        if let text = parameters["device"], !text.isEmpty {
            // Characters as JSON Schema counts them (code points), as the document's maxLength does.
            guard text.unicodeScalars.count <= 128 else {
                throw APIFailure(.badRequest, "bad-request", "device is a device id of at most 128 characters.")
            }
            device = String(text)
        }
        var offset = ReportOffset.utc
        if let text = parameters["tz"] {
            guard let named = ReportOffset(text: text) else {
                throw APIFailure(
                    .badRequest, "bad-request",
                    "tz is UTC or an offset from -14:00 to +14:00 such as +02:00, not "
                        + "\(PrintableText(String(text.prefix(40)))).")
            }
            offset = named
        }
        return ReportQuery(day: day, deviceID: device, offset: offset)
    }

    // MARK: Authentication

    /// The operator whose open session the request's cookie names.
    private func sessionOperator(_ request: Request) async throws -> OperatorRecord {
        guard let cookie = request.cookies[OperatorPath.cookie]?.value, !cookie.isEmpty, cookie.utf8.count <= 128,
            let session = sessions.session(cookie: cookie, at: configuration.now())
        else { throw OperatorRefusal.unauthorized }
        // Looked up again at every request: a revoked operator's sessions end at once.
        guard let account = try await store.operatorAccount(tokenHash: session.tokenHash), !account.revoked else {
            sessions.close(cookie: cookie)
            throw OperatorRefusal.unauthorized
        }
        return account
    }

    /// The bearer token of the request, or a refusal (audited) when there is none.
    private func bearerToken(_ request: Request, _ context: APIRequestContext) throws -> String {
        let header = request.headers[.authorization] ?? ""
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            auditOperatorRefusal(.notBearer, request, context)
            throw OperatorRefusal.unauthorized
        }
        return parts[1].trimmingCharacters(in: .whitespaces)
    }

    /// The registered, not revoked, operator whose token `token` is. A wrong token counts against itself, the
    /// operator it names (a revoked one) and the client's address (`OperatorLockout`), and is audited; a locked
    /// token or operator is refused (429) before anything is looked up, and a wrong token from an address that
    /// keeps failing is answered after a pause (429). A right token is let in whatever its address did.
    private func operatorAccount(
        token: String, _ request: Request, _ context: APIRequestContext
    ) async throws -> OperatorRecord {
        let address = Self.address(of: context.client)
        let now = configuration.now()
        let tokenHash = OperatorToken.hash(token)
        if case .locked(let until) = lockout.admit(.token(tokenHash), at: now) {
            throw OperatorRefusal.locked(until: until)
        }
        func refuse(_ cause: RefusalAudit.Cause, operatorName: String? = nil) async -> OperatorRefusal {
            auditOperatorRefusal(cause, request, context, token: token, operatorName: operatorName)
            let failure = lockout.failed(token: tokenHash, account: operatorName, address: address, at: now)
            if let until = failure.lockedUntil {
                logger.warning(
                    "locked an operator token after \(lockout.rules.failuresBeforeLock) wrong tries",
                    metadata: [
                        "token": "\(tokenHash.hexString.prefix(8))", "operator": "\(operatorName ?? "-")",
                        "until": "\(until.formatted(.iso8601))",
                    ])
            }
            if failure.addressStarted {
                logger.warning(
                    "slowing a client after \(lockout.rules.failuresBeforeLock) wrong operator tokens",
                    metadata: ["client": "\(address)"])
            }
            if failure.addressSlowed {
                await lockout.pause()
                return .slowed(until: now.addingTimeInterval(lockout.rules.pause))
            }
            return .unauthorized
        }
        guard !token.isEmpty, token.utf8.count <= 512 else { throw await refuse(.malformedToken) }
        guard let account = try await store.operatorAccount(tokenHash: tokenHash) else {
            throw await refuse(.unknownOperatorToken)
        }
        if case .locked(let until) = lockout.admit(.account(account.name), at: now) {
            throw OperatorRefusal.locked(until: until)
        }
        guard !account.revoked else { throw await refuse(.revokedOperator, operatorName: account.name) }
        return account
    }

    private func auditOperatorRefusal(
        _ cause: RefusalAudit.Cause, _ request: Request, _ context: APIRequestContext, token: String? = nil,
        operatorName: String? = nil
    ) {
        audit.record(
            RefusalAudit.Refusal(
                cause: cause, client: context.client, method: request.method.rawValue, path: request.uri.path,
                tokenDigest: token.flatMap { $0.isEmpty ? nil : String(OperatorToken.hash($0).hexString.prefix(8)) },
                deviceID: nil, operatorName: operatorName))
    }

    /// The `Set-Cookie` value of a session: for every path of this server (the page, its CSV and JSON), never read
    /// by a script (`HttpOnly`), never sent by another site's request (`SameSite=Strict`), only over HTTPS when the
    /// server serves HTTPS.
    private func sessionCookie(_ value: String, maxAge: TimeInterval) -> String {
        "\(OperatorPath.cookie)=\(value); Path=/; Max-Age=\(Int(maxAge)); HttpOnly; SameSite=Strict"
            + (configuration.tls == nil ? "" : "; Secure")
    }

    /// Whether a form was posted from this server's own page: a browser names the page's origin in `Origin`, and
    /// its host and port must be the request's. A request without `Origin` (a script, an old browser) passes: the
    /// session cookie is `SameSite=Strict` in any case.
    private static func isSameOrigin(_ request: Request) -> Bool {
        guard let origin = request.headers[.origin] else { return true }
        guard let host = request.head.authority,
            let schemeEnd = origin.range(of: "://")
        else { return false }
        return origin[schemeEnd.upperBound...] == host
    }

    /// The client's address without its port, which the lockout slows.
    static func address(of client: String) -> String {
        guard let colon = client.lastIndex(of: ":") else { return client }
        return String(client[..<colon])
    }
}

extension HTTPFields.Element.Name {
    /// `X-Frame-Options`, for browsers that predate the policy's `frame-ancestors`.
    fileprivate static let reportFrameOptions = Self("X-Frame-Options")!
    /// `Referrer-Policy`: the report's URLs (day, device) are not told to any other site. Not `no-referrer`: with
    /// it a browser posts the login form with `Origin: null`, and the form could not be told from another site's.
    fileprivate static let reportReferrerPolicy = Self("Referrer-Policy")!
}
