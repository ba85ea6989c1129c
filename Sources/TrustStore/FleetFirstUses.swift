import FareCore
import Foundation
import GRDB

/// The first use of a single-use ticket by another device of the fleet, as sync brought it: a gate that is offline
/// when the ticket is shown refuses it as used.
public struct FleetFirstUseRecord: Sendable, Equatable {
    /// The ticket's format as the claiming validator named it ('' when it did not).
    public var format: String
    /// The issuer as verification matches it.
    public var issuer: String
    public var ticketID: [UInt8]
    /// The device that used it first (its id on the server).
    public var device: String
    /// When it did.
    public var usedAt: Date
    /// When the server recorded it (the server's clock), by which it is forgotten; nil from servers that predate
    /// it (then `usedAt` counts).
    public var recordedAt: Date?

    /// Makes a record.
    public init(
        format: String, issuer: String, ticketID: [UInt8], device: String, usedAt: Date, recordedAt: Date? = nil
    ) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.device = device
        self.usedAt = usedAt
        self.recordedAt = recordedAt
    }
}

/// A first use the server withdrew (a revoked device's claim, or an operator's `first-uses forget`), named as its
/// `FleetFirstUseRecord` was: the validator forgets it, so the ticket passes again.
public struct FleetFirstUseWithdrawal: Sendable, Equatable {
    /// The withdrawn entry's format ('' when its claim named none).
    public var format: String
    /// The issuer as verification matches it.
    public var issuer: String
    /// The ticket id.
    public var ticketID: [UInt8]
    /// The device whose claim it was: an entry of another device is kept.
    public var device: String

    /// Makes a withdrawal.
    public init(format: String, issuer: String, ticketID: [UInt8], device: String) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.device = device
    }
}

extension TrustStore {
    /// The cursor of the fleet's first uses (the server's clock, Unix milliseconds); 0 before the first page.
    public func fleetFirstUseCursor() throws(StoreError) -> Int64 {
        try read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'first_use_cursor'").flatMap {
                Int64($0)
            } ?? 0
        }
    }

    /// Applies one page of the fleet's first uses in one transaction: the entries are kept (one already held is
    /// left as it is), the withdrawn ones are forgotten, the cursor moves to `next`, and first uses recorded before
    /// `forgetBefore` are dropped (by the server's record time; by their use for entries without one).
    ///
    /// A withdrawal comes after the entries it names in the server's order, so it is applied after the page's
    /// entries: a page that holds both a claim and its withdrawal leaves nothing.
    ///
    /// - Returns: The entries that were new.
    @discardableResult
    public func applyFleetFirstUses(
        _ entries: [FleetFirstUseRecord], withdrawals: [FleetFirstUseWithdrawal] = [], next: Int64,
        forgetBefore: Date
    ) throws(StoreError) -> Int {
        try write { db in
            var added = 0
            for entry in entries {
                try db.execute(
                    sql: """
                        INSERT INTO fleet_first_use (format, issuer, ticket_id, device, used_at, recorded_at)
                        VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (issuer, ticket_id, format) DO NOTHING
                        """,
                    arguments: [
                        entry.format, entry.issuer, Data(entry.ticketID), entry.device, Self.milliseconds(entry.usedAt),
                        entry.recordedAt.map(Self.milliseconds),
                    ])
                added += db.changesCount
            }
            for withdrawal in withdrawals {
                try db.execute(
                    sql: """
                        DELETE FROM fleet_first_use WHERE issuer = ? AND ticket_id = ? AND format = ? AND device = ?
                        """,
                    arguments: [withdrawal.issuer, Data(withdrawal.ticketID), withdrawal.format, withdrawal.device])
            }
            try db.execute(
                sql: "DELETE FROM fleet_first_use WHERE coalesce(recorded_at, used_at) < ?",
                arguments: [Self.milliseconds(forgetBefore)])
            try Self.setMeta(db, "first_use_cursor", String(next))
            return added
        }
    }

    /// Another device's first use of a ticket, if the fleet has told of one: of any format when `format` is the
    /// one the ticket was read as or none was named.
    public func fleetFirstUse(issuer: String, ticketID: [UInt8], format: TicketFormat?) throws(StoreError)
        -> FleetFirstUseRecord?
    {
        guard !ticketID.isEmpty else { return nil }
        return try read { db in
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT format, issuer, ticket_id, device, used_at, recorded_at FROM fleet_first_use
                    WHERE issuer = ? AND ticket_id = ? AND format IN (?, '') ORDER BY used_at LIMIT 1
                    """,
                arguments: [issuer, Data(ticketID), format?.rawValue ?? ""])
            return row.map {
                FleetFirstUseRecord(
                    format: $0["format"], issuer: $0["issuer"], ticketID: Array($0["ticket_id"] as Data),
                    device: $0["device"],
                    usedAt: Date(timeIntervalSince1970: TimeInterval($0["used_at"] as Int64) / 1000),
                    recordedAt: ($0["recorded_at"] as Int64?).map {
                        Date(timeIntervalSince1970: TimeInterval($0) / 1000)
                    })
            }
        }
    }

    /// A date in Unix milliseconds, clamped to what an `Int64` holds: the dates here were range-checked where they
    /// were read (years 1-9999), and a conversion never traps.
    private static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite else { return value > 0 ? .max : .min }
        if value >= 9.2e18 { return .max }
        if value <= -9.2e18 { return .min }
        return Int64(value)
    }
}
