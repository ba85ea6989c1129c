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
}
