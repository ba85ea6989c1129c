import FareCore
import Foundation
import GRDB
import GRDBSQLite
import Verification

/// Where this validator stands with the validation API: what it holds, and when it last heard from it.
public struct SyncState: Sendable, Equatable {
    /// The sequence number of the key bundle applied last; `nil` before the first.
    public var keyBundleSequence: Int64?
    /// The revocation cursor to ask from next; 0 before the first delta.
    public var revocationCursor: Int64
    /// When a sync round last completed.
    public var lastSyncAt: Date?
}

/// A revoked ticket or key to remove, by its identity.
public struct RevocationReference: Sendable, Hashable {
    public var issuer: IssuerID
    /// The ticket id (tickets), or empty for keys.
    public var ticketID: TicketID
    /// The key family (keys), or `nil` for tickets.
    public var family: KeyFamily?
    /// The key id (keys), or empty for tickets.
    public var keyID: KeyID

    public static func ticket(issuer: IssuerID, ticketID: TicketID) -> RevocationReference {
        RevocationReference(issuer: issuer, ticketID: ticketID, family: nil, keyID: "")
    }

    public static func key(family: KeyFamily, issuer: IssuerID, keyID: KeyID) -> RevocationReference {
        RevocationReference(issuer: issuer, ticketID: [], family: family, keyID: keyID)
    }
}

extension TrustStore {
    /// The key `source` of keys that came from a signed bundle.
    public static let syncSource = "sync"

    /// What the store holds from sync.
    public func syncState() throws(StoreError) -> SyncState {
        try read { db in
            func value(_ name: String) throws -> String? {
                try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = ?", arguments: [name])
            }
            return SyncState(
                keyBundleSequence: try value("key_bundle_sequence").flatMap { Int64($0) },
                revocationCursor: try value("revocation_cursor").flatMap { Int64($0) } ?? 0,
                lastSyncAt: try value("last_sync_at").flatMap { Int64($0) }.map {
                    Date(timeIntervalSince1970: TimeInterval($0) / 1000)
                })
        }
    }

    /// Notes a completed sync round.
    public func recordSync(at date: Date) throws(StoreError) {
        try write { db in
            try Self.setMeta(db, "last_sync_at", String(Int64((date.timeIntervalSince1970 * 1000).rounded())))
        }
    }

    /// Applies a verified key bundle in one transaction: its keys and VDV authorities replace those an earlier
    /// bundle brought (keys added locally stay; a VDV authority imported locally is neither replaced nor
    /// removed by a bundle naming the same CHR). Refused, with nothing changed, when `sequence` is lower than
    /// the one held.
    @discardableResult
    public func applyKeyBundle(
        sequence: Int64, keys: [KeyRecord], vdvAuthorities: [VDVAuthority] = []
    ) throws(StoreError) -> (added: Int, updated: Int, removed: Int) {
        let vdvRecords = vdvAuthorities.map { VDVAuthorityRecord($0, source: Self.syncSource) }
        let path = self.path
        return try write { db in
            let held = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'key_bundle_sequence'")
                .flatMap { Int64($0) }
            if let held, sequence < held {
                throw StoreError(
                    .outOfSequence, "Key bundle \(sequence) is older than bundle \(held) already applied", path: path)
            }
            var added = 0
            var updated = 0
            var kept = Set<String>()
            for var record in keys {
                record.source = Self.syncSource
                if try record.exists(db) { updated += 1 } else { added += 1 }
                try record.save(db)
                kept.insert("\(record.family.storeName)/\(record.issuer)/\(record.keyID)")
            }
            var removed = 0
            for stale in try KeyRecord.filter(Column("source") == Self.syncSource).fetchAll(db)
            where !kept.contains("\(stale.family.storeName)/\(stale.issuer)/\(stale.keyID)") {
                try stale.delete(db)
                removed += 1
            }
            let vdv = try Self.replaceSyncedVDVAuthorities(with: vdvRecords, in: db)
            try Self.setMeta(db, "key_bundle_sequence", String(sequence))
            try Self.trustChanged(db)
            return (added + vdv.added, updated + vdv.updated, removed + vdv.removed)
        }
    }

    /// Applies a verified revocation delta in one transaction, and moves the cursor to `next`.
    ///
    /// A delta must start at the cursor held (`from`); a `full` snapshot replaces every revocation sync
    /// brought before (local revocations stay). Readers (verification) go on meanwhile: WAL.
    ///
    /// Entries are written in key order, and a large page gets a larger page cache for its transaction: ids
    /// arrive in random order, and inserting them so into an index larger than the cache made SQLite spill
    /// and rewrite the same index pages many times per transaction.
    ///
    /// Blocklist entries (VDV-KA, DTVG) sync brought are kept apart from lists imported here (origin `sync`):
    /// `blocklists` names the server's current version of each list (a full snapshot replaces them all), and
    /// `addedBlocklistEntries` replace the entry with the same key, `removedBlocklistEntries` are taken off.
    public func applyRevocations(
        from: Int64, next: Int64, full: Bool, addedTickets: [TicketRevocationRecord],
        addedKeys: [KeyRevocationRecord], removed: [RevocationReference],
        blocklists: [(list: BlocklistKind, version: String)] = [], addedBlocklistEntries: [BlocklistEntry] = [],
        removedBlocklistEntries: [BlocklistEntry] = []
    ) throws(StoreError) {
        let blocklists = blocklists.map { SyncedBlocklist(list: $0.list, version: $0.version) }
        guard let pacing = bulkWritePacing else {
            try applyRevocationsTransaction(
                from: from, next: next, full: full, addedTickets: addedTickets, addedKeys: addedKeys, removed: removed,
                blocklists: blocklists, addedBlocklistEntries: addedBlocklistEntries,
                removedBlocklistEntries: removedBlocklistEntries, checkpointing: true)
            return
        }
        // The page in one transaction as before, committed without a checkpoint; then its log and the file written
        // back in paced steps, at the idle I/O priority where the scheduler has one.
        try Self.withIdleIOPriority { () throws(StoreError) in
            try applyRevocationsTransaction(
                from: from, next: next, full: full, addedTickets: addedTickets, addedKeys: addedKeys, removed: removed,
                blocklists: blocklists, addedBlocklistEntries: addedBlocklistEntries,
                removedBlocklistEntries: removedBlocklistEntries, checkpointing: false)
            checkpointPaced(pacing)
        }
    }

    /// `applyRevocations`' transaction; `checkpointing: false` leaves the log to the caller.
    private func applyRevocationsTransaction(
        from: Int64, next: Int64, full: Bool, addedTickets: [TicketRevocationRecord],
        addedKeys: [KeyRevocationRecord], removed: [RevocationReference], blocklists: [SyncedBlocklist],
        addedBlocklistEntries: [BlocklistEntry], removedBlocklistEntries: [BlocklistEntry], checkpointing: Bool
    ) throws(StoreError) {
        let path = self.path
        try writeUnsynced(checkpointing: checkpointing) { db in
            let held =
                try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'revocation_cursor'")
                .flatMap { Int64($0) } ?? 0
            if !full, from != held {
                throw StoreError(
                    .outOfSequence, "The revocation delta starts at \(from), but this store is at \(held)", path: path)
            }
            if full {
                try db.execute(sql: "DELETE FROM revoked_ticket WHERE source = ?", arguments: [Self.syncSource])
                try db.execute(sql: "DELETE FROM revoked_key WHERE source = ?", arguments: [Self.syncSource])
            }
            let large = addedTickets.count + removed.count > Self.largePage
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            if large { try db.execute(sql: "PRAGMA cache_size = -\(Self.largePageCacheKiB)") }
            // Back to the usual cache afterwards, so that a daemon does not keep the large one.
            defer { if large { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") } }
            let addedTickets = addedTickets.sorted { Self.precedes($0.issuer, $0.ticketID, $1.issuer, $1.ticketID) }
            let removed = removed.sorted { Self.precedes($0.issuer, $0.ticketID, $1.issuer, $1.ticketID) }
            try Self.insertSynced(addedTickets, into: db)
            let insertKey = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO revoked_key(format, issuer, key_id, reason, revoked_at, source) "
                    + "VALUES (?, ?, ?, ?, ?, ?)")
            for key in addedKeys {
                try insertKey.execute(arguments: [
                    key.family.storeName, key.issuer, key.keyID, key.reason, key.revokedAt, Self.syncSource,
                ])
            }
            let deleteTicket = try db.cachedStatement(
                sql: "DELETE FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?")
            let deleteKey = try db.cachedStatement(
                sql: "DELETE FROM revoked_key WHERE format = ? AND issuer = ? AND key_id = ?")
            for (index, reference) in removed.enumerated() {
                ScansInFlight.shared.giveWay(atRow: index)
                if let family = reference.family {
                    try deleteKey.execute(arguments: [family.storeName, reference.issuer, reference.keyID])
                } else {
                    try deleteTicket.execute(arguments: [reference.issuer, Data(reference.ticketID.bytes)])
                }
            }
            try Self.applySyncedBlocklists(
                db, full: full, versions: blocklists, added: addedBlocklistEntries, removed: removedBlocklistEntries)
            try Self.setMeta(db, "revocation_cursor", String(next))
            try Self.trustChanged(db)
        }
    }

    /// A list's version as a delta names it.
    private struct SyncedBlocklist: Sendable {
        var list: BlocklistKind
        var version: String
    }

    /// The blocklist part of a revocation page, inside its transaction: the lists' versions, then the entries
    /// removed and added (in key order, as the tables keep them).
    private static func applySyncedBlocklists(
        _ db: Database, full: Bool, versions: [SyncedBlocklist], added: [BlocklistEntry], removed: [BlocklistEntry]
    ) throws {
        if full {
            try db.execute(sql: "DELETE FROM blocklist WHERE source = 'sync'")
            try db.execute(sql: "DELETE FROM vdv_blocklist_entry WHERE source = 'sync'")
            try db.execute(sql: "DELETE FROM dtvg_blocklist_entry WHERE source = 'sync'")
        }
        for version in versions {
            try setBlocklistVersion(db, version.list, .sync, version.version)
        }
        guard !added.isEmpty || !removed.isEmpty else { return }
        var writers: [BlocklistKind: BlocklistWriter] = [:]
        func writer(_ list: BlocklistKind) throws -> BlocklistWriter {
            if let writer = writers[list] { return writer }
            let writer = try BlocklistWriter(db, list: list, origin: .sync, replacing: true)
            writers[list] = writer
            return writer
        }
        // A scan in flight comes first, as between a page's ticket rows (`insertSynced`).
        for (index, entry) in removed.enumerated() {
            ScansInFlight.shared.giveWay(atRow: index)
            try writer(entry.list).remove(entry)
        }
        for (index, entry) in added.sorted(by: BlocklistWriter.precedes).enumerated() {
            ScansInFlight.shared.giveWay(atRow: index)
            var entryWriter = try writer(entry.list)
            try entryWriter.insert(entry, position: 0)
            writers[entry.list] = entryWriter
        }
    }

    /// Inserts synced ticket revocations with one statement bound through SQLite's C API: GRDB's arguments
    /// (an array of existentials made into `DatabaseValue`s per row) cost more than the insert itself.
    private static func insertSynced(_ tickets: [TicketRevocationRecord], into db: Database) throws {
        guard !tickets.isEmpty else { return }
        let connection = db.sqliteConnection
        var statement: OpaquePointer?
        let sql =
            "INSERT OR REPLACE INTO revoked_ticket(issuer, ticket_id, reason, revoked_at, source) VALUES (?, ?, ?, ?, ?)"
        var code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        func failure(_ code: Int32) -> DatabaseError {
            DatabaseError(
                resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)), sql: sql)
        }
        guard code == SQLITE_OK, let statement else { throw failure(code) }
        // Every value is bound as a copy: the Swift buffers do not outlive the call.
        func bindText(_ index: Int32, _ text: String) -> Int32 { SQLiteBinding.text(statement, index, text) }
        code = bindText(5, syncSource)
        guard code == SQLITE_OK else { throw failure(code) }
        for (index, ticket) in tickets.enumerated() {
            // A scan in flight comes first (readers go on beside this transaction: WAL).
            ScansInFlight.shared.giveWay(atRow: index)
            code = bindText(1, ticket.issuer.rawValue)
            if code == SQLITE_OK {
                code = SQLiteBinding.blob(statement, 2, ticket.ticketID.bytes)
            }
            if code == SQLITE_OK {
                code =
                    ticket.reason.map { bindText(3, $0) }
                    ?? sqlite3_bind_null(statement, 3)
            }
            if code == SQLITE_OK { code = sqlite3_bind_int64(statement, 4, ticket.revokedAt) }
            guard code == SQLITE_OK else { throw failure(code) }
            code = sqlite3_step(statement)
            guard code == SQLITE_DONE else { throw failure(code) }
            sqlite3_reset(statement)
        }
    }

    /// Entries above which a page gets `largePageCacheKiB` of page cache while it is applied.
    static let largePage = 2_000
    /// The page cache of a large page's transaction: room for the revocation index of a few million entries.
    static let largePageCacheKiB = 65_536

    /// The order of SQLite's index on (issuer, ticket_id): bytes compared as memcmp, shorter first on a tie.
    static func precedes(_ issuer: IssuerID, _ ticketID: TicketID, _ otherIssuer: IssuerID, _ otherTicketID: TicketID)
        -> Bool
    {
        if issuer != otherIssuer { return issuer.rawValue.utf8.lexicographicallyPrecedes(otherIssuer.rawValue.utf8) }
        return ticketID.bytes.lexicographicallyPrecedes(otherTicketID.bytes)
    }

    static func setMeta(_ db: Database, _ name: String, _ value: String) throws {
        try db.execute(
            sql: "INSERT INTO meta(name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            arguments: [name, value])
    }
}
