import FareCore
import Foundation
import ValidationAPI

/// What a blocklist import on the server did.
public enum ServerBlocklistImport: Sendable, Equatable {
    /// The list was imported: `added` entries are new or changed (a VDV entry's instance or lock mode), `removed`
    /// are no longer on it; `replaced` is the version held before, if any. Each is one logged change.
    case imported(added: Int, removed: Int, replaced: String?)
    /// The server holds this version already: nothing changed.
    case unchanged(version: String)
}

extension ServerSchema {
    /// Version 7 (after main's 5, key scope, and 6, inspections by device): the published blocklists (VDV-KA, DTVG
    /// UIC). `blocklist` holds each list's current version, `blocklist_entry` its entries (a VDV entry by type,
    /// organisation and number, `item` being the number in decimal; a DTVG entry by RICS in `org_id` and ticket id
    /// in `item`), each with the number of the change that made it, so that snapshots page over them as over
    /// revocations. `blocklist_import` holds a new version while it is compared with the current one. The change
    /// log gains the entry's columns.
    static func blocklistStatements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        let entryColumns = """
            list TEXT NOT NULL,
                entry_type TEXT NOT NULL,
                org_id \(integer) NOT NULL,
                item TEXT NOT NULL,
                instance_num \(integer) NOT NULL,
                lock_mode INTEGER NOT NULL
            """
        return [
            """
            CREATE TABLE blocklist (
                list TEXT PRIMARY KEY,
                version TEXT NOT NULL,
                imported_at \(integer) NOT NULL
            )
            """,
            """
            CREATE TABLE blocklist_entry (
                \(entryColumns),
                sequence \(integer) NOT NULL,
                PRIMARY KEY (list, entry_type, org_id, item)
            )
            """,
            "CREATE INDEX blocklist_entry_by_sequence ON blocklist_entry (sequence)",
            """
            CREATE TABLE blocklist_import (
                \(entryColumns),
                PRIMARY KEY (list, entry_type, org_id, item)
            )
            """,
            "ALTER TABLE revocation_change ADD COLUMN list TEXT",
            "ALTER TABLE revocation_change ADD COLUMN entry_type TEXT",
            "ALTER TABLE revocation_change ADD COLUMN org_id \(integer)",
            "ALTER TABLE revocation_change ADD COLUMN item TEXT",
            "ALTER TABLE revocation_change ADD COLUMN instance_num \(integer)",
            "ALTER TABLE revocation_change ADD COLUMN lock_mode INTEGER",
            "ALTER TABLE revocation_change ADD COLUMN list_version TEXT",
        ]
    }
}

/// A blocklist entry in the server's columns.
struct BlocklistRow: Sendable, Equatable {
    var list: String
    var entryType: String
    var orgID: Int64
    var item: String
    var instance: Int64
    var lockMode: Int64

    init(_ entry: BlocklistEntry) {
        list = entry.list.rawValue
        switch entry {
        case .vdv(let vdv):
            entryType = vdv.item.rawValue
            orgID = Int64(vdv.organisation)
            item = String(vdv.number)
            instance = vdv.instance
            lockMode = Int64(vdv.lockMode.rawValue)
        case .dtvg(let dtvg):
            entryType = ""
            orgID = Int64(dtvg.rics)
            item = dtvg.ticketID
            instance = 0
            lockMode = 0
        }
    }

    /// The entry these columns hold; `nil` when they hold none (a damaged row).
    static func entry(
        list: String, entryType: String, orgID: Int64, item: String, instance: Int64, lockMode: Int64
    ) -> BlocklistEntry? {
        switch BlocklistKind(rawValue: list) {
        case .vdvKA:
            guard let type = VDVBlocklistItem(rawValue: entryType), let organisation = UInt16(exactly: orgID),
                let number = UInt32(item), let mode = BlocklistLockMode(rawValue: Int(clamping: lockMode))
            else { return nil }
            return .vdv(
                VDVBlocklistEntry(
                    item: type, organisation: organisation, number: number, instance: instance, lockMode: mode))
        case .dtvgUIC:
            guard let rics = UInt32(exactly: orgID) else { return nil }
            return .dtvg(DTVGBlocklistEntry(rics: rics, ticketID: item))
        case nil:
            return nil
        }
    }

    /// The entry of a row that selected `list, entry_type, org_id, item, instance_num, lock_mode`.
    static func entry(_ row: SQLRow) throws -> BlocklistEntry {
        guard
            let entry = entry(
                list: try row.text("list"), entryType: try row.text("entry_type"), orgID: try row.integer("org_id"),
                item: try row.text("item"), instance: try row.integer("instance_num"),
                lockMode: try row.integer("lock_mode"))
        else {
            throw SQLReadError(column: "blocklist_entry", expected: "a blocklist entry")
        }
        return entry
    }
}

/// The identity of a blocklist entry in the change log: a newer change of the same entry replaces the older.
struct BlocklistEntryKey: Hashable {
    var list: String
    var entryType: String
    var orgID: Int64
    var item: String

    init(_ entry: BlocklistEntry) {
        let row = BlocklistRow(entry)
        list = row.list
        entryType = row.entryType
        orgID = row.orgID
        item = row.item
    }
}

extension SQLServerStore {
    /// Imports a published blocklist: the entries of `version` replace those of the version held, as logged
    /// changes (removals for entries no longer on the list, additions for new entries and VDV entries whose
    /// instance or lock mode changed) in one transaction, so validators receive only the difference.
    ///
    /// - Parameters:
    ///   - entries: The list's entries, each once (VDV: the highest instance of each number).
    ///   - force: Import even when the server holds this version, or a newer one.
    /// - Throws: `.conflict` for an older version than the one held (nothing changed), `.invalidInput` for an
    ///   entry named twice or of another list.
    public func importBlocklist(
        _ list: BlocklistKind, version: BlocklistVersion, entries: [BlocklistEntry], force: Bool = false,
        at date: Date = Date()
    ) async throws(ServerError) -> ServerBlocklistImport {
        var rows = entries.map(BlocklistRow.init)
        // In key order: duplicates are found as neighbours, and the staging table is filled in its own order.
        rows.sort { ($0.entryType, $0.orgID, $0.item) < ($1.entryType, $1.orgID, $1.item) }
        for (index, row) in rows.enumerated() {
            guard row.list == list.rawValue else {
                throw ServerError(code: .invalidInput, message: "An entry of another list was given with the \(list).")
            }
            guard !row.item.contains("\0") else {
                throw ServerError(code: .invalidInput, message: "A blocklist entry holds a NUL character.")
            }
            if index > 0, rows[index - 1].entryType == row.entryType, rows[index - 1].orgID == row.orgID,
                rows[index - 1].item == row.item
            {
                throw ServerError(
                    code: .invalidInput,
                    message: "The \(list.displayName) names \(entries.first { BlocklistRow($0) == row } ?? entries[0]) "
                        + "twice (duplicate rows); nothing changed.")
            }
        }
        let staged = rows
        let versionText = version.text
        let location = executor.locationDescription
        do {
            return try await executor.write { [executor] session in
                let held = try await session.query("SELECT version FROM blocklist WHERE list = ?", list.rawValue)
                    .first?.text("version")
                if let held, !force {
                    let heldVersion = try? BlocklistVersion(parsing: held, for: list)
                    if heldVersion == version { return .unchanged(version: held) }
                    if let heldVersion, version < heldVersion {
                        throw ServerError(
                            code: .conflict,
                            message: "The \(list.displayName) of version \(versionText) is older than version \(held) "
                                + "held; nothing changed (--force imports it anyway).")
                    }
                }
                try await session.execute("DELETE FROM blocklist_import")
                try await executor.insertBlocklistImport(staged, in: session)
                let missing = """
                    NOT EXISTS (SELECT 1 FROM blocklist_import i WHERE i.list = e.list AND i.entry_type = e.entry_type
                        AND i.org_id = e.org_id AND i.item = e.item)
                    """
                let removed = try await Self.logBlocklistChanges(
                    action: "remove", source: "blocklist_entry e", condition: "e.list = ? AND \(missing)",
                    list: list, in: session)
                if removed.count > 0 {
                    try await session.execute(
                        """
                        DELETE FROM blocklist_entry WHERE list = ? AND NOT EXISTS (SELECT 1 FROM blocklist_import i
                            WHERE i.list = blocklist_entry.list AND i.entry_type = blocklist_entry.entry_type
                            AND i.org_id = blocklist_entry.org_id AND i.item = blocklist_entry.item)
                        """,
                        list.rawValue)
                }
                let new = """
                    NOT EXISTS (SELECT 1 FROM blocklist_entry c WHERE c.list = e.list AND c.entry_type = e.entry_type
                        AND c.org_id = e.org_id AND c.item = e.item AND c.instance_num = e.instance_num
                        AND c.lock_mode = e.lock_mode)
                    """
                let added = try await Self.logBlocklistChanges(
                    action: "add", source: "blocklist_import e", condition: "e.list = ? AND \(new)", list: list,
                    in: session)
                if added.count > 0 {
                    try await session.execute(
                        """
                        INSERT INTO blocklist_entry (list, entry_type, org_id, item, instance_num, lock_mode, sequence)
                        SELECT list, entry_type, org_id, item, instance_num, lock_mode, sequence FROM revocation_change
                        WHERE sequence >= ? AND sequence <= ?
                        ON CONFLICT (list, entry_type, org_id, item) DO UPDATE SET instance_num = excluded.instance_num,
                            lock_mode = excluded.lock_mode, sequence = excluded.sequence
                        """,
                        added.first, added.last)
                }
                let sequence = try await Self.takeChangeNumbers(1, in: session)
                try await session.execute(
                    """
                    INSERT INTO revocation_change (sequence, kind, action, issuer, list, list_version)
                    VALUES (?, 'blocklist-version', 'add', '', ?, ?)
                    """,
                    sequence, list.rawValue, versionText)
                try await session.execute(
                    """
                    INSERT INTO blocklist (list, version, imported_at) VALUES (?, ?, ?)
                    ON CONFLICT (list) DO UPDATE SET version = excluded.version, imported_at = excluded.imported_at
                    """,
                    list.rawValue, versionText, date.unixMilliseconds)
                try await session.execute("DELETE FROM blocklist_import")
                return .imported(added: added.count, removed: removed.count, replaced: held)
            }
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(
                code: .storageFailure,
                message: "Could not import the \(list.displayName) in \(location): \(executor.explain(error)).",
                cause: error)
        }
    }

    /// Logs one change of `action` for every row of `source` meeting `condition` (whose one placeholder is the
    /// list), numbered in key order from fresh change numbers; returns the numbers taken (none: count 0).
    private static func logBlocklistChanges(
        action: String, source: String, condition: String, list: BlocklistKind, in session: any SQLSession
    ) async throws -> (count: Int, first: Int64, last: Int64) {
        let count =
            try await session.query("SELECT count(*) AS n FROM \(source) WHERE \(condition)", list.rawValue).first?
            .integer("n") ?? 0
        guard count > 0 else { return (0, 0, 0) }
        let last = try await takeChangeNumbers(Int(count), in: session)
        let first = last - count + 1
        try await session.execute(
            """
            INSERT INTO revocation_change (sequence, kind, action, issuer, list, entry_type, org_id, item, instance_num,
                lock_mode)
            SELECT ? + row_number() OVER (ORDER BY e.entry_type, e.org_id, e.item) - 1, 'blocklist', ?,
                CAST(e.org_id AS TEXT), e.list, e.entry_type, e.org_id, e.item, e.instance_num, e.lock_mode
            FROM \(source) WHERE \(condition)
            """,
            first, action, list.rawValue)
        return (Int(count), first, last)
    }

    /// The blocklists the server distributes, with their versions.
    public func blocklists() async throws(ServerError) -> [PublishedBlocklist] {
        do {
            return try await executor.read { session in
                try await Self.publishedBlocklists(in: session)
            }
        } catch {
            throw ServerError(
                code: .storageFailure,
                message:
                    "Could not read the blocklists in \(executor.locationDescription): \(executor.explain(error)).",
                cause: error)
        }
    }

    /// Every blocklist's current version, in list order.
    static func publishedBlocklists(in session: any SQLSession) async throws -> [PublishedBlocklist] {
        try await session.query("SELECT list, version FROM blocklist").compactMap { row in
            guard let list = BlocklistKind(rawValue: try row.text("list")) else { return nil }
            return PublishedBlocklist(list: list, version: try row.text("version"))
        }.sorted { $0.list.rawValue < $1.list.rawValue }
    }

    /// The blocklist entry that names a ticket of `format` (`vdv-ka`, `uic-918-3`, `uic-918-9`) with `issuer` and
    /// `ticketID` as a validator read them, matched as validators match (see `BlocklistKey`): a VDV-KA
    /// entitlement by organisation and entitlement number, a UIC ticket by RICS (as a number) and ticket id.
    public func blocklistRevocation(format: String, issuer: String, ticketID: [UInt8]) async throws(ServerError)
        -> BlocklistRevocation?
    {
        switch TicketFormat(name: format) {
        case .vdvKA:
            guard let organisation = UInt16(issuer), ticketID.count == 4 else { return nil }
            let number = ticketID.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            return try await blocklistEntry(
                list: .vdvKA, entryType: VDVBlocklistItem.entitlement.rawValue, orgID: Int64(organisation),
                item: String(number))
        case .uic9183, .uic9189:
            let digits = issuer.drop { $0 == "0" }
            guard !issuer.isEmpty, issuer.utf8.count <= 9, issuer.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                let rics = Int64(digits.isEmpty ? "0" : String(digits)), !ticketID.isEmpty,
                let text = String(validating: ticketID, as: UTF8.self)
            else { return nil }
            return try await blocklistEntry(list: .dtvgUIC, entryType: "", orgID: rics, item: text)
        default:
            return nil
        }
    }

    /// The entry of `list` with this key, with the list's version.
    private func blocklistEntry(
        list: BlocklistKind, entryType: String, orgID: Int64, item: String
    ) async throws(ServerError) -> BlocklistRevocation? {
        guard !item.contains("\0") else { return nil }
        do {
            return try await executor.read { session in
                guard
                    let row = try await session.query(
                        """
                        SELECT e.list, e.entry_type, e.org_id, e.item, e.instance_num, e.lock_mode, b.version
                        FROM blocklist_entry e JOIN blocklist b ON b.list = e.list
                        WHERE e.list = ? AND e.entry_type = ? AND e.org_id = ? AND e.item = ?
                        """,
                        list.rawValue, entryType, orgID, item
                    ).first
                else { return nil }
                return BlocklistRevocation(version: try row.text("version"), entry: try BlocklistRow.entry(row))
            }
        } catch {
            throw ServerError(
                code: .storageFailure,
                message: "Could not look up the blocklists in \(executor.locationDescription): "
                    + "\(executor.explain(error)).",
                cause: error)
        }
    }
}

extension SQLExecutor {
    /// One statement per entry, prepared once by the driver's statement cache.
    func insertBlocklistImportRows(_ rows: [BlocklistRow], in session: any SQLSession) async throws {
        for row in rows {
            try await session.execute(
                """
                INSERT INTO blocklist_import (list, entry_type, org_id, item, instance_num, lock_mode)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
                row.list, row.entryType, row.orgID, row.item, row.instance, row.lockMode)
        }
    }
}
