import FareCore
import Foundation
import GRDB
import Signatures
import Synchronization
import TicketFormats
import Verification

/// A VDV certification authority as the store keeps it: the certificate body, found by its own holder
/// reference (CHR), and how it came to be trusted.
public struct VDVAuthorityRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "vdv_authority"

    /// The CHR, 16 hex digits: the CA reference tickets and certificates name.
    public var reference: String
    /// The certificate body (tag `5F4E` content), in clear.
    public var body: [UInt8]
    /// `pinned-root`, `verified` (under `root`) or `trusted-unsigned`.
    public var origin: String
    /// The root a verified sub-CA was recovered under (CHR hex).
    public var root: String?
    /// The file it was imported from, or `sync`.
    public var source: String
    /// When it was imported, Unix seconds.
    public var addedAt: Int64

    /// The record of an accepted authority.
    public init(_ authority: VDVAuthority, source: String, addedAt: Date = Date()) {
        reference = authority.reference.bytes.hexString
        body = authority.certificate.body
        switch authority.origin {
        case .pinnedRoot:
            origin = Self.pinnedRoot
            root = nil
        case .verified(let under):
            origin = Self.verified
            root = under.bytes.hexString
        case .trustedUnsigned:
            origin = Self.trustedUnsigned
            root = nil
        }
        self.source = source
        self.addedAt = Int64(addedAt.timeIntervalSince1970)
    }

    public init(row: Row) throws {
        reference = row["reference"]
        body = Array(row["body"] as Data)
        origin = row["origin"]
        root = row["root"]
        source = row["source"]
        addedAt = row["added_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["reference"] = reference
        container["body"] = Data(body)
        container["origin"] = origin
        container["root"] = root
        container["source"] = source
        container["added_at"] = addedAt
    }

    static let pinnedRoot = "pinned-root"
    static let verified = "verified"
    static let trustedUnsigned = "trusted-unsigned"

    /// The authority again, its key built: what the verifier uses.
    ///
    /// - Throws: `VDVImportError` when the stored body no longer parses (a damaged row).
    public func authority() throws(VDVImportError) -> VDVAuthority {
        let certificate: VDVCertificate
        do {
            certificate = try VDVCertificate(parsing: body)
        } catch {
            throw VDVImportError("stored certificate \(reference) does not parse: \(error.message)")
        }
        let origin: VDVAuthority.Origin
        switch self.origin {
        case Self.pinnedRoot: origin = .pinnedRoot
        case Self.verified:
            guard let root, let reference = VDVCAReference(hex: root) else {
                throw VDVImportError("stored certificate \(reference) names no root it was verified under")
            }
            origin = .verified(under: reference)
        default: origin = .trustedUnsigned
        }
        return try VDVAuthority(certificate: certificate, origin: origin)
    }
}

extension TrustStore {
    /// Saves a VDV authority (a pinned root or an accepted sub-CA), replacing one with the same CHR.
    public func saveVDVAuthority(_ authority: VDVAuthority, source: String) throws(StoreError) {
        let record = VDVAuthorityRecord(authority, source: source)
        try write { db in
            try record.save(db)
            try Self.vdvAuthoritiesChanged(db)
            try Self.trustChanged(db)
        }
    }

    /// Inside a bundle's transaction: the synced authorities (source `sync`) become `records`; an authority
    /// imported locally with the same CHR stays as it is, and is not counted.
    static func replaceSyncedVDVAuthorities(
        with records: [VDVAuthorityRecord], in db: Database
    ) throws -> (added: Int, updated: Int, removed: Int) {
        let held = try VDVAuthorityRecord.fetchAll(db)
        let local = Set(held.filter { $0.source != syncSource }.map(\.reference))
        let synced = Set(held.filter { $0.source == syncSource }.map(\.reference))
        var added = 0
        var updated = 0
        var kept = Set<String>()
        for record in records where !local.contains(record.reference) {
            if synced.contains(record.reference) { updated += 1 } else { added += 1 }
            try record.save(db)
            kept.insert(record.reference)
        }
        let stale = synced.subtracting(kept)
        for reference in stale {
            try VDVAuthorityRecord.deleteOne(db, key: ["reference": reference])
        }
        if !records.isEmpty || !stale.isEmpty { try vdvAuthoritiesChanged(db) }
        return (added, updated, stale.count)
    }

    /// Counts a change of the VDV authorities, inside the writing transaction: `StoreVDVCertificates` reloads
    /// when the count moved (a counter, not a time, so that two changes in one millisecond are both seen).
    static func vdvAuthoritiesChanged(_ db: Database) throws {
        try db.execute(
            sql: "INSERT INTO meta(name, value) VALUES ('vdv_generation', '1') "
                + "ON CONFLICT(name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)")
    }

    /// How many times the VDV authorities changed (0 before the first change).
    public func vdvGeneration() throws(StoreError) -> Int64 {
        try read { db in
            try String.fetchOne(
                db.cachedStatement(sql: "SELECT value FROM meta WHERE name = 'vdv_generation'")
            ).flatMap { Int64($0) } ?? 0
        }
    }

    /// Every VDV authority, by CHR.
    public func vdvAuthorities() throws(StoreError) -> [VDVAuthorityRecord] {
        try read { db in try VDVAuthorityRecord.order(Column("reference")).fetchAll(db) }
    }

    /// Removes the VDV authority with CHR `reference` (16 hex digits); whether there was one.
    @discardableResult
    public func removeVDVAuthority(_ reference: String) throws(StoreError) -> Bool {
        try write { db in
            let removed = try VDVAuthorityRecord.deleteOne(db, key: ["reference": reference.lowercased()])
            if removed {
                try Self.vdvAuthoritiesChanged(db)
                try Self.trustChanged(db)
            }
            return removed
        }
    }

    /// The pinned VDV roots, for checking a sub-CA at import.
    public func pinnedVDVRoots() throws(StoreError) -> [VDVAuthority] {
        try vdvAuthorities().filter { $0.origin == VDVAuthorityRecord.pinnedRoot }.compactMap { try? $0.authority() }
    }

    /// The VDV authorities loaded once, keys built, for the verifier (as `StoreTrust` serves keys); rows that
    /// no longer parse are skipped and named in `skipped`.
    public func vdvCertificateSet() throws(StoreError) -> (certificates: VDVCertificateSet, skipped: [String]) {
        var set = VDVCertificateSet()
        var skipped: [String] = []
        for record in try vdvAuthorities() {
            do {
                set.add(try record.authority())
            } catch {
                skipped.append("VDV certificate \(record.reference): \(error.message)")
            }
        }
        return (set, skipped)
    }
}

/// The VDV authorities for a long-running verifier (the daemon): held in memory, keys built, and loaded again
/// when the store's VDV authorities changed (a sync round, `farecheck keys import --vdv`, `keys remove`).
///
/// Whether they changed is a counter in the store (`TrustStore.vdvGeneration()`), read at most once per
/// `recheckInterval`: a lookup is otherwise a read from memory (a store read would cost more than the rest of a
/// warm VDV verification), and a change counts from the first scan after the interval. Only when the counter
/// moved are the authorities read and their keys built again. A store that fails to answer fails the lookup
/// (the verifier reports it), as `StoreTrust` does.
public final class StoreVDVCertificates: VDVCertificateSource, Sendable {
    private struct Loaded: Sendable {
        var generation: Int64
        var certificates: VDVCertificateSet
        var checkedAt: ContinuousClock.Instant
    }

    private let store: TrustStore
    private let loaded: Mutex<Loaded>
    private let onSkipped: @Sendable ([String]) -> Void
    /// How long a loaded set is used before the store's counter is read again.
    public let recheckInterval: Duration

    /// Loads the authorities now; `onSkipped` hears of rows that no longer parse, at every load.
    ///
    /// - Throws: `StoreError` when the store cannot be read.
    public init(
        store: TrustStore, recheckInterval: Duration = .seconds(1),
        onSkipped: @escaping @Sendable ([String]) -> Void = { _ in }
    ) throws(StoreError) {
        self.store = store
        self.recheckInterval = recheckInterval
        self.onSkipped = onSkipped
        let generation = try store.vdvGeneration()
        let set = try store.vdvCertificateSet()
        if !set.skipped.isEmpty { onSkipped(set.skipped) }
        loaded = Mutex(Loaded(generation: generation, certificates: set.certificates, checkedAt: .now))
    }

    /// How many authorities are loaded now.
    public var count: Int { loaded.withLock { $0.certificates.count } }

    /// The authority whose holder reference is `reference`, from the set loaded last (reloaded first when the
    /// store's changed since).
    ///
    /// - Throws: `StoreError` when the store cannot be read.
    public func authority(_ reference: VDVCAReference) throws -> VDVAuthority? {
        try current().authority(reference)
    }

    /// The authorities, loaded again first if the store's changed.
    private func current() throws -> VDVCertificateSet {
        let now = ContinuousClock.now
        let interval = recheckInterval
        if let fresh = loaded.withLock({ now - $0.checkedAt < interval ? $0.certificates : nil }) {
            return fresh
        }
        let generation = try store.vdvGeneration()
        let unchanged = loaded.withLock { state -> VDVCertificateSet? in
            guard state.generation == generation else { return nil }
            state.checkedAt = now
            return state.certificates
        }
        if let unchanged { return unchanged }
        // Read outside the lock; two scans racing here both load, and the newer generation stays.
        let set = try store.vdvCertificateSet()
        if !set.skipped.isEmpty { onSkipped(set.skipped) }
        loaded.withLock { state in
            if generation >= state.generation {
                state = Loaded(generation: generation, certificates: set.certificates, checkedAt: now)
            }
        }
        return set.certificates
    }
}
