import FareCore
import Foundation
import Signatures
import Synchronization
import TicketFormats

/// A VDV certification authority the verifier may use: a pinned root or a sub-CA accepted under it,
/// with its RSA key ready for message recovery.
public final class VDVAuthority: Sendable {
    /// How the authority came to be trusted.
    public enum Origin: Sendable, Hashable, CustomStringConvertible {
        /// A root pinned by value (its clear body, self-signed).
        case pinnedRoot
        /// A sub-CA whose signed certificate was recovered and checked under this root.
        case verified(under: VDVCAReference)
        /// A sub-CA body taken in clear, without a signature, because the operator said to trust it
        /// (the kitinerary certificate files were recovered with the root when they were made).
        case trustedUnsigned

        /// `pinned root`, `verified under EUVDV 10 01 06`, `trusted unsigned`.
        public var description: String {
            switch self {
            case .pinnedRoot: "pinned root"
            case .verified(let root): "verified under \(root)"
            case .trustedUnsigned: "trusted unsigned"
            }
        }
    }

    /// The certificate body.
    public let certificate: VDVCertificate
    /// The CA reference this authority answers to: its CHR. Tickets and certificates name it in their CAR.
    public let reference: VDVCAReference
    /// The key, for recovering the certificates it signed.
    public let key: RSARawPublicKey
    /// How it came to be trusted.
    public let origin: Origin
    /// The end of the certificate's expiry day, when it has a readable one (judged on every scan).
    let expiryEnd: Date?

    /// An authority from a certificate whose holder is a CA.
    ///
    /// - Throws: `VDVImportError` when the holder is not a CA or the key is no RSA key.
    public init(certificate: VDVCertificate, origin: Origin) throws(VDVImportError) {
        guard let reference = certificate.holderReference else {
            throw VDVImportError("the certificate's holder (\(certificate.holder)) is not a certification authority")
        }
        do {
            key = try RSARawPublicKey(modulus: certificate.modulus, exponent: certificate.exponent)
        } catch {
            throw VDVImportError("the key of \(reference) is not a usable RSA key: \(error.message)")
        }
        self.certificate = certificate
        self.reference = reference
        self.origin = origin
        self.expiryEnd = certificate.expiry?.end
    }

    /// Whether this authority is a root: its own end date is then not held against the chains it anchors.
    public var isRoot: Bool { origin == .pinnedRoot }

    /// What an import reports: `DEVDV 11 02 16, RSA 1536, valid until 01.12.2026, verified under EUVDV 10 01 06`.
    public var summary: String {
        let expiry = certificate.expiry.map { "valid until \($0)" } ?? "no readable end date"
        return "\(reference), RSA \(key.bits), \(expiry), \(origin)"
    }
}

/// Where the verifier finds VDV CA keys: looked up by the CA reference a ticket's tag `42` names.
///
/// What a store must provide: every accepted authority (the pinned root and each sub-CA), found by its
/// holder reference (CHR, 8 bytes: `VDVAuthority.reference`, never a file name), with its RSA key built
/// once when loaded (building one costs about as much as a recovery). Lookups happen on every scan, so
/// they should be reads from memory. Throw only when the source itself fails.
public protocol VDVCertificateSource: Sendable {
    /// The authority whose holder reference is `reference`, or `nil` when none is trusted.
    func authority(_ reference: VDVCAReference) throws -> VDVAuthority?
}

/// VDV authorities held in memory, keyed by their holder reference.
public struct VDVCertificateSet: VDVCertificateSource {
    private var authorities: [VDVCAReference: VDVAuthority] = [:]

    /// An empty set.
    public init() {}

    /// A set of the given authorities.
    public init(_ authorities: [VDVAuthority]) {
        for authority in authorities { add(authority) }
    }

    /// How many authorities the set holds.
    public var count: Int { authorities.count }

    /// Adds an authority; one with the same holder reference is replaced.
    public mutating func add(_ authority: VDVAuthority) {
        authorities[authority.reference] = authority
    }

    /// The authority whose holder reference is `reference`.
    public func authority(_ reference: VDVCAReference) -> VDVAuthority? {
        authorities[reference]
    }
}

/// Why a VDV certificate was not accepted for import.
public struct VDVImportError: Error, Sendable, CustomStringConvertible {
    /// A sentence saying why, and what to do where there is something to do.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}

/// The rules for accepting VDV CA certificates into the trust store: pure functions over file bytes.
///
/// - A root is pinned by value: a clear body (`7F21 { 5F4E }`), self-signed (CAR = the tail of its
///   CHR); when a `5F37` signature comes with it, it must be its PKCS#1 v1.5 SHA-1 self-signature. A
///   root in the recovery form is refused: its key is inside the body it hides.
/// - A sub-CA in the recovery form (`7F21 { 5F37, 5F38 }`, as published in LDAP) is accepted only if
///   it recovers under the given pinned root with a matching SHA-1, and names that root as its CAR.
///   A clear body with a `5F37` must carry the root's PKCS#1 v1.5 SHA-1 signature over the body.
/// - A bare body (`7F21 { 5F4E }`, like the kitinerary files) is accepted only with `trustUnsigned`,
///   and when a root is given, only if it names that root.
/// - Dates are reported, not judged: a root whose end date has passed still anchors its sub-CAs
///   (the VDV root `EUVDV 10 01 06` ended on 2021-12-01 while sub-CAs it signed run to 2031).
public enum VDVCertificateImport {
    /// Pins a root certificate.
    ///
    /// - Throws: `VDVImportError` when the bytes are no certificate, the certificate is not self-signed,
    ///   is in the recovery form, or its self-signature does not match.
    public static func root(_ bytes: [UInt8]) throws(VDVImportError) -> VDVAuthority {
        let envelope = try envelope(bytes)
        guard case .clear(let body, let signature) = envelope else {
            throw VDVImportError(
                "the root certificate hides its body in its signature (5F37/5F38); a root can only be pinned from its clear body (5F4E)"
            )
        }
        let certificate = try parse(body)
        guard certificate.isSelfSigned else {
            throw VDVImportError(
                "the certificate \(certificate.holder) is signed by \(certificate.authority), not by itself: it is not a root"
            )
        }
        let authority = try VDVAuthority(certificate: certificate, origin: .pinnedRoot)
        if let signature, !isPKCS1SHA1Signature(signature, over: body, key: authority.key) {
            throw VDVImportError("the self-signature (5F37) of root \(authority.reference) does not match its body")
        }
        return authority
    }

    /// Accepts a sub-CA certificate.
    ///
    /// - Parameters:
    ///   - bytes: The certificate file or LDAP value (`7F21 …`).
    ///   - root: The pinned root it must chain to; required for signed certificates.
    ///   - trustUnsigned: Whether a bare body without a signature may be accepted.
    /// - Throws: `VDVImportError` saying which rule the certificate breaks.
    public static func subCA(
        _ bytes: [UInt8], root: VDVAuthority?, trustUnsigned: Bool
    ) throws(VDVImportError) -> VDVAuthority {
        let certificate: VDVCertificate
        let origin: VDVAuthority.Origin
        switch try envelope(bytes) {
        case .recoverable(let signature, let remainder):
            guard let root else {
                throw VDVImportError("the certificate is signed: give the pinned root it must be checked under")
            }
            let block: [UInt8]
            do {
                block = try root.key.publicOperation(signature)
            } catch {
                throw VDVImportError("the certificate does not recover under root \(root.reference): \(error.message)")
            }
            let body: [UInt8]
            do {
                body = try ISO9796_2.recoverMessage(block: block, remainder: remainder) { digest(.sha1, $0) }
            } catch {
                throw VDVImportError("the certificate does not recover under root \(root.reference): \(error)")
            }
            certificate = try parse(body)
            origin = .verified(under: root.reference)
        case .clear(let body, let signature?):
            guard let root else {
                throw VDVImportError("the certificate is signed: give the pinned root it must be checked under")
            }
            certificate = try parse(body)
            guard isPKCS1SHA1Signature(signature, over: body, key: root.key) else {
                throw VDVImportError("the signature (5F37) over the certificate does not match root \(root.reference)")
            }
            origin = .verified(under: root.reference)
        case .clear(let body, nil):
            guard trustUnsigned else {
                throw VDVImportError(
                    "the certificate is a bare body without a signature; accept it only if you trust its source (trust unsigned)"
                )
            }
            certificate = try parse(body)
            origin = .trustedUnsigned
        }
        if let root, certificate.authority != root.reference {
            throw VDVImportError(
                "the certificate is signed by \(certificate.authority), not by the pinned root \(root.reference)")
        }
        if certificate.isSelfSigned {
            throw VDVImportError("the certificate \(certificate.holder) is self-signed: import it as a root, if at all")
        }
        if certificate.expiry == nil {
            // Tickets are judged against this date; without one every ticket under the CA would be refused.
            throw VDVImportError("the end date of \(certificate.holder) (body bytes 28–31) is not a BCD date")
        }
        return try VDVAuthority(certificate: certificate, origin: origin)
    }

    private static func envelope(_ bytes: [UInt8]) throws(VDVImportError) -> VDVCertificateEnvelope {
        do {
            return try VDVCertificateEnvelope(parsingFile: bytes)
        } catch {
            throw VDVImportError("the bytes are not a VDV certificate (7F21): \(error.message)")
        }
    }

    private static func parse(_ body: [UInt8]) throws(VDVImportError) -> VDVCertificate {
        do {
            return try VDVCertificate(parsing: body)
        } catch {
            throw VDVImportError("the certificate body cannot be read: \(error.message)")
        }
    }

    /// The DER DigestInfo prefix of a SHA-1 digest (AlgorithmIdentifier 1.3.14.3.2.26 with NULL).
    static let sha1DigestInfoPrefix: [UInt8] = [
        0x30, 0x21, 0x30, 0x09, 0x06, 0x05, 0x2B, 0x0E, 0x03, 0x02, 0x1A, 0x05, 0x00, 0x04, 0x14,
    ]

    /// Whether `signature` is a PKCS#1 v1.5 SHA-1 signature over `message` with `key`: s^e mod n must be
    /// exactly `00 01 FF…FF 00 ‖ DigestInfo(SHA-1(message))`.
    static func isPKCS1SHA1Signature(_ signature: [UInt8], over message: [UInt8], key: RSARawPublicKey) -> Bool {
        guard let block = try? key.publicOperation(signature) else { return false }
        let digestInfo = sha1DigestInfoPrefix + digest(.sha1, message)
        let paddingCount = block.count - 3 - digestInfo.count
        guard paddingCount >= 8 else { return false }
        let expected = [0x00, 0x01] + [UInt8](repeating: 0xFF, count: paddingCount) + [0x00] + digestInfo
        return block == expected
    }
}

/// Issuer certificates already recovered, keyed by the bytes the barcode carries (the `7F21` element),
/// so that a warm verifier does one RSA operation per ticket instead of two.
///
/// Bounded (least recently used entries go first) and safe to share between threads. The counters are
/// for metrics: `recoveries` counts the certificate recoveries actually done.
public final class VDVIssuerCertificateCache: Sendable {
    /// A recovered, checked issuer certificate and its key. A class: a lookup hands out one reference.
    final class Entry: Sendable {
        /// The `7F21` element it was recovered from, compared in full on every hit.
        let carried: [UInt8]
        let certificate: VDVCertificate
        let key: RSARawPublicKey
        let publicKey: PublicKey
        /// The issuer's CHR in hex: the key id in verdicts.
        let keyID: KeyID
        /// The end of the certificate's expiry day, when it has a readable one.
        let expiryEnd: Date?
        /// The CA reference and the CA key it was recovered with: a hit counts only for the same CA
        /// reference, and only while the source still answers it with the same key.
        let authorityReference: VDVCAReference
        let authorityKey: RSARawPublicKey

        init(
            carried: [UInt8], certificate: VDVCertificate, key: RSARawPublicKey, publicKey: PublicKey,
            authority: VDVAuthority
        ) {
            self.carried = carried
            self.certificate = certificate
            self.key = key
            self.publicKey = publicKey
            self.keyID = KeyID(certificate.holderBytes.hexString)
            self.expiryEnd = certificate.expiry?.end
            self.authorityReference = authority.reference
            self.authorityKey = authority.key
        }

        /// Whether this entry answers for `bytes[range]` recovered under `authority`.
        func matches(_ bytes: [UInt8], _ range: Range<Int>, authority: VDVAuthority) -> Bool {
            guard authorityReference == authority.reference,
                authorityKey === authority.key || authorityKey.modulus == authority.key.modulus,
                carried.count == range.count
            else { return false }
            return carried.withUnsafeBytes { carried in
                bytes.withUnsafeBytes { bytes in
                    guard let mine = carried.baseAddress, let theirs = bytes.baseAddress else { return range.isEmpty }
                    return memcmp(mine, theirs + range.lowerBound, range.count) == 0
                }
            }
        }
    }

    /// The counters, read together.
    public struct Statistics: Sendable, Hashable {
        /// Lookups answered from the cache.
        public var hits: Int
        /// Issuer certificates recovered (one RSA operation each) because they were not cached.
        public var recoveries: Int
        /// Entries dropped to stay within the capacity.
        public var evictions: Int
        /// Entries held now.
        public var count: Int
    }

    /// What entries are filed under: a 64-bit hash of the carried bytes. Two different certificates with
    /// the same hash share a slot and displace each other (each costs a recovery then), never stand in
    /// for each other: a hit compares the bytes in full.
    typealias Key = UInt64

    /// The key for `bytes[range]`: FNV-1a over 8-byte words, then mixed. A certificate is ~200 bytes; the
    /// standard library's hashing of them would cost more than the rest of the lookup.
    static func key(_ bytes: [UInt8], _ range: Range<Int>) -> Key {
        bytes.withUnsafeBytes { buffer in
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            var index = range.lowerBound
            while index + 8 <= range.upperBound {
                hash = (hash ^ buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)) &* 0x0000_0100_0000_01B3
                index += 8
            }
            while index < range.upperBound {
                hash = (hash ^ UInt64(buffer[index])) &* 0x0000_0100_0000_01B3
                index += 1
            }
            hash ^= UInt64(range.count)
            hash = (hash ^ (hash >> 33)) &* 0xFF51_AFD7_ED55_8CCD
            return hash ^ (hash >> 33)
        }
    }

    private struct Slot {
        var entry: Entry
        var lastUse: UInt64
    }

    private struct State {
        var slots: [Key: Slot] = [:]
        var tick: UInt64 = 0
        var hits = 0
        var recoveries = 0
        var evictions = 0
    }

    /// The most entries held.
    public let capacity: Int
    private let state = Mutex(State())

    /// A cache of at most `capacity` certificates (at least 1). There are a few hundred SAMs per
    /// transport association, so the default holds the certificates of a busy line.
    public init(capacity: Int = 512) {
        self.capacity = max(1, capacity)
    }

    /// The counters now.
    public var statistics: Statistics {
        state.withLock {
            Statistics(hits: $0.hits, recoveries: $0.recoveries, evictions: $0.evictions, count: $0.slots.count)
        }
    }

    /// Empties the cache (e.g. after the CA certificates changed); the counters stay.
    public func removeAll() {
        state.withLock { $0.slots.removeAll() }
    }

    /// The entry for the certificate carried in `bytes[range]`, recovered under `authority`, if cached.
    func entry(for key: Key, _ bytes: [UInt8], _ range: Range<Int>, authority: VDVAuthority) -> Entry? {
        state.withLock { state in
            guard let index = state.slots.index(forKey: key) else { return nil }
            let entry = state.slots.values[index].entry
            guard entry.matches(bytes, range, authority: authority) else { return nil }
            state.tick &+= 1
            state.slots.values[index].lastUse = state.tick
            state.hits += 1
            return entry
        }
    }

    func noteRecovery() {
        state.withLock { $0.recoveries += 1 }
    }

    func store(_ entry: Entry, for key: Key) {
        state.withLock { state in
            state.tick &+= 1
            if state.slots[key] == nil, state.slots.count >= capacity,
                let oldest = state.slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                // A linear scan, only when full and only on a miss, which costs an RSA operation anyway.
                state.slots[oldest] = nil
                state.evictions += 1
            }
            state.slots[key] = Slot(entry: entry, lastUse: state.tick)
        }
    }
}

/// A VDV barcode opened: chain checked, ticket data recovered and decoded.
public struct VDVOpenedTicket: Sendable {
    /// The format-neutral ticket (its `details` read the decoded ticket data).
    public var ticket: Ticket
    /// The recovered issuer certificate, as cached.
    let issuer: VDVIssuerCertificateCache.Entry
    /// The CA that signed it.
    public var authority: VDVAuthority
    /// The issuer's key as policies see it: format `vdv-ka`, issuer the KVP organisation, key id the
    /// issuer certificate's CHR in hex, valid until the end of the certificate's expiry day.
    public var key: TrustedKey

    /// The issuer certificate recovered from the barcode.
    public var issuerCertificate: VDVCertificate { issuer.certificate }
}

/// What opening a VDV barcode gave: a ticket for the policies, or a verdict already.
public enum VDVChainOutcome: Sendable {
    /// The chain holds and the ticket is readable; the policies decide.
    case opened(VDVOpenedTicket)
    /// The barcode is rejected (unknown CA, invalid signature, expired certificate, malformed data).
    case rejected(Verdict)
}

/// Verifies the chain of a VDV-KA barcode: CA reference → CA key → issuer certificate → ticket data.
///
/// Each recovery checks its SHA-1. Certificate dates are judged at the inspection time: the CA's and
/// the issuer certificate's end dates are inclusive, to the last second of that day in Europe/Berlin,
/// and a certificate past its end gives `key-expired` (with the signature reported valid). A pinned root's
/// own end date is not held against anything (see `VDVCertificateImport`); CV certificates have no
/// start date, so nothing is "not yet valid" on the certificate side.
public final class VDVChainVerifier: Sendable {
    /// Where the CA keys come from.
    public let certificates: any VDVCertificateSource
    /// The recovered issuer certificates.
    public let cache: VDVIssuerCertificateCache

    /// A chain verifier over `certificates`, with its own cache unless one is given.
    public init(certificates: any VDVCertificateSource, cache: VDVIssuerCertificateCache = VDVIssuerCertificateCache())
    {
        self.certificates = certificates
        self.cache = cache
    }

    /// Opens `barcode` as of `now`.
    ///
    /// - Throws: `VerifierError` only when the certificate source fails.
    public func open(_ barcode: VDVBarcode, at now: Date) throws(VerifierError) -> VDVChainOutcome {
        let format = TicketFormat.vdvKA
        let car = barcode.caReference
        func reject(
            _ kind: VerdictKind, _ reason: Explanation, _ signature: SignatureStatus, issuer: IssuerID? = nil,
            keyID: KeyID? = nil, ticket: Ticket? = nil
        ) -> VDVChainOutcome {
            .rejected(
                Verdict(
                    kind: kind, reason: reason, signature: signature, format: format, issuer: issuer,
                    keyID: keyID ?? KeyID(car.hex), ticket: ticket, inspectedAt: now))
        }

        let found: VDVAuthority?
        do {
            found = try certificates.authority(car)
        } catch {
            throw VerifierError(message: "the VDV certificate source failed", underlying: error)
        }
        // A source answering with another CA than asked for would let that CA's key stand in for this one.
        guard let authority = found, authority.reference == car else {
            return reject(
                .unknownKey,
                "No trusted VDV CA certificate is \(car) (\(car.hex)); the ticket cannot be checked (import the VDV sub-CA certificates).",
                .unknownKey)
        }

        // The issuer certificate: from the cache, or recovered with the CA key.
        let payload = barcode.payload
        let cacheKey = VDVIssuerCertificateCache.key(payload, barcode.certificateRange)
        let issuer: VDVIssuerCertificateCache.Entry
        if let cached = cache.entry(for: cacheKey, payload, barcode.certificateRange, authority: authority) {
            issuer = cached
        } else {
            cache.noteRecovery()
            let body: [UInt8]
            do {
                let block = try authority.key.publicOperation(payload[barcode.certificateSignatureRange])
                body = try ISO9796_2.recoverMessage(
                    block: block, remainder: payload[barcode.certificateRemainderRange]
                ) { digest(.sha1, $0) }
            } catch let error as SignatureError {
                return reject(
                    .invalidSignature,
                    "The issuer certificate's signature does not fit the key of \(car): \(error.message).",
                    .invalid)
            } catch {
                return reject(
                    .invalidSignature, "The issuer certificate was not signed by \(car) or was altered: \(error).",
                    .invalid)
            }
            let certificate: VDVCertificate
            do {
                certificate = try VDVCertificate(parsing: body, context: "the issuer certificate")
            } catch {
                return reject(
                    .malformed, "The issuer certificate is genuine but cannot be read: \(error.message).", .valid)
            }
            guard certificate.authority == car else {
                return reject(
                    .invalidSignature,
                    "The issuer certificate names \(certificate.authority) as its CA, but the barcode names \(car).",
                    .invalid)
            }
            let key: RSARawPublicKey
            let publicKey: PublicKey
            do {
                key = try RSARawPublicKey(modulus: certificate.modulus, exponent: certificate.exponent)
                publicKey = try key.publicKey()
            } catch {
                return reject(
                    .malformed, "The issuer certificate's key is not a usable RSA key: \(error.message).", .valid)
            }
            issuer = VDVIssuerCertificateCache.Entry(
                carried: Array(payload[barcode.certificateRange]), certificate: certificate, key: key,
                publicKey: publicKey, authority: authority)
            cache.store(issuer, for: cacheKey)
        }
        let keyID = issuer.keyID

        // The ticket data, with the issuer's key.
        let data: [UInt8]
        do {
            let block = try issuer.key.publicOperation(payload[barcode.signatureRange])
            data = try ISO9796_2.recoverMessage(block: block, remainder: payload[barcode.remainderRange]) {
                digest(.sha1, $0)
            }
        } catch let error as SignatureError {
            return reject(
                .invalidSignature, "The ticket's signature does not fit the issuer key: \(error.message).", .invalid,
                keyID: keyID)
        } catch {
            return reject(
                .invalidSignature, "The ticket was not signed by its issuer certificate or was altered: \(error).",
                .invalid, keyID: keyID)
        }
        let ticket: Ticket
        do {
            ticket = try VDVEntitlement(parsing: data).ticket()
        } catch {
            return reject(
                .malformed, "The signature is valid but the ticket data cannot be read: \(error.message).", .valid,
                keyID: keyID)
        }

        // Certificate dates, at the inspection time; the signatures are genuine by now.
        if !authority.isRoot {
            guard let expiry = authority.certificate.expiry, let expiryEnd = authority.expiryEnd else {
                return reject(
                    .malformed, "The end date of CA certificate \(car) is not a date.", .valid, issuer: ticket.issuer,
                    keyID: keyID, ticket: ticket)
            }
            if now > expiryEnd {
                return reject(
                    .keyExpired, "The signatures are genuine, but CA certificate \(car) expired on \(expiry).",
                    .valid, issuer: ticket.issuer, keyID: keyID, ticket: ticket)
            }
        }
        guard let issuerExpiry = issuer.certificate.expiry, let issuerExpiryEnd = issuer.expiryEnd else {
            return reject(
                .malformed, "The end date of the issuer certificate \(issuer.certificate.holder) is not a date.",
                .valid,
                issuer: ticket.issuer, keyID: keyID, ticket: ticket)
        }
        if now > issuerExpiryEnd {
            return reject(
                .keyExpired,
                "The signatures are genuine, but the issuer certificate \(issuer.certificate.holder) expired on \(issuerExpiry).",
                .valid, issuer: ticket.issuer, keyID: keyID, ticket: ticket)
        }
        let trustedKey = TrustedKey(
            family: .vdv, issuer: ticket.issuer, keyID: keyID, algorithm: "ISO 9796-2 RSA SHA-1",
            publicKey: issuer.publicKey, notAfter: issuerExpiryEnd)
        return .opened(
            VDVOpenedTicket(ticket: ticket, issuer: issuer, authority: authority, key: trustedKey))
    }
}

extension TicketVerifier {
    /// The VDV path: the chain verifier opens the barcode, then the same policies as UIC run
    /// (key validity, validity window, revocation by KVP organisation and entitlement number).
    func verifyVDV(_ barcode: VDVBarcode, at now: Date) throws(VerifierError) -> Verdict {
        guard let vdv else {
            return Verdict(
                kind: .unknownKey,
                reason: "No VDV-KA certificates are installed, so VDV barcodes (Deutschland-Ticket) cannot be checked.",
                signature: .unknownKey, format: .vdvKA, keyID: KeyID(barcode.caReference.hex), inspectedAt: now)
        }
        switch try vdv.open(barcode, at: now) {
        case .rejected(let verdict):
            return verdict
        case .opened(let opened):
            return try applyPolicies(vdvPolicies, PolicyContext(ticket: opened.ticket, key: opened.key, now: now))
        }
    }
}
