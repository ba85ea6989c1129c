import AsyncHTTPClient
import FareCore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TrustStore
import ValidationAPI

/// The daemon's sync service: a round right away, then one per interval (with jitter) and on demand, with
/// exponential back-off after failures.
///
/// It owns one HTTP client for its lifetime (`HTTPClient.withHTTPClient`), lends it to the online checker
/// through the `ServerLink`, and reports every round to its observer. Where a round resumes is in the store
/// (bundle sequence, revocation cursor, unsent inspections), so a restart, a crash or a failed round loses
/// nothing.
public final class SyncWorker: Service, Sendable {
    /// How the worker syncs.
    public struct Configuration: Sendable {
        /// The server, the token and the caps.
        public var client: ValidationAPIClient.Configuration
        /// The anchors that must sign bundles and deltas.
        public var anchors: [TrustAnchor]
        /// The interval, jitter and back-off.
        public var schedule: SyncSchedule
        /// Inspections per upload.
        public var uploadBatchSize: Int
        /// How far ahead of the device clock a signing time or a server's `Date` may be and still move the
        /// trusted-time floor (`[verification] clock_floor_tolerance`).
        public var clockFloorTolerance: TimeInterval = 300
        /// How long the journal keeps an acknowledged inspection (`[sync] journal_keep_days`); nil keeps all.
        public var journalRetention: TimeInterval?

        /// Makes a configuration.
        public init(
            client: ValidationAPIClient.Configuration, anchors: [TrustAnchor], schedule: SyncSchedule,
            uploadBatchSize: Int = 500
        ) {
            self.client = client
            self.anchors = anchors
            self.schedule = schedule
            self.uploadBatchSize = uploadBatchSize
        }
    }

    /// The outcome of one round, as the observer is told.
    public enum Outcome: Sendable {
        /// The round completed; the next one is due after `next`.
        case synced(SyncReport, next: Duration)
        /// The round failed; the next try is after `retryIn`, and this is failure number `failures` in a row.
        case failed(SyncError, retryIn: Duration, failures: Int)
    }

    private let configuration: Configuration
    private let store: TrustStore
    private let link: ServerLink
    private let logger: Logger
    private let observer: @Sendable (Outcome) -> Void
    private let trigger = SyncTrigger()
    private let lastGood: Mutex<Date?>

    /// Makes a worker.
    ///
    /// - Parameters:
    ///   - configuration: The server, anchors and schedule.
    ///   - store: The validator's store.
    ///   - link: Shared with the online checker; told about each round.
    ///   - logger: Where rounds and failures are logged.
    ///   - observer: Called after each round (the daemon updates its status and metrics).
    public init(
        configuration: Configuration, store: TrustStore, link: ServerLink, logger: Logger,
        observer: @escaping @Sendable (Outcome) -> Void = { _ in }
    ) {
        self.configuration = configuration
        self.store = store
        self.link = link
        self.logger = logger
        self.observer = observer
        lastGood = Mutex((try? store.syncState())?.lastSyncAt)
    }

    /// When the last round completed (from the store at start, then from each good round).
    public var lastSuccessfulSync: Date? { lastGood.withLock { $0 } }

    /// Asks for a round now, instead of at the next interval (folded into one if a round is running).
    public func requestSync() {
        trigger.fire()
    }

    /// Syncs until graceful shutdown or cancellation.
    public func run() async throws {
        let httpConfiguration = try configuration.client.httpClientConfiguration()
        try await HTTPClient.withHTTPClient(configuration: httpConfiguration) { http in
            let client = ValidationAPIClient(
                configuration: configuration.client, http: http,
                servers: ServerPool(urls: configuration.client.baseURLs, logger: logger))
            link.attach(client)
            defer { link.attach(nil) }
            await cancelWhenGracefulShutdown {
                await self.loop(client: client)
            }
        }
    }

    private func loop(client: ValidationAPIClient) async {
        var schedule = configuration.schedule
        var random = SystemRandomNumberGenerator()
        var round = SyncRound(
            client: client, store: store, anchors: configuration.anchors,
            uploadBatchSize: configuration.uploadBatchSize, logger: logger,
            clockFloorTolerance: configuration.clockFloorTolerance)
        round.serverAnswered = { [link] in link.succeeded() }
        round.journalRetention = configuration.journalRetention
        while !Task.isCancelled {
            let delay: Duration
            do {
                let report = try await round.run()
                delay = schedule.succeeded(using: &random)
                link.succeeded()
                lastGood.withLock { $0 = report.completedAt }
                logger.info("sync round done: \(report.summary)")
                observer(.synced(report, next: delay))
            } catch {
                if Task.isCancelled { return }
                delay = schedule.failed(using: &random)
                if error.code != .refused && error.code != .store { link.failed() }
                let failures = schedule.consecutiveFailures
                logger.warning(
                    "sync round failed (\(failures) in a row), next try in \(ReadableText.duration(delay)): \(error.description)"
                )
                observer(.failed(error, retryIn: delay, failures: schedule.consecutiveFailures))
            }
            await waitForNextRound(after: delay)
        }
    }

    /// Sleeps for `delay`, or less if a round is requested.
    private func waitForNextRound(after delay: Duration) async {
        let trigger = self.trigger
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: delay) }
            group.addTask { await trigger.wait() }
            await group.next()
            group.cancelAll()
        }
    }
}
