import FareCore
import Foundation

/// One inspection as it is kept and as it travels: the one record the validator's journal stores, a sync round
/// uploads (`POST /v1/inspections`) and the server keeps, with no copy into another shape between them.
///
/// Made once from the live ``Inspection`` (``init(_:payload:)``). The journal adds only its own bookkeeping beside it
/// (sent, refused), the server only who uploaded it and when (`StoredInspection`).
///
/// On the wire each field has the name and form it had when validators sent an `InspectionUpload`, so that a server
/// reads records from validators one version older, and a server one version older reads these (it ignores the
/// fields it does not know): `source` travels as `device`, the warnings as their codes comma-separated
/// (`warnings`) with their sentences beside them (`warningMessages`), and the byte fields as lowercase hex.
public struct InspectionRecord: Sendable, Equatable, Codable {
    /// The record's id, chosen by the validator, unique among the device's records.
    public var id: InspectionID
    /// When the verdict was given, by the device clock, Unix milliseconds.
    public var inspectedAt: Int64
    /// When the scan arrived at the validator (its last byte: the scan's `receivedAt`), Unix milliseconds; `nil` when
    /// not measured, and from validators older than the field. (The server's own `receivedAt` is when the upload came.)
    public var scanReceivedAt: Int64?
    /// The scanner (its configured name, else its device path), camera or file the payload came from.
    public var source: SourceName
    /// `qr`, `aztec`, … (a name this version does not know is kept as written).
    public var symbology: Recorded<Symbology>?
    /// SHA-256 of the payload bytes: identifies the scan without keeping the ticket itself.
    public var payloadDigest: [UInt8]
    /// The payload format, when recognised.
    public var format: Recorded<TicketFormat>?
    /// The ticket's issuer, when read (for replay detection and the fleet).
    public var issuer: IssuerID?
    /// The ticket's id, when read.
    public var ticketID: TicketID?
    /// The key that verified (or was named for) the ticket, when known: a publisher's key list dropping a key tickets
    /// verified with lately is held for an operator (docs/trust-sources.md). `nil` from validators older than the
    /// field.
    public var keyID: KeyID?
    /// The verdict as shown (`valid`, `revoked`, …).
    public var verdict: Recorded<VerdictKind>
    /// The verdict's reason sentence, in English.
    public var reason: String
    /// The signature status (`valid`, `invalid`, …).
    public var signature: Recorded<SignatureStatus>
    /// The warnings as the inspector read them, in order: each its code and its sentence, as it can be translated.
    /// A record that travelled holds the English sentence only (``Explanation/verbatim(_:)``); one from a validator
    /// older than `warningMessages` holds its codes with empty sentences.
    public var warnings: [VerdictWarning]
    /// The inspector logged in, if any.
    public var inspector: String?
    /// Whose verdict was shown: the validator's (`offline`) or the server's online check (`online`); `nil` only in
    /// records of validators older than the field.
    public var decidedBy: Recorded<Decider>?
    /// The trusted-time floor the device clock (`inspectedAt`) was judged against, Unix milliseconds, and where it came
    /// from; `nil` when none was. With both, a reader sees what the clock read and what it should at least have read.
    public var clockFloor: Int64?
    public var clockFloorSource: Recorded<TrustedTimeSource>?
    /// `true` when the inspection passed a single-use ticket at a gate: its first use, which the server records for
    /// the fleet. `nil` otherwise. Not part of the record's identity.
    public var firstUse: Bool?
    /// The payload bytes as scanned, for a first use only, until the server has answered for the record: the server
    /// verifies the ticket with its own trust before it records the claim, and keeps only the digest. Not part of
    /// the record's identity.
    public var payload: [UInt8]?

    /// Makes a record field by field (a record read back from storage).
    public init(
        id: InspectionID, inspectedAt: Int64, scanReceivedAt: Int64? = nil, source: SourceName,
        symbology: Recorded<Symbology>?, payloadDigest: [UInt8], format: Recorded<TicketFormat>?, issuer: IssuerID?,
        ticketID: TicketID?, keyID: KeyID? = nil, verdict: Recorded<VerdictKind>, reason: String,
        signature: Recorded<SignatureStatus>,
        warnings: [VerdictWarning], inspector: String?, decidedBy: Recorded<Decider>? = nil, clockFloor: Int64? = nil,
        clockFloorSource: Recorded<TrustedTimeSource>? = nil, firstUse: Bool? = nil, payload: [UInt8]? = nil
    ) {
        self.id = id
        self.inspectedAt = inspectedAt
        self.scanReceivedAt = scanReceivedAt
        self.source = source
        self.symbology = symbology
        self.payloadDigest = payloadDigest
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.keyID = keyID
        self.verdict = verdict
        self.reason = reason
        self.signature = signature
        self.warnings = warnings
        self.inspector = inspector
        self.decidedBy = decidedBy
        self.clockFloor = clockFloor
        self.clockFloorSource = clockFloorSource
        self.firstUse = firstUse
        self.payload = payload
    }

    /// The record of `inspection`: the one mapping from an inspection to what is kept of it.
    ///
    /// - Parameter payload: The payload bytes as scanned; kept only when the inspection is a first use.
    public init(_ inspection: Inspection, payload: [UInt8]? = nil) {
        let verdict = inspection.verdict
        self.init(
            id: inspection.id, inspectedAt: Self.milliseconds(verdict.inspectedAt),
            scanReceivedAt: inspection.receivedAt.map(Self.milliseconds), source: inspection.source,
            symbology: inspection.symbology.map(Recorded.init), payloadDigest: inspection.payloadDigest,
            format: verdict.format.map(Recorded.init),
            issuer: verdict.ticket.map { $0.issuer } ?? verdict.issuer,
            ticketID: verdict.ticket.map { $0.ticketID }, keyID: verdict.keyID, verdict: Recorded(verdict.kind),
            reason: verdict.reason, signature: Recorded(verdict.signature), warnings: verdict.warnings,
            inspector: inspection.inspector, decidedBy: Recorded(inspection.decidedBy),
            clockFloor: verdict.clockFloor.map { Int64(($0.instant.timeIntervalSince1970 * 1000).rounded(.down)) },
            clockFloorSource: verdict.clockFloor.map { Recorded($0.source) },
            firstUse: inspection.isFirstUse ? true : nil, payload: inspection.isFirstUse ? payload : nil)
    }

    private static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// When the verdict was given.
    public var inspectedDate: Date { Date(timeIntervalSince1970: TimeInterval(inspectedAt) / 1000) }

    /// The warning codes, comma-separated (empty when none): the form every version wrote them in.
    public var warningCodes: String { warnings.map(\.code).joined(separator: ",") }

    /// The warnings of `codes` (comma-separated) with `messages` beside them in order: how a record written before
    /// the warnings were kept as a list reads. A code without a message has an empty one.
    public static func warnings(codes: String, messages: [String]) -> [VerdictWarning] {
        guard !codes.isEmpty else { return [] }
        return codes.split(separator: ",", omittingEmptySubsequences: false).enumerated().map { index, code in
            VerdictWarning(code: String(code), message: .verbatim(index < messages.count ? messages[index] : ""))
        }
    }

    /// The most warning sentences a record carries on the wire (the OpenAPI document's `maxItems`).
    public static let maximumWarningCount = 64

    enum CodingKeys: String, CodingKey {
        case id, inspectedAt, scanReceivedAt, device, symbology, payloadDigest, format, issuer, ticketID, keyID,
            verdict, reason
        case signature, warnings, warningMessages, inspector, decidedBy, clockFloor, clockFloorSource, firstUse
        case payload
    }

    /// Reads a record; `payloadDigest` and `ticketID` are lowercase hex, as the OpenAPI document's patterns say.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(InspectionID.self, forKey: .id)
        inspectedAt = try container.decode(Int64.self, forKey: .inspectedAt)
        scanReceivedAt = try container.decodeAbsentOr(Int64.self, forKey: .scanReceivedAt)
        source = try container.decode(SourceName.self, forKey: .device)
        symbology = try container.decodeAbsentOr(String.self, forKey: .symbology).map(Recorded.init(text:))
        payloadDigest = try container.decodeStrictHex(forKey: .payloadDigest)
        format = try container.decodeAbsentOr(String.self, forKey: .format).map(Recorded.init(text:))
        issuer = try container.decodeAbsentOr(IssuerID.self, forKey: .issuer)
        ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID).map(TicketID.init)
        keyID = try container.decodeAbsentOr(KeyID.self, forKey: .keyID)
        if let keyID, keyID.rawValue.unicodeScalars.contains("\u{0}") || keyID.rawValue.unicodeScalars.count > 256 {
            throw DecodingError.dataCorruptedError(
                forKey: .keyID, in: container, debugDescription: "a key id is at most 256 characters, without U+0000")
        }
        verdict = Recorded(text: try container.decode(String.self, forKey: .verdict))
        reason = try container.decode(String.self, forKey: .reason)
        signature = Recorded(text: try container.decode(String.self, forKey: .signature))
        let messages = try container.decodeAbsentOr([String].self, forKey: .warningMessages) ?? []
        guard messages.count <= Self.maximumWarningCount else {
            throw DecodingError.dataCorruptedError(
                forKey: .warningMessages, in: container,
                debugDescription: "at most \(Self.maximumWarningCount) warning messages, not \(messages.count)")
        }
        // Text a record keeps holds no U+0000 (the document's pattern), also a sentence beyond the codes, which is
        // not kept.
        guard !messages.contains(where: { $0.unicodeScalars.contains("\u{0}") }) else {
            throw DecodingError.dataCorruptedError(
                forKey: .warningMessages, in: container, debugDescription: "a warning message holds U+0000")
        }
        warnings = Self.warnings(
            codes: try container.decodeAbsentOr(String.self, forKey: .warnings) ?? "", messages: messages)
        inspector = try container.decodeAbsentOr(String.self, forKey: .inspector)
        decidedBy = try container.decodeAbsentOr(String.self, forKey: .decidedBy).map(Recorded.init(text:))
        clockFloor = try container.decodeAbsentOr(Int64.self, forKey: .clockFloor)
        clockFloorSource = try container.decodeAbsentOr(String.self, forKey: .clockFloorSource).map(
            Recorded.init(text:))
        firstUse = try container.decodeAbsentOr(Bool.self, forKey: .firstUse)
        payload = try container.contains(.payload) ? container.decodeStrictBase64(forKey: .payload) : nil
    }

    /// Writes a record; byte fields as lowercase hex, absent optionals left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(inspectedAt, forKey: .inspectedAt)
        try container.encodeIfPresent(scanReceivedAt, forKey: .scanReceivedAt)
        try container.encode(source, forKey: .device)
        try container.encodeIfPresent(symbology, forKey: .symbology)
        try container.encodeHex(payloadDigest, forKey: .payloadDigest)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        // An empty id names nothing, and the document's pattern wants at least one byte: left out.
        try container.encodeHexIfPresent(ticketID?.isEmpty == true ? nil : ticketID?.bytes, forKey: .ticketID)
        try container.encodeIfPresent(keyID, forKey: .keyID)
        try container.encode(verdict, forKey: .verdict)
        try container.encode(reason, forKey: .reason)
        try container.encode(signature, forKey: .signature)
        try container.encode(warningCodes, forKey: .warnings)
        // Sentences only when there are any: a record of a validator that sent codes alone travels as it came.
        if warnings.contains(where: { !$0.message.isEmpty }) {
            try container.encode(warnings.map(\.message), forKey: .warningMessages)
        }
        try container.encodeIfPresent(inspector, forKey: .inspector)
        try container.encodeIfPresent(decidedBy, forKey: .decidedBy)
        try container.encodeIfPresent(clockFloor, forKey: .clockFloor)
        try container.encodeIfPresent(clockFloorSource, forKey: .clockFloorSource)
        if firstUse == true { try container.encode(true, forKey: .firstUse) }
        if let payload { try container.encodeBase64(payload, forKey: .payload) }
    }

    /// The fields in which `uploaded` differs from this record (the one the server holds), by their wire names;
    /// empty when `uploaded` is the same record.
    ///
    /// The same record means the same fields as validators have always sent them: the warnings by their codes, an
    /// empty ticket id as none. A field a validator one version older did not send (`decidedBy`, `scanReceivedAt`, `keyID`, the
    /// warnings' sentences, the clock floor) missing on the stored side is no difference, so that the same record sent
    /// again after an upgrade is the same; `firstUse` and `payload` are not part of the identity.
    public func differences(from uploaded: InspectionRecord) -> [String] {
        var names: [String] = []
        func differs(_ name: CodingKeys, _ different: Bool) {
            if different { names.append(name.rawValue) }
        }
        func differsWhenStored<T: Equatable>(_ name: CodingKeys, _ stored: T?, _ other: T?) {
            differs(name, stored != nil && stored != other)
        }
        differs(.id, id != uploaded.id)
        differs(.inspectedAt, inspectedAt != uploaded.inspectedAt)
        differsWhenStored(.scanReceivedAt, scanReceivedAt, uploaded.scanReceivedAt)
        differs(.device, source != uploaded.source)
        differs(.symbology, symbology != uploaded.symbology)
        differs(.payloadDigest, payloadDigest != uploaded.payloadDigest)
        differs(.format, format != uploaded.format)
        differs(.issuer, issuer != uploaded.issuer)
        differs(
            .ticketID,
            (ticketID?.isEmpty == true ? nil : ticketID)
                != (uploaded.ticketID?.isEmpty == true ? nil : uploaded.ticketID))
        differsWhenStored(.keyID, keyID, uploaded.keyID)
        differs(.verdict, verdict != uploaded.verdict)
        differs(.reason, reason != uploaded.reason)
        differs(.signature, signature != uploaded.signature)
        differs(.warnings, warningCodes != uploaded.warningCodes)
        differs(.inspector, inspector != uploaded.inspector)
        differsWhenStored(.decidedBy, decidedBy, uploaded.decidedBy)
        differsWhenStored(.clockFloor, clockFloor, uploaded.clockFloor)
        differsWhenStored(.clockFloorSource, clockFloorSource, uploaded.clockFloorSource)
        return names
    }
}
