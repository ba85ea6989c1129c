import AsyncHTTPClient
import FareCore
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import ValidationAPI

/// The validator's client of the online validation API (`API/openapi.yaml`): one method per operation, each
/// with a deadline, a cap on the response size, and failures turned into `SyncError`s a person can act on.
///
/// It borrows an `HTTPClient` from its caller (the sync worker opens one for its lifetime with
/// `HTTPClient.withHTTPClient`), so it holds no resources of its own.
///
/// With several servers (replicas on one database), each request goes to the pool's current server; when that
/// one fails (unreachable, timed out, 5xx) it is left alone for a back-off and the request is sent once more, to
/// the next server. The API makes that safe: an upload sent twice is stored once, a first use is claimed once.
public struct ValidationAPIClient: Sendable {
    /// Where the server is and how much to accept from it.
    public struct Configuration: Sendable, Equatable {
        /// The servers' base URLs, e.g. `https://validation.example.org` (plain `http://` only for loopback tests):
        /// one, or several replicas on one database, tried in this order.
        public var baseURLs: [String]
        /// The first server's base URL; setting it makes it the only server.
        public var baseURL: String {
            get { baseURLs.first ?? "" }
            set { baseURLs = [Self.trimmed(newValue)] }
        }
        /// The device's secret token, sent as `Authorization: Bearer`.
        public var token: String
        /// The device id the token belongs to (for logs; the server knows the device by its token).
        public var deviceID: String?
        /// The deadline of each sync request (keys, revocations, one upload batch).
        public var requestTimeout: Duration
        /// The largest key bundle accepted.
        public var maximumKeyBundleBytes: Int
        /// The largest revocation delta accepted.
        public var maximumRevocationBytes: Int
        /// The largest answer to an upload or an online check accepted.
        public var maximumAnswerBytes: Int
        /// The most revocation entries to ask for in one page (`limit`); the server's maximum by default, because
        /// fewer, larger pages apply faster (each page's transaction rewrites most of the revocation index).
        public var revocationPageLimit: Int
        /// How the HTTPS connection is secured: the CA bundle trusted for the server, and the client certificate
        /// presented (mutual TLS).
        public var tls: TLSFiles

        /// Makes a configuration; the caps default to 8 MiB for keys, 64 MiB for revocations, 1 MiB otherwise.
        ///
        /// `replicas` are further servers of the same fleet, failed over to after `baseURL`, in this order.
        public init(
            baseURL: String, replicas: [String] = [], token: String, deviceID: String? = nil,
            requestTimeout: Duration = .seconds(30),
            maximumKeyBundleBytes: Int = 8 << 20, maximumRevocationBytes: Int = 64 << 20,
            maximumAnswerBytes: Int = 1 << 20, revocationPageLimit: Int = RevocationDelta.maximumPageLimit,
            tls: TLSFiles = TLSFiles()
        ) {
            self.tls = tls
            self.revocationPageLimit = max(1, min(revocationPageLimit, RevocationDelta.maximumPageLimit))
            self.baseURLs = ([baseURL] + replicas).map(Self.trimmed)
            self.token = token
            self.deviceID = deviceID
            self.requestTimeout = requestTimeout
            self.maximumKeyBundleBytes = maximumKeyBundleBytes
            self.maximumRevocationBytes = maximumRevocationBytes
            self.maximumAnswerBytes = maximumAnswerBytes
        }

        /// Refuses a base URL that is not `http(s)://host[:port]`, the same URL twice, and an empty token.
        public func validate() throws(SyncError) {
            guard !baseURLs.isEmpty else {
                throw SyncError(code: .misconfigured, message: "No sync URL is given.")
            }
            for baseURL in baseURLs {
                guard let url = URL(string: baseURL), let scheme = url.scheme?.lowercased(),
                    ["http", "https"].contains(scheme),
                    url.host != nil
                else {
                    throw SyncError(
                        code: .misconfigured,
                        message: "The sync URL \(baseURL) is not an http(s) URL such as https://validation.example.org."
                    )
                }
            }
            if let twice = baseURLs.first(where: { url in baseURLs.filter { $0 == url }.count > 1 }) {
                throw SyncError(code: .misconfigured, message: "The sync URL \(twice) is given twice.")
            }
            guard !token.isEmpty else {
                throw SyncError(code: .misconfigured, message: "The device token is empty.")
            }
            for baseURL in baseURLs { _ = try tls.clientConfiguration(for: baseURL) }
        }

        private static func trimmed(_ url: String) -> String {
            url.hasSuffix("/") ? String(url.dropLast()) : url
        }

        /// The configuration of an `HTTPClient` for this server: no redirects, a 10 s connect timeout, no retried
        /// connection attempts (the worker backs off between rounds itself, and a TLS refusal is reported at once),
        /// and the TLS settings of `tls`.
        ///
        /// - Throws: `SyncError` with code `.misconfigured` when a TLS file cannot be read or parsed, or when TLS
        ///   options are given for an `http://` URL.
        public func httpClientConfiguration() throws(SyncError) -> HTTPClient.Configuration {
            var configuration = HTTPClient.Configuration()
            configuration.redirectConfiguration = .disallow
            configuration.timeout.connect = .seconds(10)
            configuration.connectionPool.retryConnectionEstablishment = false
            for baseURL in baseURLs {
                if let tlsConfiguration = try tls.clientConfiguration(for: baseURL) {
                    configuration.tlsConfiguration = tlsConfiguration
                }
            }
            return configuration
        }
    }

    /// The PEM files that secure the connection to the server beyond the system's defaults.
    public struct TLSFiles: Sendable, Equatable {
        /// A PEM bundle of the CA certificates trusted for the server's certificate; nil trusts the system's
        /// trust store.
        public var caFile: String?
        /// The client certificate (PEM, leaf first, then any intermediates) presented to a server that asks for
        /// one (mutual TLS); given together with `clientKeyFile`.
        public var clientCertificateFile: String?
        /// The client certificate's private key (PEM).
        public var clientKeyFile: String?

        /// Makes the settings; all nil is plain HTTPS with the system's trust store.
        public init(caFile: String? = nil, clientCertificateFile: String? = nil, clientKeyFile: String? = nil) {
            self.caFile = caFile
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
        }

        /// Whether anything differs from the defaults.
        public var isEmpty: Bool { caFile == nil && clientCertificateFile == nil && clientKeyFile == nil }

        /// The NIOSSL client configuration for `baseURL`: for `https://`, TLS 1.2 with ECDHE and AEAD suites only,
        /// or TLS 1.3 (`TransportSecurity`), with these files; nil for plain `http://` (loopback tests).
        ///
        /// - Throws: `SyncError` with code `.misconfigured` for an unreadable or unparsable file, a certificate
        ///   without its key (or the reverse), or TLS files with an `http://` URL.
        public func clientConfiguration(for baseURL: String) throws(SyncError) -> TLSConfiguration? {
            let secure = baseURL.lowercased().hasPrefix("https://")
            if isEmpty && !secure { return nil }
            guard secure else {
                let what = clientCertificateFile != nil || clientKeyFile != nil ? "A client certificate" : "A CA file"
                throw SyncError(
                    code: .misconfigured,
                    message: "\(what) is only used over HTTPS, but the sync URL \(baseURL) is plain http://: use an "
                        + "https:// URL, or drop the TLS options.")
            }
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            configuration.cipherSuites = TransportSecurity.tls12CipherList
            if let caFile {
                let roots = try Self.certificates(caFile, what: "CA file")
                configuration.trustRoots = .certificates(roots)
            }
            switch (clientCertificateFile, clientKeyFile) {
            case (nil, nil):
                break
            case (let certificateFile?, let keyFile?):
                let chain = try Self.certificates(certificateFile, what: "client certificate")
                let key: NIOSSLPrivateKey
                do {
                    key = try NIOSSLPrivateKey(file: try Self.readable(keyFile, what: "client key"), format: .pem)
                } catch let error as SyncError {
                    throw error
                } catch {
                    throw SyncError(
                        code: .misconfigured,
                        message: "The client key \(keyFile) is not a PEM private key (\(error)).", cause: error)
                }
                configuration.certificateChain = chain.map { .certificate($0) }
                configuration.privateKey = .privateKey(key)
            default:
                throw SyncError(
                    code: .misconfigured,
                    message: "A client certificate needs both the certificate and its private key (client_cert and "
                        + "client_key, or --client-cert and --client-key); only one was given.")
            }
            do {
                // Building a context checks that the key belongs to the certificate.
                _ = try NIOSSLContext(configuration: configuration)
            } catch {
                throw SyncError(
                    code: .misconfigured,
                    message: "The TLS settings cannot be used (does the client key belong to the client "
                        + "certificate?): \(error).", cause: error)
            }
            return configuration
        }

        private static func readable(_ path: String, what: String) throws(SyncError) -> String {
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw SyncError(
                    code: .misconfigured,
                    message: "Cannot read the \(what) \(path) (missing, or not readable by this "
                        + "user).")
            }
            return path
        }

        private static func certificates(_ path: String, what: String) throws(SyncError) -> [NIOSSLCertificate] {
            let certificates: [NIOSSLCertificate]
            do {
                certificates = try NIOSSLCertificate.fromPEMFile(try readable(path, what: what))
            } catch let error as SyncError {
                throw error
            } catch {
                throw SyncError(
                    code: .misconfigured, message: "The \(what) \(path) is not a PEM certificate file (\(error)).",
                    cause: error)
            }
            guard !certificates.isEmpty else {
                throw SyncError(code: .misconfigured, message: "The \(what) \(path) holds no PEM certificate.")
            }
            return certificates
        }
    }

    /// How the client is set up.
    public let configuration: Configuration
    private let http: HTTPClient
    /// The newest `Date` the server stated in a successful reply (2xx, or 304 to a request for keys), shared by
    /// copies of this client: the sync round offers it to the trusted-time floor.
    public let serverTime: ServerTime
    /// Which server each request goes to, shared by copies of this client.
    public let servers: ServerPool

    /// Makes a client that sends its requests through `http`, to the servers of `servers` (by default a pool of
    /// the configuration's URLs, logging to `farecheck.sync`).
    public init(
        configuration: Configuration, http: HTTPClient, serverTime: ServerTime = ServerTime(),
        servers: ServerPool? = nil
    ) {
        self.configuration = configuration
        self.http = http
        self.serverTime = serverTime
        self.servers = servers ?? ServerPool(urls: configuration.baseURLs)
    }

    /// `GET /v1/keys`: the signed key bundle, not yet checked (see `SignedDocument.open(as:trusting:)`).
    ///
    /// - Parameter held: The sequence of the bundle held; the server then sends a bundle only if it has a newer one.
    /// - Returns: The signed bundle, or nil when the server has nothing newer than `held` or no bundle at all.
    public func keyBundle(newerThan held: Int64? = nil) async throws(SyncError) -> SignedDocument? {
        let path = APIPath.keys + (held.map { "?since=\($0)" } ?? "")
        guard
            let body = try await exchange(
                .GET, path, body: nil, what: "key bundle", limit: configuration.maximumKeyBundleBytes,
                timeout: configuration.requestTimeout, absentIsNil: true)
        else { return nil }
        return try envelope(body, what: "key bundle")
    }

    /// `GET /v1/revocations?cursor=N&limit=L`: the signed revocation delta since `cursor`, not yet checked.
    public func revocations(since cursor: Int64) async throws(SyncError) -> SignedDocument {
        let body = try await exchange(
            .GET, APIPath.revocations + "?cursor=\(cursor)&limit=\(configuration.revocationPageLimit)", body: nil,
            what: "revocation delta",
            limit: configuration.maximumRevocationBytes, timeout: configuration.requestTimeout)
        return try envelope(body ?? [], what: "revocation delta")
    }

    /// `GET /v1/first-uses?since=MS`: the signed page of the fleet's first uses recorded from `since` on, not yet
    /// checked.
    public func firstUses(since: Int64) async throws(SyncError) -> SignedDocument {
        let body = try await exchange(
            .GET, APIPath.firstUses + "?since=\(max(0, since))", body: nil, what: "first-use page",
            limit: configuration.maximumRevocationBytes, timeout: configuration.requestTimeout)
        return try envelope(body ?? [], what: "first-use page")
    }

    /// `POST /v1/inspections`: hands a batch of inspection records over; returns the ids the server now holds.
    public func upload(_ batch: InspectionBatch) async throws(SyncError) -> BatchAcknowledgement {
        let body = try await exchange(
            .POST, APIPath.inspections, body: try encode(batch), what: "inspection acknowledgement",
            limit: configuration.maximumAnswerBytes, timeout: configuration.requestTimeout)
        return try decode(BatchAcknowledgement.self, from: body ?? [], what: "inspection acknowledgement")
    }

    /// `POST /v1/check`: asks the server about one ticket, within `deadline`.
    ///
    /// A server that fails is left alone for its back-off, but the check is not sent again: the deadline is short,
    /// and the next check goes to the next server.
    public func check(_ request: OnlineCheckRequest, deadline: Duration) async throws(SyncError) -> OnlineCheckResponse
    {
        let body = try await exchange(
            .POST, APIPath.check, body: try encode(request), what: "online check answer",
            limit: configuration.maximumAnswerBytes, timeout: deadline, retries: false)
        return try decode(OnlineCheckResponse.self, from: body ?? [], what: "online check answer")
    }

    // MARK: One exchange

    /// Sends one request to the pool's current server (and, when that one fails and `retries`, once more to the
    /// next one), and returns the body of a 2xx JSON answer, or throws what went wrong; with `absentIsNil`, 304
    /// (nothing newer) and 404 `no-bundle` (nothing published) return nil.
    private func exchange(
        _ method: HTTPMethod, _ path: String, body: [UInt8]?, what: String, limit: Int, timeout: Duration,
        absentIsNil: Bool = false, retries: Bool = true
    ) async throws(SyncError) -> [UInt8]? {
        var server = servers.choose()
        var retried = false
        while true {
            do {
                let answer = try await exchange(
                    at: server.url, method, path, body: body, what: what, limit: limit, timeout: timeout,
                    absentIsNil: absentIsNil)
                servers.answered(server.index)
                return answer
            } catch {
                // Stopped from outside: nothing is known about the server.
                if Task.isCancelled { throw error }
                guard error.failsOver else {
                    // It answered: another server would say the same.
                    servers.answered(server.index)
                    throw error
                }
                let next = servers.failed(server.index, error)
                guard retries, !retried, let next else { throw error }
                server = next
                retried = true
            }
        }
    }

    /// Sends one request to the server at `baseURL`; see `exchange(_:_:body:what:limit:timeout:absentIsNil:retries:)`.
    private func exchange(
        at baseURL: String, _ method: HTTPMethod, _ path: String, body: [UInt8]?, what: String, limit: Int,
        timeout: Duration, absentIsNil: Bool
    ) async throws(SyncError) -> [UInt8]? {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = method
        request.headers.add(name: "Authorization", value: "Bearer \(configuration.token)")
        request.headers.add(name: "Accept", value: "application/json")
        if let body {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(body)
        }
        let nanoseconds = Self.nanoseconds(timeout)
        let deadline = NIODeadline.now() + .nanoseconds(nanoseconds)
        let timedOut = SyncError(
            code: .timedOut, message: "The server did not send the \(what) within \(timeout) (\(baseURL)).")
        // The head and the body together: the HTTP client's deadline covers the head only, so the whole exchange
        // races a timer, and a server that trickles its body is left to it at the deadline.
        let prepared = request
        let stopped = SyncError(
            code: .unreachable, message: "The request for the \(what) to \(baseURL) was stopped before an answer.")
        let result = await DeadlineRace.run(
            until: deadline, on: http.eventLoopGroup.any(), timedOut: { timedOut }, stopped: { stopped },
            work: { () async -> Result<ByteBuffer?, SyncError> in
                do throws(SyncError) {
                    return .success(
                        try await send(
                            prepared, to: baseURL, path: path, what: what, limit: limit, timeout: timeout,
                            deadline: deadline, absentIsNil: absentIsNil))
                } catch {
                    return .failure(error)
                }
            })
        // Copied out here, on the caller's executor (the sync thread for a round), not the race's.
        return try result.get().map { Array($0.readableBytesView) }
    }

    /// One request and its answer's body, head and body read, with failures as `SyncError`s; `deadline` bounds the
    /// head (the caller bounds the whole).
    private func send(
        _ request: HTTPClientRequest, to baseURL: String, path: String, what: String, limit: Int, timeout: Duration,
        deadline: NIODeadline, absentIsNil: Bool
    ) async throws(SyncError) -> ByteBuffer? {
        do {
            let response = try await http.execute(request, deadline: deadline)
            let status = Int(response.status.code)
            let contentType = response.headers.first(name: "Content-Type") ?? ""
            let isJSON =
                contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces)
                .lowercased() == "application/json"
            if absentIsNil, status == 304 {
                // An answer to this device's token: its time counts as the server's.
                serverTime.note(dateHeader: response.headers.first(name: "Date"))
                return nil
            }
            if !(200..<300).contains(status) {
                // Error bodies are small; read a little of one for its message, never more.
                let text = try? await response.body.collect(upTo: 64 << 10)
                let detail = text.flatMap { buffer in
                    try? WireFormat.decode(ErrorBody.self, from: Array(buffer.readableBytesView))
                }
                if absentIsNil, status == 404, detail?.error == "no-bundle" { return nil }
                throw failure(
                    status: status, path: path, detail: detail, retryAfter: response.headers.first(name: "Retry-After"))
            }
            guard isJSON else {
                throw SyncError(
                    code: .wrongContentType,
                    message: "The server sent the \(what) as \(contentType.isEmpty ? "no content type" : contentType), "
                        + "not application/json: is \(baseURL) the validation API (and not a proxy's "
                        + "login page)?")
            }
            let buffer = try await response.body.collect(upTo: limit)
            serverTime.note(dateHeader: response.headers.first(name: "Date"))
            return buffer
        } catch let error as SyncError {
            throw error
        } catch let error as NIOTooManyBytesError {
            throw SyncError(
                code: .bodyTooLarge,
                message: "The server sent a \(what) larger than \(limit) bytes; refused without reading it all. Raise "
                    + "max_body_bytes in [sync] if the agency's data is really that large.",
                cause: error)
        } catch let error where Self.isTLSFailure(error) {
            throw tlsFailure(error, what: what, baseURL: baseURL)
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout {
            throw SyncError(
                code: .timedOut,
                message: "The server did not send the \(what) within \(timeout) (\(baseURL)).",
                cause: error)
        } catch {
            if NIODeadline.now() >= deadline {
                throw SyncError(
                    code: .timedOut,
                    message: "The server did not send the \(what) within \(timeout) (\(baseURL)).",
                    cause: error)
            }
            throw SyncError(
                code: .unreachable,
                message: "Cannot get the \(what) from \(baseURL): \(Self.connectionProblem(error)).",
                cause: error)
        }
    }

    /// What a failed connection means, in words (`NetworkErrorText`): refused, reset, no route, an unknown host name;
    /// anything else as the HTTP client describes it.
    static func connectionProblem(_ error: any Error) -> String {
        switch error {
        case let io as IOError:
            return NetworkErrorText.connecting(errno: io.errnoCode)
        case let unknown as SocketAddressError.UnknownHost:
            return NetworkErrorText.unknownHost(unknown.host)
        case let connection as NIOConnectionError:
            if connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return NetworkErrorText.unknownHost(connection.host)
            }
            if let first = connection.connectionErrors.first {
                return connectionProblem(first.error)
            }
            return "the connection to \(connection.host):\(connection.port) failed"
        case let client as HTTPClientError where client == .remoteConnectionClosed:
            return NetworkErrorText.connecting(errno: ECONNRESET)
        case let client as HTTPClientError where client == .connectTimeout:
            return NetworkErrorText.connecting(errno: ETIMEDOUT)
        default:
            return "the connection failed or broke off (\(error))"
        }
    }

    /// Whether `error` comes from TLS: a handshake that failed on either side, or an alert from the server.
    static func isTLSFailure(_ error: any Error) -> Bool {
        error is NIOSSLError || error is BoringSSLError || error is NIOSSLExtraError
    }

    private func tlsFailure(_ error: any Error, what: String, baseURL: String) -> SyncError {
        let detail = String(describing: error)
        let hint: String
        if detail.contains("CERTIFICATE_VERIFY_FAILED") {
            hint = "the server's certificate is not trusted: give the CA that issued it (ca_file, or --ca-file)"
        } else if detail.contains("CERTIFICATE_REQUIRED") || detail.contains("HANDSHAKE_FAILURE") {
            hint = "the server requires a client certificate (mutual TLS): configure client_cert and client_key"
        } else if detail.contains("UNKNOWN_CA") || detail.contains("BAD_CERTIFICATE") {
            hint = "the server did not accept the client certificate: is it issued by the CA the server trusts?"
        } else {
            hint = "check ca_file, client_cert and client_key against the server's TLS setup"
        }
        return SyncError(
            code: .tlsFailed,
            message: "TLS handshake with \(baseURL) failed while getting the \(what): \(hint) "
                + "(\(detail)).",
            cause: error)
    }

    private func failure(status: Int, path: String, detail: ErrorBody?, retryAfter: String?) -> SyncError {
        let said = detail.map { " The server said: \(PrintableText($0.message))" } ?? ""
        // By the server's code, whatever 4xx carries it (the reference server answers 403).
        if (400..<500).contains(status), detail?.error == SyncError.Code.claimRefused.name {
            return SyncError(
                code: .claimRefused,
                message:
                    "The server did not record the ticket's first use (\(status) claim-refused): it could not back "
                    + "the claim with its own trust, or this device may not claim.\(said)")
        }
        if status == 429, detail?.error == SyncError.Code.tooManyClaims.name {
            let wait = retryAfter.flatMap { Int($0.trimmingCharacters(in: .whitespaces)) }.map { " for \($0) s" } ?? ""
            return SyncError(
                code: .tooManyClaims,
                message: "The server takes no more first-use claims from this device\(wait) (429 too-many-claims): "
                    + "it claims more than the fleet's rate allows; is the gate scanning far more than usual?\(said)")
        }
        switch status {
        case 401:
            return SyncError(
                code: .unauthorized,
                message: "The server refused the device token (401): the device"
                    + (configuration.deviceID.map { " \($0)" } ?? "")
                    + " is unknown or revoked. Register it (farecheck-server devices add) and configure its token.")
        case 500...599:
            return SyncError(
                code: .serverUnavailable,
                message: "The server answered \(status) to \(path): it cannot serve now; retried later.\(said)")
        default:
            return SyncError(code: .rejected, message: "The server answered \(status) to \(path).\(said)")
        }
    }

    private func envelope(_ body: [UInt8], what: String) throws(SyncError) -> SignedDocument {
        do {
            return try SignedDocument(jsonBytes: body)
        } catch {
            throw SyncError(
                code: .malformedResponse,
                message: "The server sent a malformed \(what) (\(body.count) bytes that are not a signed document: "
                    + "truncated or corrupted on the way?); nothing applied.",
                cause: error)
        }
    }

    private func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], what: String) throws(SyncError) -> T {
        do {
            return try WireFormat.decode(type, from: body)
        } catch {
            throw SyncError(
                code: .malformedResponse, message: "The server sent a malformed \(what) (\(body.count) bytes).",
                cause: error)
        }
    }

    private func encode(_ value: some Encodable) throws(SyncError) -> [UInt8] {
        do {
            return try WireFormat.encode(value)
        } catch {
            throw SyncError(
                code: .store, message: "A request could not be encoded.",
                cause: error)
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
