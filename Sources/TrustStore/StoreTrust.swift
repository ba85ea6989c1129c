import FareCore
import Foundation
import GRDB
import Signatures
import Synchronization
import Verification

/// The verifier's view of the store, looked up live: every key and revocation lookup is an indexed read.
///
/// Unlike ``TrustStore/snapshot()``, nothing is loaded at start, so a daemon with 100,000 keys and millions
/// of revocations is ready at once and holds little memory; and a key or revocation written by sync or the
/// CLI counts from the next scan on, with no reload. WAL lets these reads run while a writer applies a
/// bundle. Each lookup is one statement outside an explicit transaction (`TrustStore.lookup`, or for revocations the
/// store's `LookupConnection`): it sees a sync page whole or not at all, as a transaction would. Parsed public keys are
/// cached by their SPKI bytes, so OpenSSL parses each key once.
///
/// The keys found are kept, each under its query, for as long as nothing was committed to the store since
/// (its data version, one `PRAGMA` read per verdict, is unchanged): a gate scanning tickets of a few keys reads the
/// key table only after a sync or an import changed the store.
public final class StoreTrust: KeyDirectory, RevocationList, Sendable {
    private let store: TrustStore
    private let parsedKeys = Mutex<[[UInt8]: PublicKey]>([:])
    /// Keys found by each query, and the store's data version they were read at.
    private let foundKeys = Mutex<(version: Int64, keys: [KeyQuery: [TrustedKey]])>((-1, [:]))

    /// What was asked of the key table.
    private enum KeyQuery: Hashable {
        case one(KeyFamily, issuer: IssuerID?, keyID: KeyID)
        case matching(KeyFamily, issuer: IssuerID, keyID: KeyID)
        case ofIssuer(KeyFamily, issuer: IssuerID)
    }
    /// Parsed keys kept at most; past this the cache starts over (keys are cheap to parse again).
    public let cacheLimit: Int

    public init(store: TrustStore, cacheLimit: Int = 10_000) {
        self.store = store
        self.cacheLimit = cacheLimit
    }

    public func key(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) throws -> TrustedKey? {
        try found(.one(family, issuer: issuer, keyID: keyID)) {
            let record = try store.lookup { db in
                // Statements prepared once per connection, as below: building and preparing the query for every
                // scan cost more than the indexed read itself.
                if let issuer {
                    try KeyRecord.fetchOne(
                        db.cachedStatement(
                            sql: "SELECT * FROM key WHERE format = ? AND key_id = ? AND issuer = ? LIMIT 1"),
                        arguments: [family.storeName, keyID, issuer])
                } else {
                    try KeyRecord.fetchOne(
                        db.cachedStatement(sql: "SELECT * FROM key WHERE format = ? AND key_id = ? LIMIT 1"),
                        arguments: [family.storeName, keyID])
                }
            }
            return record.map { [$0] } ?? []
        }.first
    }

    public func keys(family: KeyFamily, issuer: IssuerID, keyID: KeyID) throws -> [TrustedKey] {
        try found(.matching(family, issuer: issuer, keyID: keyID)) {
            try store.lookup { db in
                try KeyRecord.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM key WHERE format = ? AND key_id = ? AND issuer = ?"),
                    arguments: [family.storeName, keyID, issuer])
            }
        }
    }

    /// Every key of `family` of `issuer`: a read of the key table's primary key (format, issuer, key id) prefix.
    public func keys(family: KeyFamily, issuer: IssuerID) throws -> [TrustedKey] {
        try found(.ofIssuer(family, issuer: issuer)) {
            try store.lookup { db in
                try KeyRecord.fetchAll(
                    db.cachedStatement(sql: "SELECT * FROM key WHERE format = ? AND issuer = ? ORDER BY key_id"),
                    arguments: [family.storeName, issuer])
            }
        }
    }

    /// The keys of `query`: as found before if the store has not changed since, else read by `records` (and kept).
    ///
    /// The version is read before the records: a change committed between the two makes the next version differ,
    /// so keys read after it are never kept under a version that would outlive it.
    private func found(_ query: KeyQuery, records: () throws -> [KeyRecord]) throws -> [TrustedKey] {
        let version = try store.lookups.dataVersion()
        if let keys = foundKeys.withLock({ $0.version == version ? $0.keys[query] : nil }) { return keys }
        let read = try records()
        var keys: [TrustedKey] = []
        keys.reserveCapacity(read.count)
        for record in read { keys.append(record.trustedKey(try publicKey(record.spki))) }
        foundKeys.withLock { found in
            if found.version != version || found.keys.count >= cacheLimit { found = (version, [:]) }
            found.keys[query] = keys
        }
        return keys
    }

    public func revocation(ofTicket ticketID: TicketID, issuer: IssuerID) throws -> Revocation? {
        // On the store's own look-up connection: through the pool, taking and giving back a reader cost more than
        // the indexed read (``LookupConnection``).
        try store.lookups.ticket(issuer: issuer.rawValue, ticketID: ticketID.bytes).map(Self.revocation)
    }

    public func revocation(ofKey key: TrustedKey) throws -> Revocation? {
        try store.lookups.key(format: key.family.storeName, issuer: key.issuer.rawValue, keyID: key.keyID.rawValue)
            .map(Self.revocation)
    }

    private static func revocation(_ found: (reason: String?, revokedAt: Int64)) -> Revocation {
        Revocation(reason: found.reason, revokedAt: Date(timeIntervalSince1970: TimeInterval(found.revokedAt)))
    }

    /// The blocklist entry naming `key`: of a VDV-KA entitlement the one with the highest instance (local and
    /// synced lists both count), with its list's version. One indexed read through a cached statement.
    public func blocklistRevocation(for key: BlocklistKey) throws -> BlocklistRevocation? {
        switch key {
        case .vdvEntitlement(let organisation, let number):
            let row = try store.lookup { db in
                try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT e.instance_num, e.lock_mode, b.version FROM vdv_blocklist_entry e
                            LEFT JOIN blocklist b ON b.list = 'vdv-ka' AND b.source = e.source
                            WHERE e.type = 'B' AND e.org_id = ? AND e.number = ?
                            ORDER BY e.instance_num DESC LIMIT 1
                            """),
                    arguments: [Int64(organisation), Int64(number)]
                ).map { row -> (instance: Int64, mode: Int, version: String?) in (row[0], row[1], row[2]) }
            }
            guard let row, let mode = BlocklistLockMode(rawValue: row.mode) else { return nil }
            let entry = VDVBlocklistEntry(
                item: .entitlement, organisation: organisation, number: number, instance: row.instance, lockMode: mode)
            return BlocklistRevocation(version: row.version ?? "unknown", entry: .vdv(entry))
        case .dtvgTicket(let rics, let ticketID):
            let row = try store.lookup { db in
                try Row.fetchOne(
                    db.cachedStatement(
                        sql: """
                            SELECT b.version FROM dtvg_blocklist_entry e
                            LEFT JOIN blocklist b ON b.list = 'dtvg-uic' AND b.source = e.source
                            WHERE e.rics = ? AND e.ticket_id = ? LIMIT 1
                            """),
                    arguments: [Int64(rics), Data(ticketID)]
                ).map { row -> String? in row[0] }
            }
            guard let found = row else { return nil }
            let entry = DTVGBlocklistEntry(rics: rics, ticketID: String(decoding: ticketID, as: UTF8.self))
            return BlocklistRevocation(version: found ?? "unknown", entry: .dtvg(entry))
        }
    }

    private func publicKey(_ spki: [UInt8]) throws -> PublicKey {
        if let cached = parsedKeys.withLock({ $0[spki] }) { return cached }
        let parsed = try PublicKey(spkiDER: spki)
        parsedKeys.withLock { cache in
            if cache.count >= cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[spki] = parsed
        }
        return parsed
    }
}
