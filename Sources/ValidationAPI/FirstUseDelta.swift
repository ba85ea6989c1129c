import FareCore
import Foundation

/// The fleet's first uses of single-use tickets recorded since a moment, as the server sends them to validators
/// (`GET /v1/first-uses?since=MS`, signed in a `SignedDocument`), so that a gate that is offline when a ticket is
/// shown refuses one that another gate passed.
///
/// The cursor is the server's own clock in Unix milliseconds, when it recorded each first use (not when the ticket
/// was used: a first use uploaded days later by a gate that was offline is recorded when it arrives). A validator
/// asks from a minute before its cursor (``overlapMilliseconds``), since a first use committed a moment late can
/// carry a slightly older time; entries come again then, and applying one twice changes nothing. A page has at
/// most ``pageLimit`` entries, oldest first; when `more` is true the validator asks again at once from `next`
/// (inclusive, without the overlap).
public struct FirstUseDelta: Sendable, Equatable, Codable {
    /// Entries one page holds at most.
    public static let pageLimit = 5000
    /// How far before its cursor a validator asks again, for first uses committed late.
    public static let overlapMilliseconds: Int64 = 60_000
    /// How long the server offers first uses to validators (and validators keep them): seven days.
    public static let retentionMilliseconds: Int64 = 7 * 86_400_000

    /// The moment asked from (as the validator sent it).
    public var since: Int64
    /// The cursor to keep: the server's clock when it read this page, or the last entry's time when `more`.
    public var next: Int64
    /// The first uses recorded from `since` on, oldest first.
    public var entries: [FleetFirstUse]
    /// Whether more entries follow: ask again with `since=next` at once.
    public var more: Bool
    /// When the server signed the page (counts in the validator's trusted-time floor like a revocation page).
    public var issuedAt: Date?
    /// First uses the server withdrew from `since` on (a revoked device's claims, or an operator's
    /// `first-uses forget`): a validator forgets the entries they name. Absent from older servers.
    public var withdrawals: [FirstUseWithdrawal]?

    /// Makes a page.
    public init(
        since: Int64, next: Int64, entries: [FleetFirstUse], more: Bool, issuedAt: Date? = nil,
        withdrawals: [FirstUseWithdrawal]? = nil
    ) {
        self.since = since
        self.next = next
        self.entries = entries
        self.more = more
        self.issuedAt = issuedAt
        self.withdrawals = withdrawals
    }
}

/// A first use the server no longer stands by: the validators that hold it forget it, so the ticket passes again.
public struct FirstUseWithdrawal: Sendable, Equatable, Codable {
    /// The withdrawn entry's format, issuer, ticket id and device, as its `FleetFirstUse` named them.
    public var format: String
    public var issuer: IssuerID
    public var ticketID: TicketID
    public var device: String
    /// When the server withdrew it (its own clock).
    public var withdrawnAt: Date

    /// Makes a withdrawal.
    public init(format: String, issuer: IssuerID, ticketID: TicketID, device: String, withdrawnAt: Date) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.device = device
        self.withdrawnAt = withdrawnAt
    }

    private enum CodingKeys: String, CodingKey {
        case format, issuer, ticketID, device, withdrawnAt
    }

    /// Reads a withdrawal; `ticketID` is lowercase hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        ticketID = TicketID(try container.decodeStrictHex(forKey: .ticketID))
        device = try container.decode(String.self, forKey: .device)
        withdrawnAt = try container.decode(Date.self, forKey: .withdrawnAt)
    }

    /// Writes a withdrawal; `ticketID` as hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHex(ticketID.bytes, forKey: .ticketID)
        try container.encode(device, forKey: .device)
        try container.encode(withdrawnAt, forKey: .withdrawnAt)
    }
}

/// One single-use ticket's first use in the fleet.
public struct FleetFirstUse: Sendable, Equatable, Codable {
    /// The ticket's format as the claiming validator named it ('' when it did not).
    public var format: String
    public var issuer: IssuerID
    public var ticketID: TicketID
    /// The device (its id on the server) that used it first.
    public var device: String
    /// When that device used it: the server's clock for a claim made online; for one uploaded later the device's,
    /// when it was within the server's backdating limit of the upload's arrival, else the arrival.
    public var usedAt: Date
    /// When the server recorded the claim (its own clock): validators forget an entry by this time, never by a
    /// device's. Absent from older servers.
    public var recordedAt: Date?

    /// Makes an entry.
    public init(
        format: String, issuer: IssuerID, ticketID: TicketID, device: String, usedAt: Date, recordedAt: Date? = nil
    ) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.device = device
        self.usedAt = usedAt
        self.recordedAt = recordedAt
    }

    private enum CodingKeys: String, CodingKey {
        case format, issuer, ticketID, device, usedAt, recordedAt
    }

    /// Reads an entry; `ticketID` is lowercase hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        guard let ticketID = try container.decodeStrictHexIfPresent(forKey: .ticketID), !ticketID.isEmpty else {
            throw DecodingError.dataCorruptedError(
                forKey: .ticketID, in: container, debugDescription: "a first use names its ticket id")
        }
        self.ticketID = TicketID(ticketID)
        device = try container.decode(String.self, forKey: .device)
        usedAt = try container.decode(Date.self, forKey: .usedAt)
        recordedAt = try container.decodeAbsentOr(Date.self, forKey: .recordedAt)
    }

    /// Writes an entry; `ticketID` as hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHexIfPresent(ticketID.bytes, forKey: .ticketID)
        try container.encode(device, forKey: .device)
        try container.encode(usedAt, forKey: .usedAt)
        try container.encodeIfPresent(recordedAt, forKey: .recordedAt)
    }
}
