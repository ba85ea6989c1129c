import ArgumentParser
import FareCore
import Foundation
import Presentation
import Signatures
import TrustFollowing
import ValidationAPI
import ValidationServer

/// `serve`: runs the API until SIGTERM or SIGINT.
struct Serve: StoreCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the API over HTTPS (--tls-cert, --tls-key), or plain HTTP on loopback and behind a proxy.",
        discussion: """
            Prints "farecheck-server listening on https://HOST:PORT" (http:// without --tls-cert) once the socket \
            is bound (with the actual port when --listen asks for port 0). A missing SQLite database is created.

            With --client-ca, the server also requires a client certificate issued by that CA (mutual TLS): a \
            validator without one cannot complete the handshake. The device's bearer token is required either way.
            """
    )

    @OptionGroup var database: DatabaseOptions

    @Option(help: "The address to listen on, HOST:PORT; port 0 picks a free port.")
    var listen = "127.0.0.1:8443"

    @Option(
        name: .customLong("anchor-key"),
        help: "The trust anchor's private key (PEM), to sign revocation deltas; e.g. Keys/demo-anchor.key.")
    var anchorKey: String?

    @Option(
        name: .customLong("tls-cert"),
        help: ArgumentHelp("The server certificate (PEM, leaf first); serves HTTPS. Needs --tls-key.", valueName: "pem")
    )
    var tlsCert: String?

    @Option(
        name: .customLong("tls-key"),
        help: ArgumentHelp("The server certificate's private key (PEM).", valueName: "pem"))
    var tlsKey: String?

    @Option(
        name: .customLong("client-ca"),
        help: ArgumentHelp(
            "Require client certificates issued by these CAs (PEM bundle): mutual TLS, on top of the bearer token.",
            valueName: "pem"))
    var clientCA: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(
        name: .customLong("header-timeout"),
        help: ArgumentHelp(
            "Seconds a client has to send a request's head, from connecting or from its first byte after a pause; "
                + "then it is disconnected.", valueName: "seconds"))
    var headerTimeout = "10"

    @Option(
        name: .customLong("idle-timeout"),
        help: ArgumentHelp(
            "Seconds a keep-alive connection may wait for its next request, and a request body may pause.",
            valueName: "seconds"))
    var idleTimeout = "60"

    @Option(
        name: .customLong("tls-handshake-timeout"),
        help: ArgumentHelp("Seconds a client has to complete the TLS handshake.", valueName: "seconds"))
    var tlsHandshakeTimeout = "10"

    @Option(
        name: .customLong("max-connections"),
        help: "Connections served at once; more wait in the listen queue until one closes.")
    var maxConnections = 512

    @Option(
        name: .customLong("auth-log-limit"),
        help: ArgumentHelp(
            "At most this many log lines a minute for refused device tokens (401); the rest are counted in one line.",
            valueName: "lines"))
    var authLogLimit = 20

    @Option(
        name: .customLong("single-use-product"),
        help: ArgumentHelp(
            "A product that passes a gate once, whose first use gates claim (as the gates' single_use_products); "
                + "repeat for more. Default: single.", valueName: "name"))
    var singleUseProducts: [String] = []

    @Option(
        name: .customLong("claim-backdate"),
        help: ArgumentHelp(
            "Seconds an uploaded first use may be dated back by the gate's clock (the gates' sync interval); one "
                + "dated further back, or ahead, counts from its arrival.", valueName: "seconds"))
    var claimBackdate = "300"

    @Option(
        name: .customLong("claims-per-second"),
        help: ArgumentHelp("First-use claims a device may make per second on average; more get 429.", valueName: "n"))
    var claimsPerSecond = "5"

    @Option(
        name: .customLong("claim-burst"),
        help: ArgumentHelp("First-use claims a device may make at once after a quiet spell.", valueName: "n"))
    var claimBurst = InspectionBatch.maximumRecordCount

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "A host name (or address) clients reach the server by, as they send it in Host; repeat for each. A "
                + "request naming another gets 421. Without any, every name is answered.",
            valueName: "name"))
    var allowedHosts: [String] = []

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "The server's configuration file (TOML): the trust publishers it follows, as [[trust.source]] entries "
                + "(docs/trust-sources.md). Without it the server follows none.",
            valueName: "file"))
    var config: String?

    @Option(
        name: .customLong("languages-dir"),
        help: ArgumentHelp(
            "The agency's language catalogs (LANG.json, as the inspector page's [http] languages_dir): the operator "
                + "report speaks the built-in languages and these. Default: /etc/farecheck/languages, if it exists.",
            valueName: "dir"))
    var languagesDir: String?

    @Option(
        name: .customLong("report-language"),
        help: ArgumentHelp(
            "The operator report's language for an operator who chose none, e.g. da; without it, the browser's "
                + "(else English).", valueName: "tag"))
    var reportLanguage: String?

    var createsDatabase: Bool { true }

    /// The report's languages: the built-in catalogs and `--languages-dir`'s, each one refused or lacking entries
    /// said on standard error; a `--report-language` it does not speak stops the server.
    func reportLanguages() -> ReportLanguages {
        let languages = PageLanguages.load(
            directory: languagesDir ?? "/etc/farecheck/languages", required: languagesDir != nil)
        for finding in languages.findings {
            FileHandle.standardError.write(Data("farecheck-server: \(finding)\n".utf8))
        }
        var preferred: LanguageTag?
        if let reportLanguage {
            guard let tag = LanguageTag(reportLanguage), languages.speaks(tag) else {
                let spoken = languages.catalogs.map(\.about.language.rawValue).joined(separator: ", ")
                fail(
                    "--report-language \(PrintableText(reportLanguage)): expected a language the report speaks "
                        + "(\(spoken)).")
            }
            preferred = tag
        }
        return ReportLanguages(languages: languages, preferred: preferred)
    }

    func run(on store: any ServerStore) async throws {
        let (host, port) = try ServerConfiguration.parseListenAddress(listen)
        guard let level = ServerConfiguration.logLevel(named: logLevel) else {
            fail("--log-level \(logLevel): expected trace, debug, info, notice, warning, error or critical.")
        }
        func seconds(_ text: String, _ option: String) -> Duration {
            guard let duration = ConnectionLimits.seconds(text) else {
                fail("\(option) \(text): expected a number of seconds above 0, e.g. 10 or 0.5.")
            }
            return duration
        }
        let limits = ConnectionLimits(
            headerTimeout: seconds(headerTimeout, "--header-timeout"),
            idleTimeout: seconds(idleTimeout, "--idle-timeout"),
            tlsHandshakeTimeout: seconds(tlsHandshakeTimeout, "--tls-handshake-timeout"),
            maximumConnections: maxConnections)
        try limits.validate()
        guard authLogLimit >= 0 else { fail("--auth-log-limit \(authLogLimit): expected 0 or more lines.") }
        var configuration = ServerConfiguration(
            host: host, port: port, logLevel: level, limits: limits, refusalLogLimit: authLogLimit)
        guard let backdate = Double(claimBackdate), backdate.isFinite, (0...86_400 * 7).contains(backdate) else {
            fail("--claim-backdate \(claimBackdate): expected seconds from 0 to 604800 (a week), e.g. 300.")
        }
        guard let rate = Double(claimsPerSecond), rate.isFinite, rate > 0, rate <= 1_000_000 else {
            fail("--claims-per-second \(claimsPerSecond): expected a number above 0, e.g. 5 or 0.5.")
        }
        guard (1...1_000_000).contains(claimBurst) else {
            fail("--claim-burst \(claimBurst): expected 1 to 1000000 claims.")
        }
        configuration.reportLanguages = reportLanguages()
        configuration.claimPolicy = FirstUseClaimPolicy(
            singleUseProducts: singleUseProducts.isEmpty ? ["single"] : Set(singleUseProducts),
            backdateLimit: backdate, claimsPerSecond: rate, claimBurst: claimBurst)
        for name in allowedHosts
        where name.isEmpty || name.contains(where: { $0.isWhitespace || "/@?#".contains($0) })
            || PrintableText.escaped(name) != name
        {
            fail("--allowed-host \(PrintableText(name)): expected a host name or address, e.g. fleet.example.org.")
        }
        if !allowedHosts.isEmpty { configuration.allowedHosts = AllowedHosts(allowedHosts) }
        switch (tlsCert, tlsKey) {
        case (let certificate?, let key?):
            configuration.tls = try ServerTLS.configuration(
                certificateFile: certificate, keyFile: key, clientCAFile: clientCA)
        case (nil, nil):
            if clientCA != nil { fail("--client-ca needs HTTPS: give --tls-cert and --tls-key too.") }
        default:
            fail("--tls-cert and --tls-key go together: give both (the certificate and its private key).")
        }
        let scheme = configuration.tls == nil ? "http" : "https"
        if let anchorKey {
            let key = try readAnchorKey(anchorKey)
            configuration.anchorKey = key
            let id = TrustAnchor.id(of: key.publicKey)
            if id == DemoAnchor.id {
                FileHandle.standardError.write(
                    Data(
                        "farecheck-server: signing with the DEMO trust anchor \(id): its private key is published.\n"
                            .utf8))
            }
        } else {
            FileHandle.standardError.write(
                Data("farecheck-server: no --anchor-key: /v1/revocations answers 503 until one is given.\n".utf8))
        }
        let trust =
            try config.map { path throws(TrustConfigurationError) in
                try TrustFollowingConfiguration.load(path: path)
            } ?? TrustFollowingConfiguration()
        configuration.trustSourceAges = Dictionary(
            trust.sources.map { ($0.name, $0.staleAfter) }, uniquingKeysWith: { first, _ in first })
        if !trust.sources.isEmpty, configuration.anchorKey == nil {
            FileHandle.standardError.write(
                Data(
                    ("farecheck-server: no --anchor-key: keys the trust sources bring are stored but not signed into a "
                        + "bundle until `keys publish`.\n").utf8))
        }
        let backend = store.backendName
        let server = APIServer(store: store, configuration: configuration)
        let follower = TrustFollowingService(
            follower: TrustFollower(store: store, anchorKey: configuration.anchorKey), configuration: trust)
        // The API server returns on SIGTERM; the worker then stops with it (a round under way is cancelled, leaving
        // the trust as it was).
        try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                try await server.run { host, port in
                    let shownHost = host.contains(":") ? "[\(host)]" : host
                    say("farecheck-server listening on \(scheme)://\(shownHost):\(port) (\(backend))")
                }
                return true
            }
            group.addTask {
                try await follower.run()
                return false
            }
            // The worker ends at once when there is nothing to follow; the server's end ends both.
            for try await serverEnded in group where serverEnded { group.cancelAll() }
        }
    }
}

/// Reads a trust anchor's private key file, or exits with a message.
func readAnchorKey(_ path: String) throws(ServerError) -> PrivateKey {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
        throw ServerError(code: .invalidInput, message: "Cannot read the anchor key file \(path).")
    }
    let key: PrivateKey
    do {
        key = try PrivateKey(pem: text)
    } catch {
        throw ServerError(code: .invalidInput, message: "\(path): \(error.message)", cause: error)
    }
    guard key.kind == .ecP256 else {
        throw ServerError(
            code: .invalidInput,
            message: "\(path) is a \(key.kind) key; a trust anchor signs with ES256 and needs an ECDSA P-256 key "
                + "(openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256).")
    }
    return key
}

/// `init`: creates (or upgrades) the database and exits.
struct Init: StoreCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create the server database (or bring its schema up to date).")

    @OptionGroup var database: DatabaseOptions

    @Option(
        name: .customLong("allowed-host"),
        help: ArgumentHelp(
            "A host name (or address) clients reach the server by, as they send it in Host; repeat for each. A "
                + "request naming another gets 421. Without any, every name is answered.",
            valueName: "name"))
    var allowedHosts: [String] = []

    var createsDatabase: Bool { true }

    func run(on store: any ServerStore) async throws {
        let location = try database.location()
        say("farecheck-server database ready: \(location) (\(store.backendName))")
    }
}
