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
    /// The record's id, chosen by the validator (UUID text), unique among the device's records: the server
    /// knows a record by the device that uploaded it and this id.
    public var id: String
    /// When the verdict was given, Unix milliseconds.
    public var inspectedAt: Int64
    /// The scanner or source on the validator that read the payload.
    public var device: String
    /// `qr`, `aztec`, … (a name this version does not know is kept as uploaded).
    public var symbology: Recorded<Symbology>?
    /// SHA-256 of the payload bytes (hex on the wire).
    public var payloadDigest: [UInt8]
    /// The payload format, when recognised.
    public var format: Recorded<TicketFormat>?
    /// The ticket's issuer, when read.
    public var issuer: String?
    /// The ticket id, when read (hex on the wire).
    public var ticketID: [UInt8]?
    /// The verdict as shown (`valid`, `revoked`, …).
    public var verdict: Recorded<VerdictKind>
    /// The verdict's reason sentence.
    public var reason: String
    /// The signature status (`valid`, `invalid`, …).
    public var signature: Recorded<SignatureStatus>
    /// Warning codes, comma-separated (empty when none).
    public var warnings: String
    /// The inspector logged in, if any.
    public var inspector: String?
    /// Whose verdict was shown: `offline` (the validator's) or `online` (the server's online check); absent
    /// from validators older than the field.
    public var decidedBy: Recorded<Decider>?
    /// True when this inspection passed a single-use ticket at a gate: its first use, which the server records for
    /// the fleet (and reports as a conflict when another device's first use of the ticket came before). Absent
    /// otherwise. Not part of the record's identity: a record sent again is compared without it.
    public var firstUse: Bool?
    /// The payload bytes as scanned (base64 on the wire), sent with a first use only: the server verifies the ticket
    /// with its own trust before it records a claim, and keeps only the digest. Not part of the record's identity.
    public var payload: [UInt8]?

    /// Makes a record.
    public init(
        id: String, inspectedAt: Int64, device: String, symbology: Recorded<Symbology>?, payloadDigest: [UInt8],
        format: Recorded<TicketFormat>?, issuer: String?, ticketID: [UInt8]?, verdict: Recorded<VerdictKind>,
        reason: String, signature: Recorded<SignatureStatus>, warnings: String, inspector: String?,
        decidedBy: Recorded<Decider>? = nil, firstUse: Bool? = nil, payload: [UInt8]? = nil
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
        self.firstUse = firstUse
        self.payload = payload
    }

    private enum CodingKeys: String, CodingKey {
        case id, inspectedAt, device, symbology, payloadDigest, format, issuer, ticketID, verdict, reason, signature
        case warnings, inspector, decidedBy, firstUse, payload
    }

    /// Reads a record; `payloadDigest` and `ticketID` are lowercase hex, as the OpenAPI document's patterns say.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        inspectedAt = try container.decode(Int64.self, forKey: .inspectedAt)
        device = try container.decode(String.self, forKey: .device)
        symbology = try container.decodeAbsentOr(String.self, forKey: .symbology).map(Recorded.init(text:))
        payloadDigest = try container.decodeStrictHex(forKey: .payloadDigest)
        format = try container.decodeAbsentOr(String.self, forKey: .format).map(Recorded.init(text:))
        issuer = try container.decodeAbsentOr(String.self, forKey: .issuer)
        ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID)
        verdict = Recorded(text: try container.decode(String.self, forKey: .verdict))
        reason = try container.decode(String.self, forKey: .reason)
        signature = Recorded(text: try container.decode(String.self, forKey: .signature))
        warnings = try container.decodeAbsentOr(String.self, forKey: .warnings) ?? ""
        inspector = try container.decodeAbsentOr(String.self, forKey: .inspector)
        decidedBy = try container.decodeAbsentOr(String.self, forKey: .decidedBy).map(Recorded.init(text:))
        firstUse = try container.decodeAbsentOr(Bool.self, forKey: .firstUse)
        payload = try container.contains(.payload) ? container.decodeStrictBase64(forKey: .payload) : nil
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
        if firstUse == true { try container.encode(true, forKey: .firstUse) }
        if let payload { try container.encodeBase64(payload, forKey: .payload) }
    }
}

/// The server's answer to an `InspectionBatch`.
///
/// A record is known by its device and its id: two devices may use the same id (they are two records). For
/// each record of the batch, `results` says what became of it (`InspectionOutcome`): stored now, stored by an
/// earlier attempt (the same record again), or refused (the device sent other content under an id it had
/// used, which the server does not overwrite). `accepted` lists the ids the server holds, stored now or before,
/// as servers did before `results`: a validator that does not read `results` marks exactly those as sent and
/// keeps the rest.
public struct BatchAcknowledgement: Sendable, Equatable, Codable {
    /// The ids now stored on the server: new ones and ones stored by an earlier attempt alike (never a refused
    /// one). A validator marks exactly these as sent.
    public var accepted: [String]
    /// One result per record of the batch, in the batch's order; nil from a server older than the field.
    public var results: [InspectionResult]?

    /// Makes an acknowledgement.
    public init(accepted: [String], results: [InspectionResult]? = nil) {
        self.accepted = accepted
        self.results = results
    }

    /// The acknowledgement of `results`: `accepted` lists, once each and in order, the ids stored now or before.
    public init(results: [InspectionResult]) {
        var seen: Set<String> = []
        self.accepted = results.filter { $0.outcome.isHeld && seen.insert($0.id).inserted }.map(\.id)
        self.results = results
    }
}

/// What became of one uploaded record.
public struct InspectionResult: Sendable, Equatable, Codable {
    /// The record's id, as uploaded.
    public var id: String
    /// Stored, already stored, or refused.
    public var outcome: InspectionOutcome
    /// For a refusal, a stable code (`conflicting-record`).
    public var code: String?
    /// For a refusal, a sentence saying why, which the validator keeps with the record.
    public var reason: String?

    /// Makes a result.
    public init(id: String, outcome: InspectionOutcome, code: String? = nil, reason: String? = nil) {
        self.id = id
        self.outcome = outcome
        self.code = code
        self.reason = reason
    }

    /// The code of a record refused because the device sent other content under an id it had used before.
    public static let conflictingRecord = "conflicting-record"
    /// The code of a stored record whose first use the server did not record: the server could not verify the
    /// ticket as a single-use ticket valid at that time with its own trust (the reason says why), or the device may
    /// not claim first uses. The record is held; the validator marks it sent as usual.
    public static let claimRefused = "claim-refused"
}

/// The outcome of one uploaded record, as the server names it.
///
/// Kept open (a raw value, not a closed enum), so that an outcome a newer server adds decodes; a validator treats
/// an outcome it does not know as neither stored nor refused, and sends the record again later.
public struct InspectionOutcome: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The name on the wire.
    public var rawValue: String

    /// Makes an outcome from its name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Stored by this request.
    public static let stored = InspectionOutcome(rawValue: "stored")
    /// The same record (same device, id and content) was stored before: acknowledged again, stored once.
    public static let alreadyStored = InspectionOutcome(rawValue: "already-stored")
    /// Not stored: see the result's `code` and `reason`.
    public static let refused = InspectionOutcome(rawValue: "refused")

    /// Whether the server holds the record after this outcome (stored now or before).
    public var isHeld: Bool { self == .stored || self == .alreadyStored }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

extension InspectionUpload {
    /// The fields in which `uploaded` differs from this record (the one the server holds), by their wire names;
    /// empty when `uploaded` is the same record.
    ///
    /// The same record means every field equal as it travels. One exception: a record stored from a validator
    /// older than `decidedBy` has none, and the same record sent again after an upgrade carries one; a missing
    /// `decidedBy` on the stored side is therefore no difference.
    public func differences(from uploaded: InspectionUpload) -> [String] {
        var names: [String] = []
        func differs(_ name: CodingKeys, _ different: Bool) {
            if different { names.append(name.rawValue) }
        }
        differs(.id, id != uploaded.id)
        differs(.inspectedAt, inspectedAt != uploaded.inspectedAt)
        differs(.device, device != uploaded.device)
        differs(.symbology, symbology != uploaded.symbology)
        differs(.payloadDigest, payloadDigest != uploaded.payloadDigest)
        differs(.format, format != uploaded.format)
        differs(.issuer, issuer != uploaded.issuer)
        // An empty ticket id travels as none.
        differs(
            .ticketID,
            (ticketID?.isEmpty == true ? nil : ticketID)
                != (uploaded.ticketID?.isEmpty == true ? nil : uploaded.ticketID))
        differs(.verdict, verdict != uploaded.verdict)
        differs(.reason, reason != uploaded.reason)
        differs(.signature, signature != uploaded.signature)
        differs(.warnings, warnings != uploaded.warnings)
        differs(.inspector, inspector != uploaded.inspector)
        differs(.decidedBy, decidedBy != nil && decidedBy != uploaded.decidedBy)
        return names
    }
}
