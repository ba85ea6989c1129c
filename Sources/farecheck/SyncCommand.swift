import ArgumentParser
import AsyncHTTPClient
import CommandLineSupport
import DaemonConfig
import FareCore
import Foundation
import Logging
import Sync
import TrustStore
import ValidationAPI

/// `farecheck sync`: one sync round by hand, as the daemon's sync worker runs them.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Sync once with the online validation API: keys, revocations, then inspection upload.",
        discussion: """
            Fetches the signed key bundle and the revocation deltas since the store's cursor, checks each \
            against the pinned trust anchors and applies it in one transaction, then uploads the inspections \
            not yet acknowledged. A bundle with a bad signature, from an unknown anchor or older than the one \
            held is refused and the store is left as it was.

            Name the server with --url (repeated for replicas of one server on one database: when one cannot \
            be reached, times out or answers 5xx, the request goes once more to the next), --token-file (or $FARECHECK_SYNC_TOKEN) and --anchor PEM (repeatable; \
            --demo-anchor pins the published demo anchor), or read all of it from the daemon's [sync] table \
            with --config.

            Over https://, --ca-file trusts a CA bundle for the server's certificate instead of the system's \
            trust store, and --client-cert with --client-key presents a client certificate to a server that \
            requires one (mutual TLS; the token is still sent).

            Exit status: 0 synced (prints what changed), 2 not synced (prints why).
            """
    )

    @Option(help: ArgumentHelp("The daemon's configuration file: use its store and [sync] table.", valueName: "path"))
    var config: String?
    @Option(
        name: .customLong("url"),
        help: ArgumentHelp(
            "The validation API's base URL; repeat it for replicas on one database, failed over to in this order.",
            valueName: "url"))
    var urls: [String] = []
    @Option(name: .customLong("device-id"), help: "This validator's device id (for messages).") var deviceID: String?
    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp("A file holding the device token (else $FARECHECK_SYNC_TOKEN).", valueName: "path"))
    var tokenFile: String?
    @Option(
        name: .customLong("anchor"), help: ArgumentHelp("A trust anchor to pin (PEM public key).", valueName: "pem"))
    var anchors: [String] = []
    @Flag(name: .customLong("demo-anchor"), help: "Pin the published demo anchor (demo servers only).")
    var demoAnchor = false
    @Option(
        name: .customLong("ca-file"),
        help: ArgumentHelp("Trust this CA bundle (PEM) for the server's certificate.", valueName: "pem"))
    var caFile: String?
    @Option(
        name: .customLong("client-cert"),
        help: ArgumentHelp(
            "Present this client certificate (PEM) for mutual TLS; needs --client-key.", valueName: "pem"))
    var clientCert: String?
    @Option(
        name: .customLong("client-key"),
        help: ArgumentHelp("The client certificate's private key (PEM).", valueName: "pem"))
    var clientKey: String?
    @Option(help: "Seconds each request may take.") var timeout: Double = 30
    @Option(
        name: .customLong("clock-floor-tolerance"),
        help: ArgumentHelp(
            "Seconds a signing time or the server's Date may be ahead of this device's clock and still raise the "
                + "trusted-time floor (default: [verification] clock_floor_tolerance with --config, else 300).",
            valueName: "seconds"))
    var clockFloorTolerance: Double?
    @Flag(help: "Print what changed as one JSON object.") var json = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var progressOptions: ProgressOptions

    func validate() throws {
        if config != nil,
            !urls.isEmpty || tokenFile != nil || !anchors.isEmpty || caFile != nil || clientCert != nil
                || clientKey != nil
        {
            throw ValidationError(
                "--config reads the server, token, anchors and TLS files from [sync]; give one or the other")
        }
        if (clientCert == nil) != (clientKey == nil) {
            throw ValidationError("--client-cert and --client-key go together: the certificate and its private key")
        }
        if let clockFloorTolerance, !(0...86400).contains(clockFloorTolerance) {
            throw ValidationError("--clock-floor-tolerance is seconds from 0 to 86400")
        }
        // Compared as a range, so that NaN and the infinities are refused too.
        guard (0.1...3600).contains(timeout) else {
            throw ValidationError("--timeout is seconds from 0.1 to 3600 (an hour), e.g. 30")
        }
        if config == nil, urls.isEmpty {
            throw ValidationError("give --url (with --token-file and --anchor) or --config")
        }
    }

    func run() async throws {
        let (client, pinned, storePath, configuredTolerance) = try setUp()
        let trustStore: TrustStore
        do {
            // Sync makes the store it fills (a new validator's first sync), but not the journal: it only uploads it.
            trustStore = try TrustStore(path: storePath, ifMissing: .create, journal: .usesExisting)
        } catch {
            throw CommandFailure.exit(error.description)
        }
        defer { try? trustStore.close() }
        var logger = Logger(label: "farecheck.sync")
        logger.logLevel = .warning
        let report: SyncReport
        // Pages of revocations (millions, for a new validator) and upload batches, as they are applied.
        let revocations = progressOptions.reporter("revocations")
        let uploads = progressOptions.reporter("inspections")
        do {
            let httpConfiguration = try client.httpClientConfiguration()
            report = try await HTTPClient.withHTTPClient(configuration: httpConfiguration) { http in
                var round = SyncRound(
                    client: ValidationAPIClient(
                        configuration: client, http: http,
                        servers: ServerPool(urls: client.baseURLs, logger: logger)),
                    store: trustStore,
                    anchors: pinned, logger: logger,
                    clockFloorTolerance: clockFloorTolerance ?? configuredTolerance ?? 300)
                // A person waits for it: at normal priority, not behind every other program as the daemon's rounds.
                round.priority = .foreground
                round.progress = { step in
                    switch step {
                    case .revocationPage(let pages, let added, let removed):
                        revocations.step(
                            "\(ReadableText.count(pages, "page")) applied, \(ProgressReporter.grouped(added)) added, "
                                + "\(ProgressReporter.grouped(removed)) removed")
                    case .uploaded(let count):
                        uploads.step("\(ProgressReporter.grouped(count)) uploaded")
                    }
                }
                return try await round.run()
            }
            revocations.finish(count: report.revocationsAdded + report.revocationsRemoved, "entries")
            uploads.finish(count: report.inspectionsUploaded, "inspections")
        } catch let error as SyncError {
            revocations.abandon()
            uploads.abandon()
            throw CommandFailure.exit("not synced: \(error.message) [\(error.code)]")
        } catch {
            revocations.abandon()
            uploads.abandon()
            throw CommandFailure.exit("not synced: \(error)")
        }
        if json {
            printLine(jsonLine(report))
            return
        }
        if report.keyBundleApplied {
            printLine(
                "keys: bundle \(report.keyBundleSequence ?? 0) applied: \(report.keysAdded) added, "
                    + "\(report.keysUpdated) updated, \(report.keysRemoved) removed")
        } else {
            printLine("keys: unchanged (bundle \(report.keyBundleSequence.map(String.init) ?? "none"))")
        }
        printLine(
            "revocations: \(report.revocationsAdded) added, \(report.revocationsRemoved) removed"
                + (report.fullSnapshot ? " (full snapshot)" : "") + "; cursor \(report.revocationCursor)")
        if !report.blocklists.isEmpty {
            printLine(
                "blocklists: "
                    + report.blocklists.map { "\($0.list.displayName) version \($0.version)" }
                    .joined(separator: ", "))
        }
        var inspections = "inspections: \(report.inspectionsUploaded) uploaded, \(report.inspectionsUnsent) waiting"
        if report.inspectionsRefused > 0 || report.inspectionsRefusedInJournal > 0 {
            inspections +=
                ", \(report.inspectionsRefused) refused by the server (\(report.inspectionsRefusedInJournal) refused "
                + "in all, kept in the journal and not sent again)"
        }
        printLine(inspections)
    }

    /// The client configuration, the pinned anchors and the store path, from the options or from --config (with
    /// its clock floor tolerance).
    private func setUp() throws -> (ValidationAPIClient.Configuration, [TrustAnchor], String, Double?) {
        let requestTimeout = Duration.milliseconds(Int64((timeout * 1000).rounded()))
        if let config {
            let configuration: DaemonConfiguration
            let sync: DaemonConfiguration.Sync
            let resolved: (token: String, anchors: [TrustAnchor])
            do {
                configuration = try DaemonConfiguration.load(path: config)
                guard let table = configuration.sync else {
                    throw CommandFailure.exit("\(config) has no [sync] table")
                }
                sync = table
                resolved = try sync.resolve(file: config)
            } catch let error as ConfigurationError {
                throw CommandFailure.exit("bad configuration: \(error.description)")
            }
            let client = ValidationAPIClient.Configuration(
                sync: sync, token: resolved.token, requestTimeout: requestTimeout)
            try check(client)
            return (client, resolved.anchors, store.db ?? configuration.store, configuration.clockFloorTolerance)
        }
        var token = ProcessInfo.processInfo.environment["FARECHECK_SYNC_TOKEN"] ?? ""
        if let tokenFile {
            guard let data = FileManager.default.contents(atPath: tokenFile) else {
                throw CommandFailure.exit("cannot read the token file \(tokenFile)")
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard !token.isEmpty else {
            throw CommandFailure.exit("no device token: give --token-file, or set FARECHECK_SYNC_TOKEN")
        }
        var pinned: [TrustAnchor] = demoAnchor ? [.demo] : []
        for path in anchors {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CommandFailure.exit("cannot read the anchor file \(path)")
            }
            do {
                pinned.append(try TrustAnchor(pem: String(decoding: data, as: UTF8.self)))
            } catch {
                throw CommandFailure.exit("\(path): \(error.message)")
            }
        }
        guard !pinned.isEmpty else {
            throw CommandFailure.exit("no trust anchor pinned: give --anchor PEM (or --demo-anchor for a demo server)")
        }
        if !demoAnchor, pinned.contains(where: { $0.id == TrustAnchor.demo.id }) {
            throw CommandFailure.exit(
                "--anchor pins the DEMO trust anchor (key \(TrustAnchor.demo.id)), whose private key is published; "
                    + "give --demo-anchor instead to say this is a demo server")
        }
        let client = ValidationAPIClient.Configuration(
            baseURL: urls.first ?? "", replicas: Array(urls.dropFirst()), token: token, deviceID: deviceID,
            requestTimeout: requestTimeout,
            tls: ValidationAPIClient.TLSFiles(
                caFile: caFile, clientCertificateFile: clientCert, clientKeyFile: clientKey))
        try check(client)
        return (client, pinned, store.path, nil)
    }

    private func check(_ client: ValidationAPIClient.Configuration) throws {
        do {
            try client.validate()
        } catch {
            throw CommandFailure.exit(error.message)
        }
    }
}
