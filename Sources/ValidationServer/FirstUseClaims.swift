import FareCore
import Foundation
import Signatures
import Synchronization
import TicketFormats
import ValidationAPI
import Verification

/// What the server asks of a first-use claim before it records it: the ticket itself, verified with the server's
/// own trust, from a gate, at a bounded rate.
///
/// A device's token is a key to the whole fleet: a first use it records makes every gate refuse the ticket. So a
/// claim is recorded only when the payload it carries verifies here (signature, key, validity at the claimed time)
/// as a single-use ticket; the ticket's format, issuer and id are then the server's reading, never the device's.
public struct FirstUseClaimPolicy: Sendable, Equatable {
    /// The products that pass a gate once (as the gates' `[verification] single_use_products`).
    public var singleUseProducts: Set<String>
    /// How far back an uploaded first use may be dated by the device's clock: one dated within this much before
    /// the upload's arrival keeps the device's time (a gate that passed the ticket offline), any other gets the
    /// arrival time. Never later than the arrival. The gates' sync interval (`[sync] interval`, 300 s).
    public var backdateLimit: TimeInterval
    /// Claims a device may make per second on average (online checks and uploaded first uses together)…
    public var claimsPerSecond: Double
    /// …and at once after a quiet spell (a gate back online with a day's first uses to upload).
    public var claimBurst: Int

    /// Makes a policy; the defaults suit gates that pass a few passengers a second.
    public init(
        singleUseProducts: Set<String> = ["single"], backdateLimit: TimeInterval = 300, claimsPerSecond: Double = 5,
        claimBurst: Int = InspectionBatch.maximumRecordCount
    ) {
        self.singleUseProducts = singleUseProducts
        self.backdateLimit = backdateLimit
        self.claimsPerSecond = claimsPerSecond
        self.claimBurst = claimBurst
    }

    /// The time an uploaded first use is recorded as used: the device's `inspectedAt` when it lies within
    /// `backdateLimit` before `receivedAt`, else `receivedAt` (a device cannot date a claim into the future, nor so
    /// far back that validators forget it at once, nor outside the times the API carries).
    public func usedAt(inspectedAt: Int64, receivedAt: Date) -> Date {
        guard let stated = WireFormat.date(milliseconds: inspectedAt), stated <= receivedAt,
            receivedAt.timeIntervalSince(stated) <= backdateLimit
        else { return receivedAt }
        return stated
    }
}

/// A claim the server verified: the ticket as the server read it.
public struct BackedClaim: Sendable, Equatable {
    /// The ticket's format, issuer and id as the server's verification read them.
    public var format: TicketFormat
    public var issuer: IssuerID
    public var ticketID: TicketID
    /// When the ticket counts as used (see `FirstUseClaimPolicy.usedAt`).
    public var usedAt: Date

    /// Makes a claim (the server makes them from its own verification).
    public init(format: TicketFormat, issuer: IssuerID, ticketID: TicketID, usedAt: Date) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.usedAt = usedAt
    }
}

/// Why the server does not record a claim: the sentence goes back to the device (`claim-refused`).
public struct ClaimRefusal: Error, Sendable, Equatable {
    /// One sentence for the gate's log and the operator.
    public var reason: String
}

/// Verifies first-use claims with the keys of the server's latest published bundle (what its validators hold),
/// built into a verifier once per bundle and shared by every request.
public final class FirstUseClaimVerifier: Sendable {
    private struct Built {
        var sequence: Int64
        var verifier: TicketVerifier
        /// When the bundle's sequence was last compared with the store's.
        var checkedAt: ContinuousClock.Instant
    }

    private let store: any ServerStore
    /// What a claim must satisfy.
    public let policy: FirstUseClaimPolicy
    private let built = Mutex<Built?>(nil)
    /// How long a built verifier is used before the store is asked whether a newer bundle was published.
    private let recheck: Duration = .seconds(1)

    /// Makes a verifier over the store's published bundles.
    public init(store: any ServerStore, policy: FirstUseClaimPolicy) {
        self.store = store
        self.policy = policy
    }

    /// The claim the payload backs, verified as valid at `usedAt`; the stated format, issuer and ticket id (what the
    /// device read) must be the server's reading when given.
    ///
    /// - Throws: `ClaimRefusal` saying why the claim is not recorded; `ServerError` when the store fails.
    public func verify(
        payload: [UInt8]?, statedFormat: String?, statedIssuer: String?, statedTicketID: [UInt8]?, usedAt: Date
    ) async throws -> BackedClaim {
        guard let payload, !payload.isEmpty else {
            throw ClaimRefusal(
                reason: "A first-use claim must carry the ticket's payload, which the server verifies; this one has "
                    + "none, so nothing is claimed.")
        }
        guard let verifier = try await verifier() else {
            throw ClaimRefusal(
                reason: "The server has published no key bundle, so it cannot verify the ticket; nothing is claimed.")
        }
        let verdict: Verdict
        do {
            verdict = try verifier.verify(payload, at: usedAt)
        } catch {
            throw ClaimRefusal(reason: "The server could not verify the ticket (\(error.message)); nothing is claimed.")
        }
        guard verdict.kind == .valid, let format = verdict.format else {
            throw ClaimRefusal(
                reason: "The server's verification of the ticket at \(usedAt.formatted(.iso8601)) says "
                    + "\(verdict.kind.rawValue): \(PrintableText(String(verdict.reason.prefix(200)))) Nothing is claimed."
            )
        }
        let issuer = verdict.ticket?.issuer ?? verdict.issuer ?? ""
        guard let ticket = verdict.ticket, !ticket.ticketID.isEmpty, !issuer.isEmpty else {
            throw ClaimRefusal(reason: "The ticket carries no ticket id to claim; nothing is claimed.")
        }
        guard let product = ticket.product, policy.singleUseProducts.contains(product) else {
            throw ClaimRefusal(
                reason: "The ticket's product \(PrintableText(ticket.product ?? "(none)")) is not single-use on this "
                    + "server, so it has no first use to claim.")
        }
        if let statedFormat, !statedFormat.isEmpty, statedFormat != format.rawValue {
            throw ClaimRefusal(
                reason: "The claim names format \(PrintableText(String(statedFormat.prefix(40)))), but the payload "
                    + "is \(format.rawValue); nothing is claimed.")
        }
        if let statedIssuer, UICKeyList.storedIssuer(statedIssuer) != UICKeyList.storedIssuer(issuer.rawValue) {
            throw ClaimRefusal(
                reason: "The claim names issuer \(PrintableText(String(statedIssuer.prefix(40)))), but the ticket's "
                    + "is \(PrintableText(issuer)); nothing is claimed.")
        }
        if let statedTicketID, statedTicketID != ticket.ticketID.bytes {
            throw ClaimRefusal(
                reason: "The claim names ticket \(statedTicketID.prefix(32).hexString), but the payload is ticket "
                    + "\(ticket.ticketID); nothing is claimed.")
        }
        return BackedClaim(format: format, issuer: issuer, ticketID: ticket.ticketID, usedAt: usedAt)
    }

    /// The verifier of the latest published bundle, rebuilt when a newer one is published; nil before the first.
    private func verifier() async throws -> TicketVerifier? {
        let now = ContinuousClock.now
        if let current = built.withLock({ $0 }), now - current.checkedAt < recheck { return current.verifier }
        guard let sequence = try await store.latestBundleSequence() else { return nil }
        if let current = built.withLock({ $0 }), current.sequence == sequence {
            built.withLock { $0?.checkedAt = now }
            return current.verifier
        }
        guard let bundle = try await store.latestBundle() else { return nil }
        let verifier = try Self.verifier(for: bundle)
        built.withLock { $0 = Built(sequence: bundle.sequence, verifier: verifier, checkedAt: now) }
        return verifier
    }

    /// A verifier over the keys of a published bundle, as a validator that applied it would hold them: UIC codes
    /// normalised, VDV certificates accepted under the bundle's roots; a key that does not parse is left out.
    static func verifier(for published: PublishedBundle) throws -> TicketVerifier {
        let document: SignedDocument
        let bundle: KeyBundle
        do {
            document = try SignedDocument(jsonBytes: published.document)
            bundle = try WireFormat.decode(KeyBundle.self, from: document.payload)
        } catch {
            throw ServerError(
                code: .storageFailure,
                message: "The published key bundle \(published.sequence) cannot be read back: \(error).", cause: error)
        }
        var trust = TrustSnapshot()
        var roots: [VDVAuthority] = []
        var subCAs: [[UInt8]] = []
        for key in bundle.keys {
            guard let family = key.family else { continue }
            if family == .vdv {
                guard let certificate = key.certificate else { continue }
                if key.root {
                    if let root = try? VDVCertificateImport.root(certificate) { roots.append(root) }
                } else {
                    subCAs.append(certificate)
                }
                continue
            }
            guard let publicKey = try? PublicKey(spkiDER: key.spki) else { continue }
            let isUIC = family == .uic
            let listing =
                key.versionType != nil || key.barcodeVersion != nil
                ? UICKeyListing(
                    versionType: key.versionType ?? "", barcodeVersion: key.barcodeVersion ?? "",
                    forged: key.keyForged,
                    allowedProductOwners: key.allowedProductOwnerCodes.map(UICKeyList.normalizedCode))
                : nil
            trust.add(
                TrustedKey(
                    family: family, issuer: isUIC ? UICKeyList.normalizedCode(key.issuer) : key.issuer,
                    keyID: isUIC ? KeyID(UICKeyList.normalizedCode(key.keyID.rawValue)) : key.keyID,
                    algorithm: key.algorithm,
                    publicKey: publicKey, notBefore: key.notBefore, notAfter: key.notAfter, listing: listing))
        }
        var authorities = roots
        for certificate in subCAs {
            if let authority = try? VDVCertificateImport.subCA(
                certificate, underAnyOf: roots, trustUnsigned: true, rootlessIfUnsigned: false)
            {
                authorities.append(authority)
            }
        }
        return TicketVerifier(
            trust: trust, vdvCertificates: authorities.isEmpty ? nil : VDVCertificateSet(authorities))
    }
}

/// Claims per device, as token buckets: a device past its rate gets 429 until its bucket refills.
final class ClaimRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let rate: Double
    private let burst: Double
    private let buckets = Mutex<[String: Bucket]>([:])

    init(claimsPerSecond: Double, burst: Int) {
        rate = max(claimsPerSecond, 0.001)
        self.burst = Double(max(burst, 1))
    }

    /// Takes `count` claims from the device's bucket; nil when it had them, else the seconds until it will.
    func take(_ count: Int, device: String, now: ContinuousClock.Instant = .now) -> TimeInterval? {
        guard count > 0 else { return nil }
        return buckets.withLock { buckets in
            var bucket = buckets[device] ?? Bucket(tokens: burst, updated: now)
            let elapsed = now - bucket.updated
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            bucket.tokens = min(burst, bucket.tokens + max(0, seconds) * rate)
            bucket.updated = now
            // More than a bucket holds passes with a full one.
            let wanted = min(Double(count), burst)
            defer { buckets[device] = bucket }
            guard bucket.tokens >= wanted else { return (wanted - bucket.tokens) / rate }
            bucket.tokens -= wanted
            return nil
        }
    }
}
