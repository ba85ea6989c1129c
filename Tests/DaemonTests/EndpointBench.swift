import Daemon
import FareCore
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import TestSupport
import TrustStore

@testable import Presentation

/// A real ``HTTPService`` on 127.0.0.1 and a free port, inside a service group, with the daemon parts it
/// serves: a hub, a status, metrics, and inspector sessions over a store of its own.
final class EndpointBench: Sendable {
    let directory: String
    let store: TrustStore
    let hub = EventHub()
    let status = DaemonStatus(mode: "inspector")
    let metrics = DaemonMetrics(refresh: {
        DaemonMetrics.Refreshed(trustDataAge: 90, unsentInspections: 2, pendingInspections: 0)
    })
    let sessions: InspectorSessions
    /// Everything the service logged, so that tests can check what never appears in a log.
    let log = LogRecord()

    /// How the service is served (hosts, holder data at a gate, TLS, limits).
    let options: HTTPService.Options

    init(
        loginRequired: Bool = true, options: HTTPService.Options = .init(),
        pinPolicy: InspectorSessions.PINPolicy = .init(), lockoutRules: LoginLockoutRules = .init(),
        sessionTimeout: TimeInterval = 8 * 3600
    ) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-http-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        store = try TrustStore(path: directory + "/store.sqlite")
        sessions = InspectorSessions(
            store: store, isRequired: loginRequired, timeout: sessionTimeout, pinPolicy: pinPolicy,
            lockoutRules: lockoutRules)
        self.options = options
    }

    /// Logs in over HTTP and returns the reply (its `cookie` is the session cookie on success).
    static func login(
        port: Int, staffID: String, pin: String, source: String? = nil, headers: [String: String] = [:]
    ) async throws -> HTTPReply {
        let body = try JSONSerialization.data(withJSONObject: ["staffID": staffID, "pin": pin])
        return try await LoopbackHTTP.request(
            port: port, "POST", "/login", headers: headers.merging(["Content-Type": "application/json"]) { $1 },
            body: Array(body), source: source)
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// Runs the service, calls `body` with the bound port, then shuts the group down gracefully and waits
    /// for the service to end.
    func run(_ body: (_ port: Int) async throws -> Void) async throws {
        try await withRunningGroup { port, _ in try await body(port) }
    }

    /// Like ``run(_:)``, but `body` decides when to shut down (through the group) and must do so.
    func withRunningGroup(_ body: (_ port: Int, _ group: ServiceGroup) async throws -> Void) async throws {
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        let log = log
        let logger = Logger(label: "farecheck.http.test") { _ in RecordingLogHandler(record: log) }
        let service = HTTPService(
            host: "127.0.0.1", port: 0, hub: hub, status: status, metrics: metrics, sessions: sessions,
            logger: logger, options: options,
            onServerRunning: { port in
                portSink.yield(port)
                portSink.finish()
            })
        let group = ServiceGroup(configuration: .init(services: [service], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                throw LoopbackError(description: "the HTTP service ended before it listened")
            }
            do {
                try await body(port, group)
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    /// A verdict event as the pipeline would publish it.
    static func event(
        _ kind: VerdictKind, reason: Explanation, product: String? = "Day pass", holder: String? = "ID ****1234",
        warnings: [VerdictWarning] = [], revocation: BlocklistRevocation? = nil, inspector: String? = "K-204",
        unreadable: [UnreadableRecord] = []
    ) -> PublishedVerdict {
        let now = Date()
        let ticket = Ticket(
            format: .fc1, issuer: "demo-transit", ticketID: [0x5e, 0xa1, 0x0c, 0x42], validFrom: now - 3600,
            validUntil: now + 20 * 3600, product: product, zones: ["A", "B"], category: "adult", passengers: 2,
            holder: holder)
        let verdict = Verdict(
            kind: kind, reason: reason, signature: .valid, format: .fc1, issuer: "demo-transit", keyID: "7a3f",
            ticket: ticket, warnings: warnings, inspectedAt: now, blocklistRevocation: revocation)
        var inspection = Inspection(
            source: "front-door", symbology: .qr, payloadByteCount: 311, payloadDigest: [], verdict: verdict,
            inspector: inspector)
        inspection.unreadableRecords = unreadable
        return VerdictEvent(inspection).published
    }
}

/// Every log message with its metadata, as text.
final class LogRecord: Sendable {
    private let lines = Mutex<[String]>([])

    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A log handler that writes into a ``LogRecord``.
struct RecordingLogHandler: LogHandler {
    let record: LogRecord
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        // Metadata as a stream log handler writes it (`key=value`, values as they are), so that a test sees any
        // control character a value still holds.
        let fields = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        record.append("\(event.level) \(event.message) \(fields)")
    }
}
