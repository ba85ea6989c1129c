import FareCore
import Foundation

/// The list of issuer keys a validator should trust, as the agency publishes it (signed, in a
/// `SignedDocument`).
///
/// Each publication has a higher `sequence`; a validator applies a bundle only if its sequence is not
/// lower than the one it holds (`checkNotRollback(holding:)`), so an old bundle replayed by an attacker
/// cannot bring back a key the agency withdrew.
public struct KeyBundle: Sendable, Equatable, Codable {
    /// The publication's number, one more than the previous publication's.
    public var sequence: Int64
    /// When the bundle was published.
    public var issuedAt: Date
    /// Every key of the bundle; a validator replaces the synced keys it holds with these.
    public var keys: [BundleKey]

    /// Makes a bundle.
    public init(sequence: Int64, issuedAt: Date, keys: [BundleKey]) {
        self.sequence = sequence
        self.issuedAt = issuedAt
        self.keys = keys
    }

    /// Refuses this bundle if it is older than the one held.
    ///
    /// - Parameter held: The sequence of the bundle the validator applied last, nil if none.
    /// - Throws: `BundleError` with code `.rollback` when `sequence` is lower than `held`.
    public func checkNotRollback(holding held: Int64?) throws(BundleError) {
        try Self.checkSequence(sequence, holding: held)
    }

    /// Refuses a bundle sequence lower than the one held; an equal sequence (the same bundle again) is accepted.
    ///
    /// - Parameters:
    ///   - received: The sequence of the bundle received.
    ///   - held: The sequence of the bundle the validator applied last, nil if none.
    /// - Throws: `BundleError` with code `.rollback` when `received < held`.
    public static func checkSequence(_ received: Int64, holding held: Int64?) throws(BundleError) {
        guard let held, received < held else { return }
        throw BundleError(
            code: .rollback,
            message: "The key bundle has sequence \(received), older than the bundle \(held) already applied: "
                + "a replayed or rolled-back bundle; refused, the store is unchanged."
        )
    }
}

/// One issuer key in a `KeyBundle`.
///
/// Fields added after the first release (`versionType`, `barcodeVersion`, `keyForged`,
/// `allowedProductOwnerCodes`, `certificate`, `root`) are optional on the wire and left out when absent, so a bundle without them reads as before, and validators that predate them ignore them.
public struct BundleKey: Sendable, Equatable, Codable {
    /// The ticket format the key signs: `fc1`, `uic` (UIC 918.3, UIC 918.9 DOSIPAS, ERA SSB) or `vdv` (VDV-KA).
    public var format: String
    /// The issuer the key belongs to: FC1 issuer name, UIC company code, or for `vdv` the certificate's CA
    /// reference (CAR, 16 hex digits; a root names itself).
    public var issuer: IssuerID
    /// The key id as tickets carry it: lowercase hex for FC1, the UIC key id as text, and for `vdv` the
    /// certificate's own holder reference (CHR, 16 lowercase hex digits), by which tickets and sub-CAs name it.
    public var keyID: KeyID
    /// `ES256`, `EdDSA`, `PS256`, or the UIC key list's algorithm text; nil when not stated.
    public var algorithm: String?
    /// The public key, DER SubjectPublicKeyInfo (base64 on the wire). For `vdv` the certificate's RSA key,
    /// derived by the server from `certificate` and only informative: validators verify with `certificate`
    /// (it is kept required so that validators that predate `certificate` still read the bundle).
    public var spki: [UInt8]
    /// The first moment the key may sign, when limited.
    public var notBefore: Date?
    /// The last moment the key may sign, when limited (for `vdv`: the end of the certificate's end date).
    public var notAfter: Date?
    /// What a UIC key signs, as the UIC key list's `versionType` says (`TLB`, `FCB`, `DOS`, `SSB` …); nil
    /// when not stated.
    public var versionType: String?
    /// What UIC barcode version the key signs, as the UIC key list's `barcodeVersion` says (`1`, `2`, `3`); nil
    /// when not stated. With `versionType` it decides which barcodes the key is tried on (see
    /// docs/key-scope.md).
    public var barcodeVersion: String?
    /// Whether the UIC key list marks the key as forged (`keyForged`): validators trust nothing it signs.
    public var keyForged: Bool
    /// The product owners (RICS codes) whose products the UIC key may sign (`allowedProductOwnerCodes`); empty
    /// when the list names none.
    public var allowedProductOwnerCodes: [String]
    /// For `vdv`: the VDV CV certificate as the agency imported it (`7F21 …`: signed for message recovery,
    /// a clear body with or without its signature, or a bare body), base64 on the wire; nil for other formats.
    public var certificate: [UInt8]?
    /// For `vdv`: whether validators pin this certificate as a root (a trust anchor for sub-CAs); sub-CAs
    /// must chain to a root the validator holds or the same bundle carries.
    public var root: Bool

    /// Makes a key entry.
    public init(
        format: String, issuer: IssuerID, keyID: KeyID, algorithm: String?, spki: [UInt8], notBefore: Date? = nil,
        notAfter: Date? = nil, versionType: String? = nil, barcodeVersion: String? = nil, keyForged: Bool = false,
        allowedProductOwnerCodes: [String] = [], certificate: [UInt8]? = nil, root: Bool = false
    ) {
        self.format = format
        self.issuer = issuer
        self.keyID = keyID
        self.algorithm = algorithm
        self.spki = spki
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.versionType = versionType
        self.barcodeVersion = barcodeVersion
        self.keyForged = keyForged
        self.allowedProductOwnerCodes = allowedProductOwnerCodes
        self.certificate = certificate
        self.root = root
    }

    /// The key family the wire format names, or `nil` when this farecheck does not know it.
    public var family: KeyFamily? { KeyFamily(wireName: format) }

    private enum CodingKeys: String, CodingKey {
        case format, issuer, keyID, algorithm, spki, notBefore, notAfter, versionType, barcodeVersion, keyForged
        case allowedProductOwnerCodes, certificate, root
    }

    /// Reads a key entry; `spki` and `certificate` are base64, and the fields added later may be absent.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(String.self, forKey: .format)
        issuer = try container.decode(IssuerID.self, forKey: .issuer)
        keyID = try container.decode(KeyID.self, forKey: .keyID)
        algorithm = try container.decodeIfPresent(String.self, forKey: .algorithm)
        spki = try container.decodeBase64(forKey: .spki)
        notBefore = try container.decodeIfPresent(Date.self, forKey: .notBefore)
        notAfter = try container.decodeIfPresent(Date.self, forKey: .notAfter)
        versionType = try container.decodeIfPresent(String.self, forKey: .versionType)
        barcodeVersion = try container.decodeIfPresent(String.self, forKey: .barcodeVersion)
        keyForged = try container.decodeIfPresent(Bool.self, forKey: .keyForged) ?? false
        allowedProductOwnerCodes =
            try container.decodeIfPresent([String].self, forKey: .allowedProductOwnerCodes) ?? []
        certificate = container.contains(.certificate) ? try container.decodeBase64(forKey: .certificate) : nil
        root = try container.decodeIfPresent(Bool.self, forKey: .root) ?? false
    }

    /// Writes a key entry; `spki` and `certificate` as base64, absent optionals (and `root` when false) left out,
    /// so that a key without the later fields is written exactly as before they existed.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(format, forKey: .format)
        try container.encode(issuer, forKey: .issuer)
        try container.encode(keyID, forKey: .keyID)
        try container.encodeIfPresent(algorithm, forKey: .algorithm)
        try container.encodeBase64(spki, forKey: .spki)
        try container.encodeIfPresent(notBefore, forKey: .notBefore)
        try container.encodeIfPresent(notAfter, forKey: .notAfter)
        try container.encodeIfPresent(versionType, forKey: .versionType)
        try container.encodeIfPresent(barcodeVersion, forKey: .barcodeVersion)
        if keyForged { try container.encode(true, forKey: .keyForged) }
        if !allowedProductOwnerCodes.isEmpty {
            try container.encode(allowedProductOwnerCodes, forKey: .allowedProductOwnerCodes)
        }
        if let certificate { try container.encodeBase64(certificate, forKey: .certificate) }
        if root { try container.encode(true, forKey: .root) }
    }
}
