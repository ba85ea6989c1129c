import DaemonConfig
import FareCore
import Foundation
import Logging
import NIOSSL
import Presentation
import Prometheus
import Scanners
import ServiceLifecycle
import Signatures
import Sync
import Synchronization
import TrustFollowing
import TrustStore
import ValidationAPI
import ValidationServer
import Verification

/// `farecheck daemon`: the store, the verifier, the pipeline and every configured service, run by one
/// ServiceGroup and shut down in order on SIGTERM or SIGINT: sources and scanners stop first (no new scans),
/// then the sinks, then the store is closed (its write-ahead log checkpointed).
public struct FarecheckDaemon: Sendable {
    public let configuration: DaemonConfiguration
    /// The publishers a stand-alone gate follows itself (`[[trust.source]]` of the same file); none by default.
    public let trustSources: TrustFollowingConfiguration
    public let logger: Logger

    public init(
        configuration: DaemonConfiguration, trustSources: TrustFollowingConfiguration = .init(), logger: Logger
    ) {
        self.configuration = configuration
        self.trustSources = trustSources
        self.logger = logger
    }

    /// What a running daemon exposes to its caller once ready (the CLI prints it; tests read it).
    public struct Endpoints: Sendable {
        /// The HTTP address actually bound (port 0 in the configuration becomes a real port).
        public var http: (host: String, port: Int)?
        /// The TLS listener's address, when `[http] tls_listen` is set.
        public var https: (host: String, port: Int)?
        public var socket: String?
        /// From the start of ``run(onReady:)`` to every listener bound.
        public var startup: Duration
    }

    /// Runs until SIGTERM/SIGINT. Throws when the daemon cannot start (the store cannot be opened, a socket
    /// cannot be bound); `onReady` is called once every listener is up.
    public func run(onReady: @escaping @Sendable (Endpoints) -> Void = { _ in }) async throws {
        let started = ContinuousClock.now
        let configuration = self.configuration
        let logger = self.logger
        // One daemon per store and per socket: a second one refuses here, naming the first, before it touches either.
        let lock = try DaemonLock.acquire(store: configuration.store, socket: configuration.socket)
        defer { lock.release() }
        // The journal's log is checkpointed by a service of the daemon's, not by a verdict's append.
        // The daemon makes its store when there is none (a new validator, before its first sync) and journals.
        let store = try TrustStore(
            path: configuration.store, ifMissing: .create, journal: .journals, journalCheckpoints: .byOwner)
        let journal = store.inspectionJournal
        if (try? store.hasKeys()) == false {
            let until =
                configuration.sync == nil
                ? "; import keys first (`farecheck keys import`, or configure [sync])"
                : " until the first sync round brings keys"
            logger.warning("the store \(configuration.store) holds no keys: every scan reads unknown-key\(until)")
        }
        if !journal.reserveAvailable {
            logger.warning(
                "the journal's reserve file could not be made beside \(journal.path): on a full disk, inspections will wait in memory only"
            )
        }
        let trust = StoreTrust(store: store)
        var verification = TicketVerifier.Configuration()
        verification.clockSkew = configuration.clockSkew
        verification.acceptedPrefixes = configuration.prefixes
        verification.acceptedFormats = configuration.formats
        verification.clockFloorTolerance = configuration.clockFloorTolerance
        verification.acceptTestKeys = configuration.acceptTestKeys
        // VDV certification authorities are few and costly to build a key for: held in memory, and loaded again
        // only when a sync round or the CLI changed them.
        let vdv = try StoreVDVCertificates(store: store) { skipped in
            for entry in skipped { logger.warning("skipping unreadable \(entry)") }
        }
        // The device clock is held against the store's trusted-time floor for every verdict.
        let verifier = TicketVerifier(
            keys: trust, revocations: trust, configuration: verification, vdvCertificates: vdv, trustedTime: store)
        let clockCheck = ClockCheck(trustedTime: store, tolerance: configuration.clockFloorTolerance)
        let notifier = SystemdNotifier()
        let replay = ReplayCheck(
            window: configuration.replayWindow, mode: configuration.mode,
            singleUseProducts: Set(configuration.singleUseProducts))
        for warning in configuration.securityWarnings(file: nil) { logger.warning("\(warning)") }
        var pinSecret: PINSecret?
        if let path = DaemonConfiguration.pinSecretPath(explicit: configuration.pinSecretFile) {
            do {
                pinSecret = try PINSecret(file: path)
            } catch {
                throw DaemonStartError(message: "[inspector] pin_secret_file: \(error.message)")
            }
        }
        let sessions = InspectorSessions(
            store: store, isRequired: configuration.mode == .inspector, timeout: configuration.sessionTimeout,
            pinPolicy: .init(secret: pinSecret, minimumLength: configuration.minimumPINLength),
            lockoutRules: LoginLockoutRules(
                failuresBeforeLock: configuration.lockoutFailures, firstLock: configuration.lockoutSeconds))
        let hub = EventHub()
        let status = DaemonStatus(mode: configuration.mode.rawValue)
        status.countsPendingJournal { journal.pendingCount }
        status.refusedInJournal((try? journal.refusedInspectionCount()) ?? 0)
        status.trustUpdated(at: try? store.trustChangedAt())
        ClockWatchService.record(clockCheck.check(), status: status, notifier: notifier, logger: logger)
        let metrics = DaemonMetrics(refresh: {
            let changed = try? store.trustChangedAt()
            let synced = status.report.lastSyncAt
            let newest = [changed ?? nil, synced].compactMap { $0 }.max()
            return DaemonMetrics.Refreshed(
                trustDataAge: newest.map { Date().timeIntervalSince($0) },
                unsentInspections: try? journal.unsentInspectionCount(),
                refusedInspections: try? journal.refusedInspectionCount(), pendingInspections: journal.pendingCount,
                clock: clockCheck.check())
        })

        var sinks: [any VerdictSink] = []
        if configuration.stdout { sinks.append(StandardOutputSink(holderData: configuration.logHolderData)) }
        sinks.append(EventHubSink(hub: hub))
        var services: [any Service] = []
        if let hook = configuration.gateHook {
            let gate = GateHookService(hook: hook, logger: logger)
            sinks.append(gate)
            services.append(gate)
        }
        var onlineChecker: OnlineChecker?
        var staleness: StalenessPolicy?
        var fleetFirstUses: TrustStore?
        if let sync = configuration.sync {
            fleetFirstUses = store
            let worker = try Self.syncWorker(
                sync, store: store, status: status, metrics: metrics, logger: logger,
                clockFloorTolerance: configuration.clockFloorTolerance)
            services.append(worker.worker)
            staleness = StalenessPolicy(staleAfter: sync.staleAfter)
            if sync.onlineCheck {
                onlineChecker = OnlineChecker(
                    link: worker.link, deadline: .milliseconds(sync.onlineDeadlineMilliseconds), logger: logger)
            }
        }
        if !trustSources.sources.isEmpty {
            services.append(try Self.trustFollowing(trustSources, store: store, status: status, logger: logger))
        }
        let pipeline = InspectionPipeline(
            verifier: verifier, journal: journal, replay: replay, sessions: sessions, sinks: sinks, metrics: metrics,
            status: status, logger: logger, onlineChecker: onlineChecker, staleness: staleness,
            fleetFirstUses: fleetFirstUses)
        if journal.pendingCount > 0 {
            logger.warning(
                "\(journal.pendingCount) inspection(s) from an earlier run still wait for room in the journal")
        }
        services.append(JournalRecoveryService(pipeline: pipeline))
        services.append(JournalCheckpointService(journal: journal))

        // Readiness: every listener reports once bound; then systemd and the caller are told.
        var listeners: Set<String> = []
        if configuration.socket != nil { listeners.insert("socket") }
        if configuration.httpListen != nil { listeners.insert("http") }
        if configuration.http.tlsListen != nil { listeners.insert("https") }
        let readiness = Readiness(waitingFor: listeners) { endpoints in
            var endpoints = endpoints
            endpoints.startup = started.duration(to: .now)
            status.markReady()
            notifier.notify("READY=1\nSTATUS=\(status.systemdStatus)")
            let pages =
                (endpoints.http.map { ["http://\($0.host):\($0.port)/"] } ?? [])
                + (endpoints.https.map { ["https://\($0.host):\($0.port)/"] } ?? [])
            let page = pages.isEmpty ? "" : ": inspector page on " + pages.joined(separator: " and ")
            logger.notice("ready in \(Self.milliseconds(endpoints.startup)) ms\(page)")
            onReady(endpoints)
        }

        if let socket = configuration.socket {
            services.append(
                UnixSocketService(
                    path: socket, hub: hub, status: status, logger: logger,
                    onBound: { readiness.ready("socket") { $0.socket = socket } }))
        }
        let http = configuration.http
        let limits = ConnectionLimits(
            requestTimeout: .milliseconds(Int64(http.requestTimeout * 1000)),
            idleTimeout: .milliseconds(Int64(http.idleTimeout * 1000)),
            handshakeTimeout: .milliseconds(Int64(http.handshakeTimeout * 1000)), maxConnections: http.maxConnections)
        // One audit limit for the page, whichever listener a refused client used.
        let audit = AuditTrail(logger: logger)
        // The agency's catalogs, read once at start: one that fails is not loaded, said here once.
        let pageLanguages = Self.pageLanguages(http, logger: logger)
        let pageLocale = InspectorPage.Locale(
            language: http.language, timeZone: http.timeZone, languages: pageLanguages)
        if let address = configuration.httpAddress {
            let hosts = http.hosts.map { AllowedHosts($0) } ?? AllowedHosts.defaults(listeningOn: address.host)
            services.append(
                HTTPService(
                    host: address.host, port: address.port, hub: hub, status: status, metrics: metrics,
                    sessions: sessions, logger: logger,
                    options: .init(
                        hosts: hosts, gateHolderData: http.gateHolderData, limits: limits, locale: pageLocale),
                    audit: audit,
                    onServerRunning: { port in readiness.ready("http") { $0.http = (address.host, port) } }))
        }
        if let address = http.tlsAddress, let certificate = http.tlsCertificate, let key = http.tlsKey {
            let context: NIOSSLContext
            do {
                context = try PageTLS.context(certificateFile: certificate, keyFile: key)
            } catch {
                throw DaemonStartError(message: "[http] tls_cert, tls_key (\(certificate), \(key)): \(error)")
            }
            let hosts = http.hosts.map { AllowedHosts($0) } ?? AllowedHosts.defaults(listeningOn: address.host)
            services.append(
                HTTPService(
                    host: address.host, port: address.port, hub: hub, status: status, metrics: metrics,
                    sessions: sessions, logger: logger,
                    options: .init(
                        hosts: hosts, gateHolderData: http.gateHolderData, tls: context, limits: limits,
                        locale: pageLocale),
                    audit: audit,
                    onServerRunning: { port in readiness.ready("https") { $0.https = (address.host, port) } }))
        }
        services.append(
            SystemdWatchdogService(notifier: notifier, healthy: { (try? journal.unsentInspectionCount()) != nil }))
        services.append(ClockWatchService(check: clockCheck, status: status, notifier: notifier, logger: logger))
        let reopen = ReopenSignal()
        if !configuration.scanners.isEmpty { services.append(HotplugService(signal: reopen, logger: logger)) }
        for scanner in configuration.scanners {
            status.addScanner(name: scanner.name, device: scanner.device)
            services.append(
                ScannerService(
                    scanner: scanner, pipeline: pipeline, metrics: metrics, status: status, logger: logger,
                    reopenSignal: reopen))
        }
        for source in configuration.imageSources {
            services.append(ImageSourceService(source: source, pipeline: pipeline, logger: logger))
        }
        for camera in configuration.cameras {
            status.addScanner(name: camera.name, device: camera.device)
            services.append(
                CameraService(camera: camera, pipeline: pipeline, metrics: metrics, status: status, logger: logger))
        }

        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: services.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0) },
                gracefulShutdownSignals: [.sigterm, .sigint],
                cancellationSignals: [],
                logger: logger))
        readiness.start()
        defer {
            hub.finish()
            do {
                try store.close()
            } catch {
                logger.error("the store did not close cleanly: \(error.description)")
            }
        }
        try await group.run()
        await pipeline.drainJournal()
        let left = pipeline.pendingCount
        if left > 0 {
            let kept =
                journal.reserveAvailable
                ? "they are kept in the journal's reserve file and written at the next start with room"
                : "they are lost"
            logger.critical("\(left) inspection(s) could not be written to the journal before shutdown; \(kept)")
        }
        logger.notice("stopped")
    }

    /// The sync worker of a `[sync]` table, reporting to the status and to three metrics of its own:
    /// `farecheck_sync_failures_total`, `farecheck_sync_entries_skipped_total` and
    /// `farecheck_last_sync_timestamp_seconds`.
    /// The follower of a stand-alone gate: its house beside the store (made when missing), its guard rails reading
    /// the gate's own trust in use, and what it applies handed to the store (see `GateTrustHandOver`).
    static func trustFollowing(
        _ sources: TrustFollowingConfiguration, store: TrustStore, status: DaemonStatus, logger: Logger
    ) throws -> TrustFollowingService {
        let path = GateTrustHandOver.housePath(store: store.path)
        let house: SQLServerStore
        do {
            house = try SQLiteServerStore.open(path: path, create: true)
        } catch {
            throw DaemonStartError(message: "[[trust.source]]: the follower's house \(path): \(error.message)")
        }
        var trustLogger = logger
        trustLogger[metadataKey: "house"] = "\(path)"
        let follower = TrustFollower(
            store: house, anchorKey: nil, logger: trustLogger, inUse: GateTrustHandOver.inUse(store))
        let handOver = GateTrustHandOver(house: house, gate: store, logger: trustLogger)
        return TrustFollowingService(
            follower: follower, configuration: sources,
            settler: GateTrustSettler(
                handOver: handOver, sources: sources.sources, onHealth: { status.trustSourcesChecked($0) }))
    }

    /// The page's languages: the built-in ones and `[http] languages_dir`'s, each finding (as `--check` says it)
    /// logged once.
    static func pageLanguages(_ http: DaemonConfiguration.HTTPSettings, logger: Logger) -> PageLanguages {
        let loaded = DaemonPreflight.pageLanguages(http)
        for finding in loaded.findings {
            switch finding {
            case .problem(let text): logger.error("\(text)")
            case .warning(let text), .note(let text): logger.warning("\(text)")
            }
        }
        return loaded.languages
    }

    static func syncWorker(
        _ sync: DaemonConfiguration.Sync, store: TrustStore, status: DaemonStatus, metrics: DaemonMetrics,
        logger: Logger, clockFloorTolerance: TimeInterval
    ) throws -> (worker: SyncWorker, link: ServerLink) {
        let (token, anchors) = try sync.resolve(file: "[sync]")
        let client = ValidationAPIClient.Configuration(
            sync: sync, token: token, requestTimeout: .milliseconds(Int64(sync.requestTimeout * 1000)))
        try client.validate()
        let interval = Duration.milliseconds(Int64(sync.interval * 1000))
        // Connected for two intervals after a good exchange: a missed round or two still counts as connected.
        let link = ServerLink(freshness: interval * 2 + .seconds(60))
        let failures = metrics.registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "farecheck", metricName: "sync_failures", unitName: "total",
                helpText: "Sync rounds that failed (network, server, refused data)."))
        let skippedEntries = metrics.registry.makeCounter(
            descriptor: MetricNameDescriptor(
                namespace: "farecheck", metricName: "sync_entries_skipped", unitName: "total",
                helpText: "Entries of signed revocation and first-use pages that could not be read and were skipped."))
        let lastSync = metrics.registry.makeGauge(
            descriptor: MetricNameDescriptor(
                namespace: "farecheck", metricName: "last_sync_timestamp", unitName: "seconds",
                helpText: "Unix time of the last good sync round (0 before the first)."))
        if let last = try? store.syncState().lastSyncAt {
            status.synced(at: last)
            lastSync.set(to: last.timeIntervalSince1970)
        } else {
            lastSync.set(to: 0)
        }
        var workerConfiguration = SyncWorker.Configuration(
            client: client, anchors: anchors, schedule: SyncSchedule(interval: interval))
        workerConfiguration.clockFloorTolerance = clockFloorTolerance
        if sync.journalKeepDays > 0 { workerConfiguration.journalRetention = Double(sync.journalKeepDays) * 86400 }
        let worker = SyncWorker(
            configuration: workerConfiguration,
            store: store, link: link, logger: logger
        ) { outcome in
            switch outcome {
            case .synced(let report, _):
                status.synced(at: report.completedAt)
                status.refusedInJournal(report.inspectionsRefusedInJournal)
                status.trustUpdated(at: try? store.trustChangedAt())
                lastSync.set(to: report.completedAt.timeIntervalSince1970)
                if report.entriesSkipped > 0 { skippedEntries.increment(by: Int64(report.entriesSkipped)) }
            case .failed(let error, _, _):
                failures.increment()
                status.syncFailed(error.message, problem: error.code)
            }
        }
        return (worker, link)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
    }
}

/// A file the configuration names that the daemon cannot use at start.
public struct DaemonStartError: Error, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// Counts listeners down to ready.
final class Readiness: Sendable {
    private struct State {
        var waiting: Set<String>
        var endpoints = FarecheckDaemon.Endpoints(http: nil, https: nil, socket: nil, startup: .zero)
        var started = false
        var done = false
    }

    private let state: Mutex<State>
    private let onReady: @Sendable (FarecheckDaemon.Endpoints) -> Void

    init(waitingFor listeners: Set<String>, onReady: @escaping @Sendable (FarecheckDaemon.Endpoints) -> Void) {
        state = Mutex(State(waiting: listeners))
        self.onReady = onReady
    }

    /// Called once the group is about to run: with no listeners, that is ready.
    func start() {
        state.withLock { $0.started = true }
        fireIfReady()
    }

    func ready(_ listener: String, _ update: (inout FarecheckDaemon.Endpoints) -> Void) {
        state.withLock { state in
            update(&state.endpoints)
            state.waiting.remove(listener)
        }
        fireIfReady()
    }

    private func fireIfReady() {
        let endpoints = state.withLock { state -> FarecheckDaemon.Endpoints? in
            guard state.started, state.waiting.isEmpty, !state.done else { return nil }
            state.done = true
            return state.endpoints
        }
        if let endpoints { onReady(endpoints) }
    }
}
