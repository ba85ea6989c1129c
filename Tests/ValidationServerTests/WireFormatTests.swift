import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

@Suite("Signed documents and the wire format", .timeLimit(.minutes(5)))
struct WireFormatTests {
    @Test("revocation deltas and inspection records use hex for ids and digests")
    func hexFields() throws {
        let delta = RevocationDelta(
            from: 2, next: 5, full: false,
            addedTickets: [
                RevokedTicket(
                    issuer: "demo-transit", ticketID: [0xde, 0xad], reason: "stolen",
                    revokedAt: Date(timeIntervalSince1970: 0))
            ],
            removedTickets: [TicketReference(issuer: "demo-transit", ticketID: [0xbe, 0xef])])
        let text = String(decoding: try WireFormat.encode(delta), as: UTF8.self)
        #expect(text.contains(#""ticketID":"dead""#))
        #expect(text.contains(#""ticketID":"beef""#))
        #expect(try WireFormat.decode(RevocationDelta.self, from: Array(text.utf8)) == delta)
        #expect(text.contains(#""more":false"#))
        // A document from a server that does not page has no `more`: it reads as the last page.
        let older =
            #"{"addedKeys":[],"addedTickets":[],"from":2,"full":false,"next":5,"removedKeys":[],"removedTickets":[]}"#
        #expect(try WireFormat.decode(RevocationDelta.self, from: Array(older.utf8)).more == false)
        // The API's own date form is read without a formatter; what that fast path does not take (Feb 29 of a
        // common year, hour 24) reads exactly as the formatter reads it, and what neither takes is refused.
        for text in [
            "1970-01-01T00:00:00Z", "2024-02-29T23:59:59Z", "2026-11-22T08:30:00Z", "1969-12-31T23:59:59Z",
            "2100-03-01T12:00:00Z", "2023-02-29T00:00:00Z", "2026-11-22T24:00:00Z",
        ] {
            let entry = #"{"issuer":"t","ticketID":"aa","revokedAt":"\#(text)"}"#
            let decoded = try WireFormat.decode(RevokedTicket.self, from: Array(entry.utf8))
            #expect(decoded.revokedAt == (try Date(text, strategy: .iso8601)), "\(text)")
        }
        let notADate = #"{"issuer":"t","ticketID":"aa","revokedAt":"2026-13-01T00:00:00Z"}"#
        #expect(throws: DecodingError.self) { try WireFormat.decode(RevokedTicket.self, from: Array(notADate.utf8)) }
        let upload = InspectionRecord(
            id: "r1", inspectedAt: 1_700_000_000_123, device: "scanner-1", symbology: "qr",
            payloadDigest: [0x01, 0xff], format: "fc1", issuer: nil, ticketID: nil, verdict: "valid", reason: "ok",
            signature: "valid", warnings: "", inspector: nil)
        let uploadText = String(decoding: try WireFormat.encode(upload), as: UTF8.self)
        #expect(uploadText.contains(#""payloadDigest":"01ff""#))
        #expect(!uploadText.contains("ticketID"))
        #expect(try WireFormat.decode(InspectionRecord.self, from: Array(uploadText.utf8)) == upload)
    }

    /// An upload as the version before wrote it (its `InspectionUpload`, with `WireFormat`'s sorted keys).
    static let previousVersionUpload =
        #"{"decidedBy":"online","device":"front-door","format":"fc1","id":"5f0c2a4e-1b7d-4c1e-9d3a-2f6b8e0a7c11","#
        + #""inspectedAt":1800000000123,"inspector":"insp-17","issuer":"demo-transit","payloadDigest":"01ff","#
        + #""reason":"The ticket is genuine and valid now.","signature":"valid","symbology":"aztec","#
        + #""ticketID":"0a0b","verdict":"valid","warnings":"seen-before,stale-trust-data"}"#

    @Test("an inspection record travels as the version before wrote and read it: its bytes, its keys, its forms")
    func inspectionRecordWireCompatibility() throws {
        // What a validator one version older sends reads as the record it meant: warnings by their codes.
        let old = try WireFormat.decode(InspectionRecord.self, from: Array(Self.previousVersionUpload.utf8))
        #expect(old.id == "5f0c2a4e-1b7d-4c1e-9d3a-2f6b8e0a7c11" && old.source == "front-door")
        #expect(old.issuer == "demo-transit" && old.ticketID == [0x0a, 0x0b] && old.decidedBy == "online")
        #expect(old.warnings.map(\.code) == ["seen-before", "stale-trust-data"])
        #expect(old.scanReceivedAt == nil && old.clockFloor == nil)
        // Without the fields added since, this version writes the very bytes the version before wrote.
        let oldForm = String(decoding: try WireFormat.encode(old), as: UTF8.self)
        #expect(oldForm == Self.previousVersionUpload.replacingOccurrences(of: "\n", with: ""))

        // With them, every key the version before reads is there with its type and value; the rest are new keys
        // only, which it leaves aside.
        var new = old
        new.scanReceivedAt = 1_799_999_999_990
        new.warnings = [
            VerdictWarning(code: "seen-before", message: "Seen once in the last 60 min."),
            VerdictWarning(code: "stale-trust-data", message: "The keys are 3 days old."),
        ]
        new.clockFloor = 1_799_000_000_000
        new.clockFloorSource = Recorded(.revocations)
        new.keyID = "a6615e0f615889bb"
        let newForm = try #require(
            try JSONSerialization.jsonObject(with: Data(try WireFormat.encode(new))) as? [String: Any])
        let oldObject = try #require(
            try JSONSerialization.jsonObject(with: Data(Self.previousVersionUpload.utf8)) as? [String: Any])
        for (key, value) in oldObject {
            #expect("\(newForm[key] ?? "absent")" == "\(value)", "\(key)")
        }
        #expect(
            Set(newForm.keys).subtracting(oldObject.keys)
                == ["scanReceivedAt", "warningMessages", "clockFloor", "clockFloorSource", "keyID"])
        #expect(newForm["warningMessages"] as? [String] == new.warnings.map(\.message))
        // And it reads back whole: the sentences beside their codes.
        let back = try WireFormat.decode(InspectionRecord.self, from: try WireFormat.encode(new))
        #expect(back.warnings.map(\.code) == new.warnings.map(\.code))
        #expect(back.warnings.map(\.message) == new.warnings.map(\.message))
        #expect(back.scanReceivedAt == new.scanReceivedAt && back.clockFloor == new.clockFloor)
        #expect(back.clockFloorSource == new.clockFloorSource && back.keyID == new.keyID)
        // The server holding the older form takes this one as the same record (sent again after an upgrade).
        #expect(old.differences(from: back).isEmpty)
        // A key id with U+0000, or longer than the document's 256 characters, is refused; 256 are read.
        for (keyID, refused) in [
            ("a\\u0000b", true), (String(repeating: "k", count: 257), true),
            (String(repeating: "é", count: 256), false),
        ] {
            let body =
                #"{"id":"n","inspectedAt":1,"device":"d","payloadDigest":"01","verdict":"valid","#
                + #""reason":"","signature":"valid","warnings":"","keyID":"\#(keyID)"}"#
            let read = try? WireFormat.decode(InspectionRecord.self, from: Array(body.utf8))
            #expect((read == nil) == refused, "\(keyID.prefix(8))…")
        }
        // A sentence with U+0000 is refused as the document's pattern says, also one beyond the codes (not kept).
        for codes in ["seen-before", ""] {
            let withNUL =
                #"{"id":"n","inspectedAt":1,"device":"d","payloadDigest":"01","verdict":"valid","#
                + #""reason":"","signature":"valid","warnings":"\#(codes)","warningMessages":["a\u0000b"]}"#
            #expect(throws: DecodingError.self) {
                try WireFormat.decode(InspectionRecord.self, from: Array(withNUL.utf8))
            }
        }
    }
}

@Suite("Revocation log folding", .timeLimit(.minutes(5)))
struct RevocationLogTests {
    let ticketA = TicketReference(issuer: "t", ticketID: [0xaa])
    let ticketB = TicketReference(issuer: "t", ticketID: [0xbb])
    let date = Date(timeIntervalSince1970: 1_800_000_000)

    func revoked(_ reference: TicketReference, _ reason: String? = nil) -> RevokedTicket {
        RevokedTicket(issuer: reference.issuer, ticketID: reference.ticketID, reason: reason, revokedAt: date)
    }

    @Test("only the last change of each ticket counts")
    func lastChangeWins() {
        let delta = RevocationLog.delta(
            since: 3, latest: 7,
            changes: [
                RevocationChange(sequence: 4, entry: .ticketRevoked(revoked(ticketA))),
                RevocationChange(sequence: 5, entry: .ticketRevoked(revoked(ticketB))),
                RevocationChange(sequence: 6, entry: .ticketRestored(ticketA)),
                RevocationChange(sequence: 7, entry: .ticketRevoked(revoked(ticketB, "again"))),
            ])
        #expect(delta.from == 3 && delta.next == 7 && !delta.full)
        #expect(delta.addedTickets == [revoked(ticketB, "again")])
        #expect(delta.removedTickets == [ticketA])
    }

    @Test("a fresh, too old or too new cursor needs a snapshot")
    func snapshotRule() {
        #expect(RevocationLog.needsSnapshot(cursor: 0, latest: 5, prunedThrough: 0))
        #expect(RevocationLog.needsSnapshot(cursor: 2, latest: 9, prunedThrough: 3))
        #expect(!RevocationLog.needsSnapshot(cursor: 3, latest: 9, prunedThrough: 3))
        #expect(RevocationLog.needsSnapshot(cursor: 10, latest: 9, prunedThrough: 0))
        #expect(!RevocationLog.needsSnapshot(cursor: 9, latest: 9, prunedThrough: 0))
    }

    @Test("a snapshot continues as a delta inside the log, and by negative positions below it")
    func pagePlans() {
        #expect(
            RevocationLog.plan(cursor: 0, latest: 9, prunedThrough: 0) == .current(after: 0, through: nil, full: true))
        #expect(RevocationLog.plan(cursor: 4, latest: 9, prunedThrough: 0) == .changes(after: 4))
        #expect(
            RevocationLog.plan(cursor: 2, latest: 9, prunedThrough: 3) == .current(after: 0, through: nil, full: true))
        #expect(
            RevocationLog.plan(cursor: -2, latest: 9, prunedThrough: 3) == .current(after: 2, through: 3, full: false))
        #expect(RevocationLog.plan(cursor: -4, latest: 9, prunedThrough: 3) == .changes(after: 4))
        #expect(
            RevocationLog.plan(cursor: -12, latest: 9, prunedThrough: 3) == .current(after: 0, through: nil, full: true)
        )

        let entries = [5, 1, 2, 7].map {
            RevocationChange(sequence: Int64($0), entry: .ticketRevoked(revoked(ticket($0))))
        }
        let page = RevocationLog.currentPage(
            cursor: 0, latest: 9, prunedThrough: 3, entries: entries, through: nil, full: true, limit: 2)
        #expect(page.full && page.more && page.next == -2)
        #expect(page.addedTickets.map(\.ticketID) == [[1], [2]])
        let rest = RevocationLog.currentPage(
            cursor: -2, latest: 9, prunedThrough: 3, entries: [], through: 3, full: false, limit: 2)
        #expect(!rest.full && rest.more && rest.next == 3 && rest.entryCount == 0)
        let inLog = RevocationLog.currentPage(
            cursor: 0, latest: 9, prunedThrough: 0, entries: entries, through: nil, full: true, limit: 3)
        #expect(inLog.next == 5 && inLog.more)
        let all = RevocationLog.currentPage(
            cursor: 0, latest: 9, prunedThrough: 0, entries: entries, through: nil, full: true, limit: 4)
        #expect(all.next == 9 && !all.more && all.addedTickets.count == 4)
    }

    func ticket(_ byte: Int) -> TicketReference { TicketReference(issuer: "t", ticketID: [UInt8(byte)]) }
}

@Suite("The OpenAPI document", .timeLimit(.minutes(5)))
struct OpenAPIDocumentTests {
    @Test("every route the server serves is a path of API/openapi.yaml, and every path is served")
    func pathsMatch() throws {
        let text = try String(contentsOfFile: "\(repositoryRoot)/API/openapi.yaml", encoding: .utf8)
        var inPaths = false
        var documented: Set<String> = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line == "paths:" }
            // Paths are the keys indented by two spaces under `paths:`.
            if inPaths, line.hasPrefix("  /"), line.hasSuffix(":") {
                documented.insert(String(line.dropFirst(2).dropLast()))
            }
        }
        #expect(documented == Set(APIServer.servedPaths))
        #expect(text.hasPrefix("openapi: 3.1"))
    }

    @Test("each path takes exactly the methods the document lists for it; any other gets 405")
    func methodsMatch() throws {
        let text = try String(contentsOfFile: "\(repositoryRoot)/API/openapi.yaml", encoding: .utf8)
        var inPaths = false
        var path: String?
        var documented: [String: Set<String>] = [:]
        let methods: Set<String> = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line == "paths:" }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                // Operations are the keys indented by four spaces under a path.
                let key = String(line.dropFirst(4).dropLast())
                if methods.contains(key) { documented[path, default: []].insert(key.uppercased()) }
            }
        }
        let served = APIServer.allowedMethods.mapValues { Set($0.map(\.rawValue)) }
        #expect(documented == served)
    }
}
