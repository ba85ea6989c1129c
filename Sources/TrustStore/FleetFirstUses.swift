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

    public init(format: String, issuer: String, ticketID: [UInt8], device: String, usedAt: Date) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.device = device
        self.usedAt = usedAt
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
    /// left as it is), the cursor moves to `next`, and first uses from before `forgetBefore` are dropped.
    ///
    /// - Returns: The entries that were new.
    @discardableResult
    public func applyFleetFirstUses(_ entries: [FleetFirstUseRecord], next: Int64, forgetBefore: Date)
        throws(StoreError)
        -> Int
    {
        try write { db in
            var added = 0
            for entry in entries {
                try db.execute(
                    sql: """
                        INSERT INTO fleet_first_use (format, issuer, ticket_id, device, used_at)
                        VALUES (?, ?, ?, ?, ?) ON CONFLICT (issuer, ticket_id, format) DO NOTHING
                        """,
                    arguments: [
                        entry.format, entry.issuer, Data(entry.ticketID), entry.device, Self.milliseconds(entry.usedAt),
                    ])
                added += db.changesCount
            }
            try db.execute(
                sql: "DELETE FROM fleet_first_use WHERE used_at < ?", arguments: [Self.milliseconds(forgetBefore)])
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
                    SELECT format, issuer, ticket_id, device, used_at FROM fleet_first_use
                    WHERE issuer = ? AND ticket_id = ? AND format IN (?, '') ORDER BY used_at LIMIT 1
                    """,
                arguments: [issuer, Data(ticketID), format?.rawValue ?? ""])
            return row.map {
                FleetFirstUseRecord(
                    format: $0["format"], issuer: $0["issuer"], ticketID: Array($0["ticket_id"] as Data),
                    device: $0["device"],
                    usedAt: Date(timeIntervalSince1970: TimeInterval($0["used_at"] as Int64) / 1000))
            }
        }
    }

    private static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }
}
