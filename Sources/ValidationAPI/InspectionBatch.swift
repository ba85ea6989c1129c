import FareCore
import Foundation

/// Inspection records a validator hands home in one `POST /v1/inspections`.
public struct InspectionBatch: Sendable, Equatable, Codable {
    /// The records, each with its own id; a batch sent twice is stored once.
    public var records: [InspectionRecord]

    /// The most records one batch may hold; the server refuses larger batches with 413.
    public static let maximumRecordCount = 1000

    /// Makes a batch.
    public init(records: [InspectionRecord]) {
        self.records = records
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
    public var accepted: [InspectionID]
    /// One result per record of the batch, in the batch's order; nil from a server older than the field.
    public var results: [InspectionResult]?

    /// Makes an acknowledgement.
    public init(accepted: [InspectionID], results: [InspectionResult]? = nil) {
        self.accepted = accepted
        self.results = results
    }

    /// The acknowledgement of `results`: `accepted` lists, once each and in order, the ids stored now or before.
    public init(results: [InspectionResult]) {
        var seen: Set<InspectionID> = []
        self.accepted = results.filter { $0.outcome.isHeld && seen.insert($0.id).inserted }.map(\.id)
        self.results = results
    }
}

/// What became of one uploaded record.
public struct InspectionResult: Sendable, Equatable, Codable {
    /// The record's id, as uploaded.
    public var id: InspectionID
    /// Stored, already stored, or refused.
    public var outcome: InspectionOutcome
    /// For a refusal, a stable code (`conflicting-record`).
    public var code: String?
    /// For a refusal, a sentence saying why, which the validator keeps with the record.
    public var reason: String?

    /// Makes a result.
    public init(id: InspectionID, outcome: InspectionOutcome, code: String? = nil, reason: String? = nil) {
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
