import FareCore
import Foundation

/// Inspection records a validator hands home in one `POST /v1/inspections`.
public struct InspectionBatch: Sendable, Equatable, Codable {
    /// The records, each with its own id; a batch sent twice is stored once.
    public var records: [InspectionUpload]

    /// The most records one batch may hold; the server refuses larger batches with 413.
    public static let maximumRecordCount = 1000

    /// Makes a batch.
    public init(records: [InspectionUpload]) {
        self.records = records
    }
}

/// One inspection as it travels: what the validator's journal holds, without local bookkeeping.
public struct InspectionUpload: Sendable, Equatable, Codable {
    /// The record's unique id, chosen by the validator (UUID text); the server stores each id once.
    public var id: String
    /// When the verdict was given, Unix milliseconds.
    public var inspectedAt: Int64
    /// The scanner or source on the validator that read the payload.
    public var device: String
    /// `qr`, `aztec`, …
    public var symbology: String?
    /// SHA-256 of the payload bytes (hex on the wire).
    public var payloadDigest: [UInt8]
    /// The payload format, when recognised.
    public var format: String?
    /// The ticket's issuer, when read.
    public var issuer: String?
    /// The ticket id, when read (hex on the wire).
    public var ticketID: [UInt8]?
    /// The verdict as shown (`valid`, `revoked`, …).
    public var verdict: String
    /// The verdict's reason sentence.
    public var reason: String
    /// The signature status (`valid`, `invalid`, …).
    public var signature: String
    /// Warning codes, comma-separated (empty when none).
    public var warnings: String
    /// The inspector logged in, if any.
    public var inspector: String?
    /// Whose verdict was shown: `offline` (the validator's) or `online` (the server's online check); absent
    /// from validators older than the field.
    public var decidedBy: String?

    /// Makes a record.
    public init(
        id: String, inspectedAt: Int64, device: String, symbology: String?, payloadDigest: [UInt8], format: String?,
        issuer: String?, ticketID: [UInt8]?, verdict: String, reason: String, signature: String, warnings: String,
        inspector: String?, decidedBy: String? = nil
    ) {
        self.id = id
        self.inspectedAt = inspectedAt
        self.device = device
        self.symbology = symbology
        self.payloadDigest = payloadDigest
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.verdict = verdict
        self.reason = reason
        self.signature = signature
        self.warnings = warnings
        self.inspector = inspector
        self.decidedBy = decidedBy
    }

    private enum CodingKeys: String, CodingKey {
        case id, inspectedAt, device, symbology, payloadDigest, format, issuer, ticketID, verdict, reason, signature
        case warnings, inspector, decidedBy
    }

    /// Reads a record; `payloadDigest` and `ticketID` are lowercase hex, as the OpenAPI document's patterns say.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        inspectedAt = try container.decode(Int64.self, forKey: .inspectedAt)
        device = try container.decode(String.self, forKey: .device)
        symbology = try container.decodeAbsentOr(String.self, forKey: .symbology)
        payloadDigest = try container.decodeStrictHex(forKey: .payloadDigest)
        format = try container.decodeAbsentOr(String.self, forKey: .format)
        issuer = try container.decodeAbsentOr(String.self, forKey: .issuer)
        ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID)
        verdict = try container.decode(String.self, forKey: .verdict)
        reason = try container.decode(String.self, forKey: .reason)
        signature = try container.decode(String.self, forKey: .signature)
        warnings = try container.decodeAbsentOr(String.self, forKey: .warnings) ?? ""
        inspector = try container.decodeAbsentOr(String.self, forKey: .inspector)
        decidedBy = try container.decodeAbsentOr(String.self, forKey: .decidedBy)
    }

    /// Writes a record; byte fields as lowercase hex, absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(inspectedAt, forKey: .inspectedAt)
        try container.encode(device, forKey: .device)
        try container.encodeIfPresent(symbology, forKey: .symbology)
        try container.encodeHex(payloadDigest, forKey: .payloadDigest)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        // An empty id names nothing, and the document's pattern wants at least one byte: left out.
        try container.encodeHexIfPresent(ticketID?.isEmpty == true ? nil : ticketID, forKey: .ticketID)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(reason, forKey: .reason)
        try container.encode(signature, forKey: .signature)
        try container.encode(warnings, forKey: .warnings)
        try container.encodeIfPresent(inspector, forKey: .inspector)
        try container.encodeIfPresent(decidedBy, forKey: .decidedBy)
    }
}

/// The server's answer to an `InspectionBatch`.
public struct BatchAcknowledgement: Sendable, Equatable, Codable {
    /// The ids now stored on the server: new ones and ones stored by an earlier attempt alike. A validator
    /// marks exactly these as sent.
    public var accepted: [String]

    /// Makes an acknowledgement.
    public init(accepted: [String]) {
        self.accepted = accepted
    }
}
