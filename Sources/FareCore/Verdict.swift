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
    case malformed = "malformed"
    case unsupported = "unsupported"
    /// Inspector mode: nobody is logged in, so the scan was not inspected (and is not journaled).
    case refused = "refused"
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
    /// A sentence for the inspector.
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
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
}

/// The complete answer for one scanned payload.
public struct Verdict: Sendable {
    /// The outcome.
    public var kind: VerdictKind
    /// One sentence saying why, written for the inspector (and the log).
    public var reason: String
    /// The signature check on its own.
    public var signature: SignatureStatus
    /// The payload format, when it was recognised.
    public var format: TicketFormat?
    /// The issuer named by the envelope or the claims, when known.
    public var issuer: String?
    /// The key identifier, as text (hex for FC1), when known.
    public var keyID: String?
    /// The ticket, when the payload could be read far enough to have one.
    public var ticket: Ticket?
    /// Remarks that do not change the verdict.
    public var warnings: [VerdictWarning]
    /// The moment the verdict was given for.
    public var inspectedAt: Date
    /// For a ticket `revoked` by a published blocklist: the list, the entry and what the inspector does.
    public var blocklistRevocation: BlocklistRevocation?

    public init(
        kind: VerdictKind, reason: String, signature: SignatureStatus, format: TicketFormat? = nil,
        issuer: String? = nil, keyID: String? = nil, ticket: Ticket? = nil,
        warnings: [VerdictWarning] = [], inspectedAt: Date, blocklistRevocation: BlocklistRevocation? = nil
    ) {
        self.kind = kind
        self.reason = reason
        self.signature = signature
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
        self.ticket = ticket
        self.warnings = warnings
        self.inspectedAt = inspectedAt
        self.blocklistRevocation = blocklistRevocation
    }

    /// Whether the ticket may be used: the only verdict that opens a gate.
    public var isValid: Bool { kind == .valid }
}
