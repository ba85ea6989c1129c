import FareCore
import Foundation
import GRDB
import Verification

/// One inspection as the journal keeps it: what was scanned, the verdict shown, and who and where.
///
/// The journal is what the daemon writes before any sink fires, what replay detection reads, and what
/// sync hands home; each record has its own id so that a retried upload never duplicates it.
public struct InspectionRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "inspection"

    /// A unique id (UUID text), chosen by the validator.
    public var id: String
    /// When the verdict was given, Unix milliseconds.
    public var inspectedAt: Int64
    /// The scanner or source the payload came from.
    public var device: String
    /// `qr`, `aztec`, …
    public var symbology: String?
    /// SHA-256 of the payload bytes: identifies the scan without keeping the ticket itself.
    public var payloadDigest: [UInt8]
    /// The payload format, when recognised.
    public var format: String?
    /// The issuer and ticket id, when the ticket could be read (for replay detection).
    public var issuer: String?
    public var ticketID: [UInt8]?
    /// The verdict, its reason and the signature status, as shown.
    public var verdict: String
    public var reason: String
    public var signature: String
    /// Warning codes, comma-separated.
    public var warnings: String
    /// The inspector logged in, if any.
    public var inspector: String?
    /// Which verdict decided: `offline` (this validator) or `online` (the validation API).
    public var decidedBy: String
    /// When the server acknowledged this record, Unix milliseconds; `nil` until then.
    public var sentAt: Int64?

    public init(
        id: String = UUID().uuidString, verdict: Verdict, device: String, symbology: Symbology?, payloadDigest: [UInt8],
        inspector: String? = nil, decidedBy: String = "offline"
    ) {
        self.id = id
        self.inspectedAt = Int64((verdict.inspectedAt.timeIntervalSince1970 * 1000).rounded())
        self.device = device
        self.symbology = symbology?.rawValue
        self.payloadDigest = payloadDigest
        self.format = verdict.format
        self.issuer = verdict.ticket?.issuer ?? verdict.issuer
        self.ticketID = verdict.ticket?.ticketID
        self.verdict = verdict.kind.rawValue
        self.reason = verdict.reason
        self.signature = verdict.signature.rawValue
        self.warnings = verdict.warnings.map(\.code).joined(separator: ",")
        self.inspector = inspector
        self.decidedBy = decidedBy
        self.sentAt = nil
    }

    // Rows are read and written by hand so that byte fields are stored as blobs.
    public init(row: Row) throws {
        id = row["id"]
        inspectedAt = row["inspected_at"]
        device = row["device"]
        symbology = row["symbology"]
        payloadDigest = Array(row["payload_digest"] as Data)
        format = row["format"]
        issuer = row["issuer"]
        ticketID = (row["ticket_id"] as Data?).map { Array($0) }
        verdict = row["verdict"]
        reason = row["reason"]
        signature = row["signature"]
        warnings = row["warnings"]
        inspector = row["inspector"]
        decidedBy = row["decided_by"] ?? "offline"
        sentAt = row["sent_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["id"] = id
        container["inspected_at"] = inspectedAt
        container["device"] = device
        container["symbology"] = symbology
        container["payload_digest"] = Data(payloadDigest)
        container["format"] = format
        container["issuer"] = issuer
        container["ticket_id"] = ticketID.map { Data($0) }
        container["verdict"] = verdict
        container["reason"] = reason
        container["signature"] = signature
        container["warnings"] = warnings
        container["inspector"] = inspector
        container["decided_by"] = decidedBy
        container["sent_at"] = sentAt
    }

    /// When the verdict was given.
    public var inspectedDate: Date { Date(timeIntervalSince1970: TimeInterval(inspectedAt) / 1000) }
}

extension TrustStore {
    /// Appends an inspection to the journal and returns once it is on disk (`synchronous=FULL`): a
    /// verdict that was shown is never lost, also on power loss. The same id twice is one record.
    public func journal(_ record: InspectionRecord) throws(StoreError) {
        try write { db in try record.insert(db, onConflict: .ignore) }
    }

    /// The inspections of one ticket since `since`, newest first: what replay detection asks.
    public func inspections(ofTicket ticketID: [UInt8], issuer: String, since: Date) throws(StoreError)
        -> [InspectionRecord]
    {
        let cutoff = Int64((since.timeIntervalSince1970 * 1000).rounded(.down))
        return try read { db in
            try InspectionRecord
                .filter(
                    Column("issuer") == issuer && Column("ticket_id") == Data(ticketID)
                        && Column("inspected_at") >= cutoff
                )
                .order(Column("inspected_at").desc)
                .fetchAll(db)
        }
    }

    /// Up to `limit` inspections not yet acknowledged by the server, oldest first: the next upload batch.
    public func unsentInspections(limit: Int) throws(StoreError) -> [InspectionRecord] {
        try read { db in
            try InspectionRecord.filter(Column("sent_at") == nil).order(Column("inspected_at")).limit(limit).fetchAll(
                db)
        }
    }

    /// Marks inspections as acknowledged by the server, only after it said so.
    public func markInspectionsSent(_ ids: [String], at date: Date = Date()) throws(StoreError) {
        let stamp = Int64((date.timeIntervalSince1970 * 1000).rounded())
        try write { db in
            _ = try InspectionRecord.filter(ids.contains(Column("id"))).updateAll(db, Column("sent_at").set(to: stamp))
        }
    }
}

extension TrustStore: InspectionHistory {
    public func pastInspections(ofTicket ticketID: [UInt8], issuer: String, since: Date) throws -> [PastInspection] {
        try inspections(ofTicket: ticketID, issuer: issuer, since: since).map {
            PastInspection(inspectedAt: $0.inspectedDate, device: $0.device, verdict: VerdictKind(rawValue: $0.verdict))
        }
    }
}

extension TrustStore {
    /// How many inspections wait for the server's acknowledgement.
    public func unsentInspectionCount() throws(StoreError) -> Int {
        try read { db in try InspectionRecord.filter(Column("sent_at") == nil).fetchCount(db) }
    }

    /// The most recent inspections, newest first.
    public func recentInspections(limit: Int) throws(StoreError) -> [InspectionRecord] {
        try read { db in try InspectionRecord.order(Column("inspected_at").desc).limit(limit).fetchAll(db) }
    }

    /// Every inspection, oldest first (for export and tests).
    public func allInspections() throws(StoreError) -> [InspectionRecord] {
        try read { db in try InspectionRecord.order(Column("inspected_at"), Column("id")).fetchAll(db) }
    }
}
