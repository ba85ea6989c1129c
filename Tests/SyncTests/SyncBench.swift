import AsyncHTTPClient
import FareCore
import Foundation
import Logging
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

/// A validator (a store of its own, the real `farecheck` binary) and a reference server it is registered with.
final class SyncBench: @unchecked Sendable {
    let server: ReferenceServer
    let validator = Workbench()
    let token: String
    var tokenFile: String { validator.path("device.token") }
    static let es256Key = repositoryRoot + "/Keys/demo-transit-es256.key"
    static let es256Public = repositoryRoot + "/Keys/demo-transit-es256.pub.pem"
    static let eddsaKey = repositoryRoot + "/Keys/demo-transit-eddsa.key"
    static let eddsaPublic = repositoryRoot + "/Keys/demo-transit-eddsa.pub.pem"
    static let demoAnchorPublic = repositoryRoot + "/Keys/demo-anchor.pub.pem"

    /// A server with device `validator-1` registered and the ES256 demo key published, started unless `starts`
    /// is false (a test that starts it with arguments of its own); on PostgreSQL with `postgresAdminURL`.
    init(publishing keys: [String] = [SyncBench.es256Public], starts: Bool = true, postgresAdminURL: String? = nil)
        throws
    {
        server = try ReferenceServer(postgresAdminURL: postgresAdminURL)
        token = try server.addDevice("validator-1")
        try token.write(toFile: validator.path("device.token"), atomically: true, encoding: .utf8)
        for key in keys { try server.publishKey(key) }
        if starts { try server.start() }
        _ = try TrustStore(path: validator.db)
    }

    /// Opens the validator's store.
    func store() throws -> TrustStore { try TrustStore(path: validator.db) }

    /// One sync round through `url` (the server by default), as the daemon's worker runs it, for this bench's
    /// validator or another store (`storePath`).
    func round(
        url: String? = nil, token: String? = nil, anchors: [TrustAnchor] = [.demo], timeout: Duration = .seconds(10),
        maximumBodyBytes: Int = 8 << 20, storePath: String? = nil, journalRetention: TimeInterval? = nil
    ) async throws -> SyncReport {
        let configuration = ValidationAPIClient.Configuration(
            baseURL: url ?? server.baseURL, token: token ?? self.token, deviceID: "validator-1",
            requestTimeout: timeout, maximumKeyBundleBytes: maximumBodyBytes, maximumRevocationBytes: maximumBodyBytes)
        let store = try storePath.map { try TrustStore(path: $0) } ?? store()
        return try await HTTPClient.withHTTPClient { http in
            var round = SyncRound(
                client: ValidationAPIClient(configuration: configuration, http: http), store: store, anchors: anchors)
            round.journalRetention = journalRetention
            return try await round.run()
        }
    }

    /// The round's failure, which must happen.
    func failedRound(
        url: String? = nil, token: String? = nil, anchors: [TrustAnchor] = [.demo], timeout: Duration = .seconds(10),
        maximumBodyBytes: Int = 8 << 20, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> SyncError {
        do {
            let report = try await round(
                url: url, token: token, anchors: anchors, timeout: timeout, maximumBodyBytes: maximumBodyBytes)
            Issue.record("the round succeeded: \(report.summary)", sourceLocation: sourceLocation)
            throw DaemonProcess.Failure(message: "expected a failure")
        } catch let error as SyncError {
            return error
        }
    }

    /// `farecheck sync` against the server, pinning the demo anchor.
    func syncCommand(url: String? = nil, extra: [String] = [], clock: FakeTime? = nil) throws -> Run {
        try validator.farecheck(
            ["sync", "--url", url ?? server.baseURL, "--token-file", tokenFile, "--demo-anchor", "--db", validator.db]
                + extra, clock: clock)
    }

    /// Issues an FC1 ticket with one of the demo keys; returns the payload file.
    func ticket(_ id: String, key: String = SyncBench.es256Key, product: String = "day") throws -> String {
        let out = validator.path("ticket-\(id).bin")
        let issued = try validator.farecheck(
            [
                "issue", "--key", key, "--ticket-id", id, "--product", product, "--payload-out", out,
                "--out", validator.path("ticket-\(id).png"),
            ])
        guard issued.status == 0 else { throw DaemonProcess.Failure(message: issued.stderr) }
        return out
    }

    /// The verdict `farecheck verify` gives a payload file against the validator's store.
    func verdict(_ payloadFile: String) throws -> String {
        let run = try validator.farecheck(["verify", "--payload-file", payloadFile, "--json", "--db", validator.db])
        return run.jsonLines.first?["verdict"] as? String ?? "no verdict: \(run.stderr)"
    }

    /// Everything sync may change in the store, to compare before and after a refusal.
    func trustState() throws -> TrustState {
        let store = try store()
        return TrustState(
            keys: try store.keys().map { "\($0.family.storeName)/\($0.issuer)/\($0.keyID)/\($0.source)" }.sorted(),
            revokedTickets: try store.ticketRevocations().map { "\($0.issuer)/\($0.ticketID.hexString)" }.sorted(),
            revokedKeys: try store.keyRevocations().map { "\($0.issuer)/\($0.keyID)" }.sorted(),
            bundleSequence: try store.syncState().keyBundleSequence,
            cursor: try store.syncState().revocationCursor)
    }

    /// Journals `count` inspections, as the daemon's pipeline does.
    func journalInspections(_ count: Int) throws -> [InspectionID] {
        let store = try store()
        return try (0..<count).map { index in
            let verdict = Verdict(
                kind: .valid, reason: "Valid ticket.", signature: .valid, format: .fc1, issuer: "demo-transit",
                inspectedAt: Date().addingTimeInterval(Double(index)))
            let record = InspectionRecord(
                Inspection(
                    source: "front-door", symbology: .qr, payloadByteCount: 100,
                    payloadDigest: [UInt8](repeating: 7, count: 32), verdict: verdict))
            try store.inspectionJournal.write(record)
            return record.id
        }
    }
}

/// What sync may change in a store.
struct TrustState: Equatable {
    var keys: [String]
    var revokedTickets: [String]
    var revokedKeys: [String]
    var bundleSequence: Int64?
    var cursor: Int64
}
