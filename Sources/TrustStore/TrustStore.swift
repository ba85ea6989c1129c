import FareCore
import Foundation
import GRDB
import Signatures
import Synchronization
import Verification

/// The validator's local store: one SQLite file holding trusted keys and revocations.
///
/// Opened in WAL mode so that readers (verification) never wait on the writer (sync, CLI).
/// The schema is a list of numbered migrations; a file from a newer farecheck, or a file that is
/// not a farecheck store, is refused and left exactly as it was.
public final class TrustStore: Sendable {
    /// The database file.
    public let path: String
    let pool: DatabasePool
    /// The connection of the verifier's revocation look-ups (``LookupConnection``).
    let lookups: LookupConnection<StoreLookup>
    /// The inspection journal, in its own file beside the store (see `InspectionJournal.paths(besideStore:)`).
    public let inspectionJournal: InspectionJournal
    /// The trusted-time floor kept in the store, as last read, and when (see `trustedTimeFloor()`).
    let storedFloor = Mutex<(floor: TrustedTimeFloor?, readAt: ContinuousClock.Instant)?>(nil)
    /// How a sync page's writes reach the disk (``BulkWritePacing``); `nil`: all at once, when SQLite checkpoints.
    public let bulkWritePacing: BulkWritePacing?

    /// The store path: `explicit` if given, else `$FARECHECK_DB`, else
    /// `$XDG_DATA_HOME/farecheck/farecheck.sqlite` (default `~/.local/share/…`).
    public static func resolvePath(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        if let fromEnvironment = environment["FARECHECK_DB"], !fromEnvironment.isEmpty { return fromEnvironment }
        let dataHome =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? NSHomeDirectory()) + "/.local/share"
        return dataHome + "/farecheck/farecheck.sqlite"
    }

    /// What opening a store does when there is no file at its path.
    public enum Missing: Sendable, Equatable {
        /// Creates it, and its directory: for what makes a store (importing or generating keys, the daemon, sync).
        case create
        /// Refuses with ``StoreError/Code/noStore``, creating nothing: for what reads a store, or changes what it
        /// holds, where a mistyped path would otherwise answer from a new, empty store.
        case refuse
    }

    /// Opens the store at `path`, with its journal beside it.
    ///
    /// A store of schema v3–v8 kept the journal in its own file: its inspections are copied into the journal file
    /// first, and only then does migration v9 drop them from the store, so an interrupted upgrade loses nothing.
    ///
    /// - Parameters:
    ///   - ifMissing: Whether a store that does not exist is created (with its directory) or refused.
    ///   - journal: Whether this process journals inspections (the journal and its reserve are created when
    ///     missing), or uses the journal only if it exists (``InspectionJournal/Role``).
    ///   - journalCheckpoints: Who checkpoints the journal's write-ahead log (the daemon: itself, off the verdict
    ///     path; see ``InspectionJournal/Checkpoints``).
    ///   - bulkWritePacing: How a sync page's writes reach the disk; `nil` leaves them to SQLite (one `fsync` of
    ///     everything at each checkpoint).
    public init(
        path: String, ifMissing: Missing = .create, journal: InspectionJournal.Role = .journals,
        journalReserveBytes: Int = InspectionJournal.defaultReserveBytes,
        journalCheckpoints: InspectionJournal.Checkpoints = .automatic,
        bulkWritePacing: BulkWritePacing? = .standard
    ) throws(StoreError) {
        self.path = path
        self.bulkWritePacing = bulkWritePacing
        let fileManager = FileManager.default
        if ifMissing == .refuse, !fileManager.fileExists(atPath: path) {
            throw StoreError(.noStore, "There is no store at this path", path: path)
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !fileManager.fileExists(atPath: directory) {
            do {
                // Owner and group only: the files inside are private (see PrivateFiles).
                try fileManager.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o750])
            } catch {
                throw StoreError(
                    .cannotOpen, "Cannot create the directory for the store", path: path, underlying: error)
            }
        }
        let existed = fileManager.fileExists(atPath: path)
        if existed, !fileManager.isReadableFile(atPath: path) {
            throw StoreError(.cannotOpen, "The store is not readable by this user", path: path)
        }
        if existed, try Self.isForeignFile(path) {
            throw StoreError(.notAStore, "The file is not a SQLite database; refusing to touch it", path: path)
        }
        if existed {
            try Self.inspectExisting(path)
        }
        // Created 0600 here rather than by SQLite (which would follow the umask, 0644 usually); an older store that
        // others can read is narrowed.
        try PrivateFiles.prepare(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(5)
        configuration.label = "farecheck.store"
        configuration.prepareDatabase { db in
            // (`synchronous = FULL` is set on the pool's writer once it is open: GRDB sets NORMAL after this runs.)
            // A new store gets 16 KiB pages (SQLite's default is 4 KiB): applying a sync page of 50,000 random
            // revocation ids rewrites most leaf pages of the revocation tree, and fewer, larger pages cut that
            // time by a third (measured with `farecheck bench sync`). Only an empty file takes it; an existing
            // store keeps its page size.
            if !existed { try db.execute(sql: "PRAGMA page_size = \(Self.newStorePageSize)") }
            WriteAheadLog.keepOnClose(db)
        }
        let journalPaths = InspectionJournal.paths(besideStore: path)
        inspectionJournal = try InspectionJournal(
            path: journalPaths.journal, reservePath: journalPaths.reserve, reserveBytes: journalReserveBytes,
            checkpoints: journalCheckpoints, role: journal)
        do {
            pool = try Self.openPool(path: path, configuration: configuration, journal: inspectionJournal)
            let applied = try pool.read { db in try Self.migrator.appliedIdentifiers(db) }
            if !applied.contains(Self.journalMovedMigration) {
                try Self.migrator.migrate(pool, upTo: Self.lastMigrationWithJournal)
                // Only inspections to keep make the journal file (a new store, migrated through v3–v8 first, has none).
                let holdsInspections = try pool.read { db in
                    try db.tableExists("inspection")
                        && Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM inspection)") == true
                }
                if holdsInspections {
                    try inspectionJournal.adopt(inspectionsOf: path)
                }
            }
            try Self.migrator.migrate(pool)
            // A reader opened before the last migrations (the check above) keeps the schema it read: a `SELECT *`
            // prepared there would name the columns of a table a migration rebuilt in their old order. Readers
            // are opened anew from here on.
            pool.invalidateReadOnlyConnections()
        } catch {
            throw Self.classify(error, path: path, opening: true)
        }
        lookups = LookupConnection(path: path) { error, opening in Self.classify(error, path: path, opening: opening) }
        try lookups.open()
    }

    /// Opens the store's pool. On a full disk (a daemon restarted while it is full), SQLite cannot create the
    /// write-ahead log and its index; the journal's reserve gives back some of its unused space, once, and the
    /// open is tried again, so that the validator starts and keeps inspecting (into the reserve).
    private static func openPool(
        path: String, configuration: Configuration, journal: InspectionJournal
    ) throws -> DatabasePool {
        do {
            return try DatabasePool(path: path, configuration: configuration).syncingEveryCommit()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_FULL {
            guard journal.releaseReserve(reserveGivenBackOnFullDisk) > 0 else { throw error }
            return try DatabasePool(path: path, configuration: configuration).syncingEveryCommit()
        }
    }

    /// What the journal's reserve gives back when the store cannot be opened on a full disk: room for the
    /// write-ahead-log index (32 KiB) and a few pages of log.
    static let reserveGivenBackOnFullDisk = 256 << 10

    /// The last migration of the schemas that kept the journal in the store file.
    static let lastMigrationWithJournal = "v8-revoked-ticket-without-rowid"
    /// The migration that dropped the journal from the store file.
    static let journalMovedMigration = "v9-journal-in-its-own-file"

    /// The page size of a new store file.
    static let newStorePageSize = 16_384

    /// Looks at an existing file read-only, before anything (even switching it to WAL) writes to it:
    /// a damaged file, another program's database or a newer schema is refused untouched.
    private static func inspectExisting(_ path: String) throws(StoreError) {
        var configuration = Configuration()
        configuration.readonly = true
        let verdict: (foreign: Bool, superseded: Bool)
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            verdict = try queue.read { db in
                let tableCount =
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table'") ?? 0
                guard try db.tableExists("grdb_migrations") else { return (tableCount > 0, false) }
                return (false, try migrator.hasBeenSuperseded(db))
            }
            try queue.close()
        } catch {
            throw classify(error, path: path, opening: true)
        }
        if verdict.foreign {
            throw StoreError(
                .notAStore, "The database holds tables but is not a farecheck store; refusing to change it", path: path)
        }
        if verdict.superseded {
            throw StoreError(
                .newerSchema,
                "The store was written by a newer farecheck (unknown schema migrations); upgrade farecheck or use another --db",
                path: path)
        }
    }

    /// A SQLite file starts with this 16-byte header; anything else non-empty is not ours to open.
    private static func isForeignFile(_ path: String) throws(StoreError) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw StoreError(.cannotOpen, "Cannot open the store for reading", path: path)
        }
        defer { try? handle.close() }
        let header = (try? handle.read(upToCount: 16)) ?? Data()
        if header.isEmpty { return false }
        return header != Data("SQLite format 3\0".utf8)
    }

    /// The schema, as numbered migrations. Never edit a shipped migration: add the next one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-keys-revocations") { db in
            try db.create(table: "key") { t in
                t.column("format", .text).notNull()
                t.column("issuer", .text).notNull()
                t.column("key_id", .text).notNull()
                t.column("algorithm", .text)
                t.column("spki", .blob).notNull()
                t.column("certificate", .blob)
                t.column("not_before", .integer)
                t.column("not_after", .integer)
                t.column("source", .text).notNull()
                t.column("added_at", .integer).notNull()
                t.primaryKey(["format", "issuer", "key_id"])
            }
            try db.create(table: "revoked_ticket") { t in
                t.column("issuer", .text).notNull()
                t.column("ticket_id", .blob).notNull()
                t.column("reason", .text)
                t.column("revoked_at", .integer).notNull()
                t.primaryKey(["issuer", "ticket_id"])
            }
            try db.create(table: "revoked_key") { t in
                t.column("format", .text).notNull()
                t.column("issuer", .text).notNull()
                t.column("key_id", .text).notNull()
                t.column("reason", .text)
                t.column("revoked_at", .integer).notNull()
                t.primaryKey(["format", "issuer", "key_id"])
            }
        }
        migrator.registerMigration("v2-key-list-details") { db in
            try db.alter(table: "key") { t in
                t.add(column: "issuer_name", .text)
                t.add(column: "version_type", .text)
            }
        }
        migrator.registerMigration("v3-inspection-journal") { _ in
            // Versions up to v8 kept the inspection journal in this file; it has its own file and its one schema
            // (`InspectionJournal.migrator`) since v9. A store those versions migrated holds their table, which `init`
            // copies into the journal before v9 drops it; a store made since never has one.
        }
        migrator.registerMigration("v4-staff") { db in
            // Inspectors who may log in on a handheld: a PIN is kept only as a salted PBKDF2 hash.
            try db.create(table: "staff") { t in
                t.column("staff_id", .text).primaryKey()
                t.column("name", .text)
                t.column("pin_salt", .blob).notNull()
                t.column("pin_hash", .blob).notNull()
                t.column("pin_iterations", .integer).notNull()
                t.column("added_at", .integer).notNull()
            }
        }
        migrator.registerMigration("v5-trust-lookups") { db in
            // The daemon looks keys up by id on every scan; without this the primary key (format, issuer, id)
            // cannot serve a lookup that does not name the issuer.
            try db.create(index: "key_by_id", on: "key", columns: ["format", "key_id"])
            // Small facts about the store itself, e.g. when the trust data last changed.
            try db.create(table: "meta") { t in
                t.column("name", .text).primaryKey()
                t.column("value", .text).notNull()
            }
        }
        migrator.registerMigration("v6-sync") { db in
            // Revocations learnt from the server are told apart from local ones, so a full snapshot replaces
            // only what sync brought.
            try db.alter(table: "revoked_ticket") { t in t.add(column: "source", .text) }
            try db.alter(table: "revoked_key") { t in t.add(column: "source", .text) }
        }
        migrator.registerMigration("v7-decided-by") { db in
            // Which verdict decided, in the table of a store up to v8 (see v3): added before its records are copied.
            if try db.tableExists("inspection") {
                try db.alter(table: "inspection") { t in t.add(column: "decided_by", .text) }
            }
        }
        migrator.registerMigration("v8-revoked-ticket-without-rowid") { db in
            // The revoked tickets kept in their primary key's b-tree alone (WITHOUT ROWID): an insert or a lookup
            // touches one b-tree instead of a rowid table and its index, and the file is a third smaller. A sync
            // page of 50,000 random ids rewrites most of this tree, so its size is most of the cost of applying.
            try db.execute(
                sql: """
                    CREATE TABLE revoked_ticket_v8 (
                        issuer TEXT NOT NULL,
                        ticket_id BLOB NOT NULL,
                        reason TEXT,
                        revoked_at INTEGER NOT NULL,
                        source TEXT,
                        PRIMARY KEY (issuer, ticket_id)
                    ) WITHOUT ROWID;
                    INSERT INTO revoked_ticket_v8 (issuer, ticket_id, reason, revoked_at, source)
                        SELECT issuer, ticket_id, reason, revoked_at, source FROM revoked_ticket ORDER BY issuer, ticket_id;
                    DROP TABLE revoked_ticket;
                    ALTER TABLE revoked_ticket_v8 RENAME TO revoked_ticket;
                    """)
        }
        migrator.registerMigration(journalMovedMigration) { db in
            // The journal moved to its own file (`InspectionJournal`), so that a sync transaction on this store
            // never holds up a scan's journal write. `init` copies the records over before this runs.
            try db.execute(sql: "DROP TABLE IF EXISTS inspection")
        }
        migrator.registerMigration("v10-vdv-authorities") { db in
            // VDV-KA certification authorities (the pinned root, sub-CAs), by their own holder reference.
            try db.create(table: "vdv_authority") { t in
                t.column("reference", .text).primaryKey()
                t.column("body", .blob).notNull()
                t.column("origin", .text).notNull()
                t.column("root", .text)
                t.column("source", .text).notNull()
                t.column("added_at", .integer).notNull()
            }
        }
        migrator.registerMigration("v11-key-scope") { db in
            // The UIC key list may name one issuer and key id several times, for different kinds of barcode
            // (versionType) and versions, each with its own key: they are told apart by both, never NULL ('' when
            // none), with `listed` telling a list entry that gives none from a key added by hand. Keys from a list
            // before this version keep their versionType and get an empty barcodeVersion until the list is imported
            // again; the key list's keyForged and allowedProductOwnerCodes are kept too.
            try db.execute(
                sql: """
                    CREATE TABLE key_v11 (
                        format TEXT NOT NULL,
                        issuer TEXT NOT NULL,
                        key_id TEXT NOT NULL,
                        version_type TEXT NOT NULL DEFAULT '',
                        barcode_version TEXT NOT NULL DEFAULT '',
                        listed INTEGER NOT NULL DEFAULT 0,
                        algorithm TEXT,
                        spki BLOB NOT NULL,
                        certificate BLOB,
                        not_before INTEGER,
                        not_after INTEGER,
                        source TEXT NOT NULL,
                        added_at INTEGER NOT NULL,
                        issuer_name TEXT,
                        key_forged INTEGER NOT NULL DEFAULT 0,
                        product_owners TEXT,
                        PRIMARY KEY (format, issuer, key_id, version_type, barcode_version)
                    );
                    INSERT INTO key_v11 (format, issuer, key_id, version_type, barcode_version, listed, algorithm, spki,
                            certificate, not_before, not_after, source, added_at, issuer_name)
                        SELECT format, issuer, key_id, coalesce(version_type, ''), '', version_type IS NOT NULL,
                            algorithm, spki, certificate, not_before, not_after, source, added_at, issuer_name
                        FROM key;
                    DROP TABLE key;
                    ALTER TABLE key_v11 RENAME TO key;
                    CREATE INDEX key_by_id ON key (format, key_id);
                    """)
        }
        migrator.registerMigration("v12-staff-pin-kdf") { db in
            // PINs hashed with scrypt over a secret kept apart from the store: the function, scrypt's r and p (N is
            // in pin_iterations) and which secret was mixed in. Existing rows are PBKDF2, upgraded at next login.
            try db.alter(table: "staff") { t in
                t.add(column: "pin_kdf", .text).notNull().defaults(to: "pbkdf2-sha256")
                t.add(column: "pin_block_size", .integer).notNull().defaults(to: 0)
                t.add(column: "pin_parallelism", .integer).notNull().defaults(to: 0)
                t.add(column: "pin_secret_id", .text)
            }
        }
        migrator.registerMigration("v13-key-purpose") { db in
            // What a key is trusted to sign: passenger tickets, or staff badges (never both, so that a ticket
            // issuer's key cannot log anyone in). Every key imported before is a ticket key.
            try db.alter(table: "key") { t in
                t.add(column: "purpose", .text).notNull().defaults(to: "tickets")
            }
        }
        migrator.registerMigration("v14-blocklists") { db in
            // The published blocklists (VDV-KA, DTVG UIC): each list's version by origin (imported here or brought
            // by sync), and their entries, kept in their keys' b-trees (WITHOUT ROWID) for one read per lookup.
            // Of a VDV number only the highest instance is kept (per origin).
            try db.execute(
                sql: """
                    CREATE TABLE blocklist (
                        list TEXT NOT NULL,
                        source TEXT NOT NULL,
                        version TEXT NOT NULL,
                        imported_at INTEGER NOT NULL,
                        PRIMARY KEY (list, source)
                    );
                    CREATE TABLE vdv_blocklist_entry (
                        type TEXT NOT NULL,
                        org_id INTEGER NOT NULL,
                        number INTEGER NOT NULL,
                        source TEXT NOT NULL,
                        instance_num INTEGER NOT NULL,
                        lock_mode INTEGER NOT NULL,
                        PRIMARY KEY (type, org_id, number, source)
                    ) WITHOUT ROWID;
                    CREATE TABLE dtvg_blocklist_entry (
                        rics INTEGER NOT NULL,
                        ticket_id BLOB NOT NULL,
                        source TEXT NOT NULL,
                        PRIMARY KEY (rics, ticket_id, source)
                    ) WITHOUT ROWID;
                    """)
        }
        migrator.registerMigration("v15-fleet-first-uses") { db in
            // The fleet's first uses of single-use tickets by other devices, from sync: a ticket is looked up by
            // issuer and id (its format narrows), and the old ones are dropped by time.
            try db.execute(
                sql: """
                    CREATE TABLE fleet_first_use (
                        format TEXT NOT NULL,
                        issuer TEXT NOT NULL,
                        ticket_id BLOB NOT NULL,
                        device TEXT NOT NULL,
                        used_at INTEGER NOT NULL,
                        PRIMARY KEY (issuer, ticket_id, format)
                    ) WITHOUT ROWID;
                    CREATE INDEX fleet_first_use_by_time ON fleet_first_use (used_at);
                    """)
        }
        migrator.registerMigration("v16-fleet-first-use-recorded-at") { db in
            // When the server recorded each first use (its clock): entries are forgotten by it, never by the time a
            // device claimed (which a device chooses). Null for entries from older servers, forgotten by used_at.
            try db.alter(table: "fleet_first_use") { t in
                t.add(column: "recorded_at", .integer)
            }
            try db.execute(
                sql: "CREATE INDEX fleet_first_use_by_record_time ON fleet_first_use (coalesce(recorded_at, used_at))")
        }
        return migrator
    }

    static func classify(_ error: any Error, path: String, opening: Bool) -> StoreError {
        StoreError.remedied(classifyCause(error, path: path, opening: opening))
    }

    private static func classifyCause(_ error: any Error, path: String, opening: Bool) -> StoreError {
        if let error = error as? StoreError { return error }
        if let dbError = error as? DatabaseError {
            switch dbError.resultCode {
            case .SQLITE_NOTADB, .SQLITE_CORRUPT:
                return StoreError(
                    .notAStore, "The store file is damaged or not a farecheck store; it was left untouched", path: path,
                    underlying: dbError)
            case .SQLITE_FULL:
                return StoreError(.ioFailure, "The disk is full; nothing was written", path: path, underlying: dbError)
            case .SQLITE_CANTOPEN, .SQLITE_PERM, .SQLITE_READONLY:
                return StoreError(
                    .cannotOpen, opening ? "Cannot open the store" : "The store cannot be written", path: path,
                    underlying: dbError)
            default:
                return StoreError(.ioFailure, "The store failed", path: path, underlying: dbError)
            }
        }
        return StoreError(
            .ioFailure, "The store failed", path: path,
            underlying: StoreError.Cause(description: String(describing: error)))
    }

    /// A log kept large by a bulk write is emptied here, when the store goes away without `close()` (a command's end):
    /// see `WriteAheadLog`.
    deinit {
        if WriteAheadLog.size(besideDatabase: path) > WriteAheadLog.keptSizeLimit {
            _ = try? pool.writeWithoutTransaction { db in try db.checkpoint(.truncate) }
        }
    }

    /// Closes the store: the write-ahead log is checkpointed into the main file and emptied. Further calls fail.
    public func close() throws(StoreError) {
        do {
            // Everything into the main file, the log emptied: a clean store a backup can copy alone.
            lookups.close()
            try pool.writeWithoutTransaction { db in _ = try db.checkpoint(.truncate) }
            try pool.close()
            try inspectionJournal.close()
        } catch {
            throw Self.classify(error, path: path, opening: false)
        }
    }

    func write<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.write(body)
        } catch {
            throw Self.classify(error, path: path, opening: false)
        }
    }

    /// Runs `body` in one transaction whose commit is not synced to disk at once (`synchronous = NORMAL`),
    /// for bulk data that can be fetched again: a power cut may lose the whole transaction, never part of it,
    /// and nothing else (the journal) waits on it. The connection is back to `FULL` afterwards.
    ///
    /// With `checkpointing: false` the commit does not checkpoint however long the log (the caller does: see
    /// `checkpointPaced(_:)`).
    func writeUnsynced<T: Sendable>(
        checkpointing: Bool = true, _ body: @Sendable (Database) throws -> T
    ) throws(StoreError) -> T {
        do {
            return try pool.writeUnsyncedTransaction(checkpointing: checkpointing, body)
        } catch {
            throw Self.classify(error, path: path, opening: false)
        }
    }

    func read<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw Self.classify(error, path: path, opening: false)
        }
    }

    /// Runs `body`, which must make one statement (a single `SELECT` is atomic on its own in SQLite), on a pooled
    /// reader without the `BEGIN`/`COMMIT` that `read` wraps around it: the verifier's lookups, one per verdict, where
    /// the transaction cost as much as the indexed read itself. Two statements here could each see another state of
    /// the store (a sync page committed between them): use `read` for those.
    func lookup<T: Sendable>(_ body: @Sendable (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.unsafeRead(body)
        } catch {
            throw Self.classify(error, path: path, opening: false)
        }
    }

    // MARK: Keys

    /// Adds a key, or replaces the key with the same format, issuer, id and (for a UIC key list entry) versionType
    /// and barcodeVersion.
    public func saveKey(_ record: KeyRecord) throws(StoreError) {
        try write { db in
            try record.save(db)
            try Self.trustChanged(db)
        }
    }

    /// Every key, ordered by format, issuer and id.
    public func keys() throws(StoreError) -> [KeyRecord] {
        try read { db in try KeyRecord.order(Column("format"), Column("issuer"), Column("key_id")).fetchAll(db) }
    }

    /// Whether the store holds any key: one indexed probe, for the daemon's start and `daemon --check`, which
    /// warn about an empty store (every scan would read `unknown-key`) without reading tens of thousands of keys.
    public func hasKeys() throws(StoreError) -> Bool {
        try read { db in try KeyRecord.limit(1).fetchCount(db) > 0 }
    }

    /// The keys with id `keyID` (any issuer unless given).
    public func keys(withID keyID: String, issuer: String? = nil) throws(StoreError) -> [KeyRecord] {
        try read { db in
            var request = KeyRecord.filter(Column("key_id") == keyID)
            if let issuer { request = request.filter(Column("issuer") == issuer) }
            return try request.fetchAll(db)
        }
    }

    /// Removes the keys with id `keyID` (of `issuer`, if given); returns how many were removed.
    @discardableResult
    public func removeKeys(withID keyID: String, issuer: String? = nil) throws(StoreError) -> Int {
        try write { db in
            var request = KeyRecord.filter(Column("key_id") == keyID)
            if let issuer { request = request.filter(Column("issuer") == issuer) }
            let removed = try request.deleteAll(db)
            if removed > 0 { try Self.trustChanged(db) }
            return removed
        }
    }

    /// Saves many keys in one transaction (all or none), each replacing a held key of its identity; returns the
    /// identities of those the store held before, for imports that say what they added and what they kept.
    public func saveKeysNotingHeld(_ records: [KeyRecord]) throws(StoreError) -> Set<KeyRecord.Identity> {
        try write { db in
            var held: Set<KeyRecord.Identity> = []
            for record in records {
                if try record.exists(db) { held.insert(record.identity) }
                try record.save(db)
            }
            try Self.trustChanged(db)
            return held
        }
    }

    /// Saves many keys in one transaction (all or none); returns how many were new rather than updated.
    @discardableResult
    public func saveKeys(_ records: [KeyRecord], replacingFamily family: KeyFamily? = nil) throws(StoreError) -> (
        added: Int, updated: Int, removed: Int
    ) {
        try write { db in
            var added = 0
            var updated = 0
            for record in records {
                if try record.exists(db) { updated += 1 } else { added += 1 }
                try record.save(db)
            }
            var removed = 0
            if let family {
                let kept = Set(records.map(\.identity))
                for stale in try KeyRecord.filter(Column("format") == family.storeName).fetchAll(db)
                where !kept.contains(stale.identity) {
                    try stale.delete(db)
                    removed += 1
                }
            }
            try Self.trustChanged(db)
            return (added, updated, removed)
        }
    }

    // MARK: Revocations

    /// Records a revoked ticket (again: a second revocation replaces the first).
    public func revokeTicket(_ record: TicketRevocationRecord) throws(StoreError) {
        try write { db in
            try record.save(db)
            try Self.trustChanged(db)
        }
    }

    /// Records many revoked tickets in one transaction (all or none).
    ///
    /// One prepared upsert for the batch: a record's `save` would run an UPDATE and then an INSERT per row,
    /// which is most of the time of a bulk import.
    public func revokeTickets(_ records: [TicketRevocationRecord]) throws(StoreError) {
        try write { db in
            let upsert = try db.cachedStatement(
                sql: """
                    INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at) VALUES (?, ?, ?, ?)
                    ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                        revoked_at = excluded.revoked_at
                    """)
            for record in records {
                try upsert.execute(arguments: [
                    record.issuer, Data(record.ticketID.bytes), record.reason, record.revokedAt,
                ])
            }
            try Self.trustChanged(db)
        }
    }

    /// Records a revoked key.
    public func revokeKey(_ record: KeyRevocationRecord) throws(StoreError) {
        try write { db in
            try record.save(db)
            try Self.trustChanged(db)
        }
    }

    /// Every revoked ticket.
    public func ticketRevocations() throws(StoreError) -> [TicketRevocationRecord] {
        try read { db in try TicketRevocationRecord.fetchAll(db) }
    }

    /// Every revoked key.
    public func keyRevocations() throws(StoreError) -> [KeyRevocationRecord] {
        try read { db in try KeyRevocationRecord.fetchAll(db) }
    }

    // MARK: Trust data age

    /// Notes, inside the writing transaction, that keys or revocations changed now.
    static func trustChanged(_ db: Database, at date: Date = Date()) throws {
        try db.execute(
            sql: "INSERT INTO meta(name, value) VALUES ('trust_changed_at', ?) "
                + "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
            arguments: [String(Int64((date.timeIntervalSince1970 * 1000).rounded()))])
    }

    /// When keys or revocations last changed in this store (by sync, import or the CLI); `nil` if never.
    public func trustChangedAt() throws(StoreError) -> Date? {
        try read { db in
            guard let text = try String.fetchOne(db, sql: "SELECT value FROM meta WHERE name = 'trust_changed_at'"),
                let millis = Int64(text)
            else { return nil }
            return Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
        }
    }

    // MARK: Snapshot for the verifier

    /// Loads keys and revocations into memory for the verifier.
    ///
    /// Keys whose stored public key no longer parses are skipped and reported in `skipped`.
    public func snapshot() throws(StoreError) -> (trust: TrustSnapshot, skipped: [String]) {
        let (keyRecords, tickets, revokedKeys) = try read { db in
            (try KeyRecord.fetchAll(db), try TicketRevocationRecord.fetchAll(db), try KeyRevocationRecord.fetchAll(db))
        }
        var trust = TrustSnapshot()
        var skipped: [String] = []
        for record in keyRecords {
            do {
                trust.add(record.trustedKey(try PublicKey(spkiDER: record.spki)))
            } catch {
                skipped.append("\(record.family) key \(record.keyID) of \(record.issuer): \(error)")
            }
        }
        for ticket in tickets {
            trust.revokeTicket(
                ticket.ticketID, issuer: ticket.issuer,
                Revocation(
                    reason: ticket.reason, revokedAt: Date(timeIntervalSince1970: TimeInterval(ticket.revokedAt))))
        }
        for key in revokedKeys {
            trust.revokeKey(
                key.keyID, issuer: key.issuer, family: key.family,
                Revocation(reason: key.reason, revokedAt: Date(timeIntervalSince1970: TimeInterval(key.revokedAt))))
        }
        return (trust, skipped)
    }
}

extension DatabasePool {
    /// The pool, its writer set to sync every commit to disk (`synchronous = FULL`): what is written survives power
    /// loss, not only a crash of the process.
    ///
    /// Set here, once the pool is open, and not in `Configuration.prepareDatabase`: GRDB puts a pool's writer in
    /// `synchronous = NORMAL` when it turns the write-ahead log on, after `prepareDatabase` has run, so a `FULL` set
    /// there does not hold.
    func syncingEveryCommit() throws -> DatabasePool {
        try writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        return self
    }

    /// Runs `body` in one immediate transaction committed with `synchronous = NORMAL` (not synced to disk at once),
    /// the connection back to `FULL` afterwards: for what can be fetched or done again. A power cut may lose the
    /// whole transaction, never part of it.
    ///
    /// With `checkpointing: false`, the commit does not copy the log into the database however long it is (SQLite's
    /// automatic checkpoint is off for the transaction, back on afterwards): the caller checkpoints.
    func writeUnsyncedTransaction<T: Sendable>(
        checkpointing: Bool = true, _ body: @Sendable (Database) throws -> T
    ) throws -> T {
        try writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
            defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
            var automatic: Int?
            if !checkpointing {
                automatic = try Int.fetchOne(db, sql: "PRAGMA wal_autocheckpoint")
                try db.execute(sql: "PRAGMA wal_autocheckpoint = 0")
            }
            defer { if let automatic { try? db.execute(sql: "PRAGMA wal_autocheckpoint = \(automatic)") } }
            var result: T?
            try db.inTransaction(.immediate) {
                result = try body(db)
                return .commit
            }
            return result!
        }
    }
}
