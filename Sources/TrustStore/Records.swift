import FareCore
import Foundation
import GRDB
import Signatures
import Verification

/// A trusted public key as stored.
public struct KeyRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "key"

    /// The key's family (stored under its store name: `fc1`, `uic-918-3`, `vdv-ka`).
    public var family: KeyFamily
    /// The issuer the key belongs to.
    public var issuer: IssuerID
    /// The key id as tickets carry it (lowercase hex for FC1).
    public var keyID: KeyID
    /// `ES256`, `EdDSA`, `PS256`, or the key list's algorithm text.
    public var algorithm: String?
    /// The public key, DER SubjectPublicKeyInfo.
    public var spki: [UInt8]
    /// The certificate the key came in, DER, when it came in one.
    public var certificate: [UInt8]?
    /// Validity of the key, Unix seconds.
    public var notBefore: Int64?
    public var notAfter: Int64?
    /// Where the key came from (`generated`, a file name, `uic-key-list`).
    public var source: String
    /// When it was added, Unix seconds.
    public var addedAt: Int64
    /// The issuer's name, where a key list gives one (UIC: `issuerName`).
    public var issuerName: String?
    /// What the key signs, where a key list says (UIC `versionType`: TLB, FCB, DOS, SSB …; empty when the list
    /// gives none); `nil` for a key that did not come with a key list entry (added by hand, FC1, VDV).
    public var versionType: String?
    /// The UIC key list's `barcodeVersion` as written (empty when it gives none); `nil` as for `versionType`.
    public var barcodeVersion: String?
    /// Whether the UIC key list marks the key as forged (`keyForged`).
    public var forged: Bool
    /// The UIC key list's `allowedProductOwnerCodes`, normalised; empty when it names none.
    public var allowedProductOwners: [String]

    /// Whether the key came with a key list entry (its scope is what the entry says; see `UICKeyScope`).
    public var isListed: Bool { versionType != nil || barcodeVersion != nil }

    /// What tells one stored key from another: the table's primary key.
    public struct Identity: Hashable, Sendable {
        public var family: KeyFamily
        public var issuer: IssuerID
        public var keyID: KeyID
        public var versionType: String
        public var barcodeVersion: String
    }

    /// The key's identity in the store.
    public var identity: Identity {
        Identity(
            family: family, issuer: issuer, keyID: keyID, versionType: versionType ?? "",
            barcodeVersion: barcodeVersion ?? "")
    }
    /// What the key is trusted for: tickets (the default) or staff badges.
    public var purpose: KeyPurpose

    // Rows are read and written by hand: Codable would store `[UInt8]` as JSON text, not as a blob.
    public init(row: Row) throws {
        family = try KeyFamily.fromRow(row)
        issuer = row["issuer"]
        keyID = row["key_id"]
        algorithm = row["algorithm"]
        spki = Array(row["spki"] as Data)
        certificate = (row["certificate"] as Data?).map { Array($0) }
        notBefore = row["not_before"]
        notAfter = row["not_after"]
        source = row["source"]
        addedAt = row["added_at"]
        issuerName = row["issuer_name"]
        let listed: Bool = row["listed"]
        versionType = listed ? row["version_type"] : nil
        barcodeVersion = listed ? row["barcode_version"] : nil
        forged = row["key_forged"]
        let owners: String? = row["product_owners"]
        allowedProductOwners = owners.map { $0.split(separator: ",").map(String.init) } ?? []
        let purposeName: String = row["purpose"] ?? KeyPurpose.tickets.rawValue
        guard let purpose = KeyPurpose(rawValue: purposeName) else {
            throw DatabaseError(message: "unknown key purpose \"\(purposeName)\" in the store")
        }
        self.purpose = purpose
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["format"] = family.storeName
        container["issuer"] = issuer
        container["key_id"] = keyID
        container["algorithm"] = algorithm
        container["spki"] = Data(spki)
        container["certificate"] = certificate.map { Data($0) }
        container["not_before"] = notBefore
        container["not_after"] = notAfter
        container["source"] = source
        container["added_at"] = addedAt
        container["issuer_name"] = issuerName
        // The list's fields are part of the primary key, so never NULL: `listed` tells an empty one from none.
        container["version_type"] = versionType ?? ""
        container["barcode_version"] = barcodeVersion ?? ""
        container["listed"] = isListed
        container["key_forged"] = forged
        container["product_owners"] = allowedProductOwners.isEmpty ? nil : allowedProductOwners.joined(separator: ",")
        container["purpose"] = purpose.rawValue
    }

    public init(
        family: KeyFamily, issuer: IssuerID, keyID: KeyID, algorithm: String?, spki: [UInt8],
        certificate: [UInt8]? = nil,
        notBefore: Date? = nil, notAfter: Date? = nil, source: String, addedAt: Date = Date(),
        issuerName: String? = nil, versionType: String? = nil, barcodeVersion: String? = nil, forged: Bool = false,
        allowedProductOwners: [String] = [], purpose: KeyPurpose = .tickets
    ) {
        self.purpose = purpose
        self.issuerName = issuerName
        self.versionType = versionType
        self.barcodeVersion = barcodeVersion
        self.forged = forged
        self.allowedProductOwners = allowedProductOwners
        self.family = family
        self.issuer = issuer
        self.keyID = keyID
        self.algorithm = algorithm
        self.spki = spki
        self.certificate = certificate
        self.notBefore = notBefore.map { Int64($0.timeIntervalSince1970) }
        self.notAfter = notAfter.map { Int64($0.timeIntervalSince1970) }
        self.source = source
        self.addedAt = Int64(addedAt.timeIntervalSince1970)
    }

    public var notBeforeDate: Date? { notBefore.map { Date(timeIntervalSince1970: TimeInterval($0)) } }
    public var notAfterDate: Date? { notAfter.map { Date(timeIntervalSince1970: TimeInterval($0)) } }

    /// What the key list says the key is for, as the verifier judges it; `nil` for a key without a list entry.
    public var listing: UICKeyListing? {
        guard isListed else { return nil }
        return UICKeyListing(
            versionType: versionType ?? "", barcodeVersion: barcodeVersion ?? "", forged: forged,
            allowedProductOwners: allowedProductOwners)
    }

    /// The key as the verifier uses it, with its parsed public key.
    public func trustedKey(_ publicKey: PublicKey) -> TrustedKey {
        TrustedKey(
            family: family, issuer: issuer, keyID: keyID, algorithm: algorithm, publicKey: publicKey,
            notBefore: notBeforeDate, notAfter: notAfterDate, listing: listing, purpose: purpose)
    }
}

/// A revoked ticket as stored.
public struct TicketRevocationRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "revoked_ticket"
    public var issuer: IssuerID
    public var ticketID: TicketID
    public var reason: String?
    public var revokedAt: Int64

    public init(row: Row) throws {
        issuer = row["issuer"]
        ticketID = TicketID(Array(row["ticket_id"] as Data))
        reason = row["reason"]
        revokedAt = row["revoked_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["issuer"] = issuer
        container["ticket_id"] = Data(ticketID.bytes)
        container["reason"] = reason
        container["revoked_at"] = revokedAt
    }

    public init(issuer: IssuerID, ticketID: TicketID, reason: String?, revokedAt: Date = Date()) {
        self.issuer = issuer
        self.ticketID = ticketID
        self.reason = reason
        self.revokedAt = Int64(revokedAt.timeIntervalSince1970)
    }
}

/// A revoked key as stored.
public struct KeyRevocationRecord: Sendable, Equatable, FetchableRecord, PersistableRecord {
    public static let databaseTableName = "revoked_key"
    public var family: KeyFamily
    public var issuer: IssuerID
    public var keyID: KeyID
    public var reason: String?
    public var revokedAt: Int64

    public init(row: Row) throws {
        family = try KeyFamily.fromRow(row)
        issuer = row["issuer"]
        keyID = row["key_id"]
        reason = row["reason"]
        revokedAt = row["revoked_at"]
    }

    public func encode(to container: inout PersistenceContainer) throws {
        container["format"] = family.storeName
        container["issuer"] = issuer
        container["key_id"] = keyID
        container["reason"] = reason
        container["revoked_at"] = revokedAt
    }

    public init(family: KeyFamily, issuer: IssuerID, keyID: KeyID, reason: String?, revokedAt: Date = Date()) {
        self.family = family
        self.issuer = issuer
        self.keyID = keyID
        self.reason = reason
        self.revokedAt = Int64(revokedAt.timeIntervalSince1970)
    }
}

extension KeyFamily {
    /// The family in a key or key revocation row's `format` column; a name this farecheck does not know fails
    /// the read rather than being guessed.
    static func fromRow(_ row: Row) throws -> KeyFamily {
        let name: String = row["format"]
        guard let family = KeyFamily(storeName: name) else {
            throw DatabaseError(message: "unknown key family \"\(name)\" in the store")
        }
        return family
    }
}
