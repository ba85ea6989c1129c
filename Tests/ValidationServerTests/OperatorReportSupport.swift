import FareCore
import Foundation
import NIOHTTP1
import Signatures
import Synchronization
import TestSupport
import Testing
import ValidationAPI

@testable import ValidationServer

/// A server with a day of a small fleet's inspections, uploaded through the API as validators upload them, and an
/// operator to read the report.
///
/// The server runs in this process over a bench database (SQLite or PostgreSQL), with its clock set by the test,
/// so that each batch arrives at a chosen moment and the upload lags are known to the millisecond. Devices and the
/// operator are registered with the `farecheck-server` commands an admin runs.
///
/// The day, 2026-03-14 (UTC), as the validators recorded it:
///
/// | device | inspected (UTC) | verdict | decided by | received | lag |
/// |---|---|---|---|---|---|
/// | tram-7 | 07:05:00 | valid | offline | 07:20:00 | 15 min |
/// | tram-7 | 07:10:00 | valid | offline | 07:20:00 | 10 min |
/// | tram-7 | 07:15:00 | expired | offline | 07:20:00 | 5 min |
/// | tram-7 | 08:00:00 | valid | online | 08:00:30 | 30 s |
/// | tram-7 | 08:00:20 | revoked | online | 08:00:30 | 10 s |
/// | bus-12 | 09:30:00 | valid | offline | 12:30:00 | 3 h |
/// | bus-12 | 10:45:00 | valid | (not stated) | 12:30:00 | 1 h 45 min |
/// | bus-12 | 12:29:58 | invalid-signature | offline | 12:30:00 | 2 s |
/// | `=cmd<b>"x"&` | 23:59:59 | valid | offline | 03-15 00:00:09 | 10 s |
///
/// and two records of tram-7 just outside the day (03-13 23:59:59.999 and 03-15 00:00:00), which it must not count.
/// The third device's id is what a hostile admin or a confused one could register: a formula, markup, quotes.
final class ReportFleet: @unchecked Sendable {
    static let day = "2026-03-14"
    /// 2026-03-14T00:00:00Z in Unix milliseconds.
    static let dayStart: Int64 = 1_773_446_400_000
    static let hostileDevice = "=cmd<b>\"x\"&"

    let bench: ServerBench
    let port: Int
    let operatorToken: String
    let deviceTokens: [String: String]
    private let server: Task<Void, any Error>
    private let clock: SettableClock

    /// Starts the server and uploads the day.
    init(_ backend: Backend) async throws {
        bench = try ServerBench(backend)
        var tokens: [String: String] = [:]
        for device in ["tram-7", "bus-12", Self.hostileDevice] { tokens[device] = try bench.addDevice(device) }
        deviceTokens = tokens
        operatorToken = try bench.adminOK(["operators", "add", "alex@agency"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let clock = SettableClock(Date(timeIntervalSince1970: TimeInterval(Self.dayStart) / 1000))
        self.clock = clock
        let location = try bench.location()
        var configuration = ServerConfiguration(port: 0, logLevel: .critical)
        configuration.now = { clock.now }
        let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
        server = Task { [configuration] in
            try await location.withStore(create: false) { store in
                try await APIServer(store: store, configuration: configuration)
                    .run(stopsOnSignals: false) { _, port in portSink.yield(port) }
            }
        }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw BenchError(description: "the server did not start") }
        self.port = port

        let h: Int64 = 3_600_000
        let m: Int64 = 60_000
        let s: Int64 = 1000
        try await upload(
            "tram-7", receivedAt: 7 * h + 20 * m,
            [
                (7 * h + 5 * m, .valid, "offline"), (7 * h + 10 * m, .valid, "offline"),
                (7 * h + 15 * m, .expired, "offline"), (-1, .valid, "offline"), (24 * h, .valid, "offline"),
            ])
        try await upload(
            "tram-7", receivedAt: 8 * h + 30 * s, [(8 * h, .valid, "online"), (8 * h + 20 * s, .revoked, "online")])
        try await upload(
            "bus-12", receivedAt: 12 * h + 30 * m,
            [
                (9 * h + 30 * m, .valid, "offline"), (10 * h + 45 * m, .valid, nil),
                (12 * h + 29 * m + 58 * s, .invalidSignature, "offline"),
            ])
        try await upload(Self.hostileDevice, receivedAt: 24 * h + 9 * s, [(24 * h - s, .valid, "offline")])
    }

    deinit { server.cancel() }

    /// Stops the server and waits for it.
    func stop() async {
        server.cancel()
        _ = await server.result
    }

    /// Uploads records of `device` (inspected at offsets from the day's start) as one batch the server receives at
    /// `receivedAt` (an offset too).
    func upload(
        _ device: String, receivedAt: Int64, _ records: [(at: Int64, verdict: VerdictKind, decidedBy: String?)]
    ) async throws {
        clock.now = Date(timeIntervalSince1970: TimeInterval(Self.dayStart + receivedAt) / 1000)
        let batch = InspectionBatch(
            records: records.enumerated().map { index, record in
                InspectionRecord(
                    id: "\(device)-\(receivedAt)-\(index)", inspectedAt: Self.dayStart + record.at, device: "camera-0",
                    symbology: "qr", payloadDigest: digest(.sha256, Array("\(device)\(index)".utf8)), format: "fc1",
                    issuer: "demo-transit", ticketID: [0x0a, UInt8(index)], verdict: Recorded(record.verdict),
                    reason: "As recorded.", signature: record.verdict == .invalidSignature ? "invalid" : "valid",
                    warnings: "", inspector: nil, decidedBy: record.decidedBy.map(Recorded.init(text:)))
            })
        let answer = try await send(
            .POST, "\(baseURL)/v1/inspections", token: deviceTokens[device], body: try WireFormat.encode(batch))
        #expect(answer.status == 200, "\(answer.text)")
    }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The report's JSON for `query` (e.g. `day=2026-03-14`), read with the operator's bearer token.
    func report(_ query: String) async throws -> OperatorReport {
        let answer = try await send(.GET, "\(baseURL)/report.json?\(query)", token: operatorToken)
        #expect(answer.status == 200, "\(answer.text)")
        return try answer.decode(OperatorReport.self)
    }

    /// The whole day as the report must show it.
    static let expectedDay = OperatorReport(
        day: day, timeZone: "UTC", device: nil, inspections: 9,
        perHour: hours([7: 3, 8: 2, 9: 1, 10: 1, 12: 1, 23: 1]),
        perDevice: [
            .init(device: hostileDevice, inspections: 1, offline: 1, online: 0, notStated: 0),
            .init(device: "bus-12", inspections: 3, offline: 2, online: 0, notStated: 1),
            .init(device: "tram-7", inspections: 5, offline: 3, online: 2, notStated: 0),
        ],
        verdicts: [
            .init(verdict: "valid", inspections: 6), .init(verdict: "expired", inspections: 1),
            .init(verdict: "invalid-signature", inspections: 1), .init(verdict: "revoked", inspections: 1),
        ],
        decidedBy: [
            .init(decidedBy: .offline, inspections: 6, share: 0.6667),
            .init(decidedBy: .online, inspections: 2, share: 0.2222),
            .init(decidedBy: .unstated, inspections: 1, share: 0.1111),
        ],
        syncLag: [
            .init(
                device: hostileDevice, inspections: 1, p50Milliseconds: 10_000, p95Milliseconds: 10_000,
                maxMilliseconds: 10_000, lastUploadAt: date("2026-03-15T00:00:09Z")),
            .init(
                device: "bus-12", inspections: 3, p50Milliseconds: 6_300_000, p95Milliseconds: 10_800_000,
                maxMilliseconds: 10_800_000, lastUploadAt: date("2026-03-14T12:30:00Z")),
            .init(
                device: "tram-7", inspections: 5, p50Milliseconds: 300_000, p95Milliseconds: 900_000,
                maxMilliseconds: 900_000, lastUploadAt: date("2026-03-14T08:00:30Z")),
        ])

    /// 24 hours with the given counts, 0 elsewhere.
    static func hours(_ counts: [Int: Int]) -> [OperatorReport.HourCount] {
        (0..<24).map { OperatorReport.HourCount(hour: $0, inspections: counts[$0] ?? 0) }
    }

    static func date(_ text: String) -> Date {
        try! Date(text, strategy: .iso8601)
    }
}

/// The server's clock in these tests: set before each upload, so that the server receives it then.
final class SettableClock: Sendable {
    private let date: Mutex<Date>

    init(_ date: Date) {
        self.date = Mutex(date)
    }

    var now: Date {
        get { date.withLock { $0 } }
        set { date.withLock { $0 = newValue } }
    }
}
