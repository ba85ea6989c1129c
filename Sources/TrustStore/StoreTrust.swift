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
/// bundle. Parsed public keys are cached by their SPKI bytes, so OpenSSL parses each key once.
public final class StoreTrust: KeyDirectory, RevocationList, Sendable {
    private let store: TrustStore
    private let parsedKeys = Mutex<[[UInt8]: PublicKey]>([:])
    /// Parsed keys kept at most; past this the cache starts over (keys are cheap to parse again).
    public let cacheLimit: Int

    public init(store: TrustStore, cacheLimit: Int = 10_000) {
        self.store = store
        self.cacheLimit = cacheLimit
    }

    public func key(family: KeyFamily, issuer: String?, keyID: String) throws -> TrustedKey? {
        let records = try store.read { db in
            var request = KeyRecord.filter(Column("format") == family.storeName && Column("key_id") == keyID)
            if let issuer { request = request.filter(Column("issuer") == issuer) }
            return try request.limit(1).fetchAll(db)
        }
        guard let record = records.first else { return nil }
        return TrustedKey(
            family: record.family, issuer: record.issuer, keyID: record.keyID, algorithm: record.algorithm,
            publicKey: try publicKey(record.spki), notBefore: record.notBeforeDate, notAfter: record.notAfterDate,
            purpose: record.purpose)
    }

    public func revocation(ofTicket ticketID: [UInt8], issuer: String) throws -> Revocation? {
        let record = try store.read { db in
            // A statement prepared once per connection: preparing it again was most of a lookup's time.
            try TicketRevocationRecord.fetchOne(
                db.cachedStatement(sql: "SELECT * FROM revoked_ticket WHERE issuer = ? AND ticket_id = ?"),
                arguments: [issuer, Data(ticketID)])
        }
        return record.map {
            Revocation(reason: $0.reason, revokedAt: Date(timeIntervalSince1970: TimeInterval($0.revokedAt)))
        }
    }

    public func revocation(ofKey key: TrustedKey) throws -> Revocation? {
        let record = try store.read { db in
            try KeyRevocationRecord.filter(
                Column("format") == key.family.storeName && Column("issuer") == key.issuer
                    && Column("key_id") == key.keyID
            ).fetchOne(db)
        }
        return record.map {
            Revocation(reason: $0.reason, revokedAt: Date(timeIntervalSince1970: TimeInterval($0.revokedAt)))
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
