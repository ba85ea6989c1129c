import Foundation

/// What the inspector is told about a ticket: the outcome of one verification.
///
/// A rejected ticket is a value, not an error: every way a ticket can fail has a kind here,
/// and each kind comes with a sentence (`reason`) saying why.
public enum VerdictKind: String, Sendable, Codable, CaseIterable {
    case valid = "valid"
    case invalidSignature = "invalid-signature"
    case unknownKey = "unknown-key"
    case keyExpired = "key-expired"
    case wrongIssuer = "wrong-issuer"
    case expired = "expired"
    case notYetValid = "not-yet-valid"
    case revoked = "revoked"
    /// A single-use ticket already used at a gate within the replay window.
    case replayed = "replayed"
    /// A dynamic barcode (UIC 918.9 DOSIPAS with level-2 data) older than the duration it may be shown for,
    /// stamped in the future, or past its end of validity (each with the clock-skew tolerance): a screenshot or
    /// copy of a genuine ticket, refused although both signatures are valid.
    case barcodeExpired = "barcode-expired"
    /// The device clock reads earlier than the trusted-time floor (beyond the tolerance): a verdict that depends
    /// on the instant cannot be judged. The signature is still checked (`valid` or `invalid` beside it), so the
    /// inspector sees whether the ticket is genuine; it never opens a gate. Given in place of every kind whose
    /// `dependsOnTime` is true.
    case clockUntrusted = "clock-untrusted"
    case malformed = "malformed"
    case unsupported = "unsupported"
    /// Inspector mode: nobody is logged in, so the scan was not inspected (and is not journaled).
    case refused = "refused"

    /// Every kind's name, comma-separated: for messages that list what is accepted.
    public static var allNames: String { allCases.map(\.rawValue).joined(separator: ", ") }

    /// Whether this kind depends on the inspection instant, so that a clock that cannot be trusted cannot give
    /// it: `valid`, `expired`, `not-yet-valid`, `key-expired`, `barcode-expired` and `replayed`. The others
    /// (a signature, a format, a key that is unknown, revoked or of another issuer) hold at any instant.
    public var dependsOnTime: Bool {
        switch self {
        case .valid, .expired, .notYetValid, .keyExpired, .barcodeExpired, .replayed: true
        case .invalidSignature, .unknownKey, .wrongIssuer, .revoked, .clockUntrusted, .malformed, .unsupported,
            .refused:
            false
        }
    }
}

/// The result of the signature check alone, reported beside the verdict.
///
/// An inspector must be able to tell a forged ticket (`invalid`) from a genuine one that fails a
/// policy (`valid` signature, verdict `expired`), and both from one we have no key for.
public enum SignatureStatus: String, Sendable, Codable {
    case valid = "valid"
    case invalid = "invalid"
    case unknownKey = "unknown-key"
    case unsupported = "unsupported"
    case notChecked = "not-checked"
}

/// A remark that does not change the verdict but that the inspector should see.
public struct VerdictWarning: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A stable, machine-readable code, e.g. `recently-activated`.
    public var code: String
    /// The sentence for the inspector, as it can be translated.
    public var explanation: Explanation
    /// The sentence for the inspector, in English.
    public var message: String { explanation.english }

    public init(code: String, message: Explanation) {
        self.code = code
        self.explanation = message
    }

    private enum CodingKeys: String, CodingKey { case code, message, explanation }

    /// `code` and `message` as they always were, and the `explanation` beside them.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(code, forKey: .code)
        try container.encode(message, forKey: .message)
        try container.encode(explanation, forKey: .explanation)
    }

    /// A warning written before explanations were kept has its message as it is.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        code = try container.decode(String.self, forKey: .code)
        explanation =
            try container.decodeIfPresent(Explanation.self, forKey: .explanation)
            ?? .verbatim(try container.decode(String.self, forKey: .message))
    }

    public var description: String { "\(code): \(message)" }

    /// The ticket was activated by its holder only moments before it was scanned.
    public static let recentlyActivatedCode = "recently-activated"
    /// The ticket's validity dates could not be read (e.g. only in a UIC U_FLEX record), so were not checked.
    public static let validityNotCheckedCode = "validity-not-checked"
    /// The same ticket was inspected before within the replay window.
    public static let seenBeforeCode = "seen-before"
    /// Two records of the ticket state different things (U_FLEX against 0080BL or the printed U_TLAY layout):
    /// the structured record (FCB) decided, and the inspector should compare with what the passenger sees.
    public static let recordsDisagreeCode = "records-disagree"
    /// A dynamic barcode (DOSIPAS) whose level-2 data states no generation time: its freshness was not checked.
    public static let barcodeFreshnessNotCheckedCode = "barcode-freshness-not-checked"
    /// The keys and revocations have not been updated from the agency for longer than the configured staleness.
    public static let staleTrustDataCode = "stale-trust-data"
    /// The issuer wrote the ticket in a way its standard does not allow but whose meaning is not in doubt (a number
    /// padded with spaces, a U_TLAY text length counted in characters): read as meant, and named (which quirk, which
    /// record, which byte) for the inspector and the issuer's support. See docs/issuer-quirks.md.
    public static let issuerQuirkCode = "issuer-quirk"
    /// A record the ticket can be judged without (the printed U_TLAY layout, a record in a version farecheck does not
    /// decode) cannot be read: the ticket was judged on its other records, and the record is listed.
    public static let unreadableRecordCode = "unreadable-record"
}

/// A key the verifier looked at for a ticket's signature, and what came of it: the answer to "why this verdict?"
/// (`verify --explain`, the `keys` of `verify --json`, the page).
///
/// Only keys of the UIC key list are judged for scope (see docs/key-scope.md); for them every key with the
/// ticket's issuer and key id is listed, tried or not.
public struct KeyConsideration: Sendable, Hashable, Codable {
    /// What came of a key.
    public enum Outcome: String, Sendable, Hashable, Codable, CaseIterable {
        /// The signature matches this key.
        case verified
        /// In scope for the barcode, trusted for the ticket, and no match: evidence the ticket was altered or
        /// forged. Only this outcome makes a verdict `invalid-signature`.
        case failed
        /// Tried although its list entry does not say clearly that it is for this barcode; no match, which
        /// proves nothing.
        case notMatching = "not-matching"
        /// Not tried, or its result not counted: the key is for another kind of barcode, cannot have made this
        /// signature, or is not trusted for this ticket (outside its validity when the ticket was issued, or
        /// marked forged).
        case skipped
        /// Not tried because another key matched first.
        case notTried = "not-tried"
    }

    /// The key's issuer (normalised RICS code for UIC keys).
    public var issuer: IssuerID
    /// The key id.
    public var keyID: KeyID
    /// What the key list says the key is for, and the key's kind, e.g.
    /// `TLB, barcode version 1, SHA1withDSA(1024,160); DSA 1024/160`.
    public var listing: String
    /// What came of it.
    public var outcome: Outcome
    /// Why, in a few words for the inspector.
    public var reason: String

    public init(issuer: IssuerID, keyID: KeyID, listing: String, outcome: Outcome, reason: String) {
        self.issuer = issuer
        self.keyID = keyID
        self.listing = listing
        self.outcome = outcome
        self.reason = reason
    }

    /// `ISSUER/ID (listing): outcome — reason`.
    public var summary: String { "\(issuer)/\(keyID) (\(listing)): \(outcome.rawValue) — \(reason)" }

    /// `keyId`, as every output of farecheck spells a key id (issue 52); `keyID`, as versions before it wrote it,
    /// is still read.
    enum CodingKeys: String, CodingKey {
        case issuer
        case keyID = "keyId"
        case listing, outcome, reason
        case formerKeyID = "keyID"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        keyID =
            try container.decodeIfPresent(KeyID.self, forKey: .keyID)
            ?? container.decode(KeyID.self, forKey: .formerKeyID)
        listing = try container.decode(String.self, forKey: .listing)
        outcome = try container.decode(Outcome.self, forKey: .outcome)
        reason = try container.decode(String.self, forKey: .reason)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(keyID, forKey: .keyID)
        try container.encode(listing, forKey: .listing)
        try container.encode(outcome, forKey: .outcome)
        try container.encode(reason, forKey: .reason)
    }
}

/// The complete answer for one scanned payload.
public struct Verdict: Sendable {
    /// The outcome.
    public var kind: VerdictKind
    /// One sentence saying why, written for the inspector, as it can be translated.
    public var explanation: Explanation
    /// One sentence saying why, in English (the CLI, the journal, the log). Set, it is kept as it is
    /// (``Explanation/verbatim(_:)``).
    public var reason: String {
        get { explanation.english }
        set { explanation = .verbatim(newValue) }
    }
    /// The signature check on its own.
    public var signature: SignatureStatus
    /// The payload format, when it was recognised.
    public var format: TicketFormat?
    /// The issuer named by the envelope or the claims, when known.
    public var issuer: IssuerID?
    /// The key identifier, as text (hex for FC1), when known.
    public var keyID: KeyID?
    /// The ticket, when the payload could be read far enough to have one.
    public var ticket: Ticket?
    /// Remarks that do not change the verdict.
    public var warnings: [VerdictWarning]
    /// The moment the verdict was given for.
    public var inspectedAt: Date
    /// The keys looked at for the signature and what came of each (UIC key list keys and an RSP6 issuer's keys;
    /// empty for other formats).
    ///
    /// Worked out when read (see `deferKeys`): their sentences cost more than the rest of a fast verdict, and most
    /// verdicts are never explained.
    public var keys: [KeyConsideration] {
        get { keySource?() ?? [] }
        set {
            if newValue.isEmpty {
                keySource = nil
            } else {
                keySource = { @Sendable in newValue }
            }
        }
    }
    private var keySource: (@Sendable () -> [KeyConsideration])?
    /// The trusted-time floor the device clock was judged against (`clock-untrusted` when it read earlier);
    /// `nil` for a verdict given for an explicit instant (`verify --at`) or without a floor.
    public var clockFloor: TrustedTimeFloor?
    /// For a ticket `revoked` by a published blocklist: the list, the entry and what the inspector does.
    public var blocklistRevocation: BlocklistRevocation?

    public init(
        kind: VerdictKind, reason: Explanation, signature: SignatureStatus, format: TicketFormat? = nil,
        issuer: IssuerID? = nil, keyID: KeyID? = nil, ticket: Ticket? = nil,
        warnings: [VerdictWarning] = [], inspectedAt: Date, keys: [KeyConsideration] = [],
        blocklistRevocation: BlocklistRevocation? = nil
    ) {
        self.kind = kind
        self.explanation = reason
        self.signature = signature
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
        self.ticket = ticket
        self.warnings = warnings
        self.inspectedAt = inspectedAt
        self.keys = keys
        self.blocklistRevocation = blocklistRevocation
    }

    /// Sets `keys` to what `make` gives, called each time they are read (it must give the same each time).
    public mutating func deferKeys(_ make: @escaping @Sendable () -> [KeyConsideration]) {
        keySource = make
    }

    /// Whether the ticket may be used: the only verdict that opens a gate.
    public var isValid: Bool { kind == .valid }
}
