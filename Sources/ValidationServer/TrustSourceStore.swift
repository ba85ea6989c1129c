import FareCore
import Foundation
import ValidationAPI

/// What the server knows of one publisher it follows (`[[trust.source]]`): when it last tried and last succeeded,
/// the version it holds, the validators for the next conditional request, and why the last attempt failed.
public struct TrustSourceState: Sendable, Equatable {
    /// The source's name, as configured.
    public var name: String
    /// Its kind (`uic-keylist`, `vdv-blocklist`, …), as configured.
    public var kind: String
    /// The start of the last fetch, whatever came of it.
    public var lastAttempt: Date?
    /// The last fetch that left the trust current: applied, unchanged, or held for an operator.
    public var lastSuccess: Date?
    /// When the source last changed the trust (applied, or approved).
    public var lastChange: Date?
    /// The version held: a blocklist's version file, else the content's SHA-256 (hex, first 16 digits).
    public var version: String?
    /// The `ETag` of the copy held, sent back as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` of the copy held, sent back as `If-Modified-Since`.
    public var lastModified: String?
    /// Why the last attempt failed; `nil` after a success.
    public var lastError: String?
    /// Attempts failed in a row (the worker backs off by it).
    public var failures: Int
    /// The SHA-256 (hex) of the content last applied or held: the same file again changes nothing.
    public var contentDigest: String?

    /// Seconds since the last success at `now`, nil before one.
    public func age(at now: Date) -> TimeInterval? { lastSuccess.map { now.timeIntervalSince($0) } }

    /// Whether the source is stale at `now`: its last success older than `limit`, or tried and never succeeded.
    public func isStale(after limit: Duration, at now: Date) -> Bool {
        if let age = age(at: now) { return age > Double(limit.components.seconds) }
        return lastAttempt != nil
    }

    public init(
        name: String, kind: String, lastAttempt: Date? = nil, lastSuccess: Date? = nil, lastChange: Date? = nil,
        version: String? = nil, etag: String? = nil, lastModified: String? = nil, lastError: String? = nil,
        failures: Int = 0, contentDigest: String? = nil
    ) {
        self.name = name
        self.kind = kind
        self.lastAttempt = lastAttempt
        self.lastSuccess = lastSuccess
        self.lastChange = lastChange
        self.version = version
        self.etag = etag
        self.lastModified = lastModified
        self.lastError = lastError
        self.failures = failures
        self.contentDigest = contentDigest
    }
}

/// A followed source as the operator report shows it.
public struct TrustSourceRow: Sendable, Equatable {
    /// The source's name.
    public var name: String
    /// Its state, nil before its first attempt.
    public var state: TrustSourceState?
    /// Seconds since its last success.
    public var age: TimeInterval?
    /// The age past which it is stale.
    public var limit: Duration
    /// Whether it is stale.
    public var stale: Bool
}

/// A key by its issuer and id, as an inspection names the key that verified its ticket.
public struct KeyUse: Sendable, Hashable {
    public var issuer: IssuerID
    public var keyID: KeyID

    public init(issuer: IssuerID, keyID: KeyID) {
        self.issuer = issuer
        self.keyID = keyID
    }
}

/// What an operator decided about a change the guard rails held.
public enum TrustChangeDecision: String, Sendable, Equatable {
    /// Held, waiting for an operator.
    case pending
    /// Applied by an operator's `trust approve`.
    case approved
    /// Refused by an operator's `trust reject`: the same content is never held again.
    case rejected
}

/// A change a publisher brought that the guard rails would not apply unattended, kept whole for an operator.
public struct PendingTrustChange: Sendable, Equatable {
    /// The change's number, for `trust approve ID` and `trust reject ID`.
    public var id: Int64
    /// The source it came from.
    public var source: String
    /// When it was fetched and held.
    public var heldAt: Date
    /// Its version (a blocklist's version file), when it has one.
    public var version: String?
    /// Why it was held, one sentence.
    public var reason: String
    /// What it would change (keys or entries added and removed).
    public var summary: String
    /// The SHA-256 (hex) of the content.
    public var contentDigest: String
    /// The content as fetched: applied as it is when approved.
    public var content: [UInt8]
    /// What became of it.
    public var decision: TrustChangeDecision
    /// When an operator decided.
    public var decidedAt: Date?

    public init(
        id: Int64 = 0, source: String, heldAt: Date, version: String?, reason: String, summary: String,
        contentDigest: String, content: [UInt8], decision: TrustChangeDecision = .pending, decidedAt: Date? = nil
    ) {
        self.id = id
        self.source = source
        self.heldAt = heldAt
        self.version = version
        self.reason = reason
        self.summary = summary
        self.contentDigest = contentDigest
        self.content = content
        self.decision = decision
        self.decidedAt = decidedAt
    }
}

/// What an audit line records.
public enum TrustAuditAction: String, Sendable, Equatable, CaseIterable {
    /// A change applied unattended.
    case applied
    /// A change held for an operator.
    case held
    /// A held change an operator applied.
    case approved
    /// A held change an operator refused.
    case rejected
    /// A fetch or check that failed: nothing changed.
    case failed
}

/// One audit line: what a source did to the trust, or why it did nothing.
public struct TrustAuditEntry: Sendable, Equatable {
    /// When.
    public var at: Date
    /// The source.
    public var source: String
    /// What happened.
    public var action: TrustAuditAction
    /// What was added and removed, or why nothing was.
    public var detail: String

    public init(at: Date, source: String, action: TrustAuditAction, detail: String) {
        self.at = at
        self.source = source
        self.action = action
        self.detail = detail
    }

    /// `SOURCE ACTION: DETAIL`, as the log and `trust status` print it.
    public var line: String { "\(source) \(action.rawValue): \(detail)" }
}

extension ServerSchema {
    /// Version 12: the server follows its trust publishers (issue 49). An issuer key remembers the source that
    /// brought it (NULL: added by hand), so that a source removes only its own keys; each source's state, the changes
    /// held for an operator and the audit lines have tables of their own.
    static func version12Statements(dialect: Dialect) -> [String] {
        let integer = dialect == .sqlite ? "INTEGER" : "BIGINT"
        return [
            "ALTER TABLE issuer_key ADD COLUMN source TEXT",
            """
            CREATE TABLE trust_source (
                name TEXT PRIMARY KEY,
                kind TEXT NOT NULL,
                last_attempt \(integer),
                last_success \(integer),
                last_change \(integer),
                version TEXT,
                etag TEXT,
                last_modified TEXT,
                last_error TEXT,
                failures \(integer) NOT NULL DEFAULT 0,
                content_digest TEXT
            )
            """,
            """
            CREATE TABLE trust_pending (
                id \(integer) PRIMARY KEY,
                source TEXT NOT NULL,
                held_at \(integer) NOT NULL,
                version TEXT,
                reason TEXT NOT NULL,
                summary TEXT NOT NULL,
                content_digest TEXT NOT NULL,
                content TEXT NOT NULL,
                decision TEXT NOT NULL,
                decided_at \(integer)
            )
            """,
            "CREATE INDEX trust_pending_by_source ON trust_pending (source, content_digest)",
            """
            CREATE TABLE trust_audit (
                id \(integer) PRIMARY KEY,
                at \(integer) NOT NULL,
                source TEXT NOT NULL,
                action TEXT NOT NULL,
                detail TEXT NOT NULL
            )
            """,
        ]
    }
}

extension ServerSchema {
    /// Version 13: an inspection keeps the key that verified its ticket, as validators send it (NULL from older
    /// ones): a key list dropping a key tickets verified with lately is held for an operator.
    static func version13Statements(dialect: Dialect) -> [String] {
        ["ALTER TABLE inspection ADD COLUMN key_id TEXT"]
    }
}

extension SQLServerStore {
    // MARK: Sources' state

    public func trustSourceStates() async throws(ServerError) -> [TrustSourceState] {
        try await read("read the trust sources") { [byteOrder] session in
            try await session.query("SELECT * FROM trust_source ORDER BY name\(byteOrder)").map(Self.trustSourceState)
        }
    }

    public func recordTrustSourceState(_ state: TrustSourceState) async throws(ServerError) {
        try Self.refuseNUL(["source": state.name, "error": state.lastError ?? "", "version": state.version ?? ""])
        try await write("record trust source \(state.name)") { session in
            try await Self.upsert(state, in: session)
        }
    }

    static func upsert(_ state: TrustSourceState, in session: any SQLSession) async throws {
        try await session.execute(
            """
            INSERT INTO trust_source (name, kind, last_attempt, last_success, last_change, version, etag,
                last_modified, last_error, failures, content_digest)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, last_attempt = excluded.last_attempt,
                last_success = excluded.last_success, last_change = excluded.last_change, version = excluded.version,
                etag = excluded.etag, last_modified = excluded.last_modified, last_error = excluded.last_error,
                failures = excluded.failures, content_digest = excluded.content_digest
            """,
            state.name, state.kind, state.lastAttempt?.unixMilliseconds, state.lastSuccess?.unixMilliseconds,
            state.lastChange?.unixMilliseconds, state.version, state.etag, state.lastModified, state.lastError,
            Int64(state.failures), state.contentDigest)
    }

    private static func trustSourceState(_ row: SQLRow) throws -> TrustSourceState {
        TrustSourceState(
            name: try row.text("name"), kind: try row.text("kind"),
            lastAttempt: try row.optionalInteger("last_attempt").map(Date.init(unixMilliseconds:)),
            lastSuccess: try row.optionalInteger("last_success").map(Date.init(unixMilliseconds:)),
            lastChange: try row.optionalInteger("last_change").map(Date.init(unixMilliseconds:)),
            version: try row.optionalText("version"), etag: try row.optionalText("etag"),
            lastModified: try row.optionalText("last_modified"), lastError: try row.optionalText("last_error"),
            failures: Int(try row.integer("failures")), contentDigest: try row.optionalText("content_digest"))
    }

    // MARK: Audit

    public func trustAudit(source: String? = nil, limit: Int) async throws(ServerError) -> [TrustAuditEntry] {
        try await read("read the trust audit") { session in
            let rows =
                if let source {
                    try await session.query(
                        "SELECT * FROM trust_audit WHERE source = ? ORDER BY id DESC LIMIT ?", source, Int64(limit))
                } else {
                    try await session.query("SELECT * FROM trust_audit ORDER BY id DESC LIMIT ?", Int64(limit))
                }
            return try rows.map { row in
                TrustAuditEntry(
                    at: Date(unixMilliseconds: try row.integer("at")), source: try row.text("source"),
                    action: TrustAuditAction(rawValue: try row.text("action")) ?? .failed,
                    detail: try row.text("detail"))
            }
        }
    }

    public func recordTrustAudit(_ entry: TrustAuditEntry, state: TrustSourceState) async throws(ServerError) {
        try Self.refuseNUL(["detail": entry.detail, "error": state.lastError ?? ""])
        try await write("record the trust audit") { session in
            try await Self.audit(entry, in: session)
            try await Self.upsert(state, in: session)
        }
    }

    static func audit(_ entry: TrustAuditEntry, in session: any SQLSession) async throws {
        let id =
            try await session.query("SELECT coalesce(max(id), 0) + 1 AS next FROM trust_audit").first?
            .integer("next") ?? 1
        try await session.execute(
            "INSERT INTO trust_audit (id, at, source, action, detail) VALUES (?, ?, ?, ?, ?)", id,
            entry.at.unixMilliseconds, entry.source, entry.action.rawValue, entry.detail)
    }

    // MARK: Keys a source brought

    /// The issuer keys `source` brought (its scope: only these may it remove).
    public func issuerKeys(fromSource source: String) async throws(ServerError) -> [BundleKey] {
        try await issuerKeys(source: source)
    }

    /// Applies a source's keys in one transaction: `adding` are stored (replacing the same key, which the source
    /// then owns), `removing` (keys the source brought) go; the source's state and the audit line are written in the
    /// same transaction, so that a failure leaves the keys, the state and the audit as they were.
    public func applySourceKeys(
        source: String, adding: [BundleKey], removing: [BundleKey], state: TrustSourceState, audit: TrustAuditEntry
    ) async throws(ServerError) {
        for key in adding + removing {
            try Self.refuseNUL([
                "format": key.format, "issuer": key.issuer.rawValue, "key id": key.keyID.rawValue,
                "algorithm": key.algorithm ?? "", "version type": key.versionType ?? "",
                "barcode version": key.barcodeVersion ?? "",
                "product owners": key.allowedProductOwnerCodes.joined(separator: ","),
            ])
        }
        try Self.refuseNUL(["detail": audit.detail])
        let now = audit.at
        try await write("apply the keys of source \(source)") { session in
            for key in removing {
                try await session.execute(
                    """
                    DELETE FROM issuer_key WHERE format = ? AND issuer = ? AND key_id = ? AND version_type = ?
                        AND barcode_version = ? AND source = ?
                    """, key.format, key.issuer, key.keyID, key.versionType ?? "", key.barcodeVersion ?? "", source)
            }
            for key in adding {
                try await session.execute(
                    """
                    INSERT INTO issuer_key (format, issuer, key_id, version_type, barcode_version, algorithm, spki,
                        not_before, not_after, added_at, certificate, vdv_root, key_forged, product_owners, source)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (format, issuer, key_id, version_type, barcode_version) DO UPDATE SET
                        algorithm = excluded.algorithm, spki = excluded.spki, not_before = excluded.not_before,
                        not_after = excluded.not_after, added_at = excluded.added_at,
                        certificate = excluded.certificate, vdv_root = excluded.vdv_root,
                        key_forged = excluded.key_forged, product_owners = excluded.product_owners,
                        source = excluded.source
                    """,
                    key.format, key.issuer, key.keyID, key.versionType ?? "", key.barcodeVersion ?? "",
                    key.algorithm, Data(key.spki).base64EncodedString(), key.notBefore?.unixMilliseconds,
                    key.notAfter?.unixMilliseconds, now.unixMilliseconds,
                    key.certificate.map { Data($0).base64EncodedString() }, key.root, key.keyForged,
                    key.allowedProductOwnerCodes.isEmpty
                        ? String?.none : key.allowedProductOwnerCodes.joined(separator: ","), source)
            }
            try await Self.audit(audit, in: session)
            try await Self.upsert(state, in: session)
        }
    }

    /// The keys (`issuer`, `key id`) that verified a ticket `valid` at or after `date`, by the inspections validators
    /// uploaded: a key list that would drop one of them is held for an operator.
    public func keysVerifying(since date: Date) async throws(ServerError) -> Set<KeyUse> {
        try await read("read the keys tickets verified with") { session in
            Set(
                try await session.query(
                    """
                    SELECT DISTINCT issuer, key_id FROM inspection
                    WHERE inspected_at >= ? AND verdict = 'valid' AND key_id IS NOT NULL AND issuer IS NOT NULL
                    """, date.unixMilliseconds
                ).map { row in KeyUse(issuer: IssuerID(try row.text("issuer")), keyID: KeyID(try row.text("key_id"))) })
        }
    }

    /// How many entries the server holds of `list`: a new version with far fewer is held for an operator.
    public func blocklistEntryCount(_ list: BlocklistKind) async throws(ServerError) -> Int {
        try await read("count the \(list.displayName)'s entries") { session in
            Int(
                try await session.query("SELECT count(*) AS held FROM blocklist_entry WHERE list = ?", list.rawValue)
                    .first?.integer("held") ?? 0)
        }
    }

    /// Every entry the server holds of `list`, in key order.
    public func blocklistEntries(_ list: BlocklistKind) async throws(ServerError) -> [BlocklistEntry] {
        try await read("read the \(list.displayName)'s entries") { session in
            try await session.query(
                """
                SELECT list, entry_type, org_id, item, instance_num, lock_mode FROM blocklist_entry WHERE list = ?
                ORDER BY entry_type, org_id, item
                """, list.rawValue
            ).map { row in try BlocklistRow.entry(row) }
        }
    }

    // MARK: Changes held for an operator

    /// Holds a change for an operator, with its audit line and the source's state, in one transaction; returns its
    /// number.
    @discardableResult
    public func holdTrustChange(
        _ change: PendingTrustChange, state: TrustSourceState, audit: TrustAuditEntry
    ) async throws(ServerError) -> Int64 {
        try Self.refuseNUL(["reason": change.reason, "summary": change.summary, "detail": audit.detail])
        return try await write("hold a change of source \(change.source)") { session in
            let id =
                try await session.query("SELECT coalesce(max(id), 0) + 1 AS next FROM trust_pending").first?
                .integer("next") ?? 1
            try await session.execute(
                """
                INSERT INTO trust_pending (id, source, held_at, version, reason, summary, content_digest, content,
                    decision, decided_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, id, change.source, change.heldAt.unixMilliseconds, change.version, change.reason,
                change.summary, change.contentDigest, Data(change.content).base64EncodedString(),
                TrustChangeDecision.pending.rawValue, Int64?.none)
            try await Self.audit(audit, in: session)
            try await Self.upsert(state, in: session)
            return id
        }
    }

    /// The changes held, newest first: pending only, or all.
    public func trustChanges(pendingOnly: Bool) async throws(ServerError) -> [PendingTrustChange] {
        try await read("read the held changes") { session in
            let rows =
                pendingOnly
                ? try await session.query(
                    "SELECT * FROM trust_pending WHERE decision = ? ORDER BY id DESC",
                    TrustChangeDecision.pending.rawValue)
                : try await session.query("SELECT * FROM trust_pending ORDER BY id DESC")
            return try rows.map(Self.pendingChange)
        }
    }

    /// The held change numbered `id`.
    public func trustChange(id: Int64) async throws(ServerError) -> PendingTrustChange? {
        try await read("read held change \(id)") { session in
            try await session.query("SELECT * FROM trust_pending WHERE id = ?", id).first.map(Self.pendingChange)
        }
    }

    /// The decision on the content `digest` of `source`, if it was held before (pending, approved or rejected).
    public func trustChange(source: String, digest: String) async throws(ServerError) -> PendingTrustChange? {
        try await read("read the held changes of \(source)") { session in
            try await session.query(
                "SELECT * FROM trust_pending WHERE source = ? AND content_digest = ? ORDER BY id DESC LIMIT 1",
                source, digest
            ).first.map(Self.pendingChange)
        }
    }

    /// Records an operator's decision on a pending change (with its audit line); false when it is not pending.
    public func decideTrustChange(
        id: Int64, _ decision: TrustChangeDecision, audit: TrustAuditEntry
    ) async throws(ServerError) -> Bool {
        try Self.refuseNUL(["detail": audit.detail])
        return try await write("decide held change \(id)") { session in
            let updated = try await session.query(
                "UPDATE trust_pending SET decision = ?, decided_at = ? WHERE id = ? AND decision = ? RETURNING id",
                decision.rawValue, audit.at.unixMilliseconds, id, TrustChangeDecision.pending.rawValue)
            guard !updated.isEmpty else { return false }
            try await Self.audit(audit, in: session)
            return true
        }
    }

    private static func pendingChange(_ row: SQLRow) throws -> PendingTrustChange {
        PendingTrustChange(
            id: try row.integer("id"), source: try row.text("source"),
            heldAt: Date(unixMilliseconds: try row.integer("held_at")), version: try row.optionalText("version"),
            reason: try row.text("reason"), summary: try row.text("summary"),
            contentDigest: try row.text("content_digest"),
            content: Array(Data(base64Encoded: try row.text("content")) ?? Data()),
            decision: TrustChangeDecision(rawValue: try row.text("decision")) ?? .pending,
            decidedAt: try row.optionalInteger("decided_at").map(Date.init(unixMilliseconds:)))
    }
}
