import FareCore
import Foundation
import Logging
import PostgresNIO
import ValidationAPI

/// Where a PostgreSQL database is, read from a `postgres://user:password@host:port/database` URL.
public struct PostgresLocation: Sendable, Equatable, CustomStringConvertible {
    /// The server's host name or address.
    public var host: String
    /// The server's port (5432 when the URL names none).
    public var port: Int
    /// The role to log in as.
    public var username: String
    /// The role's password, if any.
    public var password: String?
    /// The database to use.
    public var database: String

    /// Reads a connection URL.
    ///
    /// - Throws: `ServerError` with code `.invalidDatabaseURL` for another scheme, a missing user or database,
    ///   or `sslmode` other than `disable` (TLS to PostgreSQL is not supported yet).
    public init(url text: String) throws(ServerError) {
        func invalid(_ why: String) -> ServerError {
            ServerError(
                code: .invalidDatabaseURL,
                message: "--database-url \(Self.redacted(text)): \(why). Expected "
                    + "postgres://USER:PASSWORD@HOST:PORT/DATABASE.")
        }
        guard let components = URLComponents(string: text) else { throw invalid("not a URL") }
        guard components.scheme == "postgres" || components.scheme == "postgresql" else {
            throw invalid("the scheme must be postgres://")
        }
        guard let host = components.host, !host.isEmpty else { throw invalid("no host") }
        guard let user = components.user, !user.isEmpty else { throw invalid("no user") }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else { throw invalid("no database name after the host") }
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"): continue
            case ("sslmode", let mode):
                throw invalid(
                    "sslmode=\(mode ?? "") is not supported: this server connects without TLS (sslmode=disable); "
                        + "reach a remote PostgreSQL through a local tunnel")
            default: throw invalid("unknown parameter \(item.name)")
            }
        }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
    }

    /// The URL without its password, for messages and logs.
    public var description: String { "postgres://\(username)@\(host):\(port)/\(database)" }

    private static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }
}

/// The server's store in PostgreSQL (postgres-nio), for an agency's fleet.
///
/// Made by `StoreLocation.withStore`, which also runs the connection pool for as long as the store is used.
public final class PostgresServerStore: ServerStore {
    /// The database.
    public let location: PostgresLocation
    private let client: PostgresClient
    private let logger: Logger

    /// `postgresql`.
    public var backendName: String { "postgresql" }

    init(location: PostgresLocation, client: PostgresClient, logger: Logger) {
        self.location = location
        self.client = client
        self.logger = logger
    }

    /// Makes the connection pool for `location`; it works only while its `run()` runs.
    static func makeClient(_ location: PostgresLocation, logger: Logger) -> PostgresClient {
        var configuration = PostgresClient.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable)
        configuration.options.connectTimeout = .seconds(10)
        return PostgresClient(configuration: configuration, backgroundLogger: logger)
    }

    /// Opens and closes one connection, to report why the database cannot be reached in PostgreSQL's words
    /// (the pool would only say that it gave up).
    static func probe(_ location: PostgresLocation, logger: Logger) async throws(ServerError) {
        let configuration = PostgresConnection.Configuration(
            host: location.host, port: location.port, username: location.username, password: location.password,
            database: location.database, tls: .disable)
        do {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            try await connection.close()
        } catch {
            throw ServerError(
                code: .cannotOpen,
                message: "Cannot reach the PostgreSQL database \(location): \(explain(error)). "
                    + "Is the server running, and do the role, password and database exist?",
                cause: error)
        }
    }

    /// The schema as numbered migrations; applied under an advisory lock so that servers starting together
    /// do not race. Never edit a shipped migration: add the next one.
    private static let migrations: [(version: Int, statements: [String])] = [
        (1, ServerSchema.version1Statements(dialect: .postgres)),
        (2, ServerSchema.version2Statements(dialect: .postgres)),
        (3, ServerSchema.version3Statements()),
    ]

    /// Creates or upgrades the schema, and refuses a database written by a newer farecheck-server.
    func migrate() async throws(ServerError) {
        try await run("prepare the schema") { [logger] in
            try await self.client.withTransaction(logger: logger) { connection in
                // One lock id for this program's migrations: "fcserver" in ASCII.
                try await connection.query("SELECT pg_advisory_xact_lock(7378303373736534130)", logger: logger)
                try await connection.query(
                    """
                    CREATE TABLE IF NOT EXISTS farecheck_server_schema (
                        version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)
                    """, logger: logger)
                var applied: Set<Int> = []
                for try await version in try await connection.query(
                    "SELECT version FROM farecheck_server_schema", logger: logger
                ).decode(Int.self) {
                    applied.insert(version)
                }
                if let newest = applied.max(), newest > Self.migrations.map(\.version).max() ?? 0 {
                    throw ServerError(
                        code: .newerSchema,
                        message: "\(self.location) was written by a newer farecheck-server (schema \(newest)); "
                            + "upgrade this one.")
                }
                for migration in Self.migrations where !applied.contains(migration.version) {
                    for statement in migration.statements {
                        try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                    }
                    try await connection.query(
                        """
                        INSERT INTO farecheck_server_schema (version, applied_at)
                        VALUES (\(migration.version), \(Date().unixMilliseconds))
                        """,
                        logger: logger)
                }
            }
        }
    }

    // MARK: Devices

    public func addDevice(id: String, tokenHash: [UInt8], at date: Date) async throws(ServerError) {
        try await transaction("register device \(id)") { connection, logger in
            let rows = try await connection.query(
                """
                INSERT INTO device (id, token_hash, revoked, created_at)
                VALUES (\(id), \(tokenHash.hexString), false, \(date.unixMilliseconds))
                ON CONFLICT (id) DO NOTHING RETURNING id
                """, logger: logger
            ).collect()
            if rows.isEmpty {
                throw ServerError(code: .conflict, message: "A device named \(id) is registered already.")
            }
        }
    }

    public func revokeDevice(id: String) async throws(ServerError) -> Bool {
        try await run("revoke device \(id)") {
            try await self.client.query(
                "UPDATE device SET revoked = true WHERE id = \(id) RETURNING id", logger: self.logger
            ).collect().count > 0
        }
    }

    public func devices() async throws(ServerError) -> [DeviceRecord] {
        try await run("list devices") {
            var devices: [DeviceRecord] = []
            for try await (id, revoked, createdAt) in try await self.client.query(
                "SELECT id, revoked, created_at FROM device ORDER BY id", logger: self.logger
            ).decode((String, Bool, Int64).self) {
                devices.append(DeviceRecord(id: id, revoked: revoked, createdAt: Date(unixMilliseconds: createdAt)))
            }
            return devices
        }
    }

    public func device(tokenHash: [UInt8]) async throws(ServerError) -> DeviceRecord? {
        try await run("look up a device") {
            for try await (id, revoked, createdAt) in try await self.client.query(
                "SELECT id, revoked, created_at FROM device WHERE token_hash = \(tokenHash.hexString)",
                logger: self.logger
            ).decode((String, Bool, Int64).self) {
                return DeviceRecord(id: id, revoked: revoked, createdAt: Date(unixMilliseconds: createdAt))
            }
            return nil
        }
    }

    // MARK: Issuer keys and bundles

    public func putIssuerKey(_ key: BundleKey, at date: Date) async throws(ServerError) {
        try await run("store issuer key \(key.keyID)") {
            _ = try await self.client.query(
                """
                INSERT INTO issuer_key (format, issuer, key_id, algorithm, spki, not_before, not_after, added_at)
                VALUES (\(key.format), \(key.issuer), \(key.keyID), \(key.algorithm),
                    \(Data(key.spki).base64EncodedString()),
                    \(key.notBefore?.unixMilliseconds), \(key.notAfter?.unixMilliseconds), \(date.unixMilliseconds))
                ON CONFLICT (format, issuer, key_id) DO UPDATE SET algorithm = excluded.algorithm,
                    spki = excluded.spki, not_before = excluded.not_before, not_after = excluded.not_after,
                    added_at = excluded.added_at
                """, logger: self.logger
            ).collect()
        }
    }

    public func removeIssuerKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        try await run("remove issuer key \(key.keyID)") {
            try await self.client.query(
                """
                DELETE FROM issuer_key WHERE format = \(key.format) AND issuer = \(key.issuer) AND key_id = \(key.keyID)
                RETURNING key_id
                """, logger: self.logger
            ).collect().count > 0
        }
    }

    public func issuerKeys() async throws(ServerError) -> [BundleKey] {
        try await run("list issuer keys") {
            var keys: [BundleKey] = []
            for try await (format, issuer, keyID, algorithm, spki, notBefore, notAfter) in try await self.client.query(
                """
                SELECT format, issuer, key_id, algorithm, spki, not_before, not_after FROM issuer_key
                ORDER BY format, issuer, key_id
                """, logger: self.logger
            ).decode((String, String, String, String?, String, Int64?, Int64?).self) {
                keys.append(
                    BundleKey(
                        format: format, issuer: issuer, keyID: keyID, algorithm: algorithm,
                        spki: Array(Data(base64Encoded: spki) ?? Data()),
                        notBefore: notBefore.map(Date.init(unixMilliseconds:)),
                        notAfter: notAfter.map(Date.init(unixMilliseconds:))))
            }
            return keys
        }
    }

    public func latestBundle() async throws(ServerError) -> PublishedBundle? {
        try await run("read the key bundle") {
            for try await (sequence, issuedAt, document) in try await self.client.query(
                "SELECT sequence, issued_at, document FROM key_bundle ORDER BY sequence DESC LIMIT 1",
                logger: self.logger
            ).decode((Int64, Int64, String).self) {
                return PublishedBundle(
                    sequence: sequence, issuedAt: Date(unixMilliseconds: issuedAt), document: Array(document.utf8))
            }
            return nil
        }
    }

    public func storeBundle(_ bundle: PublishedBundle) async throws(ServerError) {
        try await transaction("store key bundle \(bundle.sequence)") { connection, logger in
            // Serialises publishers: the check and the insert see the same newest bundle.
            try await connection.query("LOCK TABLE key_bundle IN EXCLUSIVE MODE", logger: logger)
            var newest: Int64 = 0
            for try await value in try await connection.query(
                "SELECT coalesce(max(sequence), 0) FROM key_bundle", logger: logger
            ).decode(Int64.self) {
                newest = value
            }
            guard bundle.sequence > newest else {
                throw ServerError(
                    code: .conflict,
                    message: "Key bundle \(newest) is published already; a new bundle needs a higher sequence "
                        + "than \(bundle.sequence) (another publish ran at the same time?). Publish again.")
            }
            try await connection.query(
                """
                INSERT INTO key_bundle (sequence, issued_at, document)
                VALUES (\(bundle.sequence), \(bundle.issuedAt.unixMilliseconds),
                    \(String(decoding: bundle.document, as: UTF8.self)))
                """, logger: logger)
        }
    }

    // MARK: Revocations

    public func revokeTicket(_ entry: RevokedTicket) async throws(ServerError) {
        try await revokeTickets([entry])
    }

    public func revokeTickets(_ entries: [RevokedTicket]) async throws(ServerError) {
        // A row can be upserted once per statement: the last entry for a ticket wins, as one by one it would.
        var seen: Set<TicketReference> = []
        let unique = Array(entries.reversed().filter { seen.insert($0.reference).inserted }.reversed())
        guard !unique.isEmpty else { return }
        try await transaction("revoke \(unique.count) tickets") { connection, logger in
            // Numbers for the whole batch at once; the counter's row lock holds other writers until commit.
            var last: Int64 = 0
            for try await value in try await connection.query(
                """
                UPDATE server_counter SET value = value + \(Int64(unique.count)) WHERE name = 'revocation_change'
                RETURNING value
                """, logger: logger
            ).decode(Int64.self) {
                last = value
            }
            let first = last - Int64(unique.count) + 1
            // Arrays unnested server-side: a few statements per thousand entries, not three per entry.
            for chunkStart in stride(from: 0, to: unique.count, by: 5_000) {
                let chunk = unique[chunkStart..<min(chunkStart + 5_000, unique.count)]
                let sequences = chunk.indices.map { first + Int64($0) }
                let issuers = chunk.map(\.issuer)
                let ticketIDs = chunk.map(\.ticketID.hexString)
                let reasons = chunk.map { $0.reason ?? "" }
                let hasReason = chunk.map { $0.reason != nil }
                let revokedAt = chunk.map(\.revokedAt.unixMilliseconds)
                try await connection.query(
                    """
                    INSERT INTO revocation_change (sequence, kind, action, issuer, ticket_id, reason, revoked_at)
                    SELECT sequence, 'ticket', 'add', issuer, ticket_id,
                        CASE WHEN has_reason THEN reason END, revoked_at
                    FROM unnest(\(sequences)::bigint[], \(issuers)::text[], \(ticketIDs)::text[],
                        \(reasons)::text[], \(hasReason)::boolean[], \(revokedAt)::bigint[])
                        AS entry (sequence, issuer, ticket_id, reason, has_reason, revoked_at)
                    """, logger: logger)
                try await connection.query(
                    """
                    INSERT INTO revoked_ticket (issuer, ticket_id, reason, revoked_at, sequence)
                    SELECT issuer, ticket_id, CASE WHEN has_reason THEN reason END, revoked_at, sequence
                    FROM unnest(\(sequences)::bigint[], \(issuers)::text[], \(ticketIDs)::text[],
                        \(reasons)::text[], \(hasReason)::boolean[], \(revokedAt)::bigint[])
                        AS entry (sequence, issuer, ticket_id, reason, has_reason, revoked_at)
                    ON CONFLICT (issuer, ticket_id) DO UPDATE SET reason = excluded.reason,
                        revoked_at = excluded.revoked_at, sequence = excluded.sequence
                    """, logger: logger)
            }
        }
    }

    public func unrevokeTicket(_ ticket: TicketReference) async throws(ServerError) -> Bool {
        try await transaction("lift a ticket revocation") { connection, logger in
            let hex = ticket.ticketID.hexString
            let removed = try await connection.query(
                "DELETE FROM revoked_ticket WHERE issuer = \(ticket.issuer) AND ticket_id = \(hex) RETURNING issuer",
                logger: logger
            ).collect()
            guard !removed.isEmpty else { return false }
            try await Self.logChange(
                connection, logger, kind: "ticket", action: "remove", issuer: ticket.issuer, ticketID: hex)
            return true
        }
    }

    public func revokeKey(_ entry: RevokedKey) async throws(ServerError) {
        try await transaction("revoke key \(entry.keyID)") { connection, logger in
            let sequence = try await Self.logChange(
                connection, logger, kind: "key", action: "add", issuer: entry.issuer, format: entry.format,
                keyID: entry.keyID, reason: entry.reason, revokedAt: entry.revokedAt)
            try await connection.query(
                """
                INSERT INTO revoked_key (format, issuer, key_id, reason, revoked_at, sequence)
                VALUES (\(entry.format), \(entry.issuer), \(entry.keyID), \(entry.reason),
                    \(entry.revokedAt.unixMilliseconds), \(sequence))
                ON CONFLICT (format, issuer, key_id) DO UPDATE SET reason = excluded.reason,
                    revoked_at = excluded.revoked_at, sequence = excluded.sequence
                """, logger: logger)
        }
    }

    public func unrevokeKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        try await transaction("lift a key revocation") { connection, logger in
            let removed = try await connection.query(
                """
                DELETE FROM revoked_key
                WHERE format = \(key.format) AND issuer = \(key.issuer) AND key_id = \(key.keyID)
                RETURNING key_id
                """, logger: logger
            ).collect()
            guard !removed.isEmpty else { return false }
            try await Self.logChange(
                connection, logger, kind: "key", action: "remove", issuer: key.issuer, format: key.format,
                keyID: key.keyID)
            return true
        }
    }

    /// Takes the next change number and logs the change, in the caller's transaction. The counter's row lock
    /// holds other writers until this transaction commits, so numbers follow commit order. Returns the number.
    @discardableResult
    private static func logChange(
        _ connection: PostgresConnection, _ logger: Logger, kind: String, action: String, issuer: String,
        ticketID: String? = nil, format: String? = nil, keyID: String? = nil, reason: String? = nil,
        revokedAt: Date? = nil
    ) async throws -> Int64 {
        var sequence: Int64 = 0
        for try await value in try await connection.query(
            "UPDATE server_counter SET value = value + 1 WHERE name = 'revocation_change' RETURNING value",
            logger: logger
        ).decode(Int64.self) {
            sequence = value
        }
        try await connection.query(
            """
            INSERT INTO revocation_change
                (sequence, kind, action, issuer, ticket_id, format, key_id, reason, revoked_at)
            VALUES (\(sequence), \(kind), \(action), \(issuer), \(ticketID), \(format), \(keyID), \(reason),
                \(revokedAt?.unixMilliseconds))
            """, logger: logger)
        return sequence
    }

    public func ticketRevocation(_ ticket: TicketReference) async throws(ServerError) -> RevokedTicket? {
        try await run("look up a ticket revocation") {
            let rows = try await self.client.query(
                """
                SELECT issuer, ticket_id, reason, revoked_at FROM revoked_ticket
                WHERE issuer = \(ticket.issuer) AND ticket_id = \(ticket.ticketID.hexString)
                """, logger: self.logger)
            return try await Self.revokedTickets(rows).first
        }
    }

    public func keyRevocation(_ key: KeyReference) async throws(ServerError) -> RevokedKey? {
        try await run("look up a key revocation") {
            let rows = try await self.client.query(
                """
                SELECT format, issuer, key_id, reason, revoked_at FROM revoked_key
                WHERE format = \(key.format) AND issuer = \(key.issuer) AND key_id = \(key.keyID)
                """, logger: self.logger)
            return try await Self.revokedKeys(rows).first
        }
    }

    public func revocationDelta(since cursor: Int64, limit: Int) async throws(ServerError) -> RevocationDelta {
        try await run("read revocations") { [logger] in
            try await self.client.withConnection { connection in
                // A consistent snapshot of counter, log and lists, as SQLite's read transaction gives.
                try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                do {
                    let delta = try await Self.readDelta(connection, logger, since: cursor, limit: limit)
                    try await connection.query("COMMIT", logger: logger)
                    return delta
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)
                    throw error
                }
            }
        }
    }

    private static func readDelta(
        _ connection: PostgresConnection, _ logger: Logger, since cursor: Int64, limit: Int
    ) async throws -> RevocationDelta {
        var counters: [String: Int64] = [:]
        for try await (name, value) in try await connection.query(
            "SELECT name, value FROM server_counter", logger: logger
        ).decode((String, Int64).self) {
            counters[name] = value
        }
        let latest = counters["revocation_change"] ?? 0
        let prunedThrough = counters["revocation_pruned_through"] ?? 0
        // One more than a page holds tells whether another page follows.
        let fetch = Int64(limit) + 1
        switch RevocationLog.plan(cursor: cursor, latest: latest, prunedThrough: prunedThrough) {
        case .changes(let after):
            var changes: [RevocationChange] = []
            for try await row in try await connection.query(
                """
                SELECT sequence, kind, action, issuer, ticket_id, format, key_id, reason, revoked_at
                FROM revocation_change WHERE sequence > \(after) ORDER BY sequence LIMIT \(fetch)
                """, logger: logger
            ) {
                let (sequence, kind, action, issuer, ticketID, format, keyID, reason, revokedAt) = try row.decode(
                    (Int64, String, String, String, String?, String?, String?, String?, Int64?).self)
                changes.append(
                    try RevocationChange(
                        sequence: sequence, kind: kind, action: action, issuer: issuer, ticketID: ticketID,
                        format: format, keyID: keyID, reason: reason, revokedAt: revokedAt))
            }
            return RevocationLog.changesPage(cursor: cursor, latest: latest, changes: changes, limit: limit)
        case .current(let after, let through, let full):
            let upper = through ?? Int64.max
            var entries: [RevocationChange] = []
            for try await (sequence, issuer, ticketID, reason, revokedAt) in try await connection.query(
                """
                SELECT sequence, issuer, ticket_id, reason, revoked_at FROM revoked_ticket
                WHERE sequence > \(after) AND sequence <= \(upper) ORDER BY sequence LIMIT \(fetch)
                """, logger: logger
            ).decode((Int64, String, String, String?, Int64).self) {
                entries.append(
                    RevocationChange(
                        sequence: sequence,
                        entry: .ticketRevoked(
                            RevokedTicket(
                                issuer: issuer, ticketID: [UInt8](hex: ticketID) ?? [], reason: reason,
                                revokedAt: Date(unixMilliseconds: revokedAt)))))
            }
            for try await (sequence, format, issuer, keyID, reason, revokedAt) in try await connection.query(
                """
                SELECT sequence, format, issuer, key_id, reason, revoked_at FROM revoked_key
                WHERE sequence > \(after) AND sequence <= \(upper) ORDER BY sequence LIMIT \(fetch)
                """, logger: logger
            ).decode((Int64, String, String, String, String?, Int64).self) {
                entries.append(
                    RevocationChange(
                        sequence: sequence,
                        entry: .keyRevoked(
                            RevokedKey(
                                format: format, issuer: issuer, keyID: keyID, reason: reason,
                                revokedAt: Date(unixMilliseconds: revokedAt)))))
            }
            return RevocationLog.currentPage(
                cursor: cursor, latest: latest, prunedThrough: prunedThrough, entries: entries, through: through,
                full: full, limit: limit)
        }
    }

    public func pruneRevocationChanges(keepingLast count: Int) async throws(ServerError) -> Int {
        try await transaction("prune the revocation log") { connection, logger in
            var latest: Int64 = 0
            // FOR UPDATE: no change is logged while the log is cut.
            for try await value in try await connection.query(
                "SELECT value FROM server_counter WHERE name = 'revocation_change' FOR UPDATE", logger: logger
            ).decode(Int64.self) {
                latest = value
            }
            let through = latest - Int64(max(0, count))
            guard through > 0 else { return 0 }
            let dropped = try await connection.query(
                "DELETE FROM revocation_change WHERE sequence <= \(through) RETURNING sequence", logger: logger
            ).collect().count
            try await connection.query(
                """
                UPDATE server_counter SET value = greatest(value, \(through)) WHERE name = 'revocation_pruned_through'
                """, logger: logger)
            return dropped
        }
    }

    private static func revokedTickets(_ rows: PostgresRowSequence) async throws -> [RevokedTicket] {
        var entries: [RevokedTicket] = []
        for try await (issuer, ticketID, reason, revokedAt) in rows.decode((String, String, String?, Int64).self) {
            entries.append(
                RevokedTicket(
                    issuer: issuer, ticketID: [UInt8](hex: ticketID) ?? [], reason: reason,
                    revokedAt: Date(unixMilliseconds: revokedAt)))
        }
        return entries
    }

    private static func revokedKeys(_ rows: PostgresRowSequence) async throws -> [RevokedKey] {
        var entries: [RevokedKey] = []
        for try await (format, issuer, keyID, reason, revokedAt) in rows.decode(
            (String, String, String, String?, Int64).self)
        {
            entries.append(
                RevokedKey(
                    format: format, issuer: issuer, keyID: keyID, reason: reason,
                    revokedAt: Date(unixMilliseconds: revokedAt)))
        }
        return entries
    }

    // MARK: Inspections

    public func storeInspections(
        _ records: [InspectionUpload], deviceID: String, receivedAt: Date
    ) async throws(ServerError) -> [String] {
        try await transaction("store \(records.count) inspections") { connection, logger in
            var ids: [String] = []
            var seen: Set<String> = []
            for record in records where seen.insert(record.id).inserted {
                try await connection.query(
                    """
                    INSERT INTO inspection (id, device_id, received_at, inspected_at, device, symbology, payload_digest,
                        format, issuer, ticket_id, verdict, reason, signature, warnings, inspector, decided_by)
                    VALUES (\(record.id), \(deviceID), \(receivedAt.unixMilliseconds), \(record.inspectedAt),
                        \(record.device), \(record.symbology), \(record.payloadDigest.hexString), \(record.format),
                        \(record.issuer), \(record.ticketID?.hexString), \(record.verdict), \(record.reason),
                        \(record.signature), \(record.warnings), \(record.inspector), \(record.decidedBy))
                    ON CONFLICT (id) DO NOTHING
                    """, logger: logger)
                ids.append(record.id)
            }
            return ids
        }
    }

    public func inspections(limit: Int) async throws(ServerError) -> [StoredInspection] {
        try await run("list inspections") {
            var inspections: [StoredInspection] = []
            for try await row in try await self.client.query(
                """
                SELECT id, device_id, received_at, inspected_at, device, symbology, payload_digest, format, issuer,
                    ticket_id, verdict, reason, signature, warnings, inspector, decided_by
                FROM inspection ORDER BY inspected_at DESC, id LIMIT \(limit)
                """, logger: self.logger
            ) {
                let columns = row.makeRandomAccess()
                let record = InspectionUpload(
                    id: try columns["id"].decode(String.self),
                    inspectedAt: try columns["inspected_at"].decode(Int64.self),
                    device: try columns["device"].decode(String.self),
                    symbology: try columns["symbology"].decode(String?.self),
                    payloadDigest: [UInt8](hex: try columns["payload_digest"].decode(String.self)) ?? [],
                    format: try columns["format"].decode(String?.self),
                    issuer: try columns["issuer"].decode(String?.self),
                    ticketID: try columns["ticket_id"].decode(String?.self).flatMap { [UInt8](hex: $0) },
                    verdict: try columns["verdict"].decode(String.self),
                    reason: try columns["reason"].decode(String.self),
                    signature: try columns["signature"].decode(String.self),
                    warnings: try columns["warnings"].decode(String.self),
                    inspector: try columns["inspector"].decode(String?.self),
                    decidedBy: try columns["decided_by"].decode(String?.self))
                inspections.append(
                    StoredInspection(
                        deviceID: try columns["device_id"].decode(String.self),
                        receivedAt: Date(unixMilliseconds: try columns["received_at"].decode(Int64.self)),
                        record: record))
            }
            return inspections
        }
    }

    public func checkHealth() async throws(ServerError) {
        try await run("check the database") {
            _ = try await self.client.query("SELECT 1", logger: self.logger).collect()
        }
    }

    // MARK: Access

    private func run<T: Sendable>(_ what: String, _ body: () async throws -> T) async throws(ServerError) -> T {
        do {
            return try await body()
        } catch let error as ServerError {
            throw error
        } catch let error as PostgresTransactionError where error.closureError is ServerError {
            throw error.closureError as! ServerError
        } catch {
            throw ServerError(
                code: .storageFailure, message: "Could not \(what) in \(location): \(Self.explain(error)).",
                cause: error)
        }
    }

    private func transaction<T: Sendable>(
        _ what: String, _ body: (PostgresConnection, Logger) async throws -> T
    ) async throws(ServerError) -> T {
        try await run(what) { [logger] in
            try await self.client.withTransaction(logger: logger) { connection in
                try await body(connection, logger)
            }
        }
    }

    /// What PostgreSQL said, when it said something: `PSQLError`'s description hides it on purpose.
    static func explain(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let message = error.serverInfo?[.message] { return message }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        if let error = error as? PostgresTransactionError,
            let underlying = error.closureError ?? error.beginError ?? error.commitError
        {
            return explain(underlying)
        }
        return "\(error)"
    }
}
