import FareCore
import Foundation
import GRDB
import Verification

/// What became of a trusted time offered to the floor (`TrustStore.raiseTrustedTimeFloor`).
public enum FloorRaise: Sendable, Equatable {
    /// The floor moved forward to it.
    case raised
    /// The floor kept in the store is already at or past it.
    case notNewer
    /// It lies ahead of the device clock by more than the tolerance, by this many seconds: not taken, because a
    /// floor in the future would doubt every verdict until the real time caught up with it (the device clock is
    /// behind, or the server's is ahead; the caller logs it).
    case refusedAhead(by: TimeInterval)
}

extension TrustStore: TrustedTimeFloorSource {
    /// The `meta` row of the trusted-time floor: `"<Unix milliseconds> <source>"`, so that one statement can
    /// compare and move it (SQLite reads the leading number of the text as the integer).
    static let clockFloorName = "clock_floor"

    /// How long the floor read from the store serves before it is read again: a raise by another process sharing
    /// the store (`farecheck sync` beside the daemon) counts within this time; one by this process at once.
    public static let floorRecheckInterval = Duration.seconds(1)

    /// The trusted-time floor now: the latest of the release date, the newest inspection in the journal, and what
    /// the store keeps from sync (signing times of accepted key bundles and revocation deltas, the `Date` of the
    /// validation server's replies).
    ///
    /// Read for every verdict, so from memory: the journal's newest inspection is kept there as it is appended,
    /// and the store's floor is read again once `floorRecheckInterval` has passed (an indexed read through the
    /// pool costs as much as a revocation look-up, far too much for a value that changes a few times a day).
    ///
    /// - Throws: `StoreError` when the store cannot be read.
    public func trustedTimeFloor() throws(StoreError) -> TrustedTimeFloor? {
        var floor = TrustedTimeFloor.release
        if let newest = inspectionJournal.newestInspectedAt {
            floor = floor.raised(to: TrustedTimeFloor(instant: newest, source: .journal))
        }
        return floor.raised(to: try recentStoredFloor())
    }

    /// The store's floor from memory, or read again when older than `floorRecheckInterval`.
    private func recentStoredFloor() throws(StoreError) -> TrustedTimeFloor? {
        let now = ContinuousClock.now
        let recent = storedFloor.withLock { cached -> TrustedTimeFloor?? in
            guard let cached, now - cached.readAt < Self.floorRecheckInterval else { return .none }
            return .some(cached.floor)
        }
        if let recent { return recent }
        let read = try storedTimeFloor()
        return storedFloor.withLock { cached in
            // A raise by this process while the store was read is not lost: the floor only goes forward.
            let floor = read.map { $0.raised(to: cached?.floor) } ?? cached?.floor
            cached = (floor, now)
            return floor
        }
    }

    /// The floor the store itself keeps (from sync), without the journal and the release date; `nil` before any.
    public func storedTimeFloor() throws(StoreError) -> TrustedTimeFloor? {
        let text = try read { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM meta WHERE name = ?"), arguments: [Self.clockFloorName])
        }
        guard let text else { return nil }
        let parts = text.split(separator: " ", maxSplits: 1)
        guard let millis = parts.first.flatMap({ Int64($0) }) else { return nil }
        // A source this farecheck does not name (written by a newer one) still counts as a trusted time.
        let source = parts.count > 1 ? TrustedTimeSource(rawValue: String(parts[1])) : nil
        return TrustedTimeFloor(
            instant: Date(timeIntervalSince1970: TimeInterval(millis) / 1000), source: source ?? .serverReply)
    }

    /// Offers a trusted time to the floor: taken only if it is later than the floor kept (the floor never goes
    /// back, also when two processes raise it at once: one statement compares and writes) and not ahead of
    /// `wallClock` by more than `tolerance` seconds.
    ///
    /// - Parameters:
    ///   - instant: The trusted time: a signing time of an accepted bundle or delta, a server reply's `Date`.
    ///   - source: Where it comes from.
    ///   - wallClock: The device clock now.
    ///   - tolerance: How far ahead of the device clock a trusted time may be (`clock_floor_tolerance`).
    /// - Throws: `StoreError` when the store cannot be written.
    @discardableResult
    public func raiseTrustedTimeFloor(
        to instant: Date, source: TrustedTimeSource, wallClock: Date = Date(), tolerance: TimeInterval
    ) throws(StoreError) -> FloorRaise {
        let ahead = instant.timeIntervalSince(wallClock)
        if ahead > max(0, tolerance) { return .refusedAhead(by: ahead) }
        let millis = Int64((instant.timeIntervalSince1970 * 1000).rounded(.down))
        let value = "\(millis) \(source.rawValue)"
        let changed = try write { db in
            try db.execute(
                sql: """
                    INSERT INTO meta(name, value) VALUES (?, ?)
                    ON CONFLICT(name) DO UPDATE SET value = excluded.value
                    WHERE CAST(excluded.value AS INTEGER) > CAST(meta.value AS INTEGER)
                    """,
                arguments: [Self.clockFloorName, value])
            return db.changesCount > 0
        }
        let raised = TrustedTimeFloor(instant: Date(timeIntervalSince1970: TimeInterval(millis) / 1000), source: source)
        storedFloor.withLock { cached in
            if changed {
                cached = (raised.raised(to: cached?.floor), cached?.readAt ?? .now)
            } else {
                // Another process holds a later one: read it with the next verdict.
                cached = nil
            }
        }
        return changed ? .raised : .notNewer
    }
}
