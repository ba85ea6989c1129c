import FareCore
import Foundation
import Signatures
import TicketFormats

/// RSP6 keys as stored: the key id each gets, made from its modulus, and which keys RSP6 tickets are checked with.
public enum RSP6KeyImport {
    /// The key id of an RSP6 key: the first 12 hex digits of SHA-256 over its modulus (leading zero bytes
    /// dropped), so that importing a file again names the same keys.
    public static func keyID(modulus: [UInt8]) -> String {
        digest(.sha256, Array(modulus.drop { $0 == 0 })).prefix(6).hexString
    }

    /// The modulus sizes RSP6 tickets are checked with. Every key of the published list has 1024 bits. A smaller
    /// block cannot hold a ticket with its purchase data (a 512-bit one holds 53 bytes; the fixed part and the
    /// purchase data take 64), and so small a key is factored with public tools, so that a block it opens proves
    /// nothing. Larger keys are taken up to the largest the raw operation accepts.
    public static let usableBits = 1024...RSARawPublicKey.maximumBits

    /// A published key as a `TrustedKey` (family `rsp6`), its validity and use from the list's terms (a test key
    /// has purpose `testTickets`).
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when n and e are no RSA key `RSARawPublicKey` accepts or
    ///   the modulus has a size outside `usableBits`.
    public static func trustedKey(_ published: RSP6PublishedKey) throws(SignatureError) -> TrustedKey {
        switch key(published) {
        case .success(let key): return key
        case .failure(let reason): throw SignatureError(code: .invalidKey, message: reason.description)
        }
    }

    /// The key, or why it is refused.
    static func key(_ published: RSP6PublishedKey) -> Result<TrustedKey, RSP6KeyRefusal.Reason> {
        let raw: RSARawPublicKey
        let publicKey: PublicKey
        do {
            raw = try RSARawPublicKey(modulus: published.modulus, exponent: published.exponent)
            guard usableBits.contains(raw.bits) else { return .failure(.size(bits: raw.bits)) }
            publicKey = try raw.publicKey()
        } catch {
            return .failure(.notRSAKey(error.message))
        }
        let terms = published.terms
        return .success(
            TrustedKey(
                family: .rsp6, issuer: IssuerID(published.issuer), keyID: KeyID(keyID(modulus: published.modulus)),
                algorithm: "RSA \(raw.bits) PKCS#1 v1.5 (RSP6)", publicKey: publicKey, notBefore: terms.validFrom,
                notAfter: terms.validUntil, purpose: terms.use == .test ? .testTickets : .tickets))
    }

    /// The numbers of a key's X.509 form (`public_key_x509`), or why they cannot be read.
    static func numbers(x509: [UInt8]) -> Result<(modulus: [UInt8], exponent: [UInt8]), RSP6KeyRefusal.Reason> {
        let material: KeyMaterial
        do {
            material = try KeyMaterial(parsingKeyFile: x509)
        } catch {
            return .failure(.malformed("its public_key_x509 cannot be read: \(error.message)"))
        }
        guard let numbers = material.publicKey.rsaComponents else {
            return .failure(.notRSAKey("its public_key_x509 is a \(material.publicKey.kind) key"))
        }
        return .success(numbers)
    }
}

/// An entry of an RSP6 key file that is not imported, and why.
public struct RSP6KeyRefusal: Sendable, CustomStringConvertible {
    /// Why an entry is refused.
    public enum Reason: Error, Sendable, Equatable, CustomStringConvertible {
        /// The list marks it `is_private`.
        case markedPrivate
        /// It cannot be read (a sentence saying what is wrong).
        case malformed(String)
        /// Its numbers are no RSA public key (OpenSSL's or farecheck's reason).
        case notRSAKey(String)
        /// An RSA key of a size RSP6 tickets are not checked with (`RSP6KeyImport.usableBits`).
        case size(bits: Int)
        /// Its `public_key_x509` is another key than its `modulus_hex` and `public_exponent_hex`.
        case x509Differs
        /// It has the modulus of an earlier entry with another exponent: the two cannot both be the issuer's key.
        case modulusOf(RSP6KeyFileEntry.Position)
        /// A test key offered to the server: its key bundles carry no test keys.
        case testKeyNotPublished

        public var description: String {
            switch self {
            case .markedPrivate:
                "marked is_private: the list does not publish it for checking tickets"
            case .malformed(let why):
                why
            case .notRSAKey(let why):
                "not an RSA public key: \(why)"
            case .size(let bits):
                "an RSA key of \(bits) bits; RSP6 tickets are checked with keys of "
                    + "\(RSP6KeyImport.usableBits.lowerBound) to \(RSP6KeyImport.usableBits.upperBound) bits (a "
                    + "smaller block cannot hold a ticket with its purchase data, and so small a key is factored with "
                    + "public tools)"
            case .x509Differs:
                "its public_key_x509 is another key than its modulus_hex and public_exponent_hex"
            case .modulusOf(let earlier):
                "it has the modulus of \(earlier) with another exponent"
            case .testKeyNotPublished:
                "a test key (is_test): the server's key bundles carry no test keys, since validators would trust "
                    + "it in service; import it on a test validator (farecheck keys import --rsp6)"
            }
        }
    }

    /// The entry.
    public var position: RSP6KeyFileEntry.Position
    /// Why it is refused.
    public var reason: Reason

    public init(position: RSP6KeyFileEntry.Position, reason: Reason) {
        self.position = position
        self.reason = reason
    }

    public var description: String { "\(position): \(reason)" }
}

/// What an RSP6 key file gives, entry by entry: the keys to store, each once, and the entries refused.
///
/// An entry that cannot be used (private, unreadable, no RSA key, a size RSP6 does not use, an X.509 form that is
/// another key) is refused on its own; the others are kept. A key listed twice (the published list gives some
/// keys once with their X.509 form and once without) is one key, with the terms of both: a test key if either
/// entry says so, valid where both say it is.
public struct RSP6KeyImportPlan: Sendable {
    /// A key to store, and the entries that give it.
    public struct Key: Sendable {
        /// The key as the verifier uses it (validity and purpose from the list).
        public var trusted: TrustedKey
        /// The entries that give it, in file order: more than one when the list repeats the key.
        public var positions: [RSP6KeyFileEntry.Position]
    }

    /// The keys to store, in file order (issuers sorted).
    public private(set) var keys: [Key] = []
    /// The entries refused, in file order.
    public private(set) var refusals: [RSP6KeyRefusal] = []
    /// How many entries each issuer has in the file (an issuer whose value is no array counts one).
    public private(set) var entryCounts: [String: Int] = [:]

    /// The plan for `entries` (`RSP6KeyFile.entries(parsing:issuer:)`).
    public init(_ entries: [RSP6KeyFileEntry]) {
        // By issuer and modulus (without leading zeros): where each key is in `found`.
        var index: [String: [[UInt8]: Int]] = [:]
        var found: [(published: RSP6PublishedKey, positions: [RSP6KeyFileEntry.Position])] = []
        for entry in entries {
            let position = entry.position
            entryCounts[position.issuer, default: 0] += 1
            let published: RSP6PublishedKey
            switch Self.publishedKey(entry.content) {
            case .failure(let reason):
                refusals.append(RSP6KeyRefusal(position: position, reason: reason))
                continue
            case .success(let key):
                published = key
            }
            let modulus = Array(published.modulus.drop { $0 == 0 })
            if let earlier = index[published.issuer]?[modulus] {
                guard
                    found[earlier].published.exponent.drop(while: { $0 == 0 })
                        == published.exponent.drop(while: { $0 == 0 })
                else {
                    refusals.append(
                        RSP6KeyRefusal(position: position, reason: .modulusOf(found[earlier].positions[0])))
                    continue
                }
                found[earlier].published.terms = found[earlier].published.terms.merged(with: published.terms)
                found[earlier].positions.append(position)
                continue
            }
            // The size and the numbers are checked once per key, before it is counted as one.
            if case .failure(let reason) = RSP6KeyImport.key(published) {
                refusals.append(RSP6KeyRefusal(position: position, reason: reason))
                continue
            }
            index[published.issuer, default: [:]][modulus] = found.count
            found.append((published, [position]))
        }
        for (published, positions) in found {
            // Checked above: only the terms may have changed since.
            guard case .success(let trusted) = RSP6KeyImport.key(published) else { continue }
            keys.append(Key(trusted: trusted, positions: positions))
        }
    }

    /// The issuers the file names, sorted.
    public var issuers: [String] { entryCounts.keys.sorted() }

    /// Moves every test key to the refusals (one per entry that gives it), for the server, whose key bundles
    /// carry no test keys.
    public mutating func refuseTestKeys() {
        for key in keys where key.trusted.purpose == .testTickets {
            refusals += key.positions.map { RSP6KeyRefusal(position: $0, reason: .testKeyNotPublished) }
        }
        keys.removeAll { $0.trusted.purpose == .testTickets }
        refusals.sort { $0.position < $1.position }
    }

    /// The key of one entry's content, before its size is checked, or why there is none.
    private static func publishedKey(_ content: RSP6KeyFileEntry.Content) -> Result<
        RSP6PublishedKey, RSP6KeyRefusal.Reason
    > {
        switch content {
        case .markedPrivate:
            return .failure(.markedPrivate)
        case .malformed(let why):
            return .failure(.malformed(why))
        case .key(let key, nil):
            return .success(key)
        case .key(let key, let x509?):
            switch RSP6KeyImport.numbers(x509: x509) {
            case .failure(let reason):
                return .failure(reason)
            case .success(let numbers):
                let same =
                    numbers.modulus.drop { $0 == 0 } == key.modulus.drop { $0 == 0 }
                    && numbers.exponent.drop { $0 == 0 } == key.exponent.drop { $0 == 0 }
                return same ? .success(key) : .failure(.x509Differs)
            }
        case .x509(let x509, let issuer, let terms):
            return RSP6KeyImport.numbers(x509: x509).map {
                RSP6PublishedKey(issuer: issuer, modulus: $0.modulus, exponent: $0.exponent, terms: terms)
            }
        }
    }
}

/// What an import of an RSP6 key file did, per issuer: keys added, kept (already held) and entries refused.
public struct RSP6KeyImportSummary: Sendable {
    /// One issuer's counts.
    public struct Counts: Sendable, Equatable {
        /// Entries in the file.
        public var entries = 0
        /// Keys that were not held before.
        public var added = 0
        /// Keys already held (stored again with the file's validity and use).
        public var kept = 0
        /// Entries refused.
        public var refused = 0
        /// Entries that repeat a key another entry gives.
        public var repeated = 0
        /// Test keys among those added and kept.
        public var test = 0

        public init() {}

        /// `2 added, 1 kept, 1 refused (4 entries, 1 repeating a key, 1 test key)`.
        public var text: String {
            var notes = ["\(entries) \(entries == 1 ? "entry" : "entries")"]
            if repeated > 0 { notes.append("\(repeated) repeating a key") }
            if test > 0 { notes.append("\(test) test \(test == 1 ? "key" : "keys")") }
            return "\(added) added, \(kept) kept, \(refused) refused (\(notes.joined(separator: ", ")))"
        }
    }

    /// The counts of each issuer of the file.
    public private(set) var issuers: [IssuerID: Counts] = [:]

    /// The summary of storing `plan`'s keys, `held` saying which of them the store held before.
    public init(plan: RSP6KeyImportPlan, held: (TrustedKey) -> Bool) {
        for (issuer, count) in plan.entryCounts { issuers[IssuerID(issuer), default: Counts()].entries = count }
        for refusal in plan.refusals { issuers[IssuerID(refusal.position.issuer), default: Counts()].refused += 1 }
        for key in plan.keys {
            var counts = issuers[key.trusted.issuer, default: Counts()]
            if held(key.trusted) { counts.kept += 1 } else { counts.added += 1 }
            counts.repeated += key.positions.count - 1
            if key.trusted.purpose == .testTickets { counts.test += 1 }
            issuers[key.trusted.issuer] = counts
        }
    }

    /// Every issuer's counts added up.
    public var total: Counts {
        issuers.values.reduce(into: Counts()) { total, counts in
            total.entries += counts.entries
            total.added += counts.added
            total.kept += counts.kept
            total.refused += counts.refused
            total.repeated += counts.repeated
            total.test += counts.test
        }
    }

    /// One line per issuer, sorted: `TT: 2 added, 1 kept, 1 refused (4 entries, 1 repeating a key, 1 test key)`.
    public var lines: [String] { issuers.keys.sorted().map { "\($0): \(issuers[$0]!.text)" } }
}
