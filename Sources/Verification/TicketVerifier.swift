import FareCore
import Foundation
import Signatures
import TicketFormats

/// Raised only when the verifier cannot work at all (its key directory or revocation list failed).
///
/// A bad ticket is never an error: it is a `Verdict`.
public struct VerifierError: Error, CustomStringConvertible {
    /// A sentence saying what failed.
    public var message: String
    /// The failure underneath.
    public var underlying: any Error

    public var description: String { "\(message): \(underlying)" }
}

/// Turns scanned payload bytes into a verdict, offline.
///
/// The order is fixed: recognise the format, take the envelope apart, find the key by its id, check
/// the signature, and only then read the claims; then the policies run in order (key validity,
/// issuer, validity window, revocation) and the first to fail decides.
public struct TicketVerifier: Sendable {
    /// Tunables of verification.
    public struct Configuration: Sendable {
        /// How far the clock may be off when checking validity windows (default 120 s).
        public var clockSkew: TimeInterval = 120
        /// Activation this recent gives the `recently-activated` warning (default 120 s).
        public var recentActivation: TimeInterval = 120
        /// Text prefixes accepted for FC1's base45 transport.
        public var acceptedPrefixes: [String] = [FC1.defaultPrefix]
        /// Cap on inflated payload size.
        public var inflateLimit: Int = Zlib.defaultInflateLimit
        /// The formats this validator accepts; a payload of another format is `unsupported`, decided from the
        /// detected format before any signature or key lookup.
        public var acceptedFormats: Set<TicketFormat> = Set(TicketFormat.allCases)

        public init() {}
    }

    /// Where keys are found (read by the per-format checks in other files, e.g. `verifyDOSIPAS`).
    let keys: any KeyDirectory
    /// Policies for FC1 tickets, in order.
    private let policies: [any TicketPolicy]
    /// Policies for UIC 918.3 tickets: no issuer policy, because the key is found by the issuer code itself.
    let uicPolicies: [any TicketPolicy]
    /// Policies for VDV-KA tickets: key validity, window, revocation (the chain fixes the issuer).
    let vdvPolicies: [any TicketPolicy]
    /// The VDV-KA chain verifier, when VDV certificates are configured.
    let vdv: VDVChainVerifier?
    /// How far the clock may be off (`Configuration.clockSkew`), for checks outside the policies (DOSIPAS
    /// barcode freshness).
    let clockSkew: TimeInterval
    /// DOSIPAS level-2 keys already built, shared by copies of this verifier.
    let level2Keys = DOSIPASLevel2Keys()
    private let clock: any InspectionClock
    private let detector: PayloadDetector
    private let acceptedFormats: Set<TicketFormat>
    /// Whether every format is accepted (the default), so that no set is consulted per scan: a format's
    /// hash is its name's.
    private let acceptsEveryFormat: Bool

    /// A verifier over the given trust data, with the standard policies.
    ///
    /// `vdvCertificates`: the VDV CA authorities for VDV-KA barcodes; without them such barcodes get
    /// `unknown-key`. The verifier (and its copies) share one cache of recovered issuer certificates.
    public init(
        keys: any KeyDirectory, revocations: any RevocationList, clock: any InspectionClock = SystemClock(),
        configuration: Configuration = Configuration(), vdvCertificates: (any VDVCertificateSource)? = nil
    ) {
        self.keys = keys
        self.vdv = vdvCertificates.map { VDVChainVerifier(certificates: $0) }
        self.clock = clock
        self.clockSkew = configuration.clockSkew
        self.acceptedFormats = configuration.acceptedFormats
        self.acceptsEveryFormat = configuration.acceptedFormats.isSuperset(of: TicketFormat.allCases)
        self.detector = PayloadDetector(
            acceptedPrefixes: configuration.acceptedPrefixes, inflateLimit: configuration.inflateLimit)
        let window = ValidityWindowPolicy(
            clockSkew: configuration.clockSkew, recentActivation: configuration.recentActivation)
        let revocation = RevocationPolicy(revocations: revocations)
        self.policies = [KeyValidityPolicy(), IssuerPolicy(), window, revocation]
        self.uicPolicies = [KeyValidityPolicy(), window, revocation]
        self.vdvPolicies = [KeyValidityPolicy(), window, revocation]
    }

    /// A verifier over one in-memory snapshot of keys and revocations.
    public init(
        trust: TrustSnapshot, clock: any InspectionClock = SystemClock(),
        configuration: Configuration = Configuration(),
        vdvCertificates: (any VDVCertificateSource)? = nil
    ) {
        self.init(
            keys: trust, revocations: trust, clock: clock, configuration: configuration,
            vdvCertificates: vdvCertificates)
    }

    /// The cache of recovered VDV issuer certificates (its counters are for metrics), when VDV is configured.
    public var vdvCertificateCache: VDVIssuerCertificateCache? { vdv?.cache }

    /// The verdict for `payload`, as of the clock's current time.
    public func verify(_ payload: [UInt8]) throws(VerifierError) -> Verdict {
        try verify(payload, at: clock.now())
    }

    /// The verdict for `payload` as of `now`.
    public func verify(_ payload: [UInt8], at now: Date) throws(VerifierError) -> Verdict {
        let recognised: RecognisedPayload
        do {
            recognised = try detector.recognise(payload)
        } catch {
            return Verdict(
                kind: error.code == .unsupported ? .unsupported : .malformed, reason: sentence(error.message),
                signature: .notChecked, inspectedAt: now
            )
        }
        guard acceptsEveryFormat || acceptedFormats.contains(recognised.format) else {
            return Verdict(
                kind: .unsupported,
                reason: "Tickets of format \(recognised.format.displayName) are not accepted on this validator.",
                signature: .notChecked, format: recognised.format, inspectedAt: now)
        }
        switch recognised {
        case .fc1(let message, _):
            return try verifyFC1(message, at: now)
        case .uic(let container):
            return try verifyUIC(container, at: now)
        case .ssb(let frame):
            return try verifySSB(frame, at: now)
        case .vdv(let barcode):
            return try verifyVDV(barcode, at: now)
        case .dosipas(let barcode):
            return try verifyDOSIPAS(barcode, at: now)
        }
    }

    private func verifyFC1(_ message: COSESign1, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.fc1
        guard let kidBytes = message.keyID else {
            return Verdict(
                kind: .malformed, reason: "The COSE header carries no key id (kid).", signature: .notChecked,
                format: format, inspectedAt: now)
        }
        let kid = kidBytes.hexString
        guard let algorithmID = message.algorithmID else {
            return Verdict(
                kind: .malformed, reason: "The COSE protected header names no algorithm.", signature: .notChecked,
                format: format, keyID: kid, inspectedAt: now)
        }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmID) else {
            return Verdict(
                kind: .unsupported,
                reason: "COSE algorithm \(algorithmID) is not supported (ES256, EdDSA and PS256 are).",
                signature: .unsupported, format: format, keyID: kid, inspectedAt: now
            )
        }
        let key = try trustedKey(family: format.keyFamily, issuer: nil, keyID: kid)
        guard let key else {
            return Verdict(
                kind: .unknownKey, reason: "No trusted key has id \(kid); the ticket cannot be checked.",
                signature: .unknownKey, format: format, keyID: kid, inspectedAt: now
            )
        }
        if let mismatch = Self.mismatch(algorithm, key) {
            return Verdict(
                kind: .invalidSignature, reason: mismatch, signature: .invalid, format: format, issuer: key.issuer,
                keyID: kid, inspectedAt: now)
        }
        guard
            key.publicKey.isValidSignature(message.signature, for: message.signedBytes, scheme: Self.scheme(algorithm))
        else {
            return Verdict(
                kind: .invalidSignature,
                reason:
                    "The \(algorithm.name) signature does not match key \(kid) of \(key.issuer): the ticket was altered or forged.",
                signature: .invalid, format: format, issuer: key.issuer, keyID: kid, inspectedAt: now
            )
        }
        let ticket: Ticket
        do {
            ticket = try FC1.ticket(fromClaims: message.payload)
        } catch {
            return Verdict(
                kind: .malformed,
                reason: "The signature is valid but the claims make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: key.issuer, keyID: kid, inspectedAt: now
            )
        }
        return try applyPolicies(policies, PolicyContext(ticket: ticket, key: key, now: now))
    }

    private func verifyUIC(_ container: UICContainer, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.uic9183
        let issuer = UICKeyList.normalizedCode(container.issuerCode)
        let keyID = UICKeyList.normalizedCode(container.keyID)
        let label = "\(container.issuerCode)/\(container.keyID)"
        let key = try trustedKey(family: format.keyFamily, issuer: issuer, keyID: keyID)
        guard let key else {
            return Verdict(
                kind: .unknownKey,
                reason: "No trusted key \(label) (issuer/key id); import the UIC key list or the issuer's certificate.",
                signature: .unknownKey, format: format, issuer: issuer, keyID: keyID, inspectedAt: now
            )
        }
        let schemes = UICSignatureSchemes.candidates(for: key, form: container.signatureForm)
        guard !schemes.isEmpty else {
            return Verdict(
                kind: .unsupported,
                reason: "Key \(label) is a \(key.publicKey.kind) key, which UIC 918.3 tickets are not signed with.",
                signature: .unsupported, format: format, issuer: issuer, keyID: keyID, inspectedAt: now
            )
        }
        guard
            schemes.contains(where: {
                key.publicKey.isValidSignature(container.signature, for: container.signedData, scheme: $0)
            })
        else {
            return Verdict(
                kind: .invalidSignature,
                reason: "The signature does not match key \(label): the ticket was altered or forged.",
                signature: .invalid, format: format, issuer: issuer, keyID: keyID, inspectedAt: now
            )
        }
        var ticket: Ticket
        do {
            ticket = try UIC918_3.ticket(from: container)
        } catch {
            return Verdict(
                kind: .malformed,
                reason: "The signature is valid but the records make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: issuer, keyID: keyID, inspectedAt: now
            )
        }
        // Revocations and display use the normalised issuer code (`80` = `0080`).
        ticket.issuer = UICKeyList.normalizedCode(ticket.issuer)
        return try applyPolicies(uicPolicies, PolicyContext(ticket: ticket, key: key, now: now))
    }

    func applyPolicies(_ policies: [any TicketPolicy], _ context: PolicyContext) throws(VerifierError)
        -> Verdict
    {
        let ticket = context.ticket
        // Records of one ticket that state different things: the structured record decided, the inspector is told.
        var warnings = ticket.disagreements.map {
            VerdictWarning(
                code: VerdictWarning.recordsDisagreeCode,
                message: "The ticket's records disagree on the \($0.subject): \($0.kept) decides, not \($0.overruled).")
        }
        for policy in policies {
            let outcome: PolicyOutcome
            do {
                outcome = try policy.evaluate(context)
            } catch {
                throw VerifierError(message: "the \(type(of: policy)) check could not run", underlying: error)
            }
            switch outcome {
            case .meets(let more):
                if !more.isEmpty { warnings += more }
            case .fails(let kind, let reason):
                return Verdict(
                    kind: kind, reason: reason, signature: .valid, format: ticket.format, issuer: ticket.issuer,
                    keyID: context.key.keyID, ticket: ticket, warnings: warnings, inspectedAt: context.now
                )
            case .revokedByBlocklist(let revocation):
                return Verdict(
                    kind: .revoked, reason: revocation.reason, signature: .valid, format: ticket.format,
                    issuer: ticket.issuer, keyID: context.key.keyID, ticket: ticket, warnings: warnings,
                    inspectedAt: context.now, blocklistRevocation: revocation)
            }
        }
        return Verdict(
            kind: .valid, reason: "The ticket is genuine and valid now.", signature: .valid, format: ticket.format,
            issuer: ticket.issuer, keyID: context.key.keyID, ticket: ticket, warnings: warnings,
            inspectedAt: context.now
        )
    }

    /// The key of `family` with `keyID` (of `issuer`, where given) from the key directory: every format's lookup
    /// goes through here, so that a failing directory is always the one error the verifier throws.
    func trustedKey(family: KeyFamily, issuer: String?, keyID: String) throws(VerifierError) -> TrustedKey? {
        do {
            return try keys.key(family: family, issuer: issuer, keyID: keyID)
        } catch {
            throw VerifierError(message: "the key directory failed", underlying: error)
        }
    }

    /// Why `algorithm` cannot have been made with `key`, or `nil` when they fit.
    private static func mismatch(_ algorithm: COSEAlgorithm, _ key: TrustedKey) -> String? {
        let fits: Bool
        switch (algorithm, key.publicKey.kind) {
        case (.es256, .ecP256), (.edDSA, .ed25519), (.ps256, .rsa): fits = true
        default: fits = false
        }
        return fits
            ? nil
            : "The ticket claims \(algorithm.name) but key \(key.keyID) is a \(key.publicKey.kind) key: the signature cannot be genuine."
    }

    private static func scheme(_ algorithm: COSEAlgorithm) -> SignatureScheme {
        switch algorithm {
        case .es256: .ecdsa(.sha256, .raw)
        case .edDSA: .eddsa
        case .ps256: .rsaPSS(.sha256)
        }
    }
}

/// A reason as a sentence: capitalised, ending in a full stop.
func sentence(_ text: String) -> String {
    guard let first = text.first else { return text }
    let body = first.uppercased() + text.dropFirst()
    return body.hasSuffix(".") ? body : body + "."
}
