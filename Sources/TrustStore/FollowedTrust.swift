import FareCore
import Foundation
import GRDB
import TicketFormats
import ValidationAPI
import Verification

// Trust a stand-alone gate follows from its publishers itself (`[[trust.source]]` in `farecheck`'s configuration):
// what a source brought is kept under the source's own name, so that the source's next list replaces exactly what it
// brought, never a key imported by hand or synced from the agency's server.

extension KeyRecord {
    /// A key of a bundle (or of a followed publisher's list) as the store keeps it: its family and, for UIC keys,
    /// the issuer code and key id normalised as verification matches them (`0080` → `80`, `00001` → `1`); `nil`
    /// for a family this validator does not know.
    public init?(_ key: BundleKey, source: String, addedAt: Date = Date()) {
        guard let identity = Self.storeIdentity(format: key.format, issuer: key.issuer, keyID: key.keyID) else {
            return nil
        }
        self.init(
            family: identity.family, issuer: identity.issuer, keyID: identity.keyID, algorithm: key.algorithm,
            spki: key.spki, notBefore: key.notBefore, notAfter: key.notAfter, source: source, addedAt: addedAt,
            versionType: key.versionType, barcodeVersion: key.barcodeVersion, forged: key.keyForged,
            allowedProductOwners: key.allowedProductOwnerCodes.map(UICKeyList.normalizedCode))
    }

    /// A key's identity as the store keeps it (see `init(_:source:addedAt:)`); `nil` for an unknown family.
    public static func storeIdentity(format wireName: String, issuer: IssuerID, keyID: KeyID) -> (
        family: KeyFamily, issuer: IssuerID, keyID: KeyID
    )? {
        guard let family = KeyFamily(wireName: wireName) else { return nil }
        guard family == .uic else { return (family, issuer, keyID) }
        return (family, UICKeyList.normalizedCode(issuer), KeyID(UICKeyList.normalizedCode(keyID.rawValue)))
    }
}

/// What handing a followed source's keys to the store changed.
public struct FollowedKeysChange: Sendable, Equatable {
    /// Keys (and VDV authorities) the store did not hold.
    public var added = 0
    /// Held keys whose values changed (a new validity, a certificate renewed).
    public var changed = 0
    /// Keys the source no longer lists, taken off.
    public var removed = 0

    public init(added: Int = 0, changed: Int = 0, removed: Int = 0) {
        self.added = added
        self.changed = changed
        self.removed = removed
    }

    /// Whether the store is as it was.
    public var isEmpty: Bool { added == 0 && changed == 0 && removed == 0 }
}

extension TrustStore {
    /// The `source` the keys, VDV authorities and blocklists a followed publisher brought are stored under.
    public static func followedSource(_ name: String) -> String { "trust-source:\(name)" }

    /// Makes the keys and VDV authorities stored under `source` exactly `keys` and `vdvAuthorities`, in one
    /// transaction: new ones added, changed ones replaced, ones no longer listed removed. A key of the same identity
    /// held from elsewhere (imported by hand, synced) is replaced by the source's; nothing of another source is
    /// removed. The trust counts as changed only when something did, so that handing the same list over again (at
    /// every start) leaves the page's "trust data updated" as it was.
    @discardableResult
    public func replaceFollowedKeys(
        source: String, keys: [KeyRecord], vdvAuthorities: [VDVAuthority]
    ) throws(StoreError) -> FollowedKeysChange {
        let vdvRecords = vdvAuthorities.map { VDVAuthorityRecord($0, source: source) }
        return try write { db in
            var change = FollowedKeysChange()
            var kept = Set<KeyRecord.Identity>()
            // A followed list is tens or hundreds of keys, handed over when it changed: one read of the table.
            let heldByIdentity = Dictionary(
                try KeyRecord.fetchAll(db).map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
            for var record in keys {
                kept.insert(record.identity)
                if let held = heldByIdentity[record.identity] {
                    record.addedAt = held.addedAt
                    if held == record { continue }
                    change.changed += 1
                } else {
                    change.added += 1
                }
                try record.save(db)
            }
            for stale in try KeyRecord.filter(Column("source") == source).fetchAll(db)
            where !kept.contains(stale.identity) {
                try stale.delete(db)
                change.removed += 1
            }
            var vdvChanged = false
            var keptReferences = Set<String>()
            for var record in vdvRecords {
                keptReferences.insert(record.reference)
                if let held = try VDVAuthorityRecord.fetchOne(db, key: ["reference": record.reference]) {
                    record.addedAt = held.addedAt
                    if held.body == record.body, held.source == record.source, held.origin == record.origin {
                        continue
                    }
                    change.changed += 1
                } else {
                    change.added += 1
                }
                try record.save(db)
                vdvChanged = true
            }
            for stale in try VDVAuthorityRecord.filter(Column("source") == source).fetchAll(db)
            where !keptReferences.contains(stale.reference) {
                try VDVAuthorityRecord.deleteOne(db, key: ["reference": stale.reference])
                change.removed += 1
                vdvChanged = true
            }
            if vdvChanged { try Self.vdvAuthoritiesChanged(db) }
            if !change.isEmpty { try Self.trustChanged(db) }
            return change
        }
    }

    /// The keys stored under `source`.
    public func keys(fromSource source: String) throws(StoreError) -> [KeyRecord] {
        try read { db in try KeyRecord.filter(Column("source") == source).fetchAll(db) }
    }
}
