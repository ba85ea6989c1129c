import FareCore
import Foundation
import Signatures
import Synchronization
import TicketFormats

/// How one signature level of a DOSIPAS barcode was judged.
public enum DOSIPASLevelResult: Sendable, Hashable, CustomStringConvertible {
    /// The signature matches; the text names the key and scheme.
    case valid(String)
    /// The signature does not match, or cannot be genuine; the text says why.
    case invalid(Explanation)
    /// No signature where one is required: level 1 unsigned, or level 2 stripped although level 1 names its key.
    case missing
    /// Level 1 only: the UIC key list has no key for the security provider and key id.
    case unknownKey
    /// Level 2 only: level 1 names no level-2 key, so there is no level 2 to check.
    case notNamed
    /// The algorithm or key is one farecheck cannot check; the text says which.
    case unsupported(Explanation)

    /// Whether the signature was checked and matches.
    public var isValid: Bool {
        if case .valid = self { return true }
        return false
    }

    /// E.g. `valid (key 3703/7, ECDSA with SHA-256 (der))`.
    public var description: String {
        switch self {
        case .valid(let how): "valid (\(how))"
        case .invalid(let why): "invalid: \(why)"
        case .missing: "missing"
        case .unknownKey: "not checked: unknown key"
        case .notNamed: "none"
        case .unsupported(let what): "not checked: \(what)"
        }
    }
}

/// Both signature levels of a DOSIPAS barcode, as judged, and the level-1 key when one was found.
public struct DOSIPASSignatureReport: Sendable {
    /// Level 1: the security provider's key from the UIC key list over `level1Data`.
    public var level1: DOSIPASLevelResult
    /// Level 2: the key that level 1 carries over `level2SignedData`.
    public var level2: DOSIPASLevelResult
    /// The level-1 key, when the key directory has it.
    public var key: TrustedKey?
    /// The issuer code (normalised) and key id the barcode names for level 1, e.g. `3703` and `7`.
    public var issuer: IssuerID
    /// The key id, `0` when the barcode states none.
    public var keyID: KeyID
    /// The UIC keys looked at for level 1 and what came of each when none matched (empty when the barcode names an
    /// algorithm farecheck cannot check, or carries no level-1 signature); when one matched, the verdict tells them.
    public var keys: [KeyConsideration] = []
    /// The trial of the level-1 keys, for the verdict to complete `keys` once the ticket is read.
    var trial: UICKeyTrial?
}

extension TicketVerifier {
    /// The verdict for a DOSIPAS barcode (UIC 918.9, `U1`/`U2`) as of `now`.
    ///
    /// Level 1 is checked with the UIC key list entry named by the security provider and key id (an absent key
    /// id is 0), with the algorithm the barcode names, else the one the key list names. Level 2 is checked with
    /// the key that the (level-1 signed) data carries, and only proves something once level 1 holds: anyone can
    /// embed a key of their own.
    ///
    /// Verdicts, in the order they are decided (signature status in brackets):
    /// - the header does not decode (cut, altered length, trailing octets): `malformed` (not-checked); a header
    ///   format other than U1/U2: `unsupported` (not-checked) — both decided by `PayloadDetector`;
    /// - no level-1 signature (an unsigned frame): `invalid-signature` (invalid);
    /// - no key for the provider and key id: `unknown-key` (unknown-key), with the ticket attached unverified
    ///   and the level-2 result in its `details`;
    /// - a level-1 algorithm or key kind farecheck cannot check: `unsupported` (unsupported);
    /// - the level-1 signature does not match (a level-1 bit altered): `invalid-signature` (invalid);
    /// - level 1 names a level-2 key but the level-2 signature is missing (stripped) or does not match (level-2
    ///   data or signature altered): `invalid-signature` (invalid);
    /// - a level-2 key or algorithm farecheck cannot use: `unsupported` (unsupported);
    /// - signatures valid but the FCB or dynamic content does not decode: `malformed` (valid);
    /// - the UIC policies fail: `key-expired` (key outside its window), `not-yet-valid`/`expired` (the FCB
    ///   document that applies now), `revoked` (valid);
    /// - a ticket valid by the policies, but a dynamic barcode that is stale — older than its duration plus the
    ///   clock skew, stamped more than the skew in the future, or past the header's end of validity plus the
    ///   skew: `barcode-expired` (valid). An FDC1 time stamp has no year: it is read as the latest such day and
    ///   time not after now plus the skew (`DOSIPASTimeStamp.date(notAfter:)`), so it is never in the future, and
    ///   one a little ahead of the clock reads as a year old;
    /// - otherwise `valid` (valid).
    ///
    /// The ticket's own verdict comes before freshness: an expired ticket is reported as `expired` even when its
    /// barcode is also stale, so the inspector learns the stronger reason. Freshness is only judged from level-2
    /// data that level 2 authenticates (a barcode with no level-2 key is static and has no freshness). The
    /// duration is Intercode's `dynamicContentDuration`, else the U2 header's `validityDuration`; without one
    /// only the end of validity and a future stamp are checked, and an authenticated level 2 without any time
    /// gives the warning `barcode-freshness-not-checked`. The ticket's `details` gain `level 1 check` and
    /// `level 2 check` lines.
    public func verifyDOSIPAS(_ barcode: DOSIPASBarcode, at now: Date) throws(VerifierError) -> Verdict {
        let format = TicketFormat.uic9189
        let report = try checkDOSIPASSignatures(barcode, at: now)
        let issuer = report.issuer
        let keyID = report.keyID
        // Once level 1 matched, the keys are told with the issuing time of the (signed) ticket, when read.
        var issuedAt: Date?
        func withKeys(_ verdict: Verdict) -> Verdict {
            guard let trial = report.trial else { return verdict }
            var verdict = verdict
            let issued = issuedAt
            verdict.deferKeys { trial.considerations(issuedAt: issued).keys }
            return verdict
        }
        func verdict(
            _ kind: VerdictKind, _ reason: Explanation, _ signature: SignatureStatus, ticket: Ticket? = nil,
            warnings: [VerdictWarning] = []
        ) -> Verdict {
            withKeys(
                Verdict(
                    kind: kind, reason: reason, signature: signature, format: format, issuer: issuer,
                    keyID: keyID,
                    ticket: ticket, warnings: warnings, inspectedAt: now, keys: report.keys))
        }
        let checks = (report.level1, report.level2)
        let checkLines: @Sendable () -> [(label: String, value: String)] = {
            [("level 1 check", "\(checks.0)"), ("level 2 check", "\(checks.1)")]
        }
        func annotated(_ ticket: Ticket) -> Ticket {
            var ticket = ticket
            ticket.appendDetails(checkLines)
            return ticket
        }
        // Only the verdicts without a valid level 1 name the key: not built for the others.
        var label: String { "\(issuer)/\(keyID)" }

        // A barcode is never generated in the future: an FDC1 time stamp (which has no year) is the latest such
        // day and time not after now plus the clock tolerance.
        let latestGeneration = now.addingTimeInterval(clockSkew)

        switch report.level1 {
        case .missing:
            return verdict(
                .invalidSignature, "The barcode carries no level-1 signature: an unsigned frame is never genuine.",
                .invalid)
        case .unknownKey:
            let ticket = try? DOSIPAS.ticket(from: barcode, at: latestGeneration)
            let considered = report.keys.map { "\($0.issuer)/\($0.keyID) \($0.reason)" }.joined(separator: "; ")
            let why: Explanation =
                report.keys.isEmpty
                ? "No trusted key \(label) (security provider/key id); import the UIC key list."
                : "No key in scope for this DOSIPAS barcode has \(label) (security provider/key id): \(considered). "
                    + "Import the issuer's key for this kind of barcode."
            return verdict(
                .unknownKey, "\(why) The ticket shown is unverified.", .unknownKey, ticket: ticket.map(annotated))
        case .unsupported(let what):
            return verdict(.unsupported, "The level-1 signature cannot be checked: \(what).", .unsupported)
        case .invalid(let why):
            return verdict(.invalidSignature, "The level-1 signature \(why).", .invalid)
        case .notNamed:
            // Level 1 is never "not named"; treated as missing for safety.
            return verdict(.invalidSignature, "The barcode carries no level-1 signature.", .invalid)
        case .valid:
            break
        }
        switch report.level2 {
        case .missing:
            return verdict(
                .invalidSignature,
                "Level 1 names a level-2 key but the level-2 signature is missing: the barcode was stripped or copied.",
                .invalid)
        case .invalid(let why):
            return verdict(.invalidSignature, "The level-2 signature \(why).", .invalid)
        case .unsupported(let what):
            return verdict(.unsupported, "The level-2 signature cannot be checked: \(what).", .unsupported)
        case .valid, .notNamed, .unknownKey:
            break
        }
        // Level 1 is valid, so the key is there.
        guard let key = report.key else {
            return verdict(.unknownKey, "No trusted key \(label).", .unknownKey)
        }

        var ticket: Ticket
        let freshness: DOSIPASFreshness?
        do {
            // The check lines go in with the content: appending them to the ticket afterwards made it again.
            let content = try DOSIPAS.content(of: barcode, at: latestGeneration, appendingDetails: checkLines)
            ticket = content.ticket
            // Only level-2 data that level 2 authenticates says anything about freshness.
            freshness = report.level2.isValid ? content.freshness : nil
        } catch {
            return verdict(
                .malformed, "The signatures are valid but the content makes no ticket: \(sentence(error.message))",
                .valid)
        }
        // The mapping normalises the issuer already: a setter makes a new storage for the ticket, so only when
        // the code changes.
        let issuerCode = UICKeyList.normalizedCode(ticket.issuer)
        if issuerCode != ticket.issuer { ticket.issuer = issuerCode }
        issuedAt = ticket.issuedAt

        var result = withKeys(try applyPolicies(uicPolicies, PolicyContext(ticket: ticket, key: key, now: now)))
        // The ticket's own verdict first: an expired or revoked ticket is that, however fresh its barcode.
        guard result.kind == .valid else { return result }
        if let freshness {
            let skew = clockSkew
            let generated = freshness.generatedAt
            if generated.timeIntervalSince(now) > skew {
                return verdict(
                    .barcodeExpired,
                    "The barcode was generated at \(date: generated), after the inspection time: "
                        + "a barcode made in advance is refused.", .valid, ticket: ticket, warnings: result.warnings)
            }
            if let duration = freshness.duration,
                now.timeIntervalSince(generated) > TimeInterval(duration) + skew
            {
                let age = Int(now.timeIntervalSince(generated))
                // An FDC1 stamp a little ahead of the clock reads as last year's: say days, not millions of seconds.
                let ago: Explanation = age < 172_800 ? "\(age) s ago" : "\(age / 86_400) days ago"
                return verdict(
                    .barcodeExpired,
                    "The barcode was generated at \(date: generated), \(ago), and may be shown for "
                        + "\(duration) s only: it is a copy or a screenshot.", .valid, ticket: ticket,
                    warnings: result.warnings)
            }
            if let end = freshness.endOfValidity, now.timeIntervalSince(end) > skew {
                return verdict(
                    .barcodeExpired,
                    "The barcode had to be regenerated by \(date: end): it is an old copy.", .valid,
                    ticket: ticket, warnings: result.warnings)
            }
        }
        if report.level2.isValid, freshness == nil, barcode.level2Data != nil {
            result.warnings.append(
                VerdictWarning(
                    code: VerdictWarning.barcodeFreshnessNotCheckedCode,
                    message: "The level-2 data states no generation time: check the barcode is live on the phone."))
        }
        // What an inspector of a phone's barcode wants to see at once: both levels, and how old the barcode is.
        if report.level2.isValid {
            if let generated = freshness?.generatedAt {
                let age = max(0, Int(now.timeIntervalSince(generated)))
                result.explanation =
                    "The ticket is genuine and valid now: both signature levels are valid and the barcode was "
                    + "generated \(age) s ago."
            } else {
                result.explanation = "The ticket is genuine and valid now: both signature levels are valid."
            }
        } else {
            result.explanation =
                "The ticket is genuine and valid now: its level-1 signature is valid (it has no level 2)."
        }
        return result
    }

    /// Checks both signature levels of a barcode without judging the ticket.
    ///
    /// Level 1 is tried with every UIC key of the security provider and key id that is in scope for a DOSIPAS
    /// barcode (see `UICKeyScope`); it is `invalid` only when a key in scope, trusted when the ticket says it was
    /// issued, fails; when none is, `unknownKey`, with every key and why in `keys`. `now` only places the
    /// year-less dates of the (unverified) content read for that.
    ///
    /// - Throws: `VerifierError` only when the key directory fails.
    func checkDOSIPASSignatures(_ barcode: DOSIPASBarcode, at now: Date = Date()) throws(VerifierError)
        -> DOSIPASSignatureReport
    {
        let level1 = barcode.level1
        let issuer = level1.securityProvider.map { UICKeyList.normalizedCode("\($0)") } ?? ""
        let keyID = String(level1.keyID ?? 0)
        var report = DOSIPASSignatureReport(
            level1: .missing, level2: .notNamed, key: nil, issuer: IssuerID(issuer), keyID: KeyID(keyID))
        // Level 2 is judged whatever level 1 gives, so that the report tells both; it only counts behind a valid
        // level 1.
        report.level2 = Self.checkLevel2(barcode, keys: level2Keys)
        guard let signature = barcode.level1Signature else { return report }
        let named = level1.level1SigningAlgorithm
        let kinds: UICSignatureShape.KeyKinds
        switch named {
        case .ecdsa: kinds = .ecdsa
        case .dsa: kinds = .dsa
        case nil: kinds = .dsaOrECDSA
        case .some(let other):
            report.level1 = .unsupported("\(other)")
            return report
        }
        let width =
            SignatureIntegerWidth.of(signature, encoding: .der) ?? SignatureIntegerWidth.of(signature, encoding: .raw)
        let shape = UICSignatureShape(kinds: kinds, integerWidth: width, named: named.map { "\($0)" })
        let candidates = try uicKeyCandidates(
            issuer: IssuerID(issuer), keyID: KeyID(keyID), frame: .dosipas, shape: shape)
        guard !candidates.isEmpty else {
            report.level1 = .unknownKey
            return report
        }
        let trial = UICKeyTrial(candidates, signature: signature, message: barcode.level1SignedBytes) {
            Self.level1Schemes(for: $0, named: named)
        }
        if let (key, scheme) = trial.verified {
            report.key = key
            report.level1 = .valid("key \(key.issuer)/\(key.keyID), \(scheme)")
            // `keys` without an issuing time: the verdict completes them once it has read the (signed) ticket.
            report.trial = trial
            return report
        }
        // Unsigned content, read only to tell which failed keys were trusted when the ticket says it was issued.
        let (evidence, keys) = trial.considerations(
            issuedAt: try? DOSIPAS.ticket(from: barcode, at: now.addingTimeInterval(clockSkew)).issuedAt)
        report.keys = keys
        if evidence.isEmpty {
            report.level1 = .unknownKey
        } else {
            let names = evidence.map { "key \($0.issuer)/\($0.keyID)" }.joined(separator: ", ")
            report.level1 = .invalid("does not match \(names): the ticket was altered or forged")
        }
        return report
    }

    /// The level-1 schemes to try with `key`: those of the algorithm the barcode names, else the key list's text
    /// and the hashes that fit the key, each in DER and then raw `r ‖ s`.
    private static func level1Schemes(for key: TrustedKey, named: DOSIPASSigningAlgorithm?) -> [SignatureScheme] {
        if let named {
            return (candidateSchemes(for: named) ?? []).filter(key.publicKey.supports)
        }
        let fromList = UICSignatureSchemes.candidates(for: key, form: .der)
        return fromList + fromList.map(Self.raw)
    }

    /// Level 2 with the key level 1 carries, built through `keys` when given (a cache of keys already built).
    static func checkLevel2(_ barcode: DOSIPASBarcode, keys: DOSIPASLevel2Keys?) -> DOSIPASLevelResult {
        let level1 = barcode.level1
        guard level1.namesLevel2Key else { return .notNamed }
        guard let keyBytes = level1.level2PublicKey else {
            return .invalid("cannot be checked: level 1 names a level-2 algorithm but no level-2 key")
        }
        guard let signature = barcode.level2Signature else { return .missing }
        let key: PublicKey
        do {
            let algorithm = level1.level2KeyAlgorithm
            if let keys {
                key = try keys.key(keyBytes, algorithm: algorithm) { () throws(SignatureError) in
                    try level2Key(keyBytes, algorithm: algorithm)
                }
            } else {
                key = try level2Key(keyBytes, algorithm: algorithm)
            }
        } catch {
            return .unsupported("the level-2 key (\(keyBytes.count) bytes) cannot be read: \(error.message)")
        }
        let schemes: [SignatureScheme]
        if let named = level1.level2SigningAlgorithm {
            guard let fromName = candidateSchemes(for: named) else { return .unsupported("\(named)") }
            schemes = fromName
        } else {
            // No level-2 algorithm named: ECDSA with the hash that goes with the curve, or EdDSA.
            switch key.kind {
            case .ed25519: schemes = [.eddsa]
            case .ecP256: schemes = ecdsaSHA256Schemes
            default: schemes = [.ecdsa(.sha384, .der), .ecdsa(.sha512, .der), .ecdsa(.sha256, .der)]
            }
        }
        for scheme in schemes where key.supports(scheme) {
            if key.isValidSignature(signature, for: barcode.level2SignedBytes, scheme: scheme) {
                return .valid("\(key.kind) key in the barcode, \(scheme)")
            }
        }
        return .invalid("does not match the level-2 key the barcode carries: the dynamic data was altered")
    }

    /// The level-2 key: a DER SubjectPublicKeyInfo, a SEC1 point on the named curve (else the curve its
    /// length fits), or a bare Ed25519 key.
    private static func level2Key(
        _ bytes: [UInt8], algorithm: DOSIPASKeyAlgorithm?
    ) throws(SignatureError) -> PublicKey {
        switch bytes.first {
        case 0x30:
            return try PublicKey(spkiDER: bytes)
        case 0x02, 0x03, 0x04:
            let curve: EllipticCurve?
            switch algorithm {
            case .ecP256: curve = .p256
            case .ecP384: curve = .p384
            case .ecP521: curve = .p521
            default: curve = EllipticCurve(pointByteCount: bytes.count)
            }
            guard let curve else {
                throw SignatureError(code: .invalidKey, message: "A \(bytes.count)-byte point fits no known curve.")
            }
            return try PublicKey(ecPoint: bytes, curve: curve)
        default:
            if algorithm == .ed25519 || bytes.count == 32 { return try PublicKey(ed25519: bytes) }
            throw SignatureError(code: .invalidKey, message: "The key is neither a point nor a SubjectPublicKeyInfo.")
        }
    }

    /// The schemes a named algorithm may have been used in (DER first, raw `r ‖ s` as a fallback); `nil` for
    /// one farecheck cannot check.
    private static func candidateSchemes(for algorithm: DOSIPASSigningAlgorithm) -> [SignatureScheme]? {
        switch algorithm {
        // The schemes of nearly every barcode, made once rather than an array per check.
        case .ecdsa(.sha256): ecdsaSHA256Schemes
        case .ecdsa(let hash): [.ecdsa(digest(hash), .der), .ecdsa(digest(hash), .raw)]
        case .dsa(let hash): [.dsa(digest(hash), .der), .dsa(digest(hash), .raw)]
        case .ed25519: [.eddsa]
        case .rsaPKCS1, .other: nil
        }
    }

    private static let ecdsaSHA256Schemes: [SignatureScheme] = [.ecdsa(.sha256, .der), .ecdsa(.sha256, .raw)]

    private static func raw(_ scheme: SignatureScheme) -> SignatureScheme {
        switch scheme {
        case .ecdsa(let digest, _): .ecdsa(digest, .raw)
        case .dsa(let digest, _): .dsa(digest, .raw)
        default: scheme
        }
    }

    private static func digest(_ hash: DOSIPASHash) -> DigestAlgorithm {
        switch hash {
        case .sha1: .sha1
        case .sha224: .sha224
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        }
    }
}

/// The level-2 keys a verifier has built, by their bytes in the barcode: building one from a compressed point
/// (a modular square root, then OpenSSL's key set-up) costs about a third of a signature check.
///
/// A phone keeps its level-2 key while it regenerates the barcode (until the header's end of validity, about a
/// day), so a passenger scanned again, or at the next gate, brings the same key. The cache holds the latest
/// `capacity` keys and forgets all of them when full: simple, bounded, and a hit is a dictionary read. A key
/// only enters through a barcode whose level-2 signature is then checked with it, and it is only trusted after
/// level 1 vouches for its bytes, so caching it changes no verdict.
final class DOSIPASLevel2Keys: Sendable {
    /// A key's bytes and the curve a bare point is read on: the algorithm decides that curve, so it is part of
    /// the identity. The bytes are the barcode's own array, shared, not copied.
    private struct Identity: Hashable {
        var bytes: [UInt8]
        var tag: UInt8
    }

    private let keys = Mutex<[Identity: PublicKey]>([:])
    private let capacity: Int

    init(capacity: Int = 1_024) {
        self.capacity = capacity
    }

    /// The key for `bytes` read as `algorithm` names, built by `make` when not yet known.
    func key(
        _ bytes: [UInt8], algorithm: DOSIPASKeyAlgorithm?, make: () throws(SignatureError) -> PublicKey
    ) throws(SignatureError) -> PublicKey {
        let identity = Identity(bytes: bytes, tag: Self.tag(algorithm))
        if let known = keys.withLock({ $0[identity] }) { return known }
        let key = try make()
        keys.withLock { keys in
            if keys.count >= capacity { keys.removeAll(keepingCapacity: true) }
            keys[identity] = key
        }
        return key
    }

    /// One byte per curve a bare point may be read on.
    private static func tag(_ algorithm: DOSIPASKeyAlgorithm?) -> UInt8 {
        switch algorithm {
        case .ecP256: 1
        case .ecP384: 2
        case .ecP521: 3
        case .ed25519: 4
        default: 0
        }
    }
}
