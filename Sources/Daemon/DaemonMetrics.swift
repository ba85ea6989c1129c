import FareCore
import Foundation
import Prometheus

/// The daemon's Prometheus metrics, served at `/metrics`.
///
/// Names: `farecheck_scans_total{device}`, `farecheck_verdicts_total{verdict}` (every kind present from
/// the start, at 0), `farecheck_inspection_latency_seconds` (scan arrival to journal write and sinks),
/// `farecheck_scanner_connected{scanner}` (1 or 0), `farecheck_trust_data_age_seconds` (since the key and
/// revocation data last changed: the last good sync, or the store's own change), `farecheck_journal_unsent`
/// (inspections not yet acknowledged by the server), `farecheck_journal_refused` (inspections the server refused,
/// kept in the journal and not sent again), `farecheck_journal_pending` (inspections waiting to be written into the
/// journal: a full disk), `farecheck_clock_untrusted` (1 while the device clock reads earlier than the trusted-time
/// floor: verdicts that depend on the time are `clock-untrusted`), `farecheck_clock_floor_timestamp_seconds` (the
/// floor, Unix time), `farecheck_uptime_seconds`.
public final class DaemonMetrics: Sendable {
    /// The registry; exposed so that other services (sync) can add their own metrics.
    public let registry = PrometheusCollectorRegistry()
    private let verdicts: [String: Counter]
    private let latency: DurationHistogram
    private let trustAge: Gauge
    private let unsent: Gauge
    private let refused: Gauge
    private let pending: Gauge
    private let clockUntrusted: Gauge
    private let clockFloor: Gauge
    private let uptime: Gauge
    private let startedAt: ContinuousClock.Instant
    /// Called at each scrape to read values that are cheaper to compute on demand than to keep current.
    private let refresh: @Sendable () -> Refreshed

    /// The values read at each scrape.
    public struct Refreshed: Sendable {
        /// Seconds since the trust data last changed, if it ever did.
        public var trustDataAge: TimeInterval?
        /// Inspections not yet acknowledged by the server.
        public var unsentInspections: Int?
        /// Inspections the server refused (kept in the journal).
        public var refusedInspections: Int?
        /// Inspections waiting to be written into the journal (its reserve file or memory).
        public var pendingInspections: Int
        /// The device clock against the trusted-time floor, checked now.
        public var clock: DaemonStatus.Clock?

        public init(
            trustDataAge: TimeInterval?, unsentInspections: Int?, refusedInspections: Int? = nil,
            pendingInspections: Int, clock: DaemonStatus.Clock? = nil
        ) {
            self.trustDataAge = trustDataAge
            self.unsentInspections = unsentInspections
            self.refusedInspections = refusedInspections
            self.pendingInspections = pendingInspections
            self.clock = clock
        }
    }

    public init(refresh: @escaping @Sendable () -> Refreshed) {
        var verdicts: [String: Counter] = [:]
        for kind in VerdictKind.allCases {
            verdicts[kind.rawValue] = registry.makeCounter(
                descriptor: Self.verdictsDescriptor, labels: [("verdict", kind.rawValue)])
        }
        self.verdicts = verdicts
        latency = registry.makeDurationHistogram(
            descriptor: Self.name(
                "inspection_latency", "seconds",
                "From a scan's arrival to its verdict being in the journal and handed to the sinks."),
            buckets: [
                .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
                .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(500),
            ])
        trustAge = registry.makeGauge(
            descriptor: Self.name(
                "trust_data_age", "seconds",
                "Seconds since the keys and revocations last changed (last good sync or local change)."))
        unsent = registry.makeGauge(
            descriptor: Self.name(
                "journal_unsent", "", "Inspections in the journal not yet acknowledged by the server."))
        refused = registry.makeGauge(
            descriptor: Self.name(
                "journal_refused", "",
                "Inspections the server refused (a conflicting record): kept in the journal, not sent again."))
        pending = registry.makeGauge(
            descriptor: Self.name(
                "journal_pending", "",
                "Inspections shown but not yet in the journal database (the disk was full); 0 when all is written."))
        clockUntrusted = registry.makeGauge(
            descriptor: Self.name(
                "clock_untrusted", "",
                "1 while the device clock reads earlier than the trusted-time floor (verdicts that depend on the time "
                    + "are clock-untrusted), else 0."))
        clockFloor = registry.makeGauge(
            descriptor: Self.name(
                "clock_floor_timestamp", "seconds",
                "The trusted-time floor, Unix time: the latest instant the real time is known to have reached."))
        uptime = registry.makeGauge(descriptor: Self.name("uptime", "seconds", "Seconds since the daemon started."))
        startedAt = .now
        self.refresh = refresh
    }

    /// Counts one scan from `device`.
    public func scanned(device: String) {
        registry.makeCounter(descriptor: Self.name("scans", "total", "Scans received."), labels: [("device", device)])
            .increment()
    }

    /// Counts one verdict of `kind` and its latency.
    public func verdict(_ kind: VerdictKind, latency: Duration) {
        verdicts[kind.rawValue]?.increment()
        self.latency.recordNanoseconds(
            Int64(latency.components.seconds) * 1_000_000_000 + latency.components.attoseconds / 1_000_000_000)
    }

    /// Records whether `scanner` is connected.
    public func scanner(_ scanner: String, connected: Bool) {
        registry.makeGauge(
            descriptor: Self.name(
                "scanner_connected", "", "1 while the scanner is open, 0 while it is unplugged or failing."),
            labels: [("scanner", scanner)]
        ).set(to: connected ? 1 : 0)
    }

    /// Counts one frame from `camera` decoded.
    public func cameraFrame(_ camera: String) {
        registry.makeCounter(
            descriptor: Self.name("camera_frames", "total", "Camera frames decoded."), labels: [("camera", camera)]
        ).increment()
    }

    /// Counts frames from `camera` dropped because decoding was behind (the oldest waiting were dropped).
    public func cameraFramesDropped(_ camera: String, count: Int) {
        registry.makeCounter(
            descriptor: Self.name(
                "camera_frames_dropped", "total", "Camera frames dropped because decoding was behind the camera."),
            labels: [("camera", camera)]
        ).increment(by: Int64(count))
    }

    /// Counts one short or damaged frame from `camera`, skipped.
    public func cameraBadFrame(_ camera: String) {
        registry.makeCounter(
            descriptor: Self.name("camera_bad_frames", "total", "Camera frames skipped as short or damaged."),
            labels: [("camera", camera)]
        ).increment()
    }

    private static var verdictsDescriptor: MetricNameDescriptor {
        name("verdicts", "total", "Verdicts given, by kind.")
    }

    /// A metric name under the `farecheck` namespace.
    private static func name(_ metric: String, _ unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "farecheck", metricName: metric, unitName: unit, helpText: help)
    }

    /// The exposition text, with the on-demand values refreshed first.
    public func render() -> [UInt8] {
        let values = refresh()
        trustAge.set(to: values.trustDataAge ?? -1)
        unsent.set(to: Double(values.unsentInspections ?? 0))
        refused.set(to: Double(values.refusedInspections ?? 0))
        pending.set(to: Double(values.pendingInspections))
        clockUntrusted.set(to: values.clock?.trusted == false ? 1 : 0)
        clockFloor.set(to: values.clock?.floor?.timeIntervalSince1970 ?? 0)
        let elapsed = ContinuousClock.now - startedAt
        uptime.set(to: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
        return registry.emitToBuffer()
    }
}
