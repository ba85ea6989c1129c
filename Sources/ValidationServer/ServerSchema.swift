/// The server's tables, written once for both databases.
///
/// Byte strings are stored as text (hex ids, base64 keys, JSON documents) and moments as Unix
/// milliseconds, so the two backends hold the same values and the same queries read them.
enum ServerSchema {
    /// The SQL flavour to write.
    enum Dialect {
        case sqlite
        case postgres
    }

    /// One numbered step of the schema, for both databases.
    struct Migration: Sendable {
        /// The step's number: PostgreSQL records it in `farecheck_server_schema`.
        let version: Int
        /// The step's name: SQLite's migrator (GRDB) records it in `grdb_migrations`.
        let identifier: String
        /// The statements of the step, in `dialect`.
        let statements: @Sendable (_ dialect: Dialect) -> [String]
    }

    /// The schema as numbered migrations, in order, the one list both executors apply. Never edit a shipped
    /// migration: add the next one.
    static let migrations: [Migration] = [
        Migration(version: 1, identifier: "server-v1", statements: version1Statements),
        Migration(version: 2, identifier: "server-v2-revocation-sequence", statements: version2Statements),
        Migration(version: 3, identifier: "server-v3-decided-by", statements: { _ in version3Statements() }),
        Migration(
            version: 4, identifier: "server-v4-key-version-type-vdv-certificate", statements: version4Statements),
        Migration(version: 5, identifier: "server-v5-key-scope", statements: version5Statements),
        Migration(version: 6, identifier: "server-v6-inspection-by-device", statements: version6Statements),
        Migration(version: 7, identifier: "server-v7-blocklists", statements: blocklistStatements),
        Migration(version: 8, identifier: "server-v8-first-use", statements: version8Statements),
        Migration(version: 9, identifier: "server-v9-operators", statements: version9Statements),
        Migration(version: 10, identifier: "server-v10-claims", statements: version10Statements),
        Migration(version: 11, identifier: "server-v11-inspection-record", statements: version11Statements),
        Migration(version: 12, identifier: "server-v12-trust-sources", statements: version12Statements),
        Migration(version: 13, identifier: "server-v13-inspection-key", statements: version13Statements),
    ]

    /// Version 11: an inspection keeps the whole record a validator sends: when the scan arrived on the validator,
    /// the warnings' sentences (a JSON array of text, in the order of the codes) and the trusted-time floor its clock
    /// was judged against. NULL in records stored before, and from validators that do not send them.
    static func version11Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        return [
            "ALTER TABLE inspection ADD COLUMN scan_received_at \(integer)",
            "ALTER TABLE inspection ADD COLUMN warning_messages TEXT",
            "ALTER TABLE inspection ADD COLUMN clock_floor \(integer)",
            "ALTER TABLE inspection ADD COLUMN clock_floor_source TEXT",
        ]
    }

    /// Version 10: a device has a role, and only gates may claim first uses (devices registered before keep
    /// claiming: they are taken as gates); a first use the server withdraws (its device was revoked, or an operator
    /// forgot it) is kept in `first_use_withdrawal`, paged to validators by `withdrawn_at` (the server's clock) with
    /// the first uses, so that they forget it too.
    static func version10Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        return [
            "ALTER TABLE device ADD COLUMN role TEXT NOT NULL DEFAULT 'gate'",
            """
            CREATE TABLE first_use_withdrawal (
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                ticket_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                inspection_id TEXT,
                used_at \(integer) NOT NULL,
                withdrawn_at \(integer) NOT NULL,
                reason TEXT NOT NULL
            )
            """,
            "CREATE INDEX first_use_withdrawal_by_time ON first_use_withdrawal (withdrawn_at)",
        ]
    }

    /// Version 9: the operators who may read the report (`/report`), each with the SHA-256 of a secret token, as
    /// devices have; an operator is a table of its own so that a device's token never opens the report and an
    /// operator's never calls the API as a device. The index serves the report's queries, which read one day's
    /// inspections (of one device, or all).
    static func version9Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        let boolean = dialect == .sqlite ? "INTEGER" : "BOOLEAN"
        let falseValue = dialect == .sqlite ? "0" : "false"
        return [
            """
            CREATE TABLE operator_account (
                name TEXT PRIMARY KEY,
                token_hash TEXT NOT NULL UNIQUE,
                revoked \(boolean) NOT NULL DEFAULT \(falseValue),
                created_at \(integer) NOT NULL
            )
            """,
            "CREATE INDEX inspection_by_device_and_time ON inspection (device_id, inspected_at)",
        ]
    }

    /// Version 8: the fleet's first use of each single-use ticket, claimed by online checks or uploaded with the
    /// inspections of gates that passed it offline. The primary key is what decides between two gates claiming one
    /// ticket at once: the first insert wins, the other finds its row. `used_at` is when the ticket was used (the
    /// server's clock online, the gate's for an upload); `recorded_at` the server's clock when the row was written,
    /// the cursor validators page the first uses by. A later first use of an already used ticket, uploaded by a gate
    /// that passed it offline, is kept in `first_use_conflict`.
    static func version8Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        return [
            """
            CREATE TABLE first_use (
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                ticket_id TEXT NOT NULL,
                device_id TEXT NOT NULL,
                inspection_id TEXT,
                used_at \(integer) NOT NULL,
                recorded_at \(integer) NOT NULL,
                PRIMARY KEY (format, issuer, ticket_id)
            )
            """,
            "CREATE INDEX first_use_by_recording ON first_use (recorded_at)",
            """
            CREATE TABLE first_use_conflict (
                device_id TEXT NOT NULL,
                inspection_id TEXT NOT NULL,
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                ticket_id TEXT NOT NULL,
                used_at \(integer) NOT NULL,
                first_device_id TEXT NOT NULL,
                first_inspection_id TEXT,
                first_used_at \(integer) NOT NULL,
                found_at \(integer) NOT NULL,
                PRIMARY KEY (device_id, inspection_id)
            )
            """,
        ]
    }

    /// Version 1: devices, issuer keys, key bundles, revocations with their change log, inspections.
    static func version1Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        let boolean = dialect == .sqlite ? "INTEGER" : "BOOLEAN"
        let falseValue = dialect == .sqlite ? "0" : "false"
        return [
            """
            CREATE TABLE device (
                id TEXT PRIMARY KEY,
                token_hash TEXT NOT NULL UNIQUE,
                revoked \(boolean) NOT NULL DEFAULT \(falseValue),
                created_at \(integer) NOT NULL
            )
            """,
            """
            CREATE TABLE issuer_key (
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                key_id TEXT NOT NULL,
                algorithm TEXT,
                spki TEXT NOT NULL,
                not_before \(integer),
                not_after \(integer),
                added_at \(integer) NOT NULL,
                PRIMARY KEY (format, issuer, key_id)
            )
            """,
            """
            CREATE TABLE key_bundle (
                sequence \(integer) PRIMARY KEY,
                issued_at \(integer) NOT NULL,
                document TEXT NOT NULL
            )
            """,
            """
            CREATE TABLE revoked_ticket (
                issuer TEXT NOT NULL,
                ticket_id TEXT NOT NULL,
                reason TEXT,
                revoked_at \(integer) NOT NULL,
                PRIMARY KEY (issuer, ticket_id)
            )
            """,
            """
            CREATE TABLE revoked_key (
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                key_id TEXT NOT NULL,
                reason TEXT,
                revoked_at \(integer) NOT NULL,
                PRIMARY KEY (format, issuer, key_id)
            )
            """,
            // Every add and removal, numbered from the `revocation_change` counter.
            """
            CREATE TABLE revocation_change (
                sequence \(integer) PRIMARY KEY,
                kind TEXT NOT NULL,
                action TEXT NOT NULL,
                issuer TEXT NOT NULL,
                ticket_id TEXT,
                format TEXT,
                key_id TEXT,
                reason TEXT,
                revoked_at \(integer)
            )
            """,
            // `revocation_change`: the newest change number; `revocation_pruned_through`: the newest one dropped.
            """
            CREATE TABLE server_counter (
                name TEXT PRIMARY KEY,
                value \(integer) NOT NULL
            )
            """,
            """
            INSERT INTO server_counter (name, value)
            VALUES ('revocation_change', 0), ('revocation_pruned_through', 0)
            """,
            """
            CREATE TABLE inspection (
                id TEXT PRIMARY KEY,
                device_id TEXT NOT NULL,
                received_at \(integer) NOT NULL,
                inspected_at \(integer) NOT NULL,
                device TEXT NOT NULL,
                symbology TEXT,
                payload_digest TEXT NOT NULL,
                format TEXT,
                issuer TEXT,
                ticket_id TEXT,
                verdict TEXT NOT NULL,
                reason TEXT NOT NULL,
                signature TEXT NOT NULL,
                warnings TEXT NOT NULL,
                inspector TEXT
            )
            """,
            "CREATE INDEX inspection_by_time ON inspection (inspected_at)",
        ]
    }

    /// Version 3: which side decided each inspection's verdict (`offline`, `online`; NULL when not told).
    static func version3Statements() -> [String] {
        ["ALTER TABLE inspection ADD COLUMN decided_by TEXT"]
    }

    /// Version 4: issuer keys carry the UIC key list's `versionType`, and VDV CA certificates (`certificate`,
    /// base64 as imported) with whether validators pin them as a root (`vdv_root`).
    static func version4Statements(dialect: Dialect) -> [String] {
        let boolean = dialect == .sqlite ? "INTEGER NOT NULL DEFAULT 0" : "BOOLEAN NOT NULL DEFAULT false"
        return [
            "ALTER TABLE issuer_key ADD COLUMN version_type TEXT",
            "ALTER TABLE issuer_key ADD COLUMN certificate TEXT",
            "ALTER TABLE issuer_key ADD COLUMN vdv_root \(boolean)",
        ]
    }

    /// Version 5: the UIC key list may name one issuer and key id for several kinds of barcode, each with its own
    /// key, so an issuer key is told apart by its `version_type` and `barcode_version` too (never NULL: '' when
    /// none), and carries the list's `keyForged` and `allowedProductOwnerCodes` (comma-separated).
    static func version5Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        let boolean = dialect == .sqlite ? "INTEGER NOT NULL DEFAULT 0" : "BOOLEAN NOT NULL DEFAULT false"
        return [
            """
            CREATE TABLE issuer_key_v5 (
                format TEXT NOT NULL,
                issuer TEXT NOT NULL,
                key_id TEXT NOT NULL,
                version_type TEXT NOT NULL DEFAULT '',
                barcode_version TEXT NOT NULL DEFAULT '',
                algorithm TEXT,
                spki TEXT NOT NULL,
                not_before \(integer),
                not_after \(integer),
                added_at \(integer) NOT NULL,
                certificate TEXT,
                vdv_root \(boolean),
                key_forged \(boolean),
                product_owners TEXT,
                PRIMARY KEY (format, issuer, key_id, version_type, barcode_version)
            )
            """,
            """
            INSERT INTO issuer_key_v5 (format, issuer, key_id, version_type, algorithm, spki, not_before, not_after,
                added_at, certificate, vdv_root)
            SELECT format, issuer, key_id, coalesce(version_type, ''), algorithm, spki, not_before, not_after,
                added_at, certificate, vdv_root
            FROM issuer_key
            """,
            "DROP TABLE issuer_key",
            "ALTER TABLE issuer_key_v5 RENAME TO issuer_key",
        ]
    }

    /// Version 6: an inspection is known by the device that uploaded it and its id, so that two devices using the
    /// same id keep two records (the id alone was the key, and the second device's record was acknowledged and
    /// dropped). Every stored row is kept: ids were unique, so they are unique per device too.
    ///
    /// SQLite cannot change a primary key in place: the table is copied into a new one and renamed.
    static func version6Statements(dialect: Dialect) -> [String] {
        switch dialect {
        case .postgres:
            return [
                "ALTER TABLE inspection DROP CONSTRAINT inspection_pkey",
                "ALTER TABLE inspection ADD PRIMARY KEY (device_id, id)",
            ]
        case .sqlite:
            let columns = """
                id, device_id, received_at, inspected_at, device, symbology, payload_digest, format, issuer, \
                ticket_id, verdict, reason, signature, warnings, inspector, decided_by
                """
            return [
                """
                CREATE TABLE inspection_by_device (
                    id TEXT NOT NULL,
                    device_id TEXT NOT NULL,
                    received_at INTEGER NOT NULL,
                    inspected_at INTEGER NOT NULL,
                    device TEXT NOT NULL,
                    symbology TEXT,
                    payload_digest TEXT NOT NULL,
                    format TEXT,
                    issuer TEXT,
                    ticket_id TEXT,
                    verdict TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    signature TEXT NOT NULL,
                    warnings TEXT NOT NULL,
                    inspector TEXT,
                    decided_by TEXT,
                    PRIMARY KEY (device_id, id)
                )
                """,
                "INSERT INTO inspection_by_device (\(columns)) SELECT \(columns) FROM inspection",
                "DROP TABLE inspection",
                "ALTER TABLE inspection_by_device RENAME TO inspection",
                "CREATE INDEX inspection_by_time ON inspection (inspected_at)",
            ]
        }
    }

    /// Version 2: each current revocation carries the number of the change that made it, so that a full
    /// snapshot can be served in pages ordered by it (see `RevocationLog.plan`).
    ///
    /// Existing rows take the number of their last logged add. Rows whose add was pruned from the log get
    /// distinct small numbers (1, 2, …): they are at most as many as the pruned changes, so the numbers stay
    /// at or below `revocation_pruned_through` and never collide with a logged change.
    static func version2Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        return [
            "ALTER TABLE revoked_ticket ADD COLUMN sequence \(integer)",
            "ALTER TABLE revoked_key ADD COLUMN sequence \(integer)",
            """
            UPDATE revoked_ticket SET sequence = last_add.sequence
            FROM (
                SELECT issuer, ticket_id, max(sequence) AS sequence FROM revocation_change
                WHERE kind = 'ticket' AND action = 'add' GROUP BY issuer, ticket_id
            ) AS last_add
            WHERE revoked_ticket.issuer = last_add.issuer AND revoked_ticket.ticket_id = last_add.ticket_id
            """,
            """
            UPDATE revoked_key SET sequence = last_add.sequence
            FROM (
                SELECT format, issuer, key_id, max(sequence) AS sequence FROM revocation_change
                WHERE kind = 'key' AND action = 'add' GROUP BY format, issuer, key_id
            ) AS last_add
            WHERE revoked_key.format = last_add.format AND revoked_key.issuer = last_add.issuer
                AND revoked_key.key_id = last_add.key_id
            """,
            // Pruned tickets first as negative placeholders, so that the keys can count them.
            """
            UPDATE revoked_ticket SET sequence = -numbered.n
            FROM (
                SELECT issuer, ticket_id, row_number() OVER (ORDER BY issuer, ticket_id) AS n
                FROM revoked_ticket WHERE sequence IS NULL
            ) AS numbered
            WHERE revoked_ticket.issuer = numbered.issuer AND revoked_ticket.ticket_id = numbered.ticket_id
            """,
            """
            UPDATE revoked_key SET sequence = numbered.n + (SELECT count(*) FROM revoked_ticket WHERE sequence < 0)
            FROM (
                SELECT format, issuer, key_id, row_number() OVER (ORDER BY format, issuer, key_id) AS n
                FROM revoked_key WHERE sequence IS NULL
            ) AS numbered
            WHERE revoked_key.format = numbered.format AND revoked_key.issuer = numbered.issuer
                AND revoked_key.key_id = numbered.key_id
            """,
            "UPDATE revoked_ticket SET sequence = -sequence WHERE sequence < 0",
            "CREATE INDEX revoked_ticket_by_sequence ON revoked_ticket (sequence)",
            "CREATE INDEX revoked_key_by_sequence ON revoked_key (sequence)",
        ]
    }
}
