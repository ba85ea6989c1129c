import FareCore
import Foundation
import ValidationAPI

/// The server's store over either database: the SQL and the row mapping written once, run by a `SQLExecutor`
/// (`SQLiteExecutor` for a file, `PostgresExecutor` for a fleet), so that both backends behave the same.
///
/// Where the two databases would differ on their own, the SQL pins the behaviour down: text sorts by its bytes
/// (PostgreSQL's `COLLATE "C"`, SQLite's default), text holding U+0000 (which PostgreSQL cannot store) is refused
/// on both, and limits are clamped before they reach a `LIMIT` (SQLite reads a negative one as none).
public final class SQLServerStore: ServerStore {
    let executor: any SQLExecutor

    init(executor: any SQLExecutor) {
        self.executor = executor
    }

    /// `sqlite` or `postgresql`.
    public var backendName: String { executor.backendName }

    /// `ORDER BY` text in byte order whatever the database's collation.
    var byteOrder: String { executor.dialect == .postgres ? " COLLATE \"C\"" : "" }

    // MARK: Devices

    public func addDevice(id: String, tokenHash: [UInt8], role: DeviceRole, at date: Date) async throws(ServerError) {
        try Self.refuseNUL(["device id": id])
        try await write("register device \(id)") { session in
            let inserted = try await session.query(
                """
                INSERT INTO device (id, token_hash, revoked, created_at, role) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (id) DO NOTHING RETURNING id
                """,
                id, tokenHash.hexString, false, date.unixMilliseconds, role.rawValue)
            if inserted.isEmpty {
                throw ServerError(code: .conflict, message: "A device named \(id) is registered already.")
            }
        }
    }

    public func revokeDevice(id: String, at date: Date) async throws(ServerError) -> RevokedDevice? {
        guard !id.contains("\0") else { return nil }
        return try await write("revoke device \(id)") { session in
            guard try await !session.query("UPDATE device SET revoked = ? WHERE id = ? RETURNING id", true, id).isEmpty
            else { return nil }
            let withdrawn = try await Self.withdraw(
                deviceID: id, since: nil, reason: "the device \(id) was revoked", at: date, in: session)
            return RevokedDevice(id: id, withdrawn: withdrawn)
        }
    }

    public func devices() async throws(ServerError) -> [DeviceRecord] {
        try await read("list devices") { [byteOrder] session in
            try await session.query("SELECT id, revoked, created_at, role FROM device ORDER BY id\(byteOrder)")
                .map(Self.device)
        }
    }

    public func device(tokenHash: [UInt8]) async throws(ServerError) -> DeviceRecord? {
        try await read("look up a device") { session in
            try await session.query(
                "SELECT id, revoked, created_at, role FROM device WHERE token_hash = ?", tokenHash.hexString
            ).first.map(Self.device)
        }
    }

    private static func device(_ row: SQLRow) throws -> DeviceRecord {
        let role = try row.text("role")
        return DeviceRecord(
            id: try row.text("id"), revoked: try row.boolean("revoked"),
            createdAt: Date(unixMilliseconds: try row.integer("created_at")),
            // A role this version does not know claims nothing.
            role: DeviceRole(rawValue: role) ?? .handheld)
    }

    // MARK: Issuer keys and bundles

    public func putIssuerKey(_ key: BundleKey, at date: Date) async throws(ServerError) {
        try Self.refuseNUL([
            "format": key.format, "issuer": key.issuer.rawValue, "key id": key.keyID.rawValue,
            "algorithm": key.algorithm ?? "",
            "version type": key.versionType ?? "", "barcode version": key.barcodeVersion ?? "",
            "product owners": key.allowedProductOwnerCodes.joined(separator: ","),
        ])
        try await write("store issuer key \(key.keyID)") { session in
            try await session.execute(
                """
                INSERT INTO issuer_key (format, issuer, key_id, version_type, barcode_version, algorithm, spki,
                    not_before, not_after, added_at, certificate, vdv_root, key_forged, product_owners)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (format, issuer, key_id, version_type, barcode_version) DO UPDATE SET
                    algorithm = excluded.algorithm, spki = excluded.spki, not_before = excluded.not_before,
                    not_after = excluded.not_after, added_at = excluded.added_at,
                    certificate = excluded.certificate, vdv_root = excluded.vdv_root,
                    key_forged = excluded.key_forged, product_owners = excluded.product_owners
                """,
                key.format, key.issuer, key.keyID, key.versionType ?? "", key.barcodeVersion ?? "", key.algorithm,
                Data(key.spki).base64EncodedString(), key.notBefore?.unixMilliseconds, key.notAfter?.unixMilliseconds,
                date.unixMilliseconds, key.certificate.map { Data($0).base64EncodedString() }, key.root, key.keyForged,
                key.allowedProductOwnerCodes.isEmpty
                    ? String?.none : key.allowedProductOwnerCodes.joined(separator: ","))
        }
    }

    public func removeIssuerKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        guard !Self.holdsNUL([key.format, key.issuer.rawValue, key.keyID.rawValue]) else { return false }
        return try await write("remove issuer key \(key.keyID)") { session in
            try await !session.query(
                "DELETE FROM issuer_key WHERE format = ? AND issuer = ? AND key_id = ? RETURNING key_id",
                key.format, key.issuer, key.keyID
            ).isEmpty
        }
    }

    public func issuerKeys() async throws(ServerError) -> [BundleKey] {
        try await issuerKeys(source: nil)
    }

    /// Issuer keys, ordered by format, issuer and key id: every one, or those `source` brought.
    func issuerKeys(source: String?) async throws(ServerError) -> [BundleKey] {
        try await read("list issuer keys") { [byteOrder] session in
            try await session.query(
                """
                SELECT format, issuer, key_id, algorithm, spki, not_before, not_after, version_type, barcode_version,
                    certificate, vdv_root, key_forged, product_owners
                FROM issuer_key\(source == nil ? "" : " WHERE source = ?")
                ORDER BY format\(byteOrder), issuer\(byteOrder), key_id\(byteOrder), version_type\(byteOrder),
                    barcode_version\(byteOrder)
                """, source.map { [$0.sqlValue] } ?? []
            ).map { row in
                BundleKey(
                    format: try row.text("format"), issuer: try IssuerID(row.text("issuer")),
                    keyID: try KeyID(row.text("key_id")),
                    algorithm: try row.optionalText("algorithm"),
                    spki: Array(Data(base64Encoded: try row.text("spki")) ?? Data()),
                    notBefore: try row.optionalInteger("not_before").map(Date.init(unixMilliseconds:)),
                    notAfter: try row.optionalInteger("not_after").map(Date.init(unixMilliseconds:)),
                    // '' in the table is "not stated" on the wire, as before version 5.
                    versionType: try row.optionalText("version_type").flatMap { $0.isEmpty ? nil : $0 },
                    barcodeVersion: try row.optionalText("barcode_version").flatMap { $0.isEmpty ? nil : $0 },
                    keyForged: try row.boolean("key_forged"),
                    allowedProductOwnerCodes: try row.optionalText("product_owners").map {
                        $0.split(separator: ",").map(String.init)
                    } ?? [],
                    certificate: try row.optionalText("certificate").map { Array(Data(base64Encoded: $0) ?? Data()) },
                    root: try row.boolean("vdv_root"))
            }
        }
    }

    public func latestBundle() async throws(ServerError) -> PublishedBundle? {
        try await read("read the key bundle") { session in
            try await session.query(
                "SELECT sequence, issued_at, document FROM key_bundle ORDER BY sequence DESC LIMIT 1"
            ).first.map { row in
                PublishedBundle(
                    sequence: try row.integer("sequence"),
                    issuedAt: Date(unixMilliseconds: try row.integer("issued_at")),
                    document: Array(try row.text("document").utf8))
            }
        }
    }

    public func latestBundleSequence() async throws(ServerError) -> Int64? {
        try await read("read the key bundle's sequence") { session in
            try await session.query("SELECT max(sequence) AS sequence FROM key_bundle").first?.optionalInteger(
                "sequence")
        }
    }

    public func storeBundle(_ bundle: PublishedBundle) async throws(ServerError) {
        let document = String(decoding: bundle.document, as: UTF8.self)
        try Self.refuseNUL(["key bundle": document])
        try await write("store key bundle \(bundle.sequence)") { session in
            // One statement checks and inserts, so that two publishers racing on PostgreSQL cannot both win
            // (the loser waits for the winner's row and inserts nothing).
            let inserted = try await session.query(
                """
                INSERT INTO key_bundle (sequence, issued_at, document)
                SELECT ?, ?, ? WHERE ? > (SELECT coalesce(max(sequence), 0) FROM key_bundle)
                ON CONFLICT (sequence) DO NOTHING RETURNING sequence
                """,
                bundle.sequence, bundle.issuedAt.unixMilliseconds, document, bundle.sequence)
            guard inserted.isEmpty else { return }
            let newest =
                try await session.query("SELECT coalesce(max(sequence), 0) AS newest FROM key_bundle")
                .first?.integer("newest") ?? 0
            throw ServerError(
                code: .conflict,
                message: "Key bundle \(newest) is published already; a new bundle needs a higher sequence "
                    + "than \(bundle.sequence) (another publish ran at the same time?). Publish again.")
        }
    }

    // MARK: Revocations

    public func revokeTicket(_ entry: RevokedTicket) async throws(ServerError) {
        try await revokeTickets([entry])
    }

    public func revokeTickets(_ entries: [RevokedTicket]) async throws(ServerError) {
        // A ticket named twice is revoked once, with its last entry: one logged change per ticket, as a row can
        // be upserted once per statement in PostgreSQL's bulk path.
        var seen: Set<TicketReference> = []
        let unique = Array(entries.reversed().filter { seen.insert($0.reference).inserted }.reversed())
        guard !unique.isEmpty else { return }
        for entry in unique {
            try Self.refuseNUL(["issuer": entry.issuer.rawValue, "reason": entry.reason ?? ""])
        }
        try await write("revoke \(unique.count) tickets") { [executor] session in
            let last = try await Self.takeChangeNumbers(unique.count, in: session)
            let first = last - Int64(unique.count) + 1
            let numbered = unique.enumerated().map { offset, entry in
                NumberedTicketRevocation(
                    sequence: first + Int64(offset), issuer: entry.issuer.rawValue,
                    ticketID: entry.ticketID.description,
                    reason: entry.reason, revokedAt: entry.revokedAt.unixMilliseconds)
            }
            try await executor.insertTicketRevocations(numbered, in: session)
        }
    }

    public func unrevokeTicket(_ ticket: TicketReference) async throws(ServerError) -> Bool {
        guard !ticket.issuer.rawValue.contains("\0") else { return false }
        return try await write("lift a ticket revocation") { session in
            let hex = ticket.ticketID.description
            let removed = try await session.query(
                "DELETE FROM revoked_ticket WHERE issuer = ? AND ticket_id = ? RETURNING issuer", ticket.issuer, hex)
            guard !removed.isEmpty else { return false }
            let sequence = try await Self.takeChangeNumbers(1, in: session)
            try await session.execute(
                "INSERT INTO revocation_change (sequence, kind, action, issuer, ticket_id) VALUES (?, ?, ?, ?, ?)",
                sequence, "ticket", "remove", ticket.issuer, hex)
            return true
        }
    }

    public func revokeKey(_ entry: RevokedKey) async throws(ServerError) {
        try Self.refuseNUL([
            "format": entry.format, "issuer": entry.issuer.rawValue, "key id": entry.keyID.rawValue,
            "reason": entry.reason ?? "",
        ])
        try await write("revoke key \(entry.keyID)") { session in
            let sequence = try await Self.takeChangeNumbers(1, in: session)
            try await session.execute(
                """
                INSERT INTO revocation_change (sequence, kind, action, issuer, format, key_id, reason, revoked_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                sequence, "key", "add", entry.issuer, entry.format, entry.keyID, entry.reason,
                entry.revokedAt.unixMilliseconds)
            try await session.execute(
                """
                INSERT INTO revoked_key (format, issuer, key_id, reason, revoked_at, sequence)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (format, issuer, key_id) DO UPDATE SET reason = excluded.reason,
                    revoked_at = excluded.revoked_at, sequence = excluded.sequence
                """,
                entry.format, entry.issuer, entry.keyID, entry.reason, entry.revokedAt.unixMilliseconds, sequence)
        }
    }

    public func unrevokeKey(_ key: KeyReference) async throws(ServerError) -> Bool {
        guard !Self.holdsNUL([key.format, key.issuer.rawValue, key.keyID.rawValue]) else { return false }
        return try await write("lift a key revocation") { session in
            let removed = try await session.query(
                "DELETE FROM revoked_key WHERE format = ? AND issuer = ? AND key_id = ? RETURNING key_id",
                key.format, key.issuer, key.keyID)
            guard !removed.isEmpty else { return false }
            let sequence = try await Self.takeChangeNumbers(1, in: session)
            try await session.execute(
                """
                INSERT INTO revocation_change (sequence, kind, action, issuer, format, key_id)
                VALUES (?, ?, ?, ?, ?, ?)
                """,
                sequence, "key", "remove", key.issuer, key.format, key.keyID)
            return true
        }
    }

    /// Takes `count` change numbers in the caller's transaction and returns the last. In PostgreSQL the counter's
    /// row lock holds other writers until this transaction commits, so numbers follow commit order (SQLite has
    /// one writer at a time).
    static func takeChangeNumbers(_ count: Int, in session: any SQLSession) async throws -> Int64 {
        let rows = try await session.query(
            "UPDATE server_counter SET value = value + ? WHERE name = 'revocation_change' RETURNING value",
            Int64(count))
        guard let last = try rows.first?.integer("value") else {
            throw SQLReadError(column: "server_counter.value", expected: "the revocation_change counter")
        }
        return last
    }

    public func ticketRevocation(_ ticket: TicketReference) async throws(ServerError) -> RevokedTicket? {
        // Text holding U+0000 is never stored, so it names nothing.
        guard !ticket.issuer.rawValue.contains("\0") else { return nil }
        return try await read("look up a ticket revocation") { session in
            try await session.query(
                "SELECT issuer, ticket_id, reason, revoked_at FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?",
                ticket.issuer, ticket.ticketID.description
            ).first.map(Self.revokedTicket)
        }
    }

    public func keyRevocation(_ key: KeyReference) async throws(ServerError) -> RevokedKey? {
        guard !Self.holdsNUL([key.format, key.issuer.rawValue, key.keyID.rawValue]) else { return nil }
        return try await read("look up a key revocation") { session in
            try await session.query(
                """
                SELECT format, issuer, key_id, reason, revoked_at FROM revoked_key
                WHERE format = ? AND issuer = ? AND key_id = ?
                """,
                key.format, key.issuer, key.keyID
            ).first.map(Self.revokedKey)
        }
    }

    public func revocationDelta(since cursor: Int64, limit: Int) async throws(ServerError) -> RevocationDelta {
        // At least one entry a page, at most what both databases take as a LIMIT.
        let limit = min(max(limit, 1), Int(Int32.max))
        // One snapshot: counter, log and lists agree.
        return try await read("read revocations") { session in
            let counters = try await session.query("SELECT name, value FROM server_counter")
            var latest: Int64 = 0
            var prunedThrough: Int64 = 0
            for row in counters {
                switch try row.text("name") {
                case "revocation_change": latest = try row.integer("value")
                case "revocation_pruned_through": prunedThrough = try row.integer("value")
                default: continue
                }
            }
            // One more than a page holds tells whether another page follows.
            let fetch = Int64(limit) + 1
            switch RevocationLog.plan(cursor: cursor, latest: latest, prunedThrough: prunedThrough) {
            case .changes(let after):
                let changes = try await session.query(
                    """
                    SELECT sequence, kind, action, issuer, ticket_id, format, key_id, reason, revoked_at, list,
                        entry_type, org_id, item, instance_num, lock_mode, list_version
                    FROM revocation_change WHERE sequence > ? ORDER BY sequence LIMIT ?
                    """,
                    after, fetch
                ).map { row in
                    try RevocationChange(
                        sequence: row.integer("sequence"), kind: row.text("kind"), action: row.text("action"),
                        issuer: row.text("issuer"), ticketID: row.optionalText("ticket_id"),
                        format: row.optionalText("format"), keyID: row.optionalText("key_id"),
                        reason: row.optionalText("reason"), revokedAt: row.optionalInteger("revoked_at"),
                        blocklist: BlocklistChangeColumns(row))
                }
                var page = RevocationLog.changesPage(cursor: cursor, latest: latest, changes: changes, limit: limit)
                page.blocklists = try await Self.publishedBlocklists(in: session)
                return page
            case .current(let after, let through, let full):
                let upper = through ?? Int64.max
                let tickets = try await session.query(
                    """
                    SELECT sequence, issuer, ticket_id, reason, revoked_at FROM revoked_ticket
                    WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?
                    """,
                    after, upper, fetch
                ).map { row in
                    RevocationChange(
                        sequence: try row.integer("sequence"), entry: .ticketRevoked(try Self.revokedTicket(row)))
                }
                let keys = try await session.query(
                    """
                    SELECT sequence, format, issuer, key_id, reason, revoked_at FROM revoked_key
                    WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?
                    """,
                    after, upper, fetch
                ).map { row in
                    RevocationChange(
                        sequence: try row.integer("sequence"), entry: .keyRevoked(try Self.revokedKey(row)))
                }
                let blocklistEntries = try await session.query(
                    """
                    SELECT sequence, list, entry_type, org_id, item, instance_num, lock_mode FROM blocklist_entry
                    WHERE sequence > ? AND sequence <= ? ORDER BY sequence LIMIT ?
                    """,
                    after, upper, fetch
                ).map { row in
                    RevocationChange(
                        sequence: try row.integer("sequence"), entry: .blocklistEntryAdded(try BlocklistRow.entry(row)))
                }
                var page = RevocationLog.currentPage(
                    cursor: cursor, latest: latest, prunedThrough: prunedThrough,
                    entries: tickets + keys + blocklistEntries, through: through, full: full, limit: limit)
                page.blocklists = try await Self.publishedBlocklists(in: session)
                return page
            }
        }
    }

    public func pruneRevocationChanges(keepingLast count: Int) async throws(ServerError) -> Int {
        try await write("prune the revocation log") { session in
            // Touching the counter locks its row in PostgreSQL: no change is logged while the log is cut.
            let latest = try await Self.takeChangeNumbers(0, in: session)
            let through = latest - Int64(max(0, count))
            guard through > 0 else { return 0 }
            let dropped = try await session.query(
                "DELETE FROM revocation_change WHERE sequence <= ? RETURNING sequence", through
            ).count
            try await session.execute(
                """
                UPDATE server_counter SET value = CASE WHEN value < ? THEN ? ELSE value END
                WHERE name = 'revocation_pruned_through'
                """,
                through, through)
            return dropped
        }
    }

    public func claimFirstUse(_ claim: FirstUseClaim) async throws(ServerError) -> FirstUseRecord {
        try Self.refuseNUL([
            "format": claim.format, "issuer": claim.issuer, "inspection id": claim.inspectionID?.rawValue ?? "",
        ])
        return try await write("claim a ticket's first use") { session in
            try await Self.claim(claim, usedAt: claim.at, in: session)
        }
    }

    /// Inserts a first use unless the ticket has one, then reads the ticket's first use back.
    private static func claim(
        _ claim: FirstUseClaim, usedAt: Date, in session: any SQLSession
    ) async throws -> FirstUseRecord {
        let ticketID = claim.ticketID.hexString
        // The one statement that decides: a second claim of the ticket, here or on another server at the same
        // moment, inserts nothing (PostgreSQL makes it wait for the first to commit, SQLite has one writer).
        try await session.execute(
            """
            INSERT INTO first_use (format, issuer, ticket_id, device_id, inspection_id, used_at, recorded_at)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (format, issuer, ticket_id) DO NOTHING
            """,
            claim.format, claim.issuer, ticketID, claim.deviceID, claim.inspectionID, usedAt.unixMilliseconds,
            claim.at.unixMilliseconds)
        // Read in a statement of its own: PostgreSQL's next statement sees the row that won, whoever wrote it.
        guard
            let row = try await session.query(
                """
                SELECT device_id, inspection_id, used_at, recorded_at FROM first_use
                WHERE format = ? AND issuer = ? AND ticket_id = ?
                """,
                claim.format, claim.issuer, ticketID
            ).first
        else {
            throw ServerError(code: .storageFailure, message: "The first use just claimed cannot be read back.")
        }
        let deviceID = try row.text("device_id")
        let inspectionID = try row.optionalText("inspection_id").map(InspectionID.init)
        let recordedAt = try row.integer("recorded_at")
        // Won now, or won before by this device for this very inspection (the answer to it was lost).
        let isClaimant =
            deviceID == claim.deviceID
            && (inspectionID == claim.inspectionID
                || (claim.inspectionID == nil && recordedAt == claim.at.unixMilliseconds))
        return FirstUseRecord(
            deviceID: deviceID, inspectionID: inspectionID, usedAt: Date(unixMilliseconds: try row.integer("used_at")),
            isClaimant: isClaimant)
    }

    /// The first uses of uploaded records that passed a single-use ticket, each by its backed claim (the ticket and
    /// time the server verified): claimed as if online (a gate that claimed online finds its own claim); one that
    /// finds another device's first use is kept as a conflict.
    private static func recordFirstUses(
        of records: [(record: InspectionRecord, claim: BackedClaim)], deviceID: String, receivedAt: Date,
        in session: any SQLSession
    ) async throws -> [FirstUseConflict] {
        var conflicts: [FirstUseConflict] = []
        for (record, backed) in records {
            let claim = FirstUseClaim(
                format: backed.format.rawValue, issuer: backed.issuer.rawValue, ticketID: backed.ticketID.bytes,
                deviceID: deviceID,
                inspectionID: record.id, at: receivedAt)
            let first = try await Self.claim(claim, usedAt: backed.usedAt, in: session)
            guard !first.isClaimant else { continue }
            let conflict = FirstUseConflict(
                deviceID: deviceID, inspectionID: record.id, format: claim.format, issuer: backed.issuer.rawValue,
                ticketID: backed.ticketID.bytes, usedAt: backed.usedAt, firstDeviceID: first.deviceID,
                firstInspectionID: first.inspectionID, firstUsedAt: first.usedAt, foundAt: receivedAt)
            try await session.execute(
                """
                INSERT INTO first_use_conflict (device_id, inspection_id, format, issuer, ticket_id, used_at,
                    first_device_id, first_inspection_id, first_used_at, found_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (device_id, inspection_id) DO NOTHING
                """,
                deviceID, record.id, claim.format, backed.issuer, backed.ticketID.description,
                backed.usedAt.unixMilliseconds, first.deviceID, first.inspectionID, first.usedAt.unixMilliseconds,
                receivedAt.unixMilliseconds)
            conflicts.append(conflict)
        }
        return conflicts
    }

    /// Withdraws the device's first uses (recorded from `since` on) that no other device confirmed: each goes from
    /// `first_use` to `first_use_withdrawal`, which validators page with the first uses.
    private static func withdraw(
        deviceID: String, since: Date?, reason: String, at date: Date, in session: any SQLSession
    ) async throws -> [FirstUseWithdrawal] {
        let from = since?.unixMilliseconds ?? WireFormat.millisecondRange.lowerBound
        // Confirmed: another device passed the ticket after it (a conflict names this device's use as the first).
        let rows = try await session.query(
            """
            SELECT format, issuer, ticket_id, inspection_id, used_at FROM first_use f
            WHERE device_id = ? AND recorded_at >= ? AND NOT EXISTS (
                SELECT 1 FROM first_use_conflict c
                WHERE c.format = f.format AND c.issuer = f.issuer AND c.ticket_id = f.ticket_id
                    AND c.first_device_id = f.device_id AND c.device_id <> f.device_id)
            """,
            deviceID, from)
        var withdrawn: [FirstUseWithdrawal] = []
        for row in rows {
            let format = try row.text("format")
            let issuer = try row.text("issuer")
            let ticketID = try row.text("ticket_id")
            try await session.execute(
                """
                INSERT INTO first_use_withdrawal (format, issuer, ticket_id, device_id, inspection_id, used_at,
                    withdrawn_at, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                format, issuer, ticketID, deviceID, try row.optionalText("inspection_id"),
                try row.integer("used_at"), date.unixMilliseconds, reason)
            try await session.execute(
                "DELETE FROM first_use WHERE format = ? AND issuer = ? AND ticket_id = ?", format, issuer, ticketID)
            withdrawn.append(
                FirstUseWithdrawal(
                    format: format, issuer: IssuerID(issuer), ticketID: TicketID(hex: ticketID) ?? [], device: deviceID,
                    withdrawnAt: Date(unixMilliseconds: date.unixMilliseconds)))
        }
        return withdrawn
    }

    public func withdrawFirstUses(ofDevice deviceID: String, since: Date?, reason: String, at date: Date)
        async throws(ServerError) -> [FirstUseWithdrawal]
    {
        try Self.refuseNUL(["device id": deviceID, "reason": reason])
        return try await write("withdraw the first uses of \(deviceID)") { session in
            try await Self.withdraw(deviceID: deviceID, since: since, reason: reason, at: date, in: session)
        }
    }

    public func firstUseWithdrawals(limit: Int) async throws(ServerError) -> [FirstUseWithdrawalRecord] {
        let limit = Int64(min(max(limit, 0), Int(Int32.max)))
        return try await read("read the withdrawn first uses") { session in
            try await session.query(
                """
                SELECT format, issuer, ticket_id, device_id, withdrawn_at, reason FROM first_use_withdrawal
                ORDER BY withdrawn_at DESC LIMIT ?
                """,
                limit
            ).map { row in
                FirstUseWithdrawalRecord(
                    withdrawal: FirstUseWithdrawal(
                        format: try row.text("format"), issuer: try IssuerID(row.text("issuer")),
                        ticketID: TicketID(hex: try row.text("ticket_id")) ?? [], device: try row.text("device_id"),
                        withdrawnAt: Date(unixMilliseconds: try row.integer("withdrawn_at"))),
                    reason: try row.text("reason"))
            }
        }
    }

    public func firstUses(since: Int64, limit: Int, now: Date) async throws(ServerError) -> FirstUseDelta {
        let limit = max(1, min(limit, FirstUseDelta.pageLimit))
        // Older than the retention is not offered: a validator new to the fleet starts from a week ago.
        let from = max(since, now.unixMilliseconds - FirstUseDelta.retentionMilliseconds)
        return try await read("read the fleet's first uses") { session in
            let rows = try await session.query(
                """
                SELECT format, issuer, ticket_id, device_id, used_at, recorded_at FROM first_use
                WHERE recorded_at >= ? ORDER BY recorded_at LIMIT ?
                """,
                from, limit + 1)
            let withdrawalRows = try await session.query(
                """
                SELECT format, issuer, ticket_id, device_id, withdrawn_at FROM first_use_withdrawal
                WHERE withdrawn_at >= ? ORDER BY withdrawn_at LIMIT ?
                """,
                from, limit + 1)
            // Both kinds in one stream by the server's time: a page ends at the first `limit` of them.
            enum Change {
                case use(FleetFirstUse, at: Int64)
                case withdrawal(FirstUseWithdrawal, at: Int64)
                var at: Int64 {
                    switch self {
                    case .use(_, let at), .withdrawal(_, let at): at
                    }
                }
            }
            var changes: [Change] = []
            for row in rows {
                guard let ticketID = [UInt8](hex: try row.text("ticket_id")), !ticketID.isEmpty else { continue }
                let recordedAt = try row.integer("recorded_at")
                changes.append(
                    .use(
                        FleetFirstUse(
                            format: try row.text("format"), issuer: try IssuerID(row.text("issuer")),
                            ticketID: TicketID(ticketID),
                            device: try row.text("device_id"),
                            usedAt: Date(unixMilliseconds: try row.integer("used_at")),
                            recordedAt: Date(unixMilliseconds: recordedAt)),
                        at: recordedAt))
            }
            for row in withdrawalRows {
                guard let ticketID = [UInt8](hex: try row.text("ticket_id")), !ticketID.isEmpty else { continue }
                let withdrawnAt = try row.integer("withdrawn_at")
                changes.append(
                    .withdrawal(
                        FirstUseWithdrawal(
                            format: try row.text("format"), issuer: try IssuerID(row.text("issuer")),
                            ticketID: TicketID(ticketID),
                            device: try row.text("device_id"), withdrawnAt: Date(unixMilliseconds: withdrawnAt)),
                        at: withdrawnAt))
            }
            changes.sort { $0.at < $1.at }
            let more = changes.count > limit
            let page = changes.prefix(limit)
            var entries: [FleetFirstUse] = []
            var withdrawals: [FirstUseWithdrawal] = []
            for change in page {
                switch change {
                case .use(let entry, _): entries.append(entry)
                case .withdrawal(let withdrawal, _): withdrawals.append(withdrawal)
                }
            }
            let last = page.last?.at ?? from
            // Caught up: the cursor is the time of this read, so that the next page starts where this one ended
            // (less the overlap the validator asks with).
            return FirstUseDelta(
                since: since, next: more ? last : max(last, now.unixMilliseconds), entries: entries, more: more,
                withdrawals: withdrawals.isEmpty ? nil : withdrawals)
        }
    }

    public func firstUseConflicts(limit: Int) async throws(ServerError) -> [FirstUseConflict] {
        try await read("read the first-use conflicts") { session in
            try await session.query(
                """
                SELECT device_id, inspection_id, format, issuer, ticket_id, used_at, first_device_id,
                    first_inspection_id, first_used_at, found_at
                FROM first_use_conflict ORDER BY found_at DESC, device_id, inspection_id LIMIT ?
                """,
                limit
            ).map { row in
                FirstUseConflict(
                    deviceID: try row.text("device_id"), inspectionID: InspectionID(try row.text("inspection_id")),
                    format: try row.text("format"), issuer: try row.text("issuer"),
                    ticketID: [UInt8](hex: try row.text("ticket_id")) ?? [],
                    usedAt: Date(unixMilliseconds: try row.integer("used_at")),
                    firstDeviceID: try row.text("first_device_id"),
                    firstInspectionID: try row.optionalText("first_inspection_id").map(InspectionID.init),
                    firstUsedAt: Date(unixMilliseconds: try row.integer("first_used_at")),
                    foundAt: Date(unixMilliseconds: try row.integer("found_at")))
            }
        }
    }

    public func pruneFirstUses(recordedBefore date: Date) async throws(ServerError) -> PrunedFirstUses {
        let before = date.unixMilliseconds
        return try await write("prune the fleet's first uses") { session in
            // Counted, then deleted, in one transaction: a claim made meanwhile is recorded now, after `date`.
            let firstUses = try await session.query(
                "SELECT count(*) AS n FROM first_use WHERE recorded_at < ?", before
            ).first?.integer("n")
            let conflicts = try await session.query(
                "SELECT count(*) AS n FROM first_use_conflict WHERE found_at < ?", before
            ).first?.integer("n")
            try await session.execute("DELETE FROM first_use WHERE recorded_at < ?", before)
            try await session.execute("DELETE FROM first_use_conflict WHERE found_at < ?", before)
            // Validators forget withdrawn first uses within the week they are offered.
            try await session.execute("DELETE FROM first_use_withdrawal WHERE withdrawn_at < ?", before)
            return PrunedFirstUses(firstUses: Int(firstUses ?? 0), conflicts: Int(conflicts ?? 0))
        }
    }

    private static func revokedTicket(_ row: SQLRow) throws -> RevokedTicket {
        RevokedTicket(
            issuer: try IssuerID(row.text("issuer")), ticketID: TicketID(hex: try row.text("ticket_id")) ?? [],
            reason: try row.optionalText("reason"), revokedAt: Date(unixMilliseconds: try row.integer("revoked_at")))
    }

    private static func revokedKey(_ row: SQLRow) throws -> RevokedKey {
        RevokedKey(
            format: try row.text("format"), issuer: try IssuerID(row.text("issuer")),
            keyID: try KeyID(row.text("key_id")),
            reason: try row.optionalText("reason"), revokedAt: Date(unixMilliseconds: try row.integer("revoked_at")))
    }

    // MARK: Inspections

    public func storeInspections(
        _ records: [InspectionRecord], deviceID: String, receivedAt: Date, claims: [BackedClaim?]
    ) async throws(ServerError) -> [InspectionResult] {
        for record in records {
            try Self.refuseNUL([
                "id": record.id.rawValue, "device": record.source.rawValue, "symbology": record.symbology?.text ?? "",
                "format": record.format?.text ?? "", "issuer": record.issuer?.rawValue ?? "",
                "keyID": record.keyID?.rawValue ?? "",
                "verdict": record.verdict.text, "reason": record.reason, "signature": record.signature.text,
                "warnings": record.warningCodes, "warningMessages": record.warnings.map(\.message).joined(),
                "inspector": record.inspector ?? "", "decidedBy": record.decidedBy?.text ?? "",
                "clockFloorSource": record.clockFloorSource?.text ?? "",
            ])
        }
        return try await write("store \(records.count) inspections") { session in
            // First every insert; the records already there are then read in one query and compared.
            var stored: [Bool] = []
            stored.reserveCapacity(records.count)
            for record in records {
                let values: [any SQLBindable] = [
                    record.id.rawValue, deviceID, receivedAt.unixMilliseconds, record.inspectedAt,
                    record.source.rawValue, record.symbology?.text, record.payloadDigest.hexString, record.format?.text,
                    record.issuer?.rawValue, record.ticketID?.bytes.hexString, record.verdict.text, record.reason,
                    record.signature.text, record.warningCodes, record.inspector, record.decidedBy?.text,
                    record.scanReceivedAt, Self.warningMessages(record), record.clockFloor,
                    record.clockFloorSource?.text, record.keyID?.rawValue,
                ]
                // In PostgreSQL a concurrent upload of the same record waits here for the other transaction, then
                // inserts nothing; the read below sees the row it committed.
                let inserted = try await session.query(
                    """
                    INSERT INTO inspection (id, device_id, received_at, inspected_at, device, symbology,
                        payload_digest, format, issuer, ticket_id, verdict, reason, signature, warnings, inspector,
                        decided_by, scan_received_at, warning_messages, clock_floor, clock_floor_source, key_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (device_id, id) DO NOTHING RETURNING id
                    """,
                    values.map(\.sqlValue))
                stored.append(!inserted.isEmpty)
            }
            // A record named twice in the batch is held by then too (this transaction inserted it).
            let heldIDs = Array(Set(zip(records, stored).filter { !$0.1 }.map(\.0.id)))
            var held: [InspectionID: InspectionRecord] = [:]
            if !heldIDs.isEmpty {
                let placeholders = Array(repeating: "?", count: heldIDs.count).joined(separator: ", ")
                let rows = try await session.query(
                    """
                    SELECT \(Self.inspectionColumns) FROM inspection WHERE device_id = ? AND id IN (\(placeholders))
                    """,
                    [deviceID.sqlValue] + heldIDs.map(\.sqlValue))
                for row in rows {
                    let inspection = try Self.storedInspection(row)
                    held[inspection.record.id] = inspection.record
                }
            }
            // The first uses the new records made (an upload sent again has claimed its own before).
            let newClaims = records.indices.compactMap { index -> (record: InspectionRecord, claim: BackedClaim)? in
                guard stored[index], index < claims.count, let claim = claims[index] else { return nil }
                return (records[index], claim)
            }
            _ = try await Self.recordFirstUses(
                of: newClaims, deviceID: deviceID, receivedAt: receivedAt, in: session)
            return try zip(records, stored).map { record, isNew in
                if isNew { return InspectionResult(id: record.id, outcome: .stored) }
                guard let first = held[record.id] else {
                    throw SQLReadError(column: "inspection", expected: "the row the insert found in its way")
                }
                let differences = first.differences(from: record)
                if differences.isEmpty { return InspectionResult(id: record.id, outcome: .alreadyStored) }
                return InspectionResult(
                    id: record.id, outcome: .refused, code: InspectionResult.conflictingRecord,
                    reason: "This device uploaded a record with this id before, with other content ("
                        + differences.joined(separator: ", ")
                        + " differ); the server keeps the first and does not store this one.")
            }
        }
    }

    public func pruneInspections(before date: Date) async throws(ServerError) -> Int {
        let before = date.unixMilliseconds
        return try await write("prune inspections") { session in
            // By the device's time (indexed), and the server's: a record dated back by a wrong clock stays.
            let count = try await session.query(
                "SELECT count(*) AS n FROM inspection WHERE inspected_at < ? AND received_at < ?", before, before
            ).first?.integer("n")
            try await session.execute(
                "DELETE FROM inspection WHERE inspected_at < ? AND received_at < ?", before, before)
            return Int(count ?? 0)
        }
    }

    public func inspections(limit: Int) async throws(ServerError) -> [StoredInspection] {
        // A negative limit is none in SQLite and an error in PostgreSQL: nothing, on both.
        let limit = Int64(min(max(limit, 0), Int(Int32.max)))
        return try await read("list inspections") { [byteOrder] session in
            try await session.query(
                """
                SELECT \(Self.inspectionColumns) FROM inspection
                ORDER BY inspected_at DESC, device_id\(byteOrder), id\(byteOrder) LIMIT ?
                """,
                limit
            ).map(Self.storedInspection)
        }
    }

    private static let inspectionColumns = """
        id, device_id, received_at, inspected_at, device, symbology, payload_digest, format, issuer, ticket_id, \
        verdict, reason, signature, warnings, inspector, decided_by, scan_received_at, warning_messages, clock_floor, \
        clock_floor_source, key_id
        """

    /// The warnings' sentences as a JSON array of text, in the order of their codes; NULL when there are none.
    private static func warningMessages(_ record: InspectionRecord) -> String? {
        guard record.warnings.contains(where: { !$0.message.isEmpty }),
            let json = try? JSONEncoder().encode(record.warnings.map(\.message))
        else { return nil }
        return String(decoding: json, as: UTF8.self)
    }

    private static func storedInspection(_ row: SQLRow) throws -> StoredInspection {
        StoredInspection(
            deviceID: try row.text("device_id"),
            receivedAt: Date(unixMilliseconds: try row.integer("received_at")),
            record: InspectionRecord(
                id: InspectionID(try row.text("id")), inspectedAt: try row.integer("inspected_at"),
                scanReceivedAt: try row.optionalInteger("scan_received_at"), source: SourceName(try row.text("device")),
                symbology: try row.optionalText("symbology").map(Recorded.init(text:)),
                payloadDigest: [UInt8](hex: try row.text("payload_digest")) ?? [],
                format: try row.optionalText("format").map(Recorded.init(text:)),
                issuer: try row.optionalText("issuer").map(IssuerID.init),
                ticketID: try row.optionalText("ticket_id").flatMap { TicketID(hex: $0) },
                keyID: try row.optionalText("key_id").map(KeyID.init),
                verdict: Recorded(text: try row.text("verdict")), reason: try row.text("reason"),
                signature: Recorded(text: try row.text("signature")),
                warnings: InspectionRecord.warnings(
                    codes: try row.text("warnings"),
                    messages: try row.optionalText("warning_messages").flatMap {
                        try? JSONDecoder().decode([String].self, from: Data($0.utf8))
                    } ?? []),
                inspector: try row.optionalText("inspector"),
                decidedBy: try row.optionalText("decided_by").map(Recorded.init(text:)),
                clockFloor: try row.optionalInteger("clock_floor"),
                clockFloorSource: try row.optionalText("clock_floor_source").map(Recorded.init(text:))))
    }

    public func checkHealth() async throws(ServerError) {
        try await read("check the database") { session in try await session.execute("SELECT 1") }
    }

    // MARK: Access

    /// Text that names nothing storable: PostgreSQL's text cannot hold U+0000.
    private static func holdsNUL(_ texts: [String]) -> Bool {
        texts.contains { $0.contains("\0") }
    }

    /// Refuses text PostgreSQL could not store, on both backends alike.
    static func refuseNUL(_ fields: KeyValuePairs<String, String>) throws(ServerError) {
        for (name, text) in fields where text.contains("\0") {
            throw ServerError(
                code: .invalidInput, message: "The \(name) holds a NUL character (U+0000), which cannot be stored.")
        }
    }

    func read<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any SQLSession) async throws -> T
    ) async throws(ServerError) -> T {
        do {
            return try await executor.read(body)
        } catch {
            throw wrap(error, what)
        }
    }

    func write<T: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any SQLSession) async throws -> T
    ) async throws(ServerError) -> T {
        do {
            return try await executor.write(body)
        } catch {
            throw wrap(error, what)
        }
    }

    private func wrap(_ error: any Error, _ what: String) -> ServerError {
        if let error = error as? ServerError { return error }
        return ServerError(
            code: .storageFailure,
            message: "Could not \(what) in \(executor.locationDescription): \(executor.explain(error)).", cause: error)
    }
}
