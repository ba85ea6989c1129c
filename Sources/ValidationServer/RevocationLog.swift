import FareCore
import Foundation
import ValidationAPI

/// One logged change of the revocation list: a ticket or key revoked (again) or lifted.
///
/// Every change gets the next number of one counter, taken inside the transaction that makes the change,
/// so numbers follow commit order and a validator that has applied up to `n` has missed nothing below it.
public struct RevocationChange: Sendable, Equatable {
    /// What changed.
    public enum Entry: Sendable, Equatable {
        /// A ticket was revoked (or revoked again with another reason).
        case ticketRevoked(RevokedTicket)
        /// A ticket's revocation was lifted.
        case ticketRestored(TicketReference)
        /// A key was revoked.
        case keyRevoked(RevokedKey)
        /// A key's revocation was lifted.
        case keyRestored(KeyReference)
        /// An entry was put on a published blocklist (or changed: a VDV entry's instance or lock mode).
        case blocklistEntryAdded(BlocklistEntry)
        /// An entry was taken off its blocklist (a newer version no longer names it).
        case blocklistEntryRemoved(BlocklistEntry)
        /// A blocklist's version changed (an import). Every page names the current versions; this change moves
        /// the cursor so that validators apply a page even when the new version changed no entry.
        case blocklistVersion(PublishedBlocklist)
    }

    /// The change's number.
    public var sequence: Int64
    /// What changed.
    public var entry: Entry

    /// Makes a change.
    public init(sequence: Int64, entry: Entry) {
        self.sequence = sequence
        self.entry = entry
    }
}

/// How the server answers `GET /v1/revocations?cursor=N`: a delta of logged changes, or a full snapshot.
public enum RevocationLog {
    /// Whether a validator at `cursor` needs a full snapshot.
    ///
    /// - Parameters:
    ///   - cursor: The last change number the validator applied (0: none).
    ///   - latest: The newest change number.
    ///   - prunedThrough: The newest change number no longer in the log (0: none dropped).
    /// - Returns: True for a fresh validator (cursor 0), one whose next changes were dropped, and one ahead of
    ///   the server (its cursor came from another server, or the server was restored from a backup).
    public static func needsSnapshot(cursor: Int64, latest: Int64, prunedThrough: Int64) -> Bool {
        cursor <= 0 || cursor < prunedThrough || cursor > latest
    }

    /// Folds the changes after `cursor` into a delta: for each ticket and key only its last change counts,
    /// so a ticket revoked and restored since the cursor is listed once, as removed.
    ///
    /// - Parameters:
    ///   - cursor: The validator's cursor.
    ///   - latest: The newest change number, the delta's `next`.
    ///   - changes: The changes with numbers above `cursor`, in any order.
    public static func delta(since cursor: Int64, latest: Int64, changes: [RevocationChange]) -> RevocationDelta {
        var lastTicketChange: [TicketReference: RevocationChange] = [:]
        var lastKeyChange: [KeyReference: RevocationChange] = [:]
        var lastBlocklistChange: [BlocklistEntryKey: RevocationChange] = [:]
        for change in changes.sorted(by: { $0.sequence < $1.sequence }) {
            switch change.entry {
            case .ticketRevoked(let entry): lastTicketChange[entry.reference] = change
            case .ticketRestored(let reference): lastTicketChange[reference] = change
            case .keyRevoked(let entry): lastKeyChange[entry.reference] = change
            case .keyRestored(let reference): lastKeyChange[reference] = change
            case .blocklistEntryAdded(let entry), .blocklistEntryRemoved(let entry):
                lastBlocklistChange[BlocklistEntryKey(entry)] = change
            case .blocklistVersion: break
            }
        }
        var delta = RevocationDelta(from: cursor, next: latest, full: false)
        // Listed in change order, so that the same log always gives the same document.
        for change in lastTicketChange.values.sorted(by: { $0.sequence < $1.sequence }) {
            switch change.entry {
            case .ticketRevoked(let entry): delta.addedTickets.append(entry)
            case .ticketRestored(let reference): delta.removedTickets.append(reference)
            default: break
            }
        }
        for change in lastKeyChange.values.sorted(by: { $0.sequence < $1.sequence }) {
            switch change.entry {
            case .keyRevoked(let entry): delta.addedKeys.append(entry)
            case .keyRestored(let reference): delta.removedKeys.append(reference)
            default: break
            }
        }
        for change in lastBlocklistChange.values.sorted(by: { $0.sequence < $1.sequence }) {
            switch change.entry {
            case .blocklistEntryAdded(let entry): delta.addedBlocklistEntries.append(entry)
            case .blocklistEntryRemoved(let entry): delta.removedBlocklistEntries.append(entry)
            default: break
            }
        }
        return delta
    }

    /// What to read for one page of `GET /v1/revocations?cursor=N`.
    public enum PagePlan: Sendable, Equatable {
        /// Logged changes with numbers above `after`, folded (an ordinary delta).
        case changes(after: Int64)
        /// Current revocations ordered by the number of the change that made them, starting above `after` and
        /// ending at `through` (nil: all of them). `full` on the first page of a snapshot.
        case current(after: Int64, through: Int64?, full: Bool)
    }

    /// Decides how to serve `cursor`.
    ///
    /// A snapshot is served as the current revocations ordered by their change numbers. Its first page is
    /// `full`; its `next` is the number of the last entry included. When that number is still in the log
    /// (at or above `prunedThrough`), the next page is an ordinary delta from it: every current entry above it
    /// is in the log as its last add, and every change since the first page is there too. Below the pruned
    /// point the number alone would read as a stale cursor (which needs a snapshot again), so the page hands
    /// out its negation instead: a negative cursor continues the snapshot with the current entries up to the
    /// pruned point, after which the ordinary delta from there takes over. Changes made while a validator
    /// pages carry numbers above its first page's, so it misses none of them, unless the log is pruned past
    /// them in between (prune with a margin of more changes than happen during one sync).
    ///
    /// - Parameters:
    ///   - cursor: The cursor the validator sent.
    ///   - latest: The newest change number.
    ///   - prunedThrough: The newest change number no longer in the log.
    public static func plan(cursor: Int64, latest: Int64, prunedThrough: Int64) -> PagePlan {
        if cursor < 0 {
            let position = cursor == .min ? Int64.max : -cursor
            if position > latest { return .current(after: 0, through: nil, full: true) }
            if position < prunedThrough { return .current(after: position, through: prunedThrough, full: false) }
            return .changes(after: position)
        }
        if needsSnapshot(cursor: cursor, latest: latest, prunedThrough: prunedThrough) {
            return .current(after: 0, through: nil, full: true)
        }
        return .changes(after: cursor)
    }

    /// One page of an ordinary delta.
    ///
    /// - Parameters:
    ///   - cursor: The cursor the validator sent (the delta's `from`).
    ///   - latest: The newest change number.
    ///   - changes: The logged changes after the cursor in number order, at most `limit + 1` of them (one more
    ///     than a page holds tells whether another page follows).
    ///   - limit: The most changes a page covers.
    public static func changesPage(
        cursor: Int64, latest: Int64, changes: [RevocationChange], limit: Int
    ) -> RevocationDelta {
        guard changes.count > limit, let last = changes.prefix(limit).last else {
            return delta(since: cursor, latest: latest, changes: changes)
        }
        var page = delta(since: cursor, latest: last.sequence, changes: Array(changes.prefix(limit)))
        page.more = true
        return page
    }

    /// One page of current revocations, as `plan` asked with `.current`.
    ///
    /// - Parameters:
    ///   - cursor: The cursor the validator sent (the page's `from`).
    ///   - latest: The newest change number.
    ///   - prunedThrough: The newest change number no longer in the log.
    ///   - entries: Current revocations (`.ticketRevoked`, `.keyRevoked`) numbered by the change that made them,
    ///     in the plan's range and in any order, at most `limit + 1` of tickets and as many of keys.
    ///   - through: The plan's end of range (nil: none).
    ///   - full: Whether this is the first page of a snapshot.
    ///   - limit: The most entries a page holds.
    public static func currentPage(
        cursor: Int64, latest: Int64, prunedThrough: Int64, entries: [RevocationChange], through: Int64?,
        full: Bool, limit: Int
    ) -> RevocationDelta {
        let ordered = entries.sorted { $0.sequence < $1.sequence }
        let included = Array(ordered.prefix(limit))
        let next: Int64
        let more: Bool
        if ordered.count > limit, let last = included.last {
            next = last.sequence < prunedThrough ? -last.sequence : last.sequence
            more = true
        } else if let through {
            // The rest of the snapshot is in the log: continue with an ordinary delta from the pruned point.
            next = through
            more = through < latest
        } else {
            next = latest
            more = false
        }
        var page = delta(since: cursor, latest: next, changes: included)
        page.full = full
        page.more = more
        return page
    }

    /// A full snapshot of the current revocations.
    public static func snapshot(
        cursor: Int64, latest: Int64, tickets: [RevokedTicket], keys: [RevokedKey]
    ) -> RevocationDelta {
        RevocationDelta(from: cursor, next: latest, full: true, addedTickets: tickets, addedKeys: keys)
    }
}

extension RevocationChange {
    /// Reads a change from the columns of the `revocation_change` table.
    init(
        sequence: Int64, kind: String, action: String, issuer: String, ticketID: String?, format: String?,
        keyID: String?, reason: String?, revokedAt: Int64?, blocklist: BlocklistChangeColumns = BlocklistChangeColumns()
    ) throws(ServerError) {
        let revokedDate = Date(unixMilliseconds: revokedAt ?? 0)
        switch (kind, action) {
        case ("blocklist", _):
            guard let entry = blocklist.entry else { throw Self.damaged(sequence) }
            self.init(
                sequence: sequence, entry: action == "add" ? .blocklistEntryAdded(entry) : .blocklistEntryRemoved(entry)
            )
        case ("blocklist-version", _):
            guard let name = blocklist.list, let list = BlocklistKind(rawValue: name), let version = blocklist.version
            else { throw Self.damaged(sequence) }
            self.init(sequence: sequence, entry: .blocklistVersion(PublishedBlocklist(list: list, version: version)))
        case ("ticket", _):
            guard let ticketID, let bytes = [UInt8](hex: ticketID) else { throw Self.damaged(sequence) }
            self.init(
                sequence: sequence,
                entry: action == "add"
                    ? .ticketRevoked(
                        RevokedTicket(
                            issuer: IssuerID(issuer), ticketID: TicketID(bytes), reason: reason, revokedAt: revokedDate)
                    )
                    : .ticketRestored(TicketReference(issuer: IssuerID(issuer), ticketID: TicketID(bytes))))
        case ("key", _):
            guard let format, let keyID else { throw Self.damaged(sequence) }
            self.init(
                sequence: sequence,
                entry: action == "add"
                    ? .keyRevoked(
                        RevokedKey(
                            format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID), reason: reason,
                            revokedAt: revokedDate)
                    )
                    : .keyRestored(KeyReference(format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID))))
        default:
            throw Self.damaged(sequence)
        }
    }

    private static func damaged(_ sequence: Int64) -> ServerError {
        ServerError(
            code: .storageFailure, message: "Revocation change \(sequence) in the database is damaged (unknown kind).")
    }
}

/// The blocklist columns of a `revocation_change` row (NULL for other kinds).
struct BlocklistChangeColumns {
    var list: String?
    var entryType: String?
    var orgID: Int64?
    var item: String?
    var instance: Int64?
    var lockMode: Int64?
    var version: String?

    init() {}

    init(_ row: SQLRow) throws {
        list = try row.optionalText("list")
        entryType = try row.optionalText("entry_type")
        orgID = try row.optionalInteger("org_id")
        item = try row.optionalText("item")
        instance = try row.optionalInteger("instance_num")
        lockMode = try row.optionalInteger("lock_mode")
        version = try row.optionalText("list_version")
    }

    /// The entry the columns name, if they name one.
    var entry: BlocklistEntry? {
        guard let list, let entryType, let orgID, let item, let instance, let lockMode else { return nil }
        return BlocklistRow.entry(
            list: list, entryType: entryType, orgID: orgID, item: item, instance: instance, lockMode: lockMode)
    }
}
