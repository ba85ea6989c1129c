import FareCore
import Foundation
import GRDB
import ValidationAPI

extension TrustStore {
    /// The cursor of the fleet's first uses (the server's clock, Unix milliseconds); 0 before the first page.
    public func fleetFirstUseCursor() throws(StoreError) -> Int64 {
        try read { db in
            try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'first_use_cursor'").flatMap {
                Int64($0)
            } ?? 0
        }
    }

    /// Applies one page of the fleet's first uses (as the server sent them, each issuer named as verification matches
    /// it) in one transaction: the entries are kept (one already held is
    /// left as it is), the withdrawn ones are forgotten, the cursor moves to `next`, and first uses recorded before
    /// `forgetBefore` are dropped (by the server's record time; by their use for entries without one).
    ///
    /// A withdrawal comes after the entries it names in the server's order, so it is applied after the page's
    /// entries: a page that holds both a claim and its withdrawal leaves nothing.
    ///
    /// - Returns: The entries that were new.
    @discardableResult
    public func applyFleetFirstUses(
        _ entries: [FleetFirstUse], withdrawals: [FirstUseWithdrawal] = [], next: Int64,
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
                        entry.format, entry.issuer, Data(entry.ticketID.bytes), entry.device,
                        Self.milliseconds(entry.usedAt),
                        entry.recordedAt.map(Self.milliseconds),
                    ])
                added += db.changesCount
            }
            for withdrawal in withdrawals {
                try db.execute(
                    sql: """
                        DELETE FROM fleet_first_use WHERE issuer = ? AND ticket_id = ? AND format = ? AND device = ?
                        """,
                    arguments: [
                        withdrawal.issuer, Data(withdrawal.ticketID.bytes), withdrawal.format, withdrawal.device,
                    ])
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
        -> FleetFirstUse?
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
                FleetFirstUse(
                    format: $0["format"], issuer: $0["issuer"], ticketID: TicketID(Array($0["ticket_id"] as Data)),
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
