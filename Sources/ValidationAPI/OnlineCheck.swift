import FareCore
import Foundation

/// A validator asking the server about one ticket (`POST /v1/check`), for what the server knows better,
/// such as a ticket revoked minutes ago.
///
/// The validator sends the payload together with what it read from it (issuer, ticket id, key), since
/// the server does not parse every format.
public struct OnlineCheckRequest: Sendable, Equatable, Codable {
    /// The payload bytes as scanned (base64 on the wire).
    public var payload: [UInt8]
    /// The payload format the validator recognised (`fc1`, `uic-918-3`); a name the server does not know is kept.
    public var format: Recorded<TicketFormat>?
    /// The ticket's issuer, as the validator read it.
    public var issuer: IssuerID?
    /// The ticket id, as the validator read it (hex on the wire).
    public var ticketID: TicketID?
    /// The id of the key that signed the ticket, as the validator read it.
    public var keyID: KeyID?
    /// A gate passing a single-use ticket claims its first use for the whole fleet: the server records the first
    /// claim of a ticket (by format, issuer and ticket id) and answers every later one `already-used`.
    public var claimFirstUse: Bool
    /// The inspection the claim is for (the journal record's id): a claim repeated with the same id (a retry
    /// after a lost answer) is the same claim, and wins again if it won.
    public var inspectionID: InspectionID?

    /// The largest request body the server reads for a check.
    public static let maximumBodyByteCount = 64 * 1024
    /// The longest inspection id a claim may carry.
    public static let maximumInspectionIDLength = 128

    /// Makes a request.
    public init(
        payload: [UInt8], format: Recorded<TicketFormat>? = nil, issuer: IssuerID? = nil, ticketID: TicketID? = nil,
        keyID: KeyID? = nil, claimFirstUse: Bool = false, inspectionID: InspectionID? = nil
    ) {
        self.payload = payload
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.keyID = keyID
        self.claimFirstUse = claimFirstUse
        self.inspectionID = inspectionID
    }

    private enum CodingKeys: String, CodingKey {
        case payload, format, issuer, ticketID, keyID, claimFirstUse, inspectionID
    }

    /// Reads a request; `payload` is padded standard base64, `ticketID` lowercase hex (the document's patterns).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        payload = try container.decodeStrictBase64(forKey: .payload)
        format = try container.decodeAbsentOr(String.self, forKey: .format).map(Recorded.init(text:))
        issuer = try container.decodeAbsentOr(IssuerID.self, forKey: .issuer)
        ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID).map(TicketID.init)
        keyID = try container.decodeAbsentOr(KeyID.self, forKey: .keyID)
        claimFirstUse = try container.decodeAbsentOr(Bool.self, forKey: .claimFirstUse) ?? false
        inspectionID = try container.decodeAbsentOr(InspectionID.self, forKey: .inspectionID)
        if let inspectionID,
            inspectionID.rawValue.isEmpty || inspectionID.rawValue.utf8.count > Self.maximumInspectionIDLength
        {
            throw DecodingError.dataCorruptedError(
                forKey: .inspectionID, in: container,
                debugDescription: "inspectionID must be 1 to \(Self.maximumInspectionIDLength) bytes")
        }
    }

    /// Writes a request; `payload` as base64, `ticketID` as hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64(payload, forKey: .payload)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        // An empty id names nothing, and the document's pattern wants at least one byte: left out.
        try container.encodeHexIfPresent(ticketID?.isEmpty == true ? nil : ticketID?.bytes, forKey: .ticketID)
        try container.encodeIfPresent(keyID, forKey: .keyID)
        if claimFirstUse { try container.encode(true, forKey: .claimFirstUse) }
        try container.encodeIfPresent(inspectionID, forKey: .inspectionID)
    }
}

/// The server's verdict on an `OnlineCheckRequest`.
public struct OnlineCheckResponse: Sendable, Equatable, Codable {
    /// `revoked`, `not-revoked`, or `unknown` when the request named no ticket or key to look up; a verdict a newer
    /// server adds decodes, and a validator treats it as not `revoked`.
    public var verdict: Recorded<OnlineCheckVerdict>
    /// One sentence saying why, for the inspector.
    public var reason: String
    /// The same sentence as the validator's page translates it (its English template and values); absent from an
    /// older server, whose `reason` is then shown as it is.
    public var explanation: Explanation?
    /// Whether the server holds the ticket (or its key) as revoked; nil when it could not tell.
    public var revoked: Bool?
    /// When the ticket or key was revoked, if it is.
    public var revokedAt: Date?
    /// For a request that claimed the ticket's first use: the fleet's first use of it (this request's, or the
    /// earlier one that makes this one `already-used`).
    public var firstUse: FirstUse?

    /// Makes a response.
    public init(
        verdict: OnlineCheckVerdict, reason: Explanation, revoked: Bool?, revokedAt: Date? = nil,
        firstUse: FirstUse? = nil
    ) {
        self.verdict = Recorded(verdict)
        self.reason = reason.english
        self.explanation = reason
        self.revoked = revoked
        self.revokedAt = revokedAt
        self.firstUse = firstUse
    }
}

/// The first use of a single-use ticket in the fleet, as the server recorded it.
public struct FirstUse: Sendable, Equatable, Codable {
    /// The device (as the server knows it: its device id) whose claim came first.
    public var device: String
    /// When the server recorded that claim (the server's clock).
    public var usedAt: Date
    /// The inspection that claim was for, when it said.
    public var inspectionID: InspectionID?
    /// Whether the request answered is that first use (`true`), or came later (`false`: `already-used`).
    public var claimed: Bool

    /// Makes a record.
    public init(device: String, usedAt: Date, inspectionID: InspectionID?, claimed: Bool) {
        self.device = device
        self.usedAt = usedAt
        self.inspectionID = inspectionID
        self.claimed = claimed
    }
}

/// What the server answers to an online check (`OnlineCheckResponse.verdict`). A claim that wins is
/// `not-revoked` with `firstUse.claimed` true.
public enum OnlineCheckVerdict: String, Sendable, Hashable, CaseIterable, Codable {
    /// The ticket or its key is revoked.
    case revoked = "revoked"
    /// Neither the ticket nor its key is revoked on the server.
    case notRevoked = "not-revoked"
    /// The request named nothing the server could look up.
    case unknown = "unknown"
    /// The request claimed a single-use ticket's first use, and another claim came first (`firstUse` says whose).
    case alreadyUsed = "already-used"
}
