import FareCore
import Foundation
import Signatures
import TicketFormats

/// What the UIC public key list says about a key, beyond the key itself: the facts its scope and trust are judged
/// from. A key added by hand (`keys import FILE --issuer --kid`) has no listing.
public struct UICKeyListing: Sendable, Hashable {
    /// `versionType` as the list writes it (`TLB`, `FCB`, `DOS`, `SSB`, `UIC 918-3`, …); empty when it gives none.
    public let versionType: String
    /// `barcodeVersion` as the list writes it (`1`, `2`, `3`); empty when it gives none.
    public let barcodeVersion: String
    /// `keyForged`: the key's private half is known to others, so nothing it signs is genuine.
    public var forged: Bool
    /// `allowedProductOwnerCodes` (RICS codes, normalised); empty when the list names none.
    public var allowedProductOwners: [String]
    /// The kind of barcode `versionType` names (read once: every verdict of a UIC barcode asks).
    public let purpose: UICKeyPurpose
    /// `barcodeVersion` as a number, when it is one.
    let barcodeVersionNumber: Int?

    public init(versionType: String, barcodeVersion: String, forged: Bool = false, allowedProductOwners: [String] = [])
    {
        self.versionType = versionType
        self.barcodeVersion = barcodeVersion
        self.forged = forged
        self.allowedProductOwners = allowedProductOwners
        purpose = UICKeyPurpose(versionType: versionType)
        barcodeVersionNumber = Int(barcodeVersion.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// What a key list entry says.
    public init(entry: UICKeyList.Entry) {
        self.init(
            versionType: entry.versionType, barcodeVersion: entry.barcodeVersion, forged: entry.forged,
            allowedProductOwners: entry.allowedProductOwnerCodes)
    }
}

/// The kinds of barcode the UIC key list's free-text `versionType` names, read case-, space- and
/// punctuation-insensitively (`UIC 918-3` = `UIC918-3`).
public enum UICKeyPurpose: Sendable, Hashable, CustomStringConvertible {
    /// `TLB` (ticket layout barcode) and `UIC 918-3`: keys for the `#UT` container of UIC 918.3.
    case ticketLayoutBarcode
    /// `FCB` (flexible content barcode): DB's keys for `#UT` containers with U_FLEX (barcodeVersion 1 and 2 = the
    /// container version), and Grand Est's earlier keys for DOSIPAS (barcodeVersion 3).
    case flexibleContentBarcode
    /// `DOS`: keys for UIC 918.9 DOSIPAS barcodes.
    case dosipas
    /// `SSB`: keys for the ERA Small Structured Barcode.
    case smallStructuredBarcode
    /// `UIC918-2SNCF`: SNCF's keys; of barcodeVersion 3 for DOSIPAS (SNCF TER tickets verify with 1187/0), of
    /// barcodeVersion 2 for SNCF's own hex-encoded barcode, which farecheck does not read.
    case sncfBarcode
    /// `UIC 918-2`: keys named for another part of the UIC 918 leaflet, never seen signing a barcode farecheck reads.
    case uic9182
    /// A `versionType` farecheck does not know (e.g. `UIC 918-8`), as written.
    case unknown(String)
    /// No `versionType` at all.
    case unstated

    /// The purpose `versionType` names.
    public init(versionType: String) {
        // The list's usual spellings first, without Foundation's case folding: the daemon reads keys per scan.
        switch versionType {
        case "TLB":
            self = .ticketLayoutBarcode
            return
        case "FCB":
            self = .flexibleContentBarcode
            return
        case "DOS":
            self = .dosipas
            return
        case "SSB":
            self = .smallStructuredBarcode
            return
        default: break
        }
        let compact = String(versionType.uppercased().unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) })
        switch compact {
        case "": self = .unstated
        case "TLB", "UIC9183": self = .ticketLayoutBarcode
        case "FCB": self = .flexibleContentBarcode
        case "DOS", "DOSIPAS", "UIC9189": self = .dosipas
        case "SSB": self = .smallStructuredBarcode
        case "UIC9182SNCF": self = .sncfBarcode
        case "UIC9182": self = .uic9182
        default: self = .unknown(versionType.trimmingCharacters(in: .whitespacesAndNewlines))
        }
    }

    public var description: String {
        switch self {
        case .ticketLayoutBarcode: "UIC 918.3 #UT barcodes (TLB)"
        case .flexibleContentBarcode: "FCB barcodes"
        case .dosipas: "DOSIPAS barcodes (DOS)"
        case .smallStructuredBarcode: "SSB barcodes"
        case .sncfBarcode: "SNCF barcodes (UIC918-2SNCF)"
        case .uic9182: "UIC 918-2 barcodes"
        case .unknown(let text): "\"\(text)\" (a versionType farecheck does not know)"
        case .unstated: "no versionType"
        }
    }
}

/// A barcode whose signature a UIC key is asked to check.
public enum UICBarcodeFrame: Sendable, Hashable, CustomStringConvertible {
    /// A UIC 918.3 `#UT` container of header version 1 or 2.
    case container(version: Int)
    /// The level-1 signature of a UIC 918.9 DOSIPAS barcode.
    case dosipas
    /// An ERA SSB frame of the given version.
    case ssb(version: Int)

    public var description: String {
        switch self {
        case .container(let version): version < 10 ? "#UT0\(version)" : "#UT\(version)"
        case .dosipas: "DOSIPAS"
        case .ssb(let version): "SSB version \(version)"
        }
    }
}

/// What the barcode's signature itself tells about the key that made it.
struct UICSignatureShape: Sendable {
    /// The kinds of key the frame (or the algorithm it names) allows.
    enum KeyKinds: Sendable {
        case dsa
        case ecdsa
        case dsaOrECDSA
    }

    var kinds: KeyKinds
    /// The byte count of the larger of the signature's integers, when they could be read.
    var integerWidth: Int?
    /// The algorithm the barcode names, for messages (DOSIPAS).
    var named: String?

    init(kinds: KeyKinds, integerWidth: Int? = nil, named: String? = nil) {
        self.kinds = kinds
        self.integerWidth = integerWidth
        self.named = named
    }
}

/// Whether a key is for a barcode: judged from its list entry and its key material against the barcode's frame
/// and signature. The table it applies is `UICKeyScope.judge` and is documented in docs/key-scope.md.
public enum UICKeyScope: Sendable, Hashable {
    /// The entry names this kind of barcode, and the key's kind and size fit its signature: a signature that does
    /// not match such a key was altered or forged.
    case inScope
    /// The key fits the signature but the entry does not say clearly that it is for this barcode (no or an unknown
    /// versionType, no barcodeVersion, a type known to sign it only sometimes): tried, and a match is genuine, but a
    /// failure proves nothing.
    case uncertain(String)
    /// The entry names another kind of barcode, or the key cannot have made this signature: not tried.
    case outOfScope(String)

    /// Judges `key` for a barcode of `frame` whose signature has `shape`.
    static func judge(_ key: TrustedKey, frame: UICBarcodeFrame, shape: UICSignatureShape) -> UICKeyScope {
        // What the list says first (it names the key's purpose), then whether the key can have made the signature.
        var listed = judge(key.listing, frame: frame)
        // An entry whose barcodeVersion names a container its own key cannot sign (a DSA-2048 key listed for #UT01,
        // whose 50-byte field holds no such signature) contradicts itself: its barcodeVersion is not taken at its
        // word, and the key is tried on the container it can sign, a failure not counted.
        if case .outOfScope = listed, case .container = frame, let listing = key.listing,
            [.ticketLayoutBarcode, .flexibleContentBarcode].contains(listing.purpose),
            listing.barcodeVersionNumber == 1,
            algorithmMisfit(key, frame: .container(version: 1), shape: UICSignatureShape(kinds: .dsaOrECDSA)) != nil
        {
            listed = .uncertain(
                "listed for #UT01 (barcodeVersion 1), which a \(key.publicKey.kind) key cannot sign: the entry "
                    + "contradicts itself")
        }
        if case .outOfScope = listed { return listed }
        if let misfit = algorithmMisfit(key, frame: frame, shape: shape) { return .outOfScope(misfit) }
        return listed
    }

    /// What `listing` says of `frame`; a key added by hand (no listing) has the scope the operator gave it: every
    /// UIC barcode its algorithm fits.
    static func judge(_ listing: UICKeyListing?, frame: UICBarcodeFrame) -> UICKeyScope {
        guard let listing else { return .inScope }
        let purpose = listing.purpose
        let version = listing.barcodeVersionNumber
        // The text only for messages and for "none given" (the number is read once, with the listing).
        let versionText = listing.barcodeVersion
        switch (frame, purpose) {
        case (_, .unstated):
            return .uncertain("the key list gives no versionType")
        case (_, .unknown):
            return .uncertain("the key list names \(purpose)")

        case (.container(let container), .ticketLayoutBarcode), (.container(let container), .flexibleContentBarcode):
            guard !versionText.isEmpty else { return .uncertain("the key list gives no barcodeVersion") }
            if version == container { return .inScope }
            if let version, version == 1 || version == 2 {
                return .outOfScope("listed for #UT0\(version) barcodes (barcodeVersion \(version)), not \(frame)")
            }
            if purpose == .flexibleContentBarcode, version == 3 {
                return .outOfScope("listed as FCB of barcodeVersion 3, which signs DOSIPAS barcodes, not \(frame)")
            }
            return .outOfScope("barcodeVersion \"\(versionText)\" names no #UT container version")
        case (.container, _):
            return .outOfScope("listed for \(purpose), not \(frame)")

        case (.dosipas, .dosipas):
            // DOS keys' barcodeVersion is not one thing: 3703/7 (2) signs U2 headers, 5219/1 and 9901 (3) name the
            // FCB version. It is shown, not used.
            return .inScope
        case (.dosipas, .flexibleContentBarcode), (.dosipas, .sncfBarcode):
            if version == 3 { return .inScope }
            if versionText.isEmpty { return .uncertain("the key list gives no barcodeVersion") }
            return purpose == .flexibleContentBarcode
                ? .outOfScope("listed as FCB of barcodeVersion \(versionText), which signs #UT containers")
                : .outOfScope("listed as UIC918-2SNCF of barcodeVersion \(versionText), SNCF's own barcode")
        case (.dosipas, .uic9182):
            return version == 3
                ? .uncertain("listed for UIC 918-2 barcodes of barcodeVersion 3, which may be DOSIPAS")
                : .outOfScope("listed for \(purpose), not DOSIPAS")
        case (.dosipas, _):
            return .outOfScope("listed for \(purpose), not DOSIPAS")

        case (.ssb(let ssbVersion), .smallStructuredBarcode):
            if versionText.isEmpty || version == ssbVersion { return .inScope }
            return .uncertain("listed for SSB of barcodeVersion \(versionText), not \(frame)")
        case (.ssb, .ticketLayoutBarcode), (.ssb, .flexibleContentBarcode):
            // Issuers sign SSB with keys listed under their other types (DB's 1080, NS's 1184 keys).
            return .uncertain("listed for \(purpose); SSB keys are sometimes listed so")
        case (.ssb, _):
            return .outOfScope("listed for \(purpose), not SSB")
        }
    }

    /// Why `key` cannot have made a signature of `shape` in `frame`, or `nil` when it can.
    private static func algorithmMisfit(_ key: TrustedKey, frame: UICBarcodeFrame, shape: UICSignatureShape) -> String?
    {
        let kind = key.publicKey.kind
        let scalarBytes: Int
        switch kind {
        case .dsa(_, let qBits):
            if shape.kinds == .ecdsa {
                return "a \(kind) key cannot make the \(shape.named ?? "ECDSA") signature this barcode carries"
            }
            scalarBytes = (qBits + 7) / 8
        case .ecP256:
            if shape.kinds == .dsa {
                return "a \(kind) key cannot make the \(shape.named ?? "DSA") signature \(frame) carries"
            }
            scalarBytes = 32
        default:
            return "a \(kind) key signs no \(frame) barcode"
        }
        // #UT01's signature field is 50 bytes of DER: two integers of at most 22 bytes (DSA 1024/160 signatures);
        // SSB's is 56 bytes: r ‖ s of 28 bytes each at most (DSA 2048/224).
        if case .container(1) = frame, scalarBytes > 22 {
            return "a \(kind) key's signature does not fit the 50-byte signature field of #UT01"
        }
        if case .ssb = frame, scalarBytes > 28 {
            return "a \(kind) key's signature does not fit the 56-byte signature field of SSB"
        }
        guard let width = shape.integerWidth else { return nil }
        if width > scalarBytes {
            return "the signature's integers take \(width) bytes; a \(kind) key makes at most \(scalarBytes)"
        }
        // Both integers 4 or more bytes short of the key's size: odds of 1 in 2^64 for a signature of this key.
        if width + 4 <= scalarBytes {
            return "the signature's integers take \(width) bytes; a \(kind) key makes \(scalarBytes)-byte ones"
        }
        return nil
    }
}

/// The keys the UIC key list has for one barcode's issuer and key id, judged for that barcode.
struct UICKeyCandidates: Sendable {
    /// The keys to try, in scope first, then uncertain ones.
    var tried: [(key: TrustedKey, scope: UICKeyScope)] = []
    /// The keys not tried, and why.
    var skipped: [(key: TrustedKey, reason: String)] = []

    /// Whether the directory had any key for the issuer and key id at all.
    var isEmpty: Bool { tried.isEmpty && skipped.isEmpty }

    init(_ keys: [TrustedKey], frame: UICBarcodeFrame, shape: UICSignatureShape) {
        var uncertain: [(key: TrustedKey, scope: UICKeyScope)] = []
        for key in keys {
            let scope = UICKeyScope.judge(key, frame: frame, shape: shape)
            switch scope {
            case .inScope: tried.append((key, scope))
            case .uncertain: uncertain.append((key, scope))
            case .outOfScope(let why): skipped.append((key, why))
            }
        }
        tried += uncertain
    }
}

/// The outcome of trying a barcode's candidate keys.
struct UICKeyTrial: Sendable {
    private enum Result: Sendable {
        case matched(SignatureScheme)
        case failed
        case notTried
    }

    private var tried: [(key: TrustedKey, scope: UICKeyScope, result: Result)] = []
    private let skipped: [(key: TrustedKey, reason: String)]
    /// The key whose signature matched, and how, if any.
    private(set) var verified: (key: TrustedKey, scheme: SignatureScheme)?

    /// Tries `candidates` in order with `schemes(key)` over `message`, stopping at the first match.
    init(
        _ candidates: UICKeyCandidates, signature: [UInt8], message: [UInt8],
        schemes: (TrustedKey) -> [SignatureScheme]
    ) {
        skipped = candidates.skipped
        for (key, scope) in candidates.tried {
            guard verified == nil else {
                tried.append((key, scope, .notTried))
                continue
            }
            let match = schemes(key).first { key.publicKey.isValidSignature(signature, for: message, scheme: $0) }
            if let match {
                verified = (key, match)
                tried.append((key, scope, .matched(match)))
            } else {
                tried.append((key, scope, .failed))
            }
        }
    }

    /// Every key looked at, in the order tried then the skipped ones, with what came of it; and the keys whose
    /// failure is evidence of forgery.
    ///
    /// A failure is evidence only for a key in scope that was trusted for this ticket: not marked forged, and valid
    /// when the ticket (as it says, signed or not) was issued. The others are named with why their failure does not
    /// count.
    func considerations(issuedAt: Date?) -> (evidence: [TrustedKey], keys: [KeyConsideration]) {
        var evidence: [TrustedKey] = []
        var keys: [KeyConsideration] = []
        for (key, scope, result) in tried {
            switch result {
            case .matched(let scheme):
                keys.append(.init(key, .verified, reason: "the signature matches (\(scheme))", scope: scope))
            case .notTried:
                keys.append(.init(key, .notTried, reason: "another key matched first", scope: scope))
            case .failed:
                if let distrust = KeyValidityPolicy.distrust(of: key, issuedAt: issuedAt) {
                    keys.append(.init(key, .skipped, reason: "\(distrust) (tried: no match)", scope: scope))
                } else if case .uncertain(let why) = scope {
                    keys.append(
                        .init(key, .notMatching, reason: "no match, which proves nothing: \(why)", scope: scope))
                } else {
                    evidence.append(key)
                    keys.append(.init(key, .failed, reason: "in scope for this barcode, and no match", scope: scope))
                }
            }
        }
        for (key, why) in skipped { keys.append(.init(key, .skipped, reason: why, scope: nil)) }
        return (evidence, keys)
    }
}

extension TicketVerifier {
    /// The verdict for a UIC-family barcode none of whose candidate keys matched: `invalid-signature` when a key in
    /// scope and trusted for the ticket failed, else `unknown-key` naming every key and why it did not count.
    func unmatchedVerdict(
        _ trial: UICKeyTrial, issuedAt: Date?, frame: UICBarcodeFrame, format: TicketFormat, issuer: IssuerID,
        keyID: KeyID, label: String, at now: Date
    ) -> Verdict {
        let (evidence, keys) = trial.considerations(issuedAt: issuedAt)
        if !evidence.isEmpty {
            let names = evidence.map { "\($0.issuer)/\($0.keyID) (\($0.listingSummary))" }.joined(separator: ", ")
            return Verdict(
                kind: .invalidSignature,
                reason: "The signature does not match key \(names): the ticket was altered or forged.",
                signature: .invalid, format: format, issuer: issuer, keyID: keyID, inspectedAt: now,
                keys: keys)
        }
        let why = keys.map { "\($0.issuer)/\($0.keyID) \($0.reason)" }.joined(separator: "; ")
        return Verdict(
            kind: .unknownKey,
            reason: "No key in scope for this \(frame) barcode has \(label) (issuer/key id): \(why). Import the "
                + "issuer's key for this kind of barcode.",
            signature: .unknownKey, format: format, issuer: issuer, keyID: keyID, inspectedAt: now,
            keys: keys)
    }

    /// The UIC keys for a barcode's issuer and key id, judged for it; a failing directory is the verifier's error.
    func uicKeyCandidates(
        issuer: IssuerID, keyID: KeyID, frame: UICBarcodeFrame, shape: UICSignatureShape
    ) throws(VerifierError) -> UICKeyCandidates {
        let keys: [TrustedKey]
        do {
            keys = try self.keys.keys(family: .uic, issuer: issuer, keyID: keyID)
        } catch {
            throw VerifierError(message: "the key directory failed", underlying: error)
        }
        return UICKeyCandidates(keys, frame: frame, shape: shape)
    }
}

extension KeyConsideration {
    /// A consideration of `key`, described with its listing and key kind.
    init(_ key: TrustedKey, _ outcome: Outcome, reason: String, scope: UICKeyScope?) {
        var reason = reason
        if case .uncertain(let why) = scope, outcome == .verified { reason += "; in scope uncertain: \(why)" }
        self.init(issuer: key.issuer, keyID: key.keyID, listing: key.listingSummary, outcome: outcome, reason: reason)
    }
}

extension TrustedKey {
    /// What the key is, as `verify --explain` and `keys list` show it, e.g.
    /// `TLB, barcode version 1, SHA1withDSA(1024,160); DSA 1024/160` or `added by hand; ECDSA P-256`.
    public var listingSummary: String {
        guard let listing else { return "no key list entry (added by hand); \(publicKey.kind)" }
        var parts: [String] = []
        parts.append(listing.versionType.isEmpty ? "no versionType" : listing.versionType)
        parts.append(
            listing.barcodeVersion.isEmpty ? "no barcode version" : "barcode version \(listing.barcodeVersion)")
        if let algorithm, !algorithm.isEmpty { parts.append(algorithm) }
        if listing.forged { parts.append("marked forged") }
        return parts.joined(separator: ", ") + "; \(publicKey.kind)"
    }
}

extension UICKeyScope {
    /// The barcodes `keys list` judges a key for: every frame farecheck verifies with UIC keys.
    static let listedFrames: [UICBarcodeFrame] = [
        .container(version: 1), .container(version: 2), .dosipas, .ssb(version: 3),
    ]

    /// Where `key` is used, as `keys list` says it: the barcodes it is in scope for, those it is tried on without a
    /// failure counting (and why), and those it is never tried on, e.g. `in scope for #UT01; tried, a failure not
    /// counted, on SSB version 3 (listed for FCB barcodes; SSB keys are sometimes listed so); not for #UT02,
    /// DOSIPAS`. Judged from the key list entry and the key's kind alone (a barcode's signature may rule out more).
    public static func summary(for key: TrustedKey) -> String {
        var inScope: [String] = []
        var uncertain: [String] = []
        var outOfScope: [String] = []
        for frame in listedFrames {
            let kinds: UICSignatureShape.KeyKinds = if case .ssb = frame { .dsa } else { .dsaOrECDSA }
            switch judge(key, frame: frame, shape: UICSignatureShape(kinds: kinds)) {
            case .inScope: inScope.append("\(frame)")
            case .uncertain(let why): uncertain.append("\(frame) (\(why))")
            case .outOfScope: outOfScope.append("\(frame)")
            }
        }
        var parts: [String] = []
        if !inScope.isEmpty { parts.append("in scope for \(inScope.joined(separator: ", "))") }
        if !uncertain.isEmpty {
            parts.append("tried, a failure not counted as forgery, on \(uncertain.joined(separator: ", "))")
        }
        if parts.isEmpty { return "fits no barcode farecheck reads: never tried" }
        if !outOfScope.isEmpty { parts.append("not for \(outOfScope.joined(separator: ", "))") }
        return parts.joined(separator: "; ")
    }
}
