import FareCore
import Foundation
import GRDB
import Signatures
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
            try Self.trustChanged(db)
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
            if removed { try Self.trustChanged(db) }
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
