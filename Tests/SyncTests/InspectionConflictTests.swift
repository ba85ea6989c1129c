import FareCore
import Foundation
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

/// The databases the reference server can run on here: SQLite always, PostgreSQL when
/// `FARECHECK_TEST_POSTGRES_URL` names a server whose role may create databases.
enum ServerDatabase: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case sqlite
    case postgres

    static var available: [ServerDatabase] { adminURL == nil ? [.sqlite] : [.sqlite, .postgres] }

    static let adminURL: String? = {
        let url = ProcessInfo.processInfo.environment["FARECHECK_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    /// The admin URL to make the server's database with, for `SyncBench`.
    var postgresAdminURL: String? { self == .postgres ? Self.adminURL : nil }

    var testDescription: String { rawValue }
}

/// Validators uploading records whose ids collide: across devices (two records, both kept) and within one device
/// (the server refuses the second content; the validator keeps it, with the reason, and stops sending it).
@Suite("Sync of inspections whose ids collide", .serialized, .timeLimit(.minutes(5)))
struct InspectionConflictTests {
    /// Journals an inspection with id `id` and verdict `kind` in the store at `path`.
    @discardableResult
    static func journal(_ id: String, kind: VerdictKind, at time: Double, in path: String) throws -> InspectionRecord {
        let verdict = Verdict(
            kind: kind, reason: kind == .valid ? "Valid ticket." : "Revoked.", signature: .valid, format: .fc1,
            issuer: "demo-transit", inspectedAt: Date(timeIntervalSince1970: time))
        var record = InspectionRecord(
            Inspection(
                source: "front-door", symbology: .qr, payloadByteCount: 100,
                payloadDigest: [UInt8](repeating: 7, count: 32), verdict: verdict))
        record.id = InspectionID(id)
        try TrustStore(path: path).inspectionJournal.write(record)
        return record
    }

    @Test(
        "one id from two devices is two records; other content under an id it used is refused, kept and not re-sent",
        arguments: ServerDatabase.available)
    func collidingIDs(database: ServerDatabase) async throws {
        let bench = try SyncBench(postgresAdminURL: database.postgresAdminURL)
        let deviceB = Workbench()
        let tokenB = try bench.server.addDevice("validator-2")
        _ = try TrustStore(path: deviceB.db)

        // Device A (validator-1) and device B journal a record each under the same id.
        let fromA = try Self.journal("shared-id", kind: .valid, at: 1_800_000_000, in: bench.validator.db)
        try Self.journal("a-only", kind: .valid, at: 1_800_000_001, in: bench.validator.db)
        try Self.journal("shared-id", kind: .revoked, at: 1_800_000_002, in: deviceB.db)
        let roundA = try await bench.round()
        #expect(roundA.inspectionsUploaded == 2 && roundA.inspectionsRefused == 0)
        let roundB = try await bench.round(token: tokenB, storePath: deviceB.db)
        #expect(roundB.inspectionsUploaded == 1 && roundB.inspectionsRefused == 0, "\(roundB.summary)")
        #expect(try TrustStore(path: deviceB.db).inspectionJournal.unsentInspectionCount() == 0)
        var listed = try bench.server.inspections()
        #expect(listed.count == 3)
        #expect(
            Set(listed.filter { $0["id"] as? String == "shared-id" }.compactMap { $0["deviceId"] as? String })
                == ["validator-1", "validator-2"])

        // Device A again, from a journal restored elsewhere: the same "a-only" record, and other content under
        // "shared-id".
        let restored = Workbench()
        _ = try TrustStore(path: restored.db)
        let copy = try #require(try bench.store().inspectionJournal.allInspections().first { $0.id == "a-only" })
        var unsent = copy
        unsent.sentAt = nil
        try TrustStore(path: restored.db).inspectionJournal.write(unsent.record)
        try Self.journal("shared-id", kind: .revoked, at: 1_800_000_003, in: restored.db)
        let conflict = try await bench.round(storePath: restored.db)
        #expect(conflict.inspectionsUploaded == 1, "a-only is already stored: sent")
        #expect(conflict.inspectionsRefused == 1)
        #expect(conflict.inspectionsRefusedInJournal == 1)
        #expect(conflict.inspectionsUnsent == 0)
        #expect(conflict.summary.contains("1 refused by the server"), "\(conflict.summary)")

        let journal = try TrustStore(path: restored.db)
        let refused = try #require(try journal.inspectionJournal.refusedInspections(limit: 10).first)
        #expect(refused.id == "shared-id" && refused.sentAt == nil && refused.refusedAt != nil)
        #expect(refused.refusal?.hasPrefix("conflicting-record: ") == true, "\(refused.refusal ?? "")")
        #expect(refused.refusal?.contains("verdict") == true)
        #expect(try journal.inspectionJournal.allInspections().count == 2, "the refused record stays in the journal")

        // Not sent again: the next rounds upload and refuse nothing, and `farecheck sync` says what is kept.
        let next = try await bench.round(storePath: restored.db)
        #expect(next.inspectionsUploaded == 0 && next.inspectionsRefused == 0)
        let command = try restored.farecheck([
            "sync", "--url", bench.server.baseURL, "--token-file", bench.tokenFile, "--demo-anchor", "--db",
            restored.db,
        ])
        #expect(command.status == 0, "\(command.stderr)")
        #expect(
            command.text.contains("0 uploaded, 0 waiting, 0 refused by the server (1 refused in all"),
            "\(command.text)")

        // The server kept the first record of device A.
        listed = try bench.server.inspections()
        #expect(listed.count == 3)
        let kept = try #require(
            listed.first { $0["id"] as? String == "shared-id" && $0["deviceId"] as? String == "validator-1" })
        #expect(kept["verdict"] as? String == fromA.verdict.text)
    }

    @Test("against a server that predates per-record results, only the accepted ids are marked sent")
    func olderServer() {
        let old = BatchAcknowledgement(accepted: ["a", "c"])
        let (sent, refused) = SyncRound.outcomes(of: ["a", "b", "c"], in: old)
        #expect(sent == ["a", "c"] && refused.isEmpty)
        // Results that do not match the batch are not trusted either.
        let mismatched = BatchAcknowledgement(
            accepted: ["a"], results: [InspectionResult(id: "x", outcome: .refused, reason: "no")])
        #expect(SyncRound.outcomes(of: ["a"], in: mismatched).sent == ["a"])
        // An outcome this validator does not know is neither sent nor refused.
        let newer = BatchAcknowledgement(
            accepted: ["a"],
            results: [
                InspectionResult(id: "a", outcome: .stored),
                InspectionResult(id: "b", outcome: InspectionOutcome(rawValue: "quarantined")),
            ])
        let (newerSent, newerRefused) = SyncRound.outcomes(of: ["a", "b"], in: newer)
        #expect(newerSent == ["a"] && newerRefused.isEmpty)
    }
}
