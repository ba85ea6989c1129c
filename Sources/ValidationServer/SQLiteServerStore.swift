import FareCore
import Foundation
import GRDB
import ValidationAPI

/// The server's store in one SQLite file (GRDB): WAL, `synchronous=FULL`, numbered migrations.
///
/// The default backend, so that `farecheck-server serve --db server.sqlite` works on a laptop.
public final class SQLiteServerStore: ServerStore {
    /// The database file.
    public let path: String
    private let pool: DatabasePool

    /// `sqlite`.
    public var backendName: String { "sqlite" }

    /// Opens the database at `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - create: Whether a missing file is created (`serve`, `init`); admin commands pass false, so that a
    ///     mistyped path is an error and not a new empty database.
    /// - Throws: `ServerError` with code `.missingDatabase`, `.cannotOpen` (not SQLite, another program's
    ///   database), or `.newerSchema`.
    public init(path: String, create: Bool) throws(ServerError) {
        self.path = path
        let exists = FileManager.default.fileExists(atPath: path)
        if !exists && !create {
            throw ServerError(
                code: .missingDatabase,
                message: "There is no server database at \(path). Create it with "
                    + "`farecheck-server init --db \(path)` (or start `farecheck-server serve --db \(path)`), "
                    + "or give the right --db.")
        }
        if exists {
            try Self.inspectExisting(path)
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.label = "farecheck-server.store"
        configuration.prepareDatabase { db in
            // An acknowledged inspection must survive power loss.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            try Self.migrator.migrate(pool)
        } catch {
            throw ServerError(code: .cannotOpen, message: "Cannot open the server database at \(path).", cause: error)
        }
    }

    /// Refuses, before writing anything, a file that is not SQLite, a database of another program (or the
    /// validator's own store), and one written by a newer farecheck-server.
    private static func inspectExisting(_ path: String) throws(ServerError) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw ServerError(code: .cannotOpen, message: "Cannot read the server database at \(path).")
        }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        try? handle.close()
        if !header.isEmpty && header != Data("SQLite format 3\0".utf8) {
            throw ServerError(
                code: .cannotOpen, message: "\(path) is not a SQLite database; refusing to touch it.")
        }
        guard !header.isEmpty else { return }
        var configuration = Configuration()
        configuration.readonly = true
        let state: (foreign: Bool, newer: Bool)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            state = try queue.read { db in
                let tableCount =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                guard try db.tableExists("grdb_migrations") else { return (tableCount > 0, false) }
                let applied = try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")
                if !applied.contains(where: { $0.hasPrefix(migrationPrefix) }) { return (true, false) }
                return (false, try migrator.hasBeenSuperseded(db))
            }
            try queue.close()
        } catch {
            throw ServerError(code: .cannotOpen, message: "Cannot read the server database at \(path).", cause: error)
        }
        if state.foreign {
            throw ServerError(
                code: .cannotOpen,
                message: "\(path) is a database of another program (or a validator's store), not a farecheck-server "
                    + "database; refusing to change it.")
        }
        if state.newer {
            throw ServerError(
                code: .newerSchema,
                message: "\(path) was written by a newer farecheck-server (unknown migrations); upgrade this one.")
        }
    }

    private static let migrationPrefix = "server-"

    /// The schema as numbered migrations. Never edit a shipped migration: add the next one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("server-v1") { db in
            for statement in ServerSchema.version1Statements(dialect: .sqlite) {
                try db.execute(sql: statement)
            }
        }
        migrator.registerMigration("server-v2-revocation-sequence") { db in
            for statement in ServerSchema.version2Statements(dialect: .sqlite) {
                try db.execute(sql: statement)
            }
        }
        migrator.registerMigration("server-v3-decided-by") { db in
            for statement in ServerSchema.version3Statements() {
                try db.execute(sql: statement)
            }
        }
        return migrator
    }

    // MARK: Devices

    public func addDevice(id: String, tokenHash: [UInt8], at date: Date) async throws(ServerError) {
        try await write("register device \(id)") { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM device WHERE id = ?", arguments: [id]) == true {
                throw ServerError(code: .conflict, message: "A device named \(id) is registered already.")
            }
            try db.execute(
                sql: "INSERT INTO device (id, token_hash, revoked, created_at) VALUES (?, ?, 0, ?)",
                arguments: [id, tokenHash.hexString, date.unixMilliseconds])
        }
    }

    public func revokeDevice(id: String) async throws(ServerError) -> Bool {
        try await write("revoke device \(id)") { db in
            try db.execute(sql: "UPDATE device SET revoked = 1 WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    public func devices() async throws(ServerError) -> [DeviceRecord] {
        try await read("list devices") { db in
            try Row.fetchAll(db, sql: "SELECT id, revoked, created_at FROM device ORDER BY id").map(Self.device)
        }
    }

    public func device(tokenHash: [UInt8]) async throws(ServerError) -> DeviceRecord? {
        try await read("look up a device") { db in
            try Row.fetchOne(
                db, sql: "SELECT id, revoked, created_at FROM device WHERE token_hash = ?",
                arguments: [tokenHash.hexString]
            ).map(Self.device)
        }
    }

    private static func device(_ row: Row) -> DeviceRecord {
        DeviceRecord(
            id: row["id"], revoked: row["revoked"], createdAt: Date(unixMilliseconds: row["created_at"]))
    }

    // MARK: Issuer keys and bundles

    public func putIssuerKey(_ key: BundleKey, at date: Date) async throws(ServerError) {
        try await write("store issuer key \(key.keyID)") { db in
            try db.execute(
                sql: """
                    INSERT INTO issuer_key (format, issuer, key_id, algorithm, spki, not_before, not_after, added_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (format, issuer, key_id) DO UPDATE SET algorithm = excluded.algorithm,
                        spki = excluded.spki, not_before = excluded.not_before, not_after = excluded.not_after,
                        added_at = excluded.added_at
                    """,
                arguments: [
                    key.format, key.issuer, key.keyID, key.algorithm, Data(key.spki).base64EncodedString(),
                    key.notBefore?.unixMilliseconds, key.notAfter?.unixMilliseconds, date.unixMilliseconds,
                ])
        }
    }

    public func removeIssuerKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        try await write("remove issuer key \(key.keyID)") { db in
            try db.execute(
                sql: "DELETE FROM issuer_key WHERE format = ? AND issuer = ? AND key_id = ?",
                arguments: [key.format, key.issuer, key.keyID])
            return db.changesCount > 0
        }
    }

    public func issuerKeys() async throws(ServerError) -> [BundleKey] {
        try await read("list issuer keys") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT format, issuer, key_id, algorithm, spki, not_before, not_after FROM issuer_key
                    ORDER BY format, issuer, key_id
                    """
            ).map { row in
                BundleKey(
                    format: row["format"], issuer: row["issuer"], keyID: row["key_id"], algorithm: row["algorithm"],
                    spki: Array(Data(base64Encoded: row["spki"] as String) ?? Data()),
                    notBefore: (row["not_before"] as Int64?).map(Date.init(unixMilliseconds:)),
                    notAfter: (row["not_after"] as Int64?).map(Date.init(unixMilliseconds:)))
            }
        }
    }

    public func latestBundle() async throws(ServerError) -> PublishedBundle? {
        try await read("read the key bundle") { db in
            try Row.fetchOne(
                db, sql: "SELECT sequence, issued_at, document FROM key_bundle ORDER BY sequence DESC LIMIT 1"
            ).map { row in
                PublishedBundle(
                    sequence: row["sequence"], issuedAt: Date(unixMilliseconds: row["issued_at"]),
                    document: Array((row["document"] as String).utf8))
            }
        }
    }

    public func storeBundle(_ bundle: PublishedBundle) async throws(ServerError) {
        try await write("store key bundle \(bundle.sequence)") { db in
            let newest = try Int64.fetchOne(db, sql: "SELECT max(sequence) FROM key_bundle") ?? 0
            guard bundle.sequence > newest else {
                throw ServerError(
                    code: .conflict,
                    message: "Key bundle \(newest) is published already; a new bundle needs a higher sequence "
                        + "than \(bundle.sequence) (another publish ran at the same time?). Publish again.")
            }
            try db.execute(
                sql: "INSERT INTO key_bundle (sequence, issued_at, document) VALUES (?, ?, ?)",
                arguments: [
                    bundle.sequence, bundle.issuedAt.unixMilliseconds, String(decoding: bundle.document, as: UTF8.self),
                ])
        }
    }

    // MARK: Revocations

    public func revokeTicket(_ entry: RevokedTicket) async throws(ServerError) {
        try await revokeTickets([entry])
    }

    public func revokeTickets(_ entries: [RevokedTicket]) async throws(ServerError) {
        try await write("revoke \(entries.count) tickets") { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, sequence) VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                        revoked_at = excluded.revoked_at, sequence = excluded.sequence
                    """)
            for entry in entries {
                let hex = entry.ticketID.hexString
                let sequence = try Self.logChange(
                    db, kind: "ticket", action: "add", issuer: entry.issuer, ticketID: hex, reason: entry.reason,
                    revokedAt: entry.revokedAt)
                try upsert.execute(arguments: [
                    entry.issuer, hex, entry.reason, entry.revokedAt.unixMilliseconds, sequence,
                ])
            }
        }
    }

    public func unrevokeTicket(_ ticket: TicketReference) async throws(ServerError) -> Bool {
        try await write("lift a ticket revocation") { db in
            let hex = ticket.ticketID.hexString
            try db.execute(
                sql: "DELETE FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?", arguments: [ticket.issuer, hex])
            guard db.changesCount > 0 else { return false }
            try Self.logChange(db, kind: "ticket", action: "remove", issuer: ticket.issuer, ticketID: hex)
            return true
        }
    }

    public func revokeKey(_ entry: RevokedKey) async throws(ServerError) {
        try await write("revoke key \(entry.keyID)") { db in
            let sequence = try Self.logChange(
                db, kind: "key", action: "add", issuer: entry.issuer, format: entry.format, keyID: entry.keyID,
                reason: entry.reason, revokedAt: entry.revokedAt)
            try db.execute(
                sql: """
                    INSERT INTO revoked_key (format, issuer, key_id, reason, revoked_at, sequence)
                    VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (format, issuer, key_id) DO UPDATE SET reason = excluded.reason,
                        revoked_at = excluded.revoked_at, sequence = excluded.sequence
                    """,
                arguments: [
                    entry.format, entry.issuer, entry.keyID, entry.reason, entry.revokedAt.unixMilliseconds, sequence,
                ])
        }
    }

    public func unrevokeKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        try await write("lift a key revocation") { db in
            try db.execute(
                sql: "DELETE FROM revoked_key WHERE format = ? AND issuer = ? AND key_id = ?",
                arguments: [key.format, key.issuer, key.keyID])
            guard db.changesCount > 0 else { return false }
            try Self.logChange(
                db, kind: "key", action: "remove", issuer: key.issuer, format: key.format, keyID: key.keyID)
            return true
        }
    }

    /// Takes the next change number and logs the change, in the caller's transaction; returns the number.
    @discardableResult
    private static func logChange(
        _ db: Database, kind: String, action: String, issuer: String, ticketID: String? = nil, format: String? = nil,
        keyID: String? = nil, reason: String? = nil, revokedAt: Date? = nil
    ) throws -> Int64 {
        let sequence = try Int64.fetchOne(
            db.cachedStatement(
                sql: "UPDATE server_counter SET value = value + 1 WHERE name = 'revocation_change' RETURNING value"))!
        try db.cachedStatement(
            sql: """
                INSERT INTO revocation_change
                    (sequence, kind, action, issuer, ticket_id, format, key_id, reason, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """
        ).execute(arguments: [
            sequence, kind, action, issuer, ticketID, format, keyID, reason, revokedAt?.unixMilliseconds,
        ])
        return sequence
    }

    public func ticketRevocation(_ ticket: TicketReference) async throws(ServerError) -> RevokedTicket? {
        try await read("look up a ticket revocation") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT issuer, ticket_id, reason, revoked_at FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?
                    """,
                arguments: [ticket.issuer, ticket.ticketID.hexString]
            ).map(Self.revokedTicket)
        }
    }

    public func keyRevocation(_ key: KeyReference) async throws(ServerError) -> RevokedKey? {
        try await read("look up a key revocation") { db in
            try Row.fetchOne(
                db,
                sql: """
                    SELECT format, issuer, key_id, reason, revoked_at FROM revoked_key
                    WHERE format = ? AND issuer = ? AND key_id = ?
                    """,
                arguments: [key.format, key.issuer, key.keyID]
            ).map(Self.revokedKey)
        }
    }

    public func revocationDelta(since cursor: Int64, limit: Int) async throws(ServerError) -> RevocationDelta {
        // One read transaction: a consistent snapshot of counter, log and lists.
        try await read("read revocations") { db in
            let latest = try Self.counter(db, "revocation_change")
            let prunedThrough = try Self.counter(db, "revocation_pruned_through")
            // One more than a page holds tells whether another page follows.
            let fetch = limit + 1
            switch RevocationLog.plan(cursor: cursor, latest: latest, prunedThrough: prunedThrough) {
            case .changes(let after):
                let changes = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT sequence, kind, action, issuer, ticket_id, format, key_id, reason, revoked_at
                        FROM revocation_change WHERE sequence > ? ORDER BY sequence LIMIT ?
                        """,
                    arguments: [after, fetch]
                ).map { row in
                    try RevocationChange(
                        sequence: row["sequence"], kind: row["kind"], action: row["action"], issuer: row["issuer"],
                        ticketID: row["ticket_id"], format: row["format"], keyID: row["key_id"],
                        reason: row["reason"], revokedAt: row["revoked_at"])
                }
                return RevocationLog.changesPage(cursor: cursor, latest: latest, changes: changes, limit: limit)
            case .current(let after, let through, let full):
                let upper = through ?? Int64.max
                let tickets = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT sequence, issuer, ticket_id, reason, revoked_at FROM revoked_ticket
                        WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?
                        """,
                    arguments: [after, upper, fetch]
                ).map { row in
                    RevocationChange(sequence: row["sequence"], entry: .ticketRevoked(Self.revokedTicket(row)))
                }
                let keys = try Row.fetchAll(
                    db,
                    sql: """
                        SELECT sequence, format, issuer, key_id, reason, revoked_at FROM revoked_key
                        WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?
                        """,
                    arguments: [after, upper, fetch]
                ).map { row in
                    RevocationChange(sequence: row["sequence"], entry: .keyRevoked(Self.revokedKey(row)))
                }
                return RevocationLog.currentPage(
                    cursor: cursor, latest: latest, prunedThrough: prunedThrough, entries: tickets + keys,
                    through: through, full: full, limit: limit)
            }
        }
    }

    public func pruneRevocationChanges(keepingLast count: Int) async throws(ServerError) -> Int {
        try await write("prune the revocation log") { db in
            let latest = try Self.counter(db, "revocation_change")
            let through = latest - Int64(max(0, count))
            guard through > 0 else { return 0 }
            try db.execute(sql: "DELETE FROM revocation_change WHERE sequence <= ?", arguments: [through])
            let dropped = db.changesCount
            try db.execute(
                sql: "UPDATE server_counter SET value = max(value, ?) WHERE name = 'revocation_pruned_through'",
                arguments: [through])
            return dropped
        }
    }

    private static func counter(_ db: Database, _ name: String) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT value FROM server_counter WHERE name = ?", arguments: [name]) ?? 0
    }

    private static func revokedTicket(_ row: Row) -> RevokedTicket {
        RevokedTicket(
            issuer: row["issuer"], ticketID: [UInt8](hex: row["ticket_id"] as String) ?? [], reason: row["reason"],
            revokedAt: Date(unixMilliseconds: row["revoked_at"]))
    }

    private static func revokedKey(_ row: Row) -> RevokedKey {
        RevokedKey(
            format: row["format"], issuer: row["issuer"], keyID: row["key_id"], reason: row["reason"],
            revokedAt: Date(unixMilliseconds: row["revoked_at"]))
    }

    // MARK: Inspections

    public func storeInspections(
        _ records: [InspectionUpload], deviceID: String, receivedAt: Date
    ) async throws(ServerError) -> [String] {
        try await write("store \(records.count) inspections") { db in
            var ids: [String] = []
            var seen: Set<String> = []
            for record in records where seen.insert(record.id).inserted {
                try db.execute(
                    sql: """
                        INSERT INTO inspection (id, device_id, received_at, inspected_at, device, symbology,
                            payload_digest, format, issuer, ticket_id, verdict, reason, signature, warnings, inspector,
                            decided_by)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (id) DO NOTHING
                        """,
                    arguments: [
                        record.id, deviceID, receivedAt.unixMilliseconds, record.inspectedAt, record.device,
                        record.symbology, record.payloadDigest.hexString, record.format, record.issuer,
                        record.ticketID?.hexString, record.verdict, record.reason, record.signature, record.warnings,
                        record.inspector, record.decidedBy,
                    ])
                ids.append(record.id)
            }
            return ids
        }
    }

    public func inspections(limit: Int) async throws(ServerError) -> [StoredInspection] {
        try await read("list inspections") { db in
            try Row.fetchAll(
                db,
                sql: """
                    SELECT id, device_id, received_at, inspected_at, device, symbology, payload_digest, format, issuer,
                        ticket_id, verdict, reason, signature, warnings, inspector, decided_by
                    FROM inspection ORDER BY inspected_at DESC, id LIMIT ?
                    """,
                arguments: [limit]
            ).map { row in
                StoredInspection(
                    deviceID: row["device_id"], receivedAt: Date(unixMilliseconds: row["received_at"]),
                    record: InspectionUpload(
                        id: row["id"], inspectedAt: row["inspected_at"], device: row["device"],
                        symbology: row["symbology"],
                        payloadDigest: [UInt8](hex: row["payload_digest"] as String) ?? [], format: row["format"],
                        issuer: row["issuer"], ticketID: (row["ticket_id"] as String?).flatMap { [UInt8](hex: $0) },
                        verdict: row["verdict"], reason: row["reason"], signature: row["signature"],
                        warnings: row["warnings"], inspector: row["inspector"], decidedBy: row["decided_by"]))
            }
        }
    }

    public func checkHealth() async throws(ServerError) {
        try await read("check the database") { db in _ = try Int.fetchOne(db, sql: "SELECT 1") }
    }

    // MARK: Access

    private func read<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(ServerError) -> T {
        do {
            return try await pool.read(body)
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(code: .storageFailure, message: "Could not \(what) in \(path).", cause: error)
        }
    }

    private func write<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws(ServerError) -> T {
        do {
            return try await pool.write(body)
        } catch let error as ServerError {
            throw error
        } catch {
            throw ServerError(code: .storageFailure, message: "Could not \(what) in \(path).", cause: error)
        }
    }
}
