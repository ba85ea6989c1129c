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
    public var issuer: String?
    /// The ticket id, as the validator read it (hex on the wire).
    public var ticketID: [UInt8]?
    /// The id of the key that signed the ticket, as the validator read it.
    public var keyID: String?

    /// The largest request body the server reads for a check.
    public static let maximumBodyByteCount = 64 * 1024

    /// Makes a request.
    public init(
        payload: [UInt8], format: Recorded<TicketFormat>? = nil, issuer: String? = nil, ticketID: [UInt8]? = nil,
        keyID: String? = nil
    ) {
        self.payload = payload
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.keyID = keyID
    }

    private enum CodingKeys: String, CodingKey {
        case payload, format, issuer, ticketID, keyID
    }

    /// Reads a request; `payload` is padded standard base64, `ticketID` lowercase hex (the document's patterns).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        payload = try container.decodeStrictBase64(forKey: .payload)
        format = try container.decodeAbsentOr(String.self, forKey: .format).map(Recorded.init(text:))
        issuer = try container.decodeAbsentOr(String.self, forKey: .issuer)
        ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID)
        keyID = try container.decodeAbsentOr(String.self, forKey: .keyID)
    }

    /// Writes a request; `payload` as base64, `ticketID` as hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeBase64(payload, forKey: .payload)
        try container.encodeIfPresent(format, forKey: .format)
        try container.encodeIfPresent(issuer, forKey: .issuer)
        // An empty id names nothing, and the document's pattern wants at least one byte: left out.
        try container.encodeHexIfPresent(ticketID?.isEmpty == true ? nil : ticketID, forKey: .ticketID)
        try container.encodeIfPresent(keyID, forKey: .keyID)
    }
}

/// The server's verdict on an `OnlineCheckRequest`.
public struct OnlineCheckResponse: Sendable, Equatable, Codable {
    /// `revoked`, `not-revoked`, or `unknown` when the request named no ticket or key to look up; a verdict a newer
    /// server adds decodes, and a validator treats it as not `revoked`.
    public var verdict: Recorded<OnlineCheckVerdict>
    /// One sentence saying why, for the inspector.
    public var reason: String
    /// Whether the server holds the ticket (or its key) as revoked; nil when it could not tell.
    public var revoked: Bool?
    /// When the ticket or key was revoked, if it is.
    public var revokedAt: Date?

    /// Makes a response.
    public init(verdict: OnlineCheckVerdict, reason: String, revoked: Bool?, revokedAt: Date? = nil) {
        self.verdict = Recorded(verdict)
        self.reason = reason
        self.revoked = revoked
        self.revokedAt = revokedAt
    }
}

/// What the server answers to an online check (`OnlineCheckResponse.verdict`).
public enum OnlineCheckVerdict: String, Sendable, Hashable, CaseIterable, Codable {
    /// The ticket or its key is revoked.
    case revoked = "revoked"
    /// Neither the ticket nor its key is revoked on the server.
    case notRevoked = "not-revoked"
    /// The request named nothing the server could look up.
    case unknown = "unknown"
}
