import FareCore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import Signatures
import ValidationAPI

/// How the reference server listens and signs.
public struct ServerConfiguration: Sendable {
    /// The address to bind, e.g. `127.0.0.1`.
    public var host: String
    /// The port to bind; 0 picks a free one (reported to `onListening`).
    public var port: Int
    /// The trust anchor's private key, which signs revocation deltas; without it `/v1/revocations` answers 503.
    public var anchorKey: PrivateKey?
    /// The largest `POST /v1/inspections` body read; larger ones get 413.
    public var inspectionBodyLimit: Int
    /// The least severe log level written (to standard error).
    public var logLevel: Logger.Level
    /// HTTPS settings (see `ServerTLS.configuration`); nil serves plain HTTP.
    public var tls: TLSConfiguration?
    /// The deadlines a client must keep and the connections served at once.
    public var limits: ConnectionLimits
    /// The most log lines per minute for refused device tokens (401); refusals past it are counted in one line
    /// (see `RefusalAudit`).
    public var refusalLogLimit: Int
    /// The host names (and addresses) requests must name in `Host`; others get 421. Nil answers every name.
    public var allowedHosts: AllowedHosts?
    /// The server's clock: when an upload is received (the operator report's sync lag), when a report session
    /// ends, and which day the report shows by default. A test sets its own to control them.
    public var now: @Sendable () -> Date = { Date() }
    /// What a first-use claim must satisfy: single-use products, how far back an upload may date one, the rate.
    public var claimPolicy = FirstUseClaimPolicy()
    /// The publishers the server follows, by name, with the age past which each is stale (`[[trust.source]]`'s
    /// `stale_after`): `/v1/health` says `degraded` while one is.
    public var trustSourceAges: [String: Duration] = [:]
    /// The languages the operator report speaks (the built-in catalogs and `--languages-dir`'s) and the one it
    /// speaks to an operator who chose none (`--report-language`).
    public var reportLanguages = ReportLanguages()

    /// Makes a configuration.
    public init(
        host: String = "127.0.0.1", port: Int = 8443, anchorKey: PrivateKey? = nil,
        inspectionBodyLimit: Int = 1 << 20, logLevel: Logger.Level = .info, tls: TLSConfiguration? = nil,
        limits: ConnectionLimits = ConnectionLimits(), refusalLogLimit: Int = 20
    ) {
        self.tls = tls
        self.limits = limits
        self.refusalLogLimit = refusalLogLimit
        self.host = host
        self.port = port
        self.anchorKey = anchorKey
        self.inspectionBodyLimit = inspectionBodyLimit
        self.logLevel = logLevel
    }

    /// Reads a `--listen` value: `HOST:PORT`, `[IPv6]:PORT`, or `:PORT` (loopback).
    ///
    /// - Throws: `ServerError` with code `.invalidInput` for anything else.
    public static func parseListenAddress(_ text: String) throws(ServerError) -> (host: String, port: Int) {
        let invalid = ServerError(
            code: .invalidInput,
            message: "--listen \(text): expected HOST:PORT, e.g. 127.0.0.1:8443, [::1]:8443, or 127.0.0.1:0 for any "
                + "free port.")
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port)
        else { throw invalid }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty { host = "127.0.0.1" }
        guard !host.contains(" ") else { throw invalid }
        return (host, port)
    }
}

/// The reference implementation of the online validation API (`API/openapi.yaml`) over a `ServerStore`.
public struct APIServer: Sendable {
    let store: any ServerStore
    let configuration: ServerConfiguration
    let logger: Logger
    let audit: RefusalAudit
    /// The operator report's open sessions and its lockout of wrong tokens.
    let sessions = OperatorSessions()
    let lockout = OperatorLockout()
    /// First-use claims: verified with the server's own trust, and rate-limited per device.
    let claims: FirstUseClaimVerifier
    let claimLimiter: ClaimRateLimiter

    /// Makes a server over a store; it logs to standard error, with control characters escaped
    /// (`EscapingLogHandler`), Hummingbird's lines included.
    public init(store: any ServerStore, configuration: ServerConfiguration) {
        self.store = store
        self.configuration = configuration
        var logger = Logger(label: "farecheck-server", factory: EscapingLogHandler.standardError)
        logger.logLevel = configuration.logLevel
        self.logger = logger
        audit = RefusalAudit(logger: logger, linesPerInterval: configuration.refusalLogLimit)
        claims = FirstUseClaimVerifier(store: store, policy: configuration.claimPolicy)
        claimLimiter = ClaimRateLimiter(
            claimsPerSecond: configuration.claimPolicy.claimsPerSecond, burst: configuration.claimPolicy.claimBurst)
    }

    /// Every path the server answers, for checking the OpenAPI document against.
    public static let servedPaths = [
        APIPath.health, APIPath.keys, APIPath.revocations, APIPath.inspections, APIPath.check, APIPath.firstUses,
        OperatorPath.json, OperatorPath.csv, APIPath.metrics,
    ]

    /// The methods each path answers, as the OpenAPI document lists them; any other gets 405 with `Allow`.
    public static let allowedMethods: [String: [HTTPRequest.Method]] = [
        APIPath.health: [.get], APIPath.keys: [.get], APIPath.revocations: [.get], APIPath.inspections: [.post],
        APIPath.check: [.post], APIPath.firstUses: [.get], OperatorPath.json: [.get], OperatorPath.csv: [.get],
        APIPath.metrics: [.get],
    ]

    /// Serves until SIGTERM or SIGINT (when `stopsOnSignals`), or until the task is cancelled, then shuts down
    /// gracefully.
    ///
    /// - Parameters:
    ///   - stopsOnSignals: Whether SIGTERM and SIGINT stop the server (the command line); a server run inside
    ///     another program (a test) passes false and is stopped by cancelling its task.
    ///   - onListening: Called once the socket is bound, with the host and the actual port.
    public func run(
        stopsOnSignals: Bool = true, onListening: @escaping @Sendable (String, Int) async -> Void
    ) async throws {
        try configuration.limits.validate()
        let server: HTTPServerBuilder
        do {
            server = try configuration.limits.serverBuilder(tls: configuration.tls)
        } catch {
            throw ServerError(code: .invalidInput, message: "The TLS settings cannot be used: \(error).", cause: error)
        }
        let application = Application(
            router: makeRouter(),
            server: server,
            configuration: configuration.limits.applicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port), logger: logger),
            onServerRunning: { [configuration] channel in
                let port = channel.localAddress?.port ?? configuration.port
                await onListening(configuration.host, port)
            },
            logger: logger
        )
        do {
            // The audit's summaries run beside the server, and the last one is written when it stops.
            try await withThrowingTaskGroup(of: Void.self) { [audit] group in
                group.addTask { await audit.run() }
                defer { group.cancelAll() }
                if stopsOnSignals {
                    try await application.runService()
                } else {
                    try await application.runService(gracefulShutdownSignals: [])
                }
            }
        } catch let error as IOError {
            // Binding failed (the only socket call of the server's own): said in words, with the address.
            throw ServerError(
                code: .serveFailed,
                message: NetworkErrorText.listening(
                    on: "\(configuration.host):\(configuration.port)", errno: error.errnoCode, setting: "--listen"),
                cause: error)
        } catch {
            throw ServerError(
                code: .serveFailed,
                message: "Cannot serve on \(configuration.host):\(configuration.port): \(error).", cause: error)
        }
    }

    func makeRouter() -> Router<APIRequestContext> {
        let router = Router(context: APIRequestContext.self)
        if let hosts = configuration.allowedHosts { router.middlewares.add(AllowedHostCheck(hosts: hosts)) }
        router.middlewares.add(ErrorBodyMiddleware())
        router.get(RouterPath(APIPath.health)) { _, _ in await health() }
        router.get(RouterPath(APIPath.metrics)) { _, _ in await metrics() }
        router.get(RouterPath(APIPath.keys)) { request, context in
            await answer(request, context) { device in try await keyBundle(request, device: device) }
        }
        router.get(RouterPath(APIPath.revocations)) { request, context in
            await answer(request, context) { device in try await revocations(request, device: device) }
        }
        router.post(RouterPath(APIPath.inspections)) { request, context in
            await answer(request, context) { device in try await inspections(request, device: device) }
        }
        router.post(RouterPath(APIPath.check)) { request, context in
            await answer(request, context) { device in try await check(request, device: device) }
        }
        router.get(RouterPath(APIPath.firstUses)) { request, context in
            await answer(request, context) { device in try await firstUses(request, device: device) }
        }
        addOperatorRoutes(to: router)
        return router
    }

    // MARK: Handlers

    private func health() async -> Response {
        do {
            try await store.checkHealth()
            let bundle = try await store.latestBundle()
            let sources = try await trustSourceHealth()
            let stale = sources?.contains { $0.stale } ?? false
            // Stale trust data degrades the service but does not stop it: still 200, so that a load balancer keeps
            // a server whose database answers.
            return Self.json(
                .ok,
                HealthStatus(
                    status: stale ? "degraded" : "ok", storage: store.backendName, keyBundleSequence: bundle?.sequence,
                    trustSources: sources))
        } catch {
            logger.error("health check failed: \(error)")
            return Self.json(
                .serviceUnavailable,
                HealthStatus(status: "degraded", storage: store.backendName, keyBundleSequence: nil))
        }
    }

    /// The configured sources as the operator report shows them: their state, age and limit, with why the last
    /// attempt failed.
    func trustSourceRows() async throws -> [TrustSourceRow] {
        guard !configuration.trustSourceAges.isEmpty else { return [] }
        let states = Dictionary(
            try await store.trustSourceStates().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let now = configuration.now()
        return configuration.trustSourceAges.keys.sorted().map { name in
            let state = states[name]
            let limit = configuration.trustSourceAges[name] ?? .seconds(86_400)
            return TrustSourceRow(
                name: name, state: state, age: state?.age(at: now), limit: limit,
                stale: state?.isStale(after: limit, at: now) ?? false)
        }
    }

    /// The trust sources as Prometheus reads them (text format 0.0.4): per source its last attempt and success, age,
    /// staleness, failures in a row and version, and the changes held for an operator. Why a fetch failed is not
    /// said (no token is needed): `trust status` and the report say it.
    private func metrics() async -> Response {
        var lines: [String] = []
        func gauge(_ name: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            lines.append("# HELP \(name) \(help)")
            lines.append("# TYPE \(name) gauge")
            for sample in samples { lines.append("\(name)\(sample.labels) \(sample.value)") }
        }
        let status: HTTPResponse.Status
        do {
            let rows = try await trustSourceRows()
            // One label, the configured name, so that a series stays one series; the rest is in the info gauge.
            func labels(_ row: TrustSourceRow) -> String { "{source=\"\(Self.labelValue(row.name))\"}" }
            gauge(
                "farecheck_trust_source_last_attempt_seconds", "Unix time of the source's last fetch.",
                rows.compactMap { row in
                    row.state?.lastAttempt.map { (labels(row), "\(Int64($0.timeIntervalSince1970))") }
                })
            gauge(
                "farecheck_trust_source_last_success_seconds",
                "Unix time of the source's last fetch that left the trust current.",
                rows.compactMap { row in
                    row.state?.lastSuccess.map { (labels(row), "\(Int64($0.timeIntervalSince1970))") }
                })
            gauge(
                "farecheck_trust_source_age_seconds", "Seconds since the source's last success.",
                rows.compactMap { row in row.age.map { (labels(row), "\(Int64($0.rounded(.down)))") } })
            gauge(
                "farecheck_trust_source_stale", "1 while the source is past its stale_after (or never succeeded).",
                rows.map { (labels($0), $0.stale ? "1" : "0") })
            gauge(
                "farecheck_trust_source_failures", "Fetches failed in a row.",
                rows.map { (labels($0), "\($0.state?.failures ?? 0)") })
            gauge(
                "farecheck_trust_source_info", "The source's kind and the version its trust holds, as labels.",
                rows.compactMap { row in
                    row.state.map { state in
                        (
                            "{source=\"\(Self.labelValue(row.name))\",kind=\"\(Self.labelValue(state.kind))\","
                                + "version=\"\(Self.labelValue(state.version ?? ""))\"}", "1"
                        )
                    }
                })
            gauge(
                "farecheck_trust_changes_pending", "Changes held for an operator (trust pending).",
                [("", "\(try await store.trustChanges(pendingOnly: true).count)")])
            status = .ok
        } catch {
            logger.error("metrics failed: \(error)")
            lines = ["# the database cannot be read"]
            status = .serviceUnavailable
        }
        var headers = HTTPFields()
        headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
        return Response(
            status: status, headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(string: lines.joined(separator: "\n") + "\n")))
    }

    /// A label's value as the text format writes it: backslash, quote and line feed escaped; other control
    /// characters (a publisher's version text) as `?`.
    static func labelValue(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\"": escaped += "\\\""
            case "\n": escaped += "\\n"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F: escaped += "?"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The configured sources' health, by their states in the store; nil when the server follows none.
    private func trustSourceHealth() async throws -> [TrustSourceHealth]? {
        guard !configuration.trustSourceAges.isEmpty else { return nil }
        return try await trustSourceRows().map { row in
            TrustSourceHealth(
                name: row.name, kind: row.state?.kind ?? "", version: row.state?.version,
                lastSuccess: row.state?.lastSuccess, ageSeconds: row.age.map { Int64($0.rounded(.down)) },
                stale: row.stale)
        }
    }

    private func keyBundle(_ request: Request, device: DeviceRecord) async throws -> Response {
        guard let bundle = try await store.latestBundle() else {
            throw APIFailure(
                .notFound, "no-bundle",
                "No key bundle is published yet; the agency runs `farecheck-server keys publish`.")
        }
        let entityTag = "\"\(bundle.sequence)\""
        if let since = request.uri.queryParameters["since"] {
            // Sequences start at 1; the document's minimum is 0 (nothing held).
            guard let held = Int64(since), held >= 0 else {
                throw APIFailure(
                    .badRequest, "bad-request", "since must be a bundle sequence number of 0 or more, not \(since).")
            }
            if held >= bundle.sequence { return Response(status: .notModified, headers: [.eTag: entityTag]) }
        }
        if let tags = request.headers[.ifNoneMatch],
            tags == "*"
                || tags.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == entityTag })
        {
            return Response(status: .notModified, headers: [.eTag: entityTag])
        }
        return Self.json(.ok, bytes: bundle.document, headers: [.eTag: entityTag, .cacheControl: "no-cache"])
    }

    private func revocations(_ request: Request, device: DeviceRecord) async throws -> Response {
        var cursor: Int64 = 0
        if let text = request.uri.queryParameters["cursor"] {
            // Negative cursors are positions inside a snapshot being paged (see `RevocationLog.plan`).
            guard let value = Int64(text), value != .min else {
                throw APIFailure(
                    .badRequest, "bad-request", "cursor must be the next of the last delta applied, not \(text).")
            }
            cursor = value
        }
        let limit = try Self.pageLimit(
            of: request, default: RevocationDelta.defaultPageLimit, maximum: RevocationDelta.maximumPageLimit)
        let anchorKey = try signingKey(for: "revocations")
        var delta = try await store.revocationDelta(since: cursor, limit: limit)
        // Signed with the page: validators count it in their trusted-time floor (whole seconds, as the API writes).
        delta.issuedAt = Self.signingTime()
        return try Self.signedPage(delta, with: anchorKey)
    }

    /// The `limit` query parameter: the entries a page may hold, from 1 to `maximum`; `defaultLimit` when absent.
    private static func pageLimit(of request: Request, default defaultLimit: Int, maximum: Int) throws -> Int {
        guard let text = request.uri.queryParameters["limit"] else { return defaultLimit }
        guard let value = Int(text), (1...maximum).contains(value) else {
            throw APIFailure(
                .badRequest, "bad-request", "limit must be a number of entries from 1 to \(maximum), not \(text).")
        }
        return value
    }

    /// The trust anchor's key, which signs the pages validators apply; without it the page cannot be served (503).
    private func signingKey(for what: String) throws -> PrivateKey {
        guard let anchorKey = configuration.anchorKey else {
            throw APIFailure(
                .serviceUnavailable, "anchor-key-missing",
                "The server has no trust anchor key to sign \(what) with; start it with --anchor-key.")
        }
        return anchorKey
    }

    /// Now, in whole seconds (as the API writes dates): when a page is signed.
    private static func signingTime() -> Date {
        Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
    }

    /// A page signed with the anchor key, as the answer.
    private static func signedPage(_ page: some Encodable, with key: PrivateKey) throws -> Response {
        let document = try SignedDocument.sign(page, with: key)
        return json(.ok, bytes: document.jsonBytes(), headers: [.cacheControl: "no-store"])
    }

    private func firstUses(_ request: Request, device: DeviceRecord) async throws -> Response {
        var since: Int64 = 0
        if let text = request.uri.queryParameters["since"] {
            guard let value = Int64(text), value >= 0 else {
                throw APIFailure(
                    .badRequest, "bad-request",
                    "since must be a time in Unix milliseconds, the next of the last page applied, not \(text).")
            }
            since = value
        }
        let limit = try Self.pageLimit(
            of: request, default: FirstUseDelta.pageLimit, maximum: FirstUseDelta.pageLimit)
        let anchorKey = try signingKey(for: "first uses")
        var delta = try await store.firstUses(since: since, limit: limit, now: Date())
        delta.issuedAt = Self.signingTime()
        return try Self.signedPage(delta, with: anchorKey)
    }

    private func inspections(_ request: Request, device: DeviceRecord) async throws -> Response {
        let batch = try await Self.decodeBody(
            InspectionBatch.self, of: request, limit: configuration.inspectionBodyLimit)
        guard batch.records.count <= InspectionBatch.maximumRecordCount else {
            throw APIFailure(
                .contentTooLarge, "batch-too-large",
                "A batch holds at most \(InspectionBatch.maximumRecordCount) records; this one has "
                    + "\(batch.records.count). Send smaller batches.")
        }
        // Characters as JSON Schema counts them (code points), as the document's minLength and maxLength do.
        for record in batch.records where record.id.rawValue.isEmpty || record.id.rawValue.unicodeScalars.count > 128 {
            throw APIFailure(
                .badRequest, "bad-request",
                "Every record needs an id of 1 to 128 characters; one has \(record.id.rawValue.unicodeScalars.count).")
        }
        let receivedAt = configuration.now()
        for record in batch.records {
            try Self.checkRecord(record)
        }
        let claims = try await backedClaims(of: batch.records, device: device, receivedAt: receivedAt)
        var results = try await store.storeInspections(
            batch.records, deviceID: device.id, receivedAt: receivedAt, claims: claims.map { try? $0?.get() })
        // A record stored now whose claim was refused says why; the record itself is held as any other.
        var claimRefusals = 0
        for index in results.indices where results[index].outcome == .stored {
            guard index < claims.count, case .failure(let refusal)? = claims[index] else { continue }
            results[index].code = InspectionResult.claimRefused
            results[index].reason = refusal.reason
            claimRefusals += 1
        }
        let refused = results.filter { $0.outcome == .refused }
        logger.info(
            "stored inspections",
            metadata: [
                "device": "\(device.id)", "stored": "\(results.count(where: { $0.outcome == .stored }))",
                "already-stored": "\(results.count(where: { $0.outcome == .alreadyStored }))",
                "refused": "\(refused.count)",
            ])
        if !refused.isEmpty {
            // The ids name what the device will keep in its journal; a few are enough to find them.
            logger.warning(
                "refused \(refused.count) inspections that conflict with records the device stored before",
                metadata: [
                    "device": "\(device.id)",
                    "ids": .array(refused.prefix(5).map { Logger.MetadataValue.string($0.id.rawValue) }),
                ])
        }
        if claimRefusals > 0 {
            logger.warning(
                "recorded no first use for \(claimRefusals) uploaded inspections: their claims are not backed",
                metadata: [
                    "device": "\(device.id)",
                    "first-reason": "\(results.first { $0.code == InspectionResult.claimRefused }?.reason ?? "")",
                ])
        }
        return Self.json(.ok, BatchAcknowledgement(results: results))
    }

    /// The largest name a record may carry for its verdict, signature, format or symbology.
    static let maximumNameLength = 40

    /// Refuses a record whose times or names no validator writes: `inspectedAt` outside the times the API carries,
    /// a verdict, signature, format or symbology that is not `[a-z0-9-]{1,40}`, a `decidedBy` other than its two
    /// values.
    static func checkRecord(_ record: InspectionRecord) throws {
        guard WireFormat.millisecondRange.contains(record.inspectedAt) else {
            throw APIFailure(
                .badRequest, "bad-request",
                "Record \(PrintableText(String(record.id.rawValue.prefix(40)))): inspectedAt \(record.inspectedAt) is not a time "
                    + "from year 1 to 9999 in Unix milliseconds.")
        }
        for (field, time) in [("scanReceivedAt", record.scanReceivedAt), ("clockFloor", record.clockFloor)] {
            if let time, !WireFormat.millisecondRange.contains(time) {
                throw APIFailure(
                    .badRequest, "bad-request",
                    "Record \(PrintableText(String(record.id.rawValue.prefix(40)))): \(field) \(time) is not a time from "
                        + "year 1 to 9999 in Unix milliseconds.")
            }
        }
        let names: [(String, String?)] = [
            ("verdict", record.verdict.text), ("signature", record.signature.text), ("format", record.format?.text),
            ("symbology", record.symbology?.text), ("clockFloorSource", record.clockFloorSource?.text),
        ]
        for case (let field, let name?) in names where !isName(name) {
            throw APIFailure(
                .badRequest, "bad-request",
                "Record \(PrintableText(String(record.id.rawValue.prefix(40)))): \(field) must be 1 to \(maximumNameLength) "
                    + "lowercase letters, digits or hyphens, not \(PrintableText(String(name.prefix(40)))).")
        }
        // The one name of a record the server checks: the document lists its two values.
        if let decidedBy = record.decidedBy, decidedBy.known == nil {
            throw APIFailure(
                .badRequest, "bad-request",
                "decidedBy is offline or online, or absent; record \(PrintableText(String(record.id.rawValue.prefix(40)))) has "
                    + "\(PrintableText(String(decidedBy.text.prefix(40)))).")
        }
    }

    /// Whether `name` is `[a-z0-9-]{1,40}`.
    static func isName(_ name: String) -> Bool {
        let bytes = name.utf8
        return !bytes.isEmpty && bytes.count <= maximumNameLength
            && bytes.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                    || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            }
    }

    /// For each record, its first-use claim as the server judged it: nil when it claims nothing, the backed claim,
    /// or why it is refused. A device past its claim rate gets 429 for the whole batch (nothing stored: the
    /// validator sends it again later).
    private func backedClaims(
        of records: [InspectionRecord], device: DeviceRecord, receivedAt: Date
    ) async throws -> [Result<BackedClaim, ClaimRefusal>?] {
        let claiming = records.count(where: { $0.firstUse == true })
        guard claiming > 0 else { return records.map { _ in nil } }
        guard device.role.claimsFirstUses else {
            let refusal = ClaimRefusal(reason: Self.handheldClaim(device))
            return records.map { $0.firstUse == true ? .failure(refusal) : nil }
        }
        try takeClaims(claiming, device: device)
        var judged: [Result<BackedClaim, ClaimRefusal>?] = []
        judged.reserveCapacity(records.count)
        for record in records {
            guard record.firstUse == true else {
                judged.append(nil)
                continue
            }
            // A gate marks a first use only on a ticket it passed: a record that says otherwise claims nothing.
            guard record.verdict.known == .valid else {
                judged.append(
                    .failure(
                        ClaimRefusal(
                            reason: "The record's verdict is \(PrintableText(String(record.verdict.text.prefix(40)))): "
                                + "only a ticket passed as valid has a first use; nothing is claimed.")))
                continue
            }
            do {
                judged.append(
                    .success(
                        try await claims.verify(
                            payload: record.payload, statedFormat: record.format?.text,
                            statedIssuer: record.issuer?.rawValue,
                            statedTicketID: record.ticketID?.bytes,
                            usedAt: configuration.claimPolicy.usedAt(
                                inspectedAt: record.inspectedAt, receivedAt: receivedAt))))
            } catch let refusal as ClaimRefusal {
                judged.append(.failure(refusal))
            }
        }
        return judged
    }

    /// Why a handheld's claim is refused.
    private static func handheldClaim(_ device: DeviceRecord) -> String {
        "The device \(PrintableText(device.id)) is registered as a \(device.role): only gates claim first uses "
            + "(farecheck-server devices add ID --role gate); nothing is claimed."
    }

    /// Takes `count` claims from the device's rate, or refuses with 429 and when to try again.
    private func takeClaims(_ count: Int, device: DeviceRecord) throws {
        guard let wait = claimLimiter.take(count, device: device.id) else { return }
        let seconds = max(1, Int(wait.rounded(.up)))
        logger.warning(
            "refused first-use claims past the device's rate",
            metadata: ["device": "\(device.id)", "claims": "\(count)", "retry-after": "\(seconds)"])
        throw APIFailure(
            .tooManyRequests, "too-many-claims",
            "This device claimed more first uses than \(configuration.claimPolicy.claimsPerSecond) a second allows; "
                + "try again in \(seconds) s.",
            headers: [.retryAfter: "\(seconds)"])
    }

    /// `: REASON` after "is revoked", when the revocation states one.
    private static func because(_ reason: String?) -> Explanation {
        guard let reason, !reason.isEmpty else { return "" }
        return ": \(reason)"
    }

    private func check(_ request: Request, device: DeviceRecord) async throws -> Response {
        let query = try await Self.decodeBody(
            OnlineCheckRequest.self, of: request, limit: OnlineCheckRequest.maximumBodyByteCount)
        var lookedUp = false
        if let issuer = query.issuer, let format = query.format, let keyID = query.keyID {
            lookedUp = true
            // The check names the ticket's format (`uic-918-3`); keys are revoked under their family (`uic`).
            let family = KeyFamily(name: format.text)?.wireName ?? format.text
            let reference = KeyReference(format: family, issuer: issuer, keyID: keyID)
            if let revoked = try await store.keyRevocation(reference) {
                return Self.json(
                    .ok,
                    OnlineCheckResponse(
                        verdict: .revoked,
                        reason: "The key \(keyID) of \(issuer) is revoked\(Self.because(revoked.reason)).",
                        revoked: true, revokedAt: revoked.revokedAt))
            }
        }
        if let issuer = query.issuer, let ticketID = query.ticketID {
            lookedUp = true
            let reference = TicketReference(issuer: issuer, ticketID: ticketID)
            if let revoked = try await store.ticketRevocation(reference) {
                return Self.json(
                    .ok,
                    OnlineCheckResponse(
                        verdict: .revoked,
                        reason:
                            "The ticket \(ticketID) of \(issuer) is revoked\(Self.because(revoked.reason)).",
                        revoked: true, revokedAt: revoked.revokedAt))
            }
            // A published blocklist imported after the validator's last sync: the reason says what to do.
            if let format = query.format,
                let listed = try await store.blocklistRevocation(
                    format: format.text, issuer: issuer.rawValue, ticketID: ticketID.bytes)
            {
                return Self.json(
                    .ok,
                    OnlineCheckResponse(
                        verdict: .revoked, reason: listed.reason, revoked: true))
            }
        }
        if query.claimFirstUse {
            guard device.role.claimsFirstUses else {
                throw APIFailure(.forbidden, "claim-refused", Self.handheldClaim(device))
            }
            try takeClaims(1, device: device)
            let now = configuration.now()
            let backed: BackedClaim
            do {
                backed = try await claims.verify(
                    payload: query.payload, statedFormat: query.format?.text, statedIssuer: query.issuer?.rawValue,
                    statedTicketID: query.ticketID?.bytes, usedAt: now)
            } catch let refusal as ClaimRefusal {
                throw APIFailure(.forbidden, "claim-refused", refusal.reason)
            }
            let record = try await store.claimFirstUse(
                FirstUseClaim(
                    format: backed.format.rawValue, issuer: backed.issuer.rawValue, ticketID: backed.ticketID.bytes,
                    deviceID: device.id, inspectionID: query.inspectionID, at: now))
            let firstUse = FirstUse(
                device: record.deviceID, usedAt: record.usedAt, inspectionID: record.inspectionID,
                claimed: record.isClaimant)
            guard record.isClaimant else {
                return Self.json(
                    .ok,
                    OnlineCheckResponse(
                        verdict: .alreadyUsed,
                        reason:
                            "This single-use ticket was already used at \(record.deviceID) at \(date: record.usedAt).",
                        revoked: false, firstUse: firstUse))
            }
            return Self.json(
                .ok,
                OnlineCheckResponse(
                    verdict: .notRevoked,
                    reason: "Not revoked; this is the ticket's first use in the fleet, recorded for this device.",
                    revoked: false, firstUse: firstUse))
        }
        guard lookedUp else {
            return Self.json(
                .ok,
                OnlineCheckResponse(
                    verdict: .unknown,
                    reason: "The request names no ticket (issuer and ticketID) or key (format, issuer, keyID) to "
                        + "look up; the server does not parse payloads.",
                    revoked: nil))
        }
        return Self.json(
            .ok,
            OnlineCheckResponse(
                verdict: .notRevoked,
                reason: "The server holds neither the ticket nor its key as revoked.", revoked: false))
    }

    // MARK: Authentication, bodies, errors

    /// Authenticates the device, runs `handler`, and turns every failure into an error body.
    private func answer(
        _ request: Request, _ context: APIRequestContext, _ handler: (DeviceRecord) async throws -> Response
    ) async -> Response {
        do {
            let device = try await authenticate(request, context)
            return try await handler(device)
        } catch let failure as APIFailure {
            return failure.response
        } catch let error as ServerError where error.code == .invalidInput {
            // The store refuses what neither database may hold (text with U+0000), alike on both.
            return APIFailure(.badRequest, "bad-request", error.message).response
        } catch let error as BundleError {
            logger.error("signing failed: \(error)")
            return APIFailure(.internalServerError, "signing-failed", "The server could not sign the document.")
                .response
        } catch {
            logger.error("request failed: \(error)", metadata: ["path": "\(request.uri.path)"])
            return APIFailure(
                .internalServerError, "storage-failure", "The server could not reach its database; try again later."
            ).response
        }
    }

    /// The registered, not revoked, device whose token the request carries; anything else is 401, and goes to
    /// the audit log (`RefusalAudit`).
    private func authenticate(_ request: Request, _ context: APIRequestContext) async throws -> DeviceRecord {
        func refuse(_ cause: RefusalAudit.Cause, token: String? = nil, device: String? = nil) -> APIFailure {
            audit.record(
                RefusalAudit.Refusal(
                    cause: cause, client: context.client, method: request.method.rawValue, path: request.uri.path,
                    tokenDigest: token.map { String(DeviceToken.hash($0).hexString.prefix(8)) }, deviceID: device))
            // One answer for every refusal: whether a device exists, or was revoked, is not told.
            return APIFailure(
                .unauthorized, "unauthorized", "The request needs the bearer token of a registered device.",
                headers: [.wwwAuthenticate: "Bearer realm=\"farecheck\""])
        }
        guard let header = request.headers[.authorization] else { throw refuse(.missingToken) }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { throw refuse(.notBearer) }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard !token.isEmpty, token.utf8.count <= 512 else { throw refuse(.malformedToken) }
        guard let device = try await store.device(tokenHash: DeviceToken.hash(token)) else {
            throw refuse(.unknownToken, token: token)
        }
        guard !device.revoked else { throw refuse(.revokedDevice, token: token, device: device.id) }
        return device
    }

    /// Reads and decodes a JSON body of at most `limit` bytes: 413 above it, 400 for anything not `T`.
    private static func decodeBody<T: Decodable>(
        _ type: T.Type, of request: Request, limit: Int
    ) async throws -> T {
        let tooLarge = APIFailure(
            .contentTooLarge, "body-too-large", "The request body exceeds \(limit) bytes; send less at a time.")
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit { throw tooLarge }
        var request = request
        let buffer: ByteBuffer
        do {
            buffer = try await request.collectBody(upTo: limit)
        } catch let error as any HTTPResponseError where error.status == .contentTooLarge {
            throw tooLarge
        }
        do {
            return try WireFormat.decode(type, from: Array(buffer.readableBytesView))
        } catch {
            throw APIFailure(
                .badRequest, "bad-request", "The body is not a \(T.self) JSON document: \(Self.explain(error))")
        }
    }

    private static func explain(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "missing field \(key.stringValue)."
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.dataCorrupted(let context):
            "\(context.codingPath.map(\.stringValue).joined(separator: ".")): \(context.debugDescription)"
        default: "not JSON."
        }
    }

    static func json(_ status: HTTPResponse.Status, _ value: some Encodable, headers: HTTPFields = [:]) -> Response {
        // The API's own documents always encode.
        json(status, bytes: (try? WireFormat.encode(value)) ?? [], headers: headers)
    }

    static func json(_ status: HTTPResponse.Status, bytes: [UInt8], headers: HTTPFields = [:]) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// The request context of the API: Hummingbird's, and the client's address for the audit log.
struct APIRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The client's address and port, e.g. `127.0.0.1:53124`; `unknown` when the socket has none.
    let client: String

    init(source: ApplicationRequestContextSource) {
        coreContext = CoreRequestContextStorage(source: source)
        client =
            switch source.channel.remoteAddress {
            case .some(let address):
                if let ip = address.ipAddress, let port = address.port {
                    ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
                } else {
                    "\(address)"
                }
            case .none: "unknown"
            }
    }
}

/// A refusal with its status and error body.
struct APIFailure: Error {
    var status: HTTPResponse.Status
    var body: ErrorBody
    var headers: HTTPFields

    init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.body = ErrorBody(error: code, message: message)
        self.headers = headers
    }

    var response: Response { APIServer.json(status, body, headers: headers) }
}

/// Answers 405 with `Allow` for a method the document does not list on a known path, and gives the errors
/// Hummingbird raises itself (no such route) the API's error body.
struct ErrorBodyMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        if let allowed = APIServer.allowedMethods[request.uri.path], !allowed.contains(request.method) {
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            return APIFailure(
                .methodNotAllowed, "method-not-allowed",
                "\(request.method) \(request.uri.path): this path answers \(list) only.",
                headers: [.allow: list]
            ).response
        }
        do {
            return try await next(request, context)
        } catch let error as any HTTPResponseError {
            let code =
                switch error.status {
                case .notFound: "not-found"
                case .methodNotAllowed: "method-not-allowed"
                case .contentTooLarge: "body-too-large"
                default: "http-\(error.status.code)"
                }
            return APIFailure(
                error.status, code, "\(request.method) \(request.uri.path): \(error.status.reasonPhrase)."
            )
            .response
        }
    }
}

extension ServerConfiguration {
    /// The log level named `name` (`trace` … `critical`), or nil.
    public static func logLevel(named name: String) -> Logger.Level? {
        Logger.Level(rawValue: name.lowercased())
    }
}
