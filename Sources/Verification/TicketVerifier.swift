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
        /// How far the device clock may read earlier than the trusted-time floor before the verdicts that depend
        /// on the instant become `clock-untrusted` (default 300 s): a small step back by NTP is not a wrong clock.
        public var clockFloorTolerance: TimeInterval = 300
        /// Whether tickets signed by test keys (`KeyPurpose.testTickets`: the UK RSP6 key list's `is_test`) are
        /// judged as tickets, with the warning `test-key`, instead of `wrong-issuer`: for a test bench, never in
        /// service (default false).
        public var acceptTestKeys = false

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
    /// Policies for UK RSP6 tickets: key validity and purpose, window, revocation (the issuer's keys fix the
    /// issuer).
    let rsp6Policies: [any TicketPolicy]
    /// RSP6 keys in the raw RSA form, built once and shared by copies of this verifier.
    let rsp6RawKeys = RSP6RawKeys()
    /// The VDV-KA chain verifier, when VDV certificates are configured.
    let vdv: VDVChainVerifier?
    /// How far the clock may be off (`Configuration.clockSkew`), for checks outside the policies (DOSIPAS
    /// barcode freshness).
    let clockSkew: TimeInterval
    /// DOSIPAS level-2 keys already built, shared by copies of this verifier.
    let level2Keys = DOSIPASLevel2Keys()
    private let clock: any InspectionClock
    /// Where the trusted-time floor is read, for every verdict judged by the clock's current time.
    private let trustedTime: (any TrustedTimeFloorSource)?
    private let clockFloorTolerance: TimeInterval
    /// Set on the copy that judges one payload while the device clock is doubted: the policies that depend on
    /// the instant are then not run (see `applyPolicies`).
    private var clockDoubt: ClockDoubt?
    private let detector: PayloadDetector
    private let acceptedFormats: Set<TicketFormat>
    /// Whether every format is accepted (the default), so that no set is consulted per scan: a format's
    /// hash is its name's.
    private let acceptsEveryFormat: Bool

    /// A verifier over the given trust data, with the standard policies.
    ///
    /// `vdvCertificates`: the VDV CA authorities for VDV-KA barcodes; without them such barcodes get
    /// `unknown-key`. The verifier (and its copies) share one cache of recovered issuer certificates.
    ///
    /// `trustedTime`: where the trusted-time floor is read. With it, `verify(_:)` doubts a clock that reads
    /// earlier than the floor (beyond `Configuration.clockFloorTolerance`), and every verdict that depends on
    /// the instant becomes `clock-untrusted`; `verify(_:at:)`, for an explicit instant, never consults it.
    public init(
        keys: any KeyDirectory, revocations: any RevocationList, clock: any InspectionClock = SystemClock(),
        configuration: Configuration = Configuration(), vdvCertificates: (any VDVCertificateSource)? = nil,
        trustedTime: (any TrustedTimeFloorSource)? = nil
    ) {
        self.keys = keys
        self.vdv = vdvCertificates.map { VDVChainVerifier(certificates: $0) }
        self.clock = clock
        self.trustedTime = trustedTime
        self.clockFloorTolerance = configuration.clockFloorTolerance
        self.clockSkew = configuration.clockSkew
        self.acceptedFormats = configuration.acceptedFormats
        self.acceptsEveryFormat = configuration.acceptedFormats.isSuperset(of: TicketFormat.allCases)
        self.detector = PayloadDetector(
            acceptedPrefixes: configuration.acceptedPrefixes, inflateLimit: configuration.inflateLimit)
        let window = ValidityWindowPolicy(
            clockSkew: configuration.clockSkew, recentActivation: configuration.recentActivation)
        let revocation = RevocationPolicy(revocations: revocations)
        let purpose = KeyPurposePolicy(acceptTestKeys: configuration.acceptTestKeys)
        self.policies = [KeyValidityPolicy(), IssuerPolicy(), purpose, window, revocation]
        self.uicPolicies = [ForgedKeyPolicy(), KeyValidityPolicy(), purpose, window, revocation]
        self.vdvPolicies = [KeyValidityPolicy(), purpose, window, revocation]
        self.rsp6Policies = [KeyValidityPolicy(), purpose, window, revocation]
    }

    /// A verifier over one in-memory snapshot of keys and revocations.
    public init(
        trust: TrustSnapshot, clock: any InspectionClock = SystemClock(),
        configuration: Configuration = Configuration(),
        vdvCertificates: (any VDVCertificateSource)? = nil, trustedTime: (any TrustedTimeFloorSource)? = nil
    ) {
        self.init(
            keys: trust, revocations: trust, clock: clock, configuration: configuration,
            vdvCertificates: vdvCertificates, trustedTime: trustedTime)
    }

    /// The cache of recovered VDV issuer certificates (its counters are for metrics), when VDV is configured.
    public var vdvCertificateCache: VDVIssuerCertificateCache? { vdv?.cache }

    /// The verdict for `payload`, as of the clock's current time.
    ///
    /// With a trusted-time source, the clock is first held against the floor: when it reads earlier (beyond the
    /// tolerance), the policies that depend on the instant are not run and the verdict is `clock-untrusted`
    /// with the signature as checked, unless something that holds at any instant decides (a bad signature, an
    /// unknown key, a revocation). The floor is read for every verdict, so a clock put right counts at once.
    public func verify(_ payload: [UInt8]) throws(VerifierError) -> Verdict {
        try inspect(payload).verdict
    }

    /// The verdict for `payload` as `verify(_:)` gives it, with the verifier's decoding of the payload beside it (its
    /// printed layout, FCB tree and unreadable records, for whoever shows them): the payload is decoded once, here.
    public func inspect(_ payload: [UInt8]) throws(VerifierError) -> VerifiedPayload {
        let now = clock.now()
        guard let trustedTime else { return try inspect(payload, at: now) }
        let floor: TrustedTimeFloor?
        do {
            floor = try trustedTime.trustedTimeFloor()
        } catch {
            throw VerifierError(message: "the trusted-time floor could not be read", underlying: error)
        }
        guard let floor else { return try inspect(payload, at: now) }
        var inspected: VerifiedPayload
        if let doubt = floor.doubt(of: now, tolerance: clockFloorTolerance) {
            var doubting = self
            doubting.clockDoubt = doubt
            inspected = try doubting.inspect(payload, at: now)
            // Checks outside the policies (a VDV certificate's end date, a DOSIPAS barcode's age) end here too.
            if inspected.verdict.kind.dependsOnTime {
                inspected.verdict.kind = .clockUntrusted
                inspected.verdict.explanation = doubt.reason
            }
        } else {
            inspected = try inspect(payload, at: now)
        }
        inspected.verdict.clockFloor = floor
        return inspected
    }

    /// The verdict for `payload` as of `now`.
    public func verify(_ payload: [UInt8], at now: Date) throws(VerifierError) -> Verdict {
        try inspect(payload, at: now).verdict
    }

    /// The verdict for `payload` as of `now`, with the verifier's decoding beside it (see `inspect(_:)`).
    public func inspect(_ payload: [UInt8], at now: Date) throws(VerifierError) -> VerifiedPayload {
        let recognised: RecognisedPayload
        do {
            recognised = try detector.recognise(payload)
        } catch {
            let verdict = Verdict(
                kind: error.code == .unsupported ? .unsupported : .malformed,
                reason: .verbatim(sentence(error.message)),
                signature: .notChecked, inspectedAt: now
            )
            return VerifiedPayload(
                verdict: verdict,
                decoding: PayloadDecoding(verdict: verdict, recognised: nil, failure: error.message, payload: payload))
        }
        let verdict = try verdict(of: recognised, at: now)
        return VerifiedPayload(
            verdict: verdict,
            decoding: PayloadDecoding(verdict: verdict, recognised: recognised, failure: nil, payload: payload))
    }

    /// The verdict for a payload recognised as `recognised`.
    private func verdict(of recognised: RecognisedPayload, at now: Date) throws(VerifierError) -> Verdict {
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
        case .rsp6(let barcode):
            return try verifyRSP6(barcode, at: now)
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
                format: format, keyID: KeyID(kid), inspectedAt: now)
        }
        guard let algorithm = COSEAlgorithm(rawValue: algorithmID) else {
            return Verdict(
                kind: .unsupported,
                reason: "COSE algorithm \(algorithmID) is not supported (ES256, EdDSA and PS256 are).",
                signature: .unsupported, format: format, keyID: KeyID(kid), inspectedAt: now
            )
        }
        let key = try trustedKey(family: format.keyFamily, issuer: nil, keyID: KeyID(kid))
        guard let key else {
            return Verdict(
                kind: .unknownKey, reason: "No trusted key has id \(kid); the ticket cannot be checked.",
                signature: .unknownKey, format: format, keyID: KeyID(kid), inspectedAt: now
            )
        }
        if let mismatch = Self.mismatch(algorithm, key) {
            return Verdict(
                kind: .invalidSignature, reason: mismatch, signature: .invalid, format: format,
                issuer: key.issuer,
                keyID: KeyID(kid), inspectedAt: now)
        }
        guard
            key.publicKey.isValidSignature(message.signature, for: message.signedBytes, scheme: Self.scheme(algorithm))
        else {
            return Verdict(
                kind: .invalidSignature,
                reason:
                    "The \(algorithm.name) signature does not match key \(kid) of \(key.issuer): the ticket was altered or forged.",
                signature: .invalid, format: format, issuer: key.issuer, keyID: KeyID(kid), inspectedAt: now
            )
        }
        let ticket: Ticket
        do {
            ticket = try FC1.ticket(fromClaims: message.payload)
        } catch {
            return Verdict(
                kind: .malformed,
                reason: "The signature is valid but the claims make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: key.issuer, keyID: KeyID(kid), inspectedAt: now
            )
        }
        return try applyPolicies(policies, PolicyContext(ticket: ticket, key: key, now: now))
    }

    private func verifyUIC(_ container: UICContainer, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.uic9183
        let issuer = UICKeyList.normalizedCode(container.issuerCode)
        let keyID = UICKeyList.normalizedCode(container.keyID)
        // Named only in a verdict without a valid signature: not built for every scan.
        func label() -> String { "\(container.issuerCode)/\(container.keyID)" }
        let frame = UICBarcodeFrame.container(version: container.version)
        let encoding: SignatureEncoding = container.signatureForm == .der ? .der : .raw
        let shape = UICSignatureShape(
            kinds: .dsaOrECDSA, integerWidth: SignatureIntegerWidth.of(container.signature, encoding: encoding))
        let candidates = try uicKeyCandidates(issuer: IssuerID(issuer), keyID: KeyID(keyID), frame: frame, shape: shape)
        guard !candidates.isEmpty else {
            return Verdict(
                kind: .unknownKey,
                reason:
                    "No trusted key \(label()) (issuer/key id); import the UIC key list or the issuer's certificate.",
                signature: .unknownKey, format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID), inspectedAt: now
            )
        }
        let trial = UICKeyTrial(candidates, signature: container.signature, message: container.signedData) {
            UICSignatureSchemes.candidates(for: $0, form: container.signatureForm)
        }
        guard let key = trial.verified?.key else {
            // Unsigned data, read only to tell which failed keys were trusted when the ticket says it was issued.
            let issuedAt = try? UIC918_3.ticket(from: container).issuedAt
            return unmatchedVerdict(
                trial, issuedAt: issuedAt, frame: frame, format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID),
                label: label(),
                at: now)
        }
        // Strict where validity is decided, liberal where a record only informs (docs/issuer-quirks.md): the
        // mapping refuses a broken deciding record, lists an unreadable informing one, and names the quirks read.
        let content: UICContent
        do {
            content = try UIC918_3.content(of: container)
        } catch {
            return Verdict(
                kind: .malformed,
                reason: "The signature is valid but the records make no ticket: \(sentence(error.message))",
                signature: .valid, format: format, issuer: IssuerID(issuer), keyID: KeyID(keyID),
                warnings: IssuerQuirk.warnings(container.quirks), inspectedAt: now,
                keys: trial.considerations(issuedAt: nil).keys
            )
        }
        var ticket = content.ticket
        // Revocations and display use the normalised issuer code (`80` = `0080`).
        ticket.issuer = UICKeyList.normalizedCode(ticket.issuer)
        var verdict = try applyPolicies(
            uicPolicies, PolicyContext(ticket: ticket, key: key, now: now),
            warnings: IssuerQuirk.warnings(content.quirks), deciding: content.undecodedDecidingRecords)
        // A record that decides validity in a version farecheck does not decode: what the ticket says of its
        // validity is not known, so no verdict that depends on it stands (one that holds at any instant does).
        if let undecoded = content.undecodedDecidingRecords.first, verdict.kind.dependsOnTime {
            verdict.kind = .unsupported
            verdict.reason =
                "The signature is valid, but the \(undecoded.location) decides the ticket's validity and is in a "
                + "version farecheck does not read: the ticket cannot be judged; check the printed ticket."
        }
        let issuedAt = ticket.issuedAt
        verdict.deferKeys { trial.considerations(issuedAt: issuedAt).keys }
        return verdict
    }

    /// The verdict of the policies on a ticket whose signature is valid, with `warnings` (from reading the ticket)
    /// first, then those for its records that disagree or cannot be read, then the policies' own.
    ///
    /// `deciding`: unreadable records that decide validity (the caller turns the verdict as it needs).
    func applyPolicies(
        _ policies: [any TicketPolicy], _ context: PolicyContext, warnings leading: [VerdictWarning] = [],
        deciding: [UnreadableRecord] = []
    ) throws(VerifierError) -> Verdict {
        let ticket = context.ticket
        var warnings = leading
        // Records of one ticket that state different things: the structured record decided, the inspector is told.
        if !ticket.disagreements.isEmpty {
            warnings += ticket.disagreements.map {
                VerdictWarning(
                    code: VerdictWarning.recordsDisagreeCode,
                    message:
                        "The ticket's records disagree on the \($0.subjectPhrase): \($0.kept) decides, not \($0.overruled)."
                )
            }
        }
        // Records that cannot be read but do not decide (they inform, or are in a version not decoded): the ticket
        // was judged without them, and they are listed.
        if !ticket.unreadableRecords.isEmpty {
            warnings += ticket.unreadableRecords.map {
                VerdictWarning(
                    code: VerdictWarning.unreadableRecordCode,
                    message: deciding.contains($0)
                        ? "The \($0.location) cannot be read, and it decides the ticket's validity. \($0.reason)"
                        : "The \($0.location) cannot be read; the ticket was judged on its other records. \($0.reason)")
            }
        }
        for policy in policies {
            // A clock that cannot be trusted judges nothing that depends on the instant.
            if clockDoubt != nil, policy.dependsOnTime { continue }
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
                    kind: kind, reason: reason, signature: .valid, format: ticket.format,
                    issuer: ticket.issuer,
                    keyID: context.key.keyID, ticket: ticket, warnings: warnings, inspectedAt: context.now
                )
            case .revokedByBlocklist(let revocation):
                return Verdict(
                    kind: .revoked, reason: revocation.reason, signature: .valid, format: ticket.format,
                    issuer: ticket.issuer, keyID: context.key.keyID, ticket: ticket,
                    warnings: warnings,
                    inspectedAt: context.now, blocklistRevocation: revocation)
            }
        }
        if let clockDoubt {
            return Verdict(
                kind: .clockUntrusted, reason: clockDoubt.reason, signature: .valid, format: ticket.format,
                issuer: ticket.issuer, keyID: context.key.keyID, ticket: ticket, warnings: warnings,
                inspectedAt: context.now)
        }
        return Verdict(
            kind: .valid, reason: "The ticket is genuine and valid now.", signature: .valid, format: ticket.format,
            issuer: ticket.issuer, keyID: context.key.keyID, ticket: ticket, warnings: warnings,
            inspectedAt: context.now
        )
    }

    /// The key of `family` with `keyID` (of `issuer`, where given) from the key directory: every format's lookup
    /// goes through here, so that a failing directory is always the one error the verifier throws.
    func trustedKey(family: KeyFamily, issuer: IssuerID?, keyID: KeyID) throws(VerifierError) -> TrustedKey? {
        do {
            return try keys.key(family: family, issuer: issuer, keyID: keyID)
        } catch {
            throw VerifierError(message: "the key directory failed", underlying: error)
        }
    }

    /// Why `algorithm` cannot have been made with `key`, or `nil` when they fit.
    private static func mismatch(_ algorithm: COSEAlgorithm, _ key: TrustedKey) -> Explanation? {
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

/// A verdict and the verifier's decoding of the payload it judged: what the payload shows beyond the verdict (its
/// printed layout, FCB tree and unreadable records) without decoding it again.
public struct VerifiedPayload: Sendable {
    /// The verdict.
    public var verdict: Verdict
    /// The payload as the verifier decoded it.
    public let decoding: PayloadDecoding
}
