import FareCore
import Foundation
import TestSupport
import Testing
import TrustStore
import ValidationAPI

@testable import Sync

/// The typed names of an inspection (verdict kind, signature status, format, symbology, decider) on their way from
/// the journal through the upload to the server and back: the same cases, and the same text on the wire.
@Suite("Typed inspections through sync", .serialized)
struct TypedInspectionSyncTests {
    /// One inspection for each name of every vocabulary an upload carries, each used at least once.
    static func inspections() -> [Inspection] {
        let signatures: [SignatureStatus] = [.valid, .invalid, .unknownKey, .unsupported, .notChecked]
        return VerdictKind.allCases.enumerated().map { index, kind in
            let verdict = Verdict(
                kind: kind, reason: "reason \(index)", signature: signatures[index % signatures.count],
                format: index == 0 ? nil : TicketFormat.allCases[index % TicketFormat.allCases.count],
                issuer: "demo-transit",
                ticket: Ticket(format: .fc1, issuer: "demo-transit", ticketID: [0xa1, UInt8(index)]),
                inspectedAt: Date(timeIntervalSince1970: 1_800_000_000 + Double(index)))
            return Inspection(
                id: "typed-\(index)", source: "front-door",
                symbology: index == 1 ? nil : Symbology.allCases[index % Symbology.allCases.count],
                payloadByteCount: 100, payloadDigest: [UInt8](repeating: UInt8(index), count: 32), verdict: verdict,
                decidedBy: index.isMultiple(of: 2) ? .offline : .online)
        }
    }

    @Test("the upload of a journal record is the record's names, as the same text on the wire")
    func uploadWireText() throws {
        for inspection in Self.inspections() {
            let upload = InspectionRecord(inspection)
            #expect(upload.verdict.known == inspection.verdict.kind)
            #expect(upload.signature.known == inspection.verdict.signature)
            #expect(upload.format?.known == inspection.verdict.format)
            #expect(upload.symbology?.known == inspection.symbology)
            #expect(upload.decidedBy?.known == inspection.decidedBy)
            let text = String(decoding: try WireFormat.encode(upload), as: UTF8.self)
            #expect(text.contains(#""verdict":"\#(inspection.verdict.kind.rawValue)""#), "\(text)")
            #expect(text.contains(#""signature":"\#(inspection.verdict.signature.rawValue)""#), "\(text)")
            #expect(text.contains(#""decidedBy":"\#(inspection.decidedBy.rawValue)""#), "\(text)")
            if let format = inspection.verdict.format {
                #expect(text.contains(#""format":"\#(format.rawValue)""#), "\(text)")
            } else {
                #expect(!text.contains(#""format""#))
            }
            if let symbology = inspection.symbology {
                #expect(text.contains(#""symbology":"\#(symbology.rawValue)""#), "\(text)")
            } else {
                #expect(!text.contains(#""symbology""#))
            }
            #expect(try WireFormat.decode(InspectionRecord.self, from: WireFormat.encode(upload)) == upload)
        }
        // A name the receiver does not know is kept as it came (a newer validator's verdict on an older server).
        let newer = Array(
            (#"{"id":"n","inspectedAt":1,"device":"d","payloadDigest":"01","verdict":"teleported","reason":"","#
                + #""signature":"quantum","format":"fc9","symbology":"hologram"}"#).utf8)
        let decoded = try WireFormat.decode(InspectionRecord.self, from: newer)
        #expect(decoded.verdict.text == "teleported" && decoded.verdict.known == nil)
        #expect(decoded.signature.text == "quantum" && decoded.format?.text == "fc9")
        #expect(decoded.symbology?.text == "hologram")
        #expect(try WireFormat.decode(InspectionRecord.self, from: WireFormat.encode(decoded)) == decoded)
    }

    @Test(
        "journaled inspections reach the server and come back from it unchanged, every name the same case",
        arguments: ServerDatabase.available)
    func journalUploadServerRoundTrip(database: ServerDatabase) async throws {
        let bench = try SyncBench(postgresAdminURL: database.postgresAdminURL)
        let inspections = Self.inspections()
        let store = try bench.store()
        for inspection in inspections { try store.inspectionJournal.write(InspectionRecord(inspection)) }
        let journaled = try store.inspectionJournal.allInspections()
        #expect(journaled.map(\.record) == inspections.map { InspectionRecord($0) })

        let report = try await bench.round()
        #expect(report.inspectionsUploaded == inspections.count, "\(report.summary)")
        // What the server holds, as its admin command prints it: the record as uploaded, with the time in RFC 3339
        // and ids spelled `…Id` as every output spells them; turned back into the wire format here.
        let records = try bench.server.admin(["inspections", "list", "--json"]).jsonRecords
        var held: [InspectionID: InspectionRecord] = [:]
        for var object in records {
            let time = try #require(
                (object["inspectedAt"] as? String).flatMap {
                    try? Date($0, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                })
            object["inspectedAt"] = Int64((time.timeIntervalSince1970 * 1000).rounded())
            for key in object.keys where key.hasSuffix("Id") {
                object[String(key.dropLast(2)) + "ID"] = object.removeValue(forKey: key)
            }
            let wire = try JSONSerialization.data(withJSONObject: object)
            let record = try WireFormat.decode(InspectionRecord.self, from: Array(wire))
            held[record.id] = record
        }
        #expect(held.count == inspections.count)
        for (record, inspection) in zip(journaled, inspections) {
            let stored = try #require(held[record.id])
            #expect(stored == record.record)
            #expect(stored.verdict.known == inspection.verdict.kind)
            #expect(stored.signature.known == inspection.verdict.signature)
            #expect(stored.format?.known == inspection.verdict.format)
            #expect(stored.symbology?.known == inspection.symbology)
            #expect(stored.decidedBy?.known == inspection.decidedBy)
        }
        // Acknowledged, nothing goes twice.
        let again = try await bench.round()
        #expect(again.inspectionsUploaded == 0 && again.inspectionsRefused == 0)
    }
}
