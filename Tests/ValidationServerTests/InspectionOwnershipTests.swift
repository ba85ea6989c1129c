import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import ValidationAPI

@testable import ValidationServer

/// A record is known by the device that uploaded it and its id: the server acknowledges what it stored, and
/// nothing else.
@Suite("Inspections by device and id", .timeLimit(.minutes(5)))
struct InspectionOwnershipTests {
    static func record(_ id: String, verdict: VerdictKind = .valid, at offset: Int64 = 0) -> InspectionRecord {
        InspectionRecord(
            id: id, inspectedAt: 1_800_000_000_000 + offset, device: "front-door", symbology: "qr",
            payloadDigest: digest(.sha256, Array(id.utf8)), format: "fc1", issuer: "demo-transit",
            ticketID: [0x0a, 0x0b], verdict: Recorded(verdict),
            reason: verdict == .valid ? "Valid ticket." : "Revoked.",
            signature: "valid", warnings: "", inspector: "staff-1", decidedBy: "offline")
    }

    static func upload(
        _ records: [InspectionRecord], to server: ServerProcess, token: String
    ) async throws -> BatchAcknowledgement {
        let answer = try await send(
            .POST, server.baseURL + "/v1/inspections", token: token,
            body: try WireFormat.encode(InspectionBatch(records: records)))
        #expect(answer.status == 200, "\(answer.text)")
        return try answer.decode(BatchAcknowledgement.self)
    }

    static func listed(_ bench: ServerBench) throws -> [[String: Any]] {
        try bench.adminOK(["inspections", "list", "--json"]).jsonRecords
    }

    @Test(
        "inspections prune forgets records made and received before the horizon; one a wrong clock dated back stays",
        arguments: Backend.available)
    func prune(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        _ = try bench.addDevice("gate-a")
        let now = Date()
        let tenDaysAgo = now.addingTimeInterval(-10 * 86_400)
        func made(_ id: String, at date: Date) -> InspectionRecord {
            Self.record(id, at: date.unixMilliseconds - 1_800_000_000_000)
        }
        try await bench.withStore { store in
            // Made and received ten days ago: goes.
            _ = try await store.storeInspections(
                [made("old", at: tenDaysAgo)], deviceID: "gate-a", receivedAt: tenDaysAgo)
            // Dated ten days back by the device, received today: stays (the server has had it for a minute).
            _ = try await store.storeInspections(
                [made("dated-back", at: tenDaysAgo)], deviceID: "gate-a", receivedAt: now)
            // Received ten days ago from a device whose clock ran ahead: stays until its own time is old too.
            _ = try await store.storeInspections(
                [made("ahead", at: now.addingTimeInterval(86_400))], deviceID: "gate-a", receivedAt: tenDaysAgo)
            _ = try await store.storeInspections([made("today", at: now)], deviceID: "gate-a", receivedAt: now)
        }
        let refused = try bench.admin(["inspections", "prune", "--older-than", "0"])
        #expect(refused.status != 0 && refused.stderr.contains("--older-than must be at least 1 day"))
        let output = try bench.adminOK(["inspections", "prune", "--older-than", "5"])
        #expect(output.hasPrefix("forgot 1 inspections made and received before "), "\(output)")
        let left = try await bench.withStore { store in try await store.inspections(limit: 10).map(\.record.id) }
        #expect(Set(left) == ["dated-back", "ahead", "today"])
    }

    @Test(
        "the same id from two devices is two records, both stored and both acknowledged as stored",
        arguments: Backend.available)
    func twoDevicesOneID(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let tokenA = try bench.addDevice("validator-a")
        let tokenB = try bench.addDevice("validator-b")
        let server = try bench.startServer()

        let fromA = Self.record("shared-id")
        let fromB = Self.record("shared-id", verdict: .revoked, at: 5)
        let answerA = try await Self.upload([fromA], to: server, token: tokenA)
        let answerB = try await Self.upload([fromB], to: server, token: tokenB)
        #expect(answerA.results == [InspectionResult(id: "shared-id", outcome: .stored)])
        #expect(answerB.results == [InspectionResult(id: "shared-id", outcome: .stored)])
        #expect(answerB.accepted == ["shared-id"])

        let listed = try Self.listed(bench)
        #expect(listed.count == 2)
        let byDevice = Dictionary(
            uniqueKeysWithValues: listed.map { ($0["deviceId"] as? String ?? "", $0["verdict"] as? String ?? "") })
        #expect(byDevice == ["validator-a": "valid", "validator-b": "revoked"])
    }

    @Test(
        "the same record again is already stored; other content under its id is refused, naming what differs",
        arguments: Backend.available)
    func sameDeviceAgain(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-a")
        let server = try bench.startServer()
        let first = Self.record("r-1")
        _ = try await Self.upload([first, Self.record("r-2", at: 1)], to: server, token: token)

        var conflicting = first
        conflicting.verdict = "revoked"
        conflicting.reason = "Revoked."
        // One batch: the same record again, a conflicting one, a new one, and the new one twice.
        let answer = try await Self.upload(
            [Self.record("r-2", at: 1), conflicting, Self.record("r-3", at: 2), Self.record("r-3", at: 2)],
            to: server, token: token)
        let results = try #require(answer.results)
        #expect(results.map(\.id) == ["r-2", "r-1", "r-3", "r-3"])
        #expect(results.map(\.outcome) == [.alreadyStored, .refused, .stored, .alreadyStored])
        #expect(results[1].code == "conflicting-record")
        let reason = try #require(results[1].reason)
        #expect(reason.contains("verdict, reason differ"), "\(reason)")
        #expect(answer.accepted == ["r-2", "r-3"], "a refused id is never in accepted")

        let listed = try Self.listed(bench)
        #expect(listed.count == 3)
        let kept = try #require(listed.first { $0["id"] as? String == "r-1" })
        #expect(kept["verdict"] as? String == "valid", "the first record is kept")
    }

    @Test(
        "a record stored before decidedBy existed is the same record when sent again with one",
        arguments: Backend.available)
    func storedWithoutDecider(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-a")
        let server = try bench.startServer()
        var old = Self.record("old")
        old.decidedBy = nil
        _ = try await Self.upload([old], to: server, token: token)
        let answer = try await Self.upload([Self.record("old")], to: server, token: token)
        #expect(answer.results?.map(\.outcome) == [.alreadyStored])
    }

    @Test(
        "a database keyed by record id alone keeps its records, then takes the same id from another device",
        arguments: Backend.available)
    func migratesKeepingRecords(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let tokenA = try bench.addDevice("validator-a")
        let tokenB = try bench.addDevice("validator-b")
        // The inspection table as schema version 5 had it, holding one record of validator-a.
        let old = Self.record("kept")
        let dialect: ServerSchema.Dialect = backend == .sqlite ? .sqlite : .postgres
        let oldTable = ServerSchema.version1Statements(dialect: dialect).filter {
            $0.contains("TABLE inspection") || $0.contains("ON inspection")
        }
        let row = """
            INSERT INTO inspection (id, device_id, received_at, inspected_at, device, symbology, payload_digest, \
            format, issuer, ticket_id, verdict, reason, signature, warnings, inspector, decided_by) VALUES \
            ('kept', 'validator-a', 1, \(old.inspectedAt), 'front-door', 'qr', '\(old.payloadDigest.hexString)', \
            'fc1', 'demo-transit', '0a0b', 'valid', 'Valid ticket.', 'valid', '', 'staff-1', 'offline')
            """
        // Versions 6, 11 and 13 change this table: they run again when the server opens it.
        let forget =
            backend == .sqlite
            ? """
            DELETE FROM grdb_migrations WHERE identifier IN ('server-v6-inspection-by-device',
                'server-v11-inspection-record', 'server-v13-inspection-key')
            """
            : "DELETE FROM farecheck_server_schema WHERE version IN (6, 11, 13)"
        let statements =
            ["DROP TABLE inspection"] + oldTable + ServerSchema.version3Statements() + [row, forget]
        let script = statements.map { $0 + ";" }.joined(separator: "\n")
        let downgraded =
            switch backend {
            case .sqlite: try ServerBench.run("/usr/bin/env", ["sqlite3", bench.path("server.sqlite"), script])
            case .postgres:
                try ServerBench.run(
                    "/usr/bin/env", ["psql", bench.databaseArguments[1], "-v", "ON_ERROR_STOP=1", "-qc", script])
            }
        #expect(downgraded.status == 0, "\(downgraded.stderr)")

        let server = try bench.startServer()
        #expect(try Self.listed(bench).map { $0["id"] as? String } == ["kept"])
        let again = try await Self.upload([old], to: server, token: tokenA)
        #expect(again.results?.map(\.outcome) == [.alreadyStored])
        let other = try await Self.upload([Self.record("kept", verdict: .revoked)], to: server, token: tokenB)
        #expect(other.results?.map(\.outcome) == [.stored])
        #expect(Set(try Self.listed(bench).compactMap { $0["deviceId"] as? String }) == ["validator-a", "validator-b"])
    }

    @Test(
        "ids with escape sequences and newlines are listed and logged without a raw control character",
        arguments: Backend.available)
    func hostileTextListedSafely(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-a")
        let server = try bench.startServer(extra: ["--log-level", "info"])
        let hostileID = "\u{1B}[2J\u{1B}[31mclear\nforged line\r\u{9B}1m\u{202E}evil"
        var record = Self.record(hostileID)
        // (A verdict name is [a-z0-9-]{1,40}: a hostile one is refused whole, see TrustBoundaryTests.)
        record.reason = "Valid\u{1B}]0;title\u{07} ticket."
        record.issuer = "demo\ntransit"
        record.inspector = "staff\u{1B}[8m"
        _ = try await Self.upload([record], to: server, token: token)
        var conflicting = record
        conflicting.reason = "other"
        // The refusal logs the id.
        let answer = try await Self.upload([conflicting], to: server, token: token)
        #expect(answer.results?.first?.outcome == .refused)

        let plain = try bench.adminOK(["inspections", "list"])
        #expect(plain.split(separator: "\n", omittingEmptySubsequences: false).count == 2, "one line and the end")
        #expect(Self.rawControls(in: plain, allowing: ["\n", "\t"]).isEmpty, "\(Array(plain.utf8))")
        #expect(plain.contains(#"\u{1B}[2J"#) && plain.contains(#"\nforged line"#), "\(plain)")

        let json = try bench.adminOK(["inspections", "list", "--json"])
        #expect(Self.rawControls(in: json, allowing: ["\n"]).isEmpty, "\(Array(json.utf8))")
        let object = try #require(json.jsonRecords.first, "\(json)")
        #expect(object["id"] as? String == hostileID, "the JSON decodes to the id exactly as uploaded")
        #expect(object["inspector"] as? String == "staff\u{1B}[8m")

        server.stop()
        let log = server.log
        #expect(log.contains("refused 1 inspections"), "\(log)")
        #expect(Self.rawControls(in: log, allowing: ["\n"]).isEmpty, "\(log)")
        #expect(!log.split(separator: "\n").contains { $0.hasPrefix("forged line") })
    }

    @Test("a device id with a control character or a space is refused at registration")
    func printableDeviceIDs() throws {
        let bench = try ServerBench(.sqlite)
        for id in ["bad\u{1B}[2Jid", "two\nlines", "bidi\u{202E}id", "with space"] {
            let run = try bench.admin(["devices", "add", id])
            #expect(run.status == 2, "\(id)")
            #expect(run.stderr.contains("printable characters"), "\(run.stderr)")
            #expect(Self.rawControls(in: run.stderr, allowing: ["\n"]).isEmpty)
        }
        #expect(try bench.adminOK(["devices", "list"]).isEmpty)
    }

    /// The characters of `text` a terminal would act on (C0 and C1 controls, DEL, separators, bidi controls),
    /// but those in `allowing`.
    static func rawControls(in text: String, allowing: Set<Unicode.Scalar>) -> [Unicode.Scalar] {
        text.unicodeScalars.filter { scalar in
            guard !allowing.contains(scalar) else { return false }
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: return true
            default: return false
            }
        }
    }
}
