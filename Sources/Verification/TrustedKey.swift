import FareCore
import Foundation
import Signatures

/// What a trusted key may sign. A key has one purpose: a ticket issuer's key never logs an inspector in, and a
/// staff-badge key never makes a passenger's ticket valid.
public enum KeyPurpose: String, Sendable, Equatable, CaseIterable {
    /// Passenger tickets (every key imported, synced or listed before purposes existed).
    case tickets = "tickets"
    /// Staff badges: FC1 tickets of product `staff-badge` that log an inspector in on a handheld.
    case staffBadges = "staff-badge"
    /// Test tickets: a key its publisher marks as a test key (the UK RSP6 key list's `is_test`). What it signs is
    /// never valid in service: only a verifier told to accept test keys (a test bench) judges it as a ticket.
    case testTickets = "test-tickets"
}

/// A public key the validator trusts, with what it may sign and when.
public struct TrustedKey: Sendable {
    /// The family of the key: which formats it signs and how it is looked up.
    public var family: KeyFamily
    /// The issuer the key belongs to; a ticket claiming another issuer is rejected.
    public var issuer: IssuerID
    /// The key identifier as tickets carry it: lowercase hex for FC1.
    public var keyID: KeyID
    /// The algorithm the key is for, as recorded at import (`ES256`, `EdDSA`, `PS256`, or the
    /// UIC key list's text); `nil` when unknown.
    public var algorithm: String?
    /// The key itself.
    public var publicKey: PublicKey
    /// Start of the key's validity, if limited.
    public var notBefore: Date?
    /// End of the key's validity, if limited.
    public var notAfter: Date?
    /// What the UIC key list says the key is for (UIC keys from the list or a key bundle); `nil` for a key added
    /// by hand and for other families.
    public var listing: UICKeyListing?
    /// What the key may sign.
    public var purpose: KeyPurpose

    public init(
        family: KeyFamily, issuer: IssuerID, keyID: KeyID, algorithm: String?, publicKey: PublicKey,
        notBefore: Date? = nil, notAfter: Date? = nil, listing: UICKeyListing? = nil, purpose: KeyPurpose = .tickets
    ) {
        self.purpose = purpose
        self.family = family
        self.issuer = issuer
        self.keyID = keyID
        self.algorithm = algorithm
        self.publicKey = publicKey
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.listing = listing
    }
}

/// Why a ticket or key was revoked.
public struct Revocation: Sendable, Hashable {
    /// The reason recorded with the revocation, if any.
    public var reason: String?
    /// When it was revoked, if known.
    public var revokedAt: Date?

    public init(reason: String? = nil, revokedAt: Date? = nil) {
        self.reason = reason
        self.revokedAt = revokedAt
    }
}

/// Where the verifier finds keys. Implementations may be in memory or backed by the store.
public protocol KeyDirectory: Sendable {
    /// The key of `family` with identifier `keyID`; `issuer` narrows the search for families whose
    /// key ids are only unique per issuer (UIC). Throws only when the directory itself fails.
    func key(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) throws -> TrustedKey?

    /// Every key of `family` with identifier `keyID` of `issuer`: the UIC key list may hold several for one issuer
    /// and id (issuers reuse an id for different kinds of barcode), each judged for the barcode at hand. Throws
    /// only when the directory itself fails.
    func keys(family: KeyFamily, issuer: IssuerID, keyID: KeyID) throws -> [TrustedKey]

    /// Every key of `family` of `issuer`, whatever its id: for formats whose tickets name the issuer but no key
    /// (UK RSP6), so that each of the issuer's keys is tried. Throws only when the directory itself fails.
    func keys(family: KeyFamily, issuer: IssuerID) throws -> [TrustedKey]
}

/// Where the verifier learns about revoked tickets and keys.
public protocol RevocationList: Sendable {
    /// The revocation of ticket `ticketID` of `issuer`, if it is revoked.
    func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) throws -> Revocation?
    /// The revocation of `key`, if it is revoked.
    func revocation(ofKey key: TrustedKey) throws -> Revocation?
    /// The published blocklist entry (VDV-KA, DTVG) that names `key`, with its list's version, if one does.
    func blocklistRevocation(for key: BlocklistKey) throws -> BlocklistRevocation?
}

extension RevocationList {
    /// No blocklists: for revocation lists that hold none.
    public func blocklistRevocation(for key: BlocklistKey) throws -> BlocklistRevocation? { nil }
}

/// Where the verifier reads the trusted-time floor (the store keeps it, with the journal and the release date).
public protocol TrustedTimeFloorSource: Sendable {
    /// The floor now: the latest instant the real time is known to have reached; `nil` when nothing is known.
    /// Read for every verdict judged by the current clock, so it must be cheap. Throws only when the source
    /// itself fails.
    func trustedTimeFloor() throws -> TrustedTimeFloor?
}

/// The trust data held in memory: keys and revocations, as loaded from the store at start-up.
///
/// Lookups are dictionary reads, so verification never waits on disk.
public struct TrustSnapshot: KeyDirectory, RevocationList {
    private struct KeyIndex: Hashable {
        var family: KeyFamily
        var keyID: KeyID
    }

    private struct IssuerIndex: Hashable {
        var family: KeyFamily
        var issuer: IssuerID
    }

    private struct TicketIndex: Hashable {
        var issuer: IssuerID
        var ticketID: TicketID
    }

    private var keys: [KeyIndex: [TrustedKey]] = [:]
    private var keysByIssuer: [IssuerIndex: [TrustedKey]] = [:]
    private var revokedTickets: [TicketIndex: Revocation] = [:]
    private var revokedKeys: [RevokedKeyIndex: Revocation] = [:]
    private var blocklistEntries: [BlocklistKey: BlocklistRevocation] = [:]

    private struct RevokedKeyIndex: Hashable {
        var family: KeyFamily
        var issuer: IssuerID
        var keyID: KeyID
    }

    public init() {}

    /// How many keys the snapshot holds.
    public var keyCount: Int { keys.values.reduce(0) { $0 + $1.count } }

    /// Adds a key (several issuers may share a key id; they are told apart by issuer).
    public mutating func add(_ key: TrustedKey) {
        keys[KeyIndex(family: key.family, keyID: key.keyID), default: []].append(key)
        keysByIssuer[IssuerIndex(family: key.family, issuer: key.issuer), default: []].append(key)
    }

    /// Records a revoked ticket.
    public mutating func revokeTicket(_ ticketID: TicketID, issuer: IssuerID, _ revocation: Revocation = Revocation()) {
        revokedTickets[TicketIndex(issuer: issuer, ticketID: ticketID)] = revocation
    }

    /// Records a revoked key.
    public mutating func revokeKey(
        _ keyID: KeyID, issuer: IssuerID, family: KeyFamily, _ revocation: Revocation = Revocation()
    ) {
        revokedKeys[RevokedKeyIndex(family: family, issuer: issuer, keyID: keyID)] = revocation
    }

    /// Records a blocklist entry of the list's `version`; of two entries with one key, the higher VDV instance
    /// applies. A VDV user medium entry (type `A`) is ignored: it can match no scanned ticket.
    public mutating func addBlocklistEntry(_ entry: BlocklistEntry, version: String) {
        guard let key = BlocklistKey(entry: entry) else { return }
        if case .vdv(let new) = entry, case .vdv(let held)? = blocklistEntries[key]?.entry,
            held.instance > new.instance
        {
            return
        }
        blocklistEntries[key] = BlocklistRevocation(version: version, entry: entry)
    }

    public func key(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) -> TrustedKey? {
        guard let candidates = keys[KeyIndex(family: family, keyID: keyID)] else { return nil }
        guard let issuer else { return candidates.first }
        return candidates.first { $0.issuer == issuer }
    }

    public func keys(family: KeyFamily, issuer: IssuerID, keyID: KeyID) -> [TrustedKey] {
        keys[KeyIndex(family: family, keyID: keyID)]?.filter { $0.issuer == issuer } ?? []
    }

    public func keys(family: KeyFamily, issuer: IssuerID) -> [TrustedKey] {
        keysByIssuer[IssuerIndex(family: family, issuer: issuer)] ?? []
    }

    public func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) -> Revocation? {
        // Most snapshots revoke nothing: no key is then built and hashed for every verdict.
        revokedTickets.isEmpty ? nil : revokedTickets[TicketIndex(issuer: issuer, ticketID: ticketID)]
    }

    public func revocation(ofKey key: TrustedKey) -> Revocation? {
        revokedKeys.isEmpty
            ? nil : revokedKeys[RevokedKeyIndex(family: key.family, issuer: key.issuer, keyID: key.keyID)]
    }

    public func blocklistRevocation(for key: BlocklistKey) -> BlocklistRevocation? {
        blocklistEntries.isEmpty ? nil : blocklistEntries[key]
    }
}
