import FareCore
import Foundation

/// The revocations that changed since a cursor, as the server sends them (signed, in a `SignedDocument`).
///
/// The server numbers every revocation change (an add or a removal) with an increasing sequence; a
/// cursor is the last sequence a validator applied. A delta holds what changed after `from`, up to and
/// including `next`, which the validator asks with the next time. When the server no longer has the
/// changes since `from` (the cursor is 0, older than what it retains, or ahead of it), it sends every
/// current revocation with `full == true`: the validator then replaces everything it holds.
public struct RevocationDelta: Sendable, Equatable, Codable {
    /// The cursor this delta starts after (as the validator sent it).
    public var from: Int64
    /// The cursor to send next time: the newest change this delta includes.
    public var next: Int64
    /// Whether this is a full snapshot: replace every synced revocation with `addedTickets` and `addedKeys`.
    public var full: Bool
    /// Tickets revoked since `from` (in a full snapshot: every revoked ticket).
    public var addedTickets: [RevokedTicket]
    /// Tickets no longer revoked since `from` (always empty in a full snapshot).
    public var removedTickets: [TicketReference]
    /// Keys revoked since `from` (in a full snapshot: every revoked key).
    public var addedKeys: [RevokedKey]
    /// Keys no longer revoked since `from` (always empty in a full snapshot).
    public var removedKeys: [KeyReference]

    /// Makes a delta.
    public init(
        from: Int64, next: Int64, full: Bool, addedTickets: [RevokedTicket] = [],
        removedTickets: [TicketReference] = [], addedKeys: [RevokedKey] = [], removedKeys: [KeyReference] = []
    ) {
        self.from = from
        self.next = next
        self.full = full
        self.addedTickets = addedTickets
        self.removedTickets = removedTickets
        self.addedKeys = addedKeys
        self.removedKeys = removedKeys
    }

    /// Whether nothing changed: not a snapshot and no entries.
    public var isEmpty: Bool {
        !full && addedTickets.isEmpty && removedTickets.isEmpty && addedKeys.isEmpty && removedKeys.isEmpty
    }
}

/// A ticket, named by its issuer and ticket id.
public struct TicketReference: Sendable, Hashable, Codable {
    /// The issuer of the ticket.
    public var issuer: String
    /// The ticket id (FC1 `cti`, UIC ticket key bytes); lowercase hex on the wire.
    public var ticketID: [UInt8]

    /// Makes a reference.
    public init(issuer: String, ticketID: [UInt8]) {
        self.issuer = issuer
        self.ticketID = ticketID
    }

    private enum CodingKeys: String, CodingKey {
        case issuer, ticketID
    }

    /// Reads a reference; `ticketID` is hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        ticketID = try container.decodeHex(forKey: .ticketID)
    }

    /// Writes a reference; `ticketID` as lowercase hex.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHex(ticketID, forKey: .ticketID)
    }
}

/// A revoked ticket.
public struct RevokedTicket: Sendable, Hashable, Codable {
    /// The issuer of the ticket.
    public var issuer: String
    /// The ticket id; lowercase hex on the wire.
    public var ticketID: [UInt8]
    /// Why it was revoked, for the inspector.
    public var reason: String?
    /// When it was revoked.
    public var revokedAt: Date

    /// Makes an entry.
    public init(issuer: String, ticketID: [UInt8], reason: String?, revokedAt: Date) {
        self.issuer = issuer
        self.ticketID = ticketID
        self.reason = reason
        self.revokedAt = revokedAt
    }

    /// The ticket this entry names.
    public var reference: TicketReference { TicketReference(issuer: issuer, ticketID: ticketID) }

    private enum CodingKeys: String, CodingKey {
        case issuer, ticketID, reason, revokedAt
    }

    /// Reads an entry; `ticketID` is hex.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(String.self, forKey: .issuer)
        ticketID = try container.decodeHex(forKey: .ticketID)
        reason = try container.decodeIfPresent(String.self, forKey: .reason)
        revokedAt = try container.decode(Date.self, forKey: .revokedAt)
    }

    /// Writes an entry; `ticketID` as lowercase hex, no `reason` when there is none.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encodeHex(ticketID, forKey: .ticketID)
        try container.encodeIfPresent(reason, forKey: .reason)
        try container.encode(revokedAt, forKey: .revokedAt)
    }
}

/// An issuer key, named by format, issuer and key id.
public struct KeyReference: Sendable, Hashable, Codable {
    /// `fc1` or `uic`, as in `BundleKey.format`.
    public var format: String
    /// The issuer the key belongs to.
    public var issuer: String
    /// The key id as tickets carry it.
    public var keyID: String

    /// Makes a reference.
    public init(format: String, issuer: String, keyID: String) {
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
    }
}

/// A revoked issuer key: every ticket it signed is `revoked`.
public struct RevokedKey: Sendable, Hashable, Codable {
    /// `fc1` or `uic`, as in `BundleKey.format`.
    public var format: String
    /// The issuer the key belongs to.
    public var issuer: String
    /// The key id as tickets carry it.
    public var keyID: String
    /// Why it was revoked.
    public var reason: String?
    /// When it was revoked.
    public var revokedAt: Date

    /// Makes an entry.
    public init(format: String, issuer: String, keyID: String, reason: String?, revokedAt: Date) {
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
        self.reason = reason
        self.revokedAt = revokedAt
    }

    /// The key this entry names.
    public var reference: KeyReference { KeyReference(format: format, issuer: issuer, keyID: keyID) }
}
