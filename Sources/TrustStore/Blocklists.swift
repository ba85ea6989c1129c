import FareCore
import Foundation
import GRDB
import GRDBSQLite
import TicketFormats
import Verification

/// Where a blocklist in the store came from: imported on this validator, or brought by sync. The two are kept
/// apart, as revocations are: a local import never touches what sync brought, and a full sync snapshot never
/// removes a local list.
public enum BlocklistOrigin: String, Sendable, Hashable, CaseIterable {
    /// `farecheck revoke --vdv-blocklist` / `--dtvg-blocklist`.
    case local
    /// The agency's server, through signed revocation deltas.
    case sync
}

/// A blocklist the store holds.
public struct BlocklistStatus: Sendable, Equatable {
    public var list: BlocklistKind
    public var origin: BlocklistOrigin
    /// The list's version (`BlocklistVersion.text`).
    public var version: String
    /// When it was imported or synced.
    public var importedAt: Date
    /// How many entries of the list the store holds (VDV: one per type, organisation and number).
    public var entryCount: Int
}

/// What an import did.
public enum BlocklistImportOutcome: Sendable, Equatable {
    /// The list was imported, replacing `replaced` (the version held before, if any), with this many entries.
    case imported(entries: Int, replaced: String?)
    /// The store holds this version already: nothing changed.
    case unchanged(version: String)
}

extension TrustStore {
    /// Imports a published blocklist of `list` and `version`, replacing the list of that kind imported before, in
    /// one transaction: a file that turns out bad half-way (the `feed` throws) leaves the store as it was.
    ///
    /// - Parameters:
    ///   - force: Import even when the store holds this version, or a newer one, already.
    ///   - feed: Reads the file, calling `add` for each entry with its row or line (for messages).
    /// - Returns: `.unchanged` when the same version is held (and `force` is not given).
    /// - Throws: `StoreError` `.outOfSequence` for an older version than the one held (nothing changed; `force`
    ///   imports it anyway); `.invalidRequest` for a duplicate entry or an error of `feed` (its message kept).
    @discardableResult
    public func importBlocklist(
        _ list: BlocklistKind, version: BlocklistVersion, force: Bool = false,
        feed: (_ add: (BlocklistEntry, _ position: Int) throws -> Void) throws -> Void
    ) throws(StoreError) -> BlocklistImportOutcome {
        let path = self.path
        do {
            return try writeBulk { db in
                let held = try Self.blocklistVersion(db, list, .local)
                if let held, !force {
                    let heldVersion = try? BlocklistVersion(parsing: held, for: list)
                    if heldVersion == version { return .unchanged(version: held) }
                    if let heldVersion, version < heldVersion {
                        throw StoreError(
                            .outOfSequence,
                            "The \(list.displayName) of version \(version) is older than version \(held) held; "
                                + "nothing changed (--force imports it anyway)",
                            path: path)
                    }
                }
                var writer = try BlocklistWriter(db, list: list, origin: .local)
                try writer.removeAll()
                try feed { entry, position in try writer.insert(entry, position: position) }
                try Self.setBlocklistVersion(db, list, .local, version.text)
                try Self.trustChanged(db)
                return .imported(entries: writer.inserted, replaced: held)
            }
        } catch let error as StoreError {
            throw error
        } catch let error as FormatError {
            throw StoreError(.invalidRequest, error.message, path: path)
        } catch let error as DuplicateBlocklistEntry {
            throw StoreError(.invalidRequest, error.message, path: path)
        } catch {
            throw Self.classifyBlocklistError(error, path: path)
        }
    }

    /// The blocklists the store holds, by list and origin.
    public func blocklists() throws(StoreError) -> [BlocklistStatus] {
        try read { db in
            try Row.fetchAll(db, sql: "SELECT list, source, version, imported_at FROM blocklist ORDER BY list, source")
                .compactMap { row -> BlocklistStatus? in
                    guard let list = BlocklistKind(rawValue: row["list"]),
                        let origin = BlocklistOrigin(rawValue: row["source"])
                    else { return nil }
                    let table = list == .vdvKA ? "vdv_blocklist_entry" : "dtvg_blocklist_entry"
                    let count =
                        try Int.fetchOne(
                            db, sql: "SELECT count(*) FROM \(table) WHERE source = ?", arguments: [origin.rawValue])
                        ?? 0
                    return BlocklistStatus(
                        list: list, origin: origin, version: row["version"],
                        importedAt: Date(timeIntervalSince1970: TimeInterval(row["imported_at"] as Int64) / 1000),
                        entryCount: count)
                }
        }
    }

    /// Every entry of `list` the store holds from `origin`, in key order (tests, status).
    public func blocklistEntries(_ list: BlocklistKind, origin: BlocklistOrigin) throws(StoreError) -> [BlocklistEntry]
    {
        try read { db in
            switch list {
            case .vdvKA:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT type, org_id, number, instance_num, lock_mode FROM vdv_blocklist_entry "
                        + "WHERE source = ? ORDER BY type, org_id, number",
                    arguments: [origin.rawValue]
                ).compactMap { row in
                    guard let item = VDVBlocklistItem(rawValue: row["type"]),
                        let mode = BlocklistLockMode(rawValue: row["lock_mode"])
                    else { return nil }
                    return .vdv(
                        VDVBlocklistEntry(
                            item: item, organisation: row["org_id"], number: row["number"],
                            instance: row["instance_num"], lockMode: mode))
                }
            case .dtvgUIC:
                return try Row.fetchAll(
                    db,
                    sql: "SELECT rics, ticket_id FROM dtvg_blocklist_entry WHERE source = ? ORDER BY rics, ticket_id",
                    arguments: [origin.rawValue]
                ).map { row in
                    .dtvg(
                        DTVGBlocklistEntry(
                            rics: row["rics"], ticketID: String(decoding: row["ticket_id"] as Data, as: UTF8.self)))
                }
            }
        }
    }

    /// Runs `body` in one immediate transaction with a large page cache (a list's million rows), its commit
    /// synced as every store write is. The body may be a non-`Sendable` closure: it runs on this thread.
    func writeBulk<T>(_ body: (Database) throws -> T) throws -> T {
        try pool.writeWithoutTransaction { db in
            let cacheSize = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
            try db.execute(sql: "PRAGMA cache_size = -\(Self.largePageCacheKiB)")
            defer { try? db.execute(sql: "PRAGMA cache_size = \(cacheSize)") }
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }

    static func blocklistVersion(_ db: Database, _ list: BlocklistKind, _ origin: BlocklistOrigin) throws -> String? {
        try String.fetchOne(
            db, sql: "SELECT version FROM blocklist WHERE list = ? AND source = ?",
            arguments: [list.rawValue, origin.rawValue])
    }

    static func setBlocklistVersion(
        _ db: Database, _ list: BlocklistKind, _ origin: BlocklistOrigin, _ version: String, at date: Date = Date()
    ) throws {
        try db.execute(
            sql: """
                INSERT INTO blocklist (list, source, version, imported_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (list, source) DO UPDATE SET version = excluded.version, imported_at = excluded.imported_at
                """,
            arguments: [list.rawValue, origin.rawValue, version, Int64((date.timeIntervalSince1970 * 1000).rounded())])
    }

    private static func classifyBlocklistError(_ error: any Error, path: String) -> StoreError {
        StoreError.remedied(classifyBlocklistCause(error, path: path))
    }

    private static func classifyBlocklistCause(_ error: any Error, path: String) -> StoreError {
        if let error = error as? DatabaseError, error.resultCode == .SQLITE_FULL {
            return StoreError(.ioFailure, "The disk is full; nothing was imported", path: path, underlying: error)
        }
        if let error = error as? DatabaseError {
            return StoreError(.ioFailure, "The store failed; nothing was imported", path: path, underlying: error)
        }
        return StoreError(
            .ioFailure, "The store failed; nothing was imported", path: path,
            underlying: StoreError.Cause(description: String(describing: error)))
    }
}

/// A list that names one entry twice.
struct DuplicateBlocklistEntry: Error {
    var message: String
}

/// Writes the entries of one list and origin with statements bound through SQLite's C API.
struct BlocklistWriter {
    let db: Database
    let list: BlocklistKind
    let origin: BlocklistOrigin
    private let insertStatement: SQLiteStatement
    private(set) var inserted = 0

    init(_ db: Database, list: BlocklistKind, origin: BlocklistOrigin, replacing: Bool = false) throws {
        self.db = db
        self.list = list
        self.origin = origin
        let verb = replacing ? "INSERT OR REPLACE" : "INSERT"
        let sql =
            list == .vdvKA
            ? "\(verb) INTO vdv_blocklist_entry (type, org_id, number, source, instance_num, lock_mode) "
                + "VALUES (?, ?, ?, ?, ?, ?)"
            : "\(verb) INTO dtvg_blocklist_entry (rics, ticket_id, source) VALUES (?, ?, ?)"
        insertStatement = try SQLiteStatement(db.sqliteConnection!, sql)
    }

    private var table: String { list == .vdvKA ? "vdv_blocklist_entry" : "dtvg_blocklist_entry" }

    /// Removes every entry of the list and origin: the whole table at once when no other origin has entries.
    func removeAll() throws {
        // Entries of another origin, found by the entries themselves (not by a version row, which a damaged sync
        // could lack).
        let others =
            try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM \(table) WHERE source != ?)", arguments: [origin.rawValue])
            ?? true
        if !others {
            // No WHERE: SQLite drops the table's pages at once instead of deleting row by row.
            try db.execute(sql: "DELETE FROM \(table)")
        } else {
            try db.execute(sql: "DELETE FROM \(table) WHERE source = ?", arguments: [origin.rawValue])
        }
    }

    /// Inserts one entry; a second entry for the same ticket is refused with `DuplicateBlocklistEntry`.
    mutating func insert(_ entry: BlocklistEntry, position: Int) throws {
        do {
            switch entry {
            case .vdv(let vdv):
                guard list == .vdvKA else { throw DuplicateBlocklistEntry(message: "a VDV entry in the DTVG list") }
                try insertStatement.bind(1, vdv.item.rawValue)
                try insertStatement.bind(2, Int64(vdv.organisation))
                try insertStatement.bind(3, Int64(vdv.number))
                try insertStatement.bind(4, origin.rawValue)
                try insertStatement.bind(5, vdv.instance)
                try insertStatement.bind(6, Int64(vdv.lockMode.rawValue))
            case .dtvg(let dtvg):
                guard list == .dtvgUIC else { throw DuplicateBlocklistEntry(message: "a DTVG entry in the VDV list") }
                try insertStatement.bind(1, Int64(dtvg.rics))
                try insertStatement.bind(2, blob: Array(dtvg.ticketID.utf8))
                try insertStatement.bind(3, origin.rawValue)
            }
            try insertStatement.execute()
            inserted += 1
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            let place = list == .vdvKA ? "row \(position)" : "line \(position)"
            throw DuplicateBlocklistEntry(
                message: "\(place) names \(entry) again: the \(list.displayName) holds duplicate rows")
        }
    }

    /// The order of the entry tables' keys: VDV by type, organisation and number; DTVG by RICS and ticket id bytes.
    static func precedes(_ lhs: BlocklistEntry, _ rhs: BlocklistEntry) -> Bool {
        switch (lhs, rhs) {
        case (.vdv(let a), .vdv(let b)):
            return (a.item.rawValue, a.organisation, a.number) < (b.item.rawValue, b.organisation, b.number)
        case (.dtvg(let a), .dtvg(let b)):
            return a.rics != b.rics ? a.rics < b.rics : a.ticketID.utf8.lexicographicallyPrecedes(b.ticketID.utf8)
        case (.vdv, .dtvg): return true
        case (.dtvg, .vdv): return false
        }
    }

    /// Removes one entry by its key.
    func remove(_ entry: BlocklistEntry) throws {
        switch entry {
        case .vdv(let vdv):
            try db.cachedStatement(
                sql: "DELETE FROM vdv_blocklist_entry WHERE type = ? AND org_id = ? AND number = ? AND source = ?"
            ).execute(arguments: [vdv.item.rawValue, Int64(vdv.organisation), Int64(vdv.number), origin.rawValue])
        case .dtvg(let dtvg):
            try db.cachedStatement(
                sql: "DELETE FROM dtvg_blocklist_entry WHERE rics = ? AND ticket_id = ? AND source = ?"
            ).execute(arguments: [Int64(dtvg.rics), Data(dtvg.ticketID.utf8), origin.rawValue])
        }
    }
}
