import COpenSSL

/// An elliptic curve that a public key given as a bare point lies on.
public enum EllipticCurve: String, Sendable, Hashable, CaseIterable {
    /// NIST P-256 (prime256v1).
    case p256 = "P-256"
    /// NIST P-384 (secp384r1).
    case p384 = "P-384"
    /// NIST P-521 (secp521r1).
    case p521 = "P-521"

    /// The size of a coordinate in bytes.
    public var coordinateByteCount: Int {
        switch self {
        case .p256: 32
        case .p384: 48
        case .p521: 66
        }
    }

    /// The curve whose compressed (`0x02`/`0x03`, 1 + n bytes) or uncompressed (`0x04`, 1 + 2n bytes) point
    /// has `count` bytes; `nil` when no curve fits.
    public init?(pointByteCount count: Int) {
        guard
            let curve = Self.allCases.first(where: {
                count == 1 + $0.coordinateByteCount || count == 1 + 2 * $0.coordinateByteCount
            })
        else { return nil }
        self = curve
    }

    /// The group name OpenSSL knows the curve by.
    fileprivate var openSSLName: String {
        switch self {
        case .p256: "prime256v1"
        case .p384: "secp384r1"
        case .p521: "secp521r1"
        }
    }

    /// The curve's OpenSSL group, built once and then copied into each key read from a point; `nil` when OpenSSL
    /// does not have the curve.
    fileprivate var group: OpaquePointer? {
        switch self {
        case .p256: Self.p256Group
        case .p384: Self.p384Group
        case .p521: Self.p521Group
        }
    }

    // Read only once built: OpenSSL lets threads copy one group at the same time.
    nonisolated(unsafe) private static let p256Group = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1)
    nonisolated(unsafe) private static let p384Group = EC_GROUP_new_by_curve_name(NID_secp384r1)
    nonisolated(unsafe) private static let p521Group = EC_GROUP_new_by_curve_name(NID_secp521r1)

    /// The DER of the curve's OBJECT IDENTIFIER (tag, length and contents).
    fileprivate var oidDER: [UInt8] {
        switch self {
        case .p256: [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]
        case .p384: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]
        case .p521: [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]
        }
    }
}

extension PublicKey {
    /// Reads an EC public key given as a bare SEC1 point (compressed `0x02`/`0x03` or uncompressed `0x04`), the
    /// form DOSIPAS barcodes carry their level-2 key in.
    ///
    /// The point is read onto the curve's group, built once (`EllipticCurve.group`), and OpenSSL checks that it lies
    /// on the curve. Every DOSIPAS barcode brings its own level-2 key, so this is paid per passenger: OpenSSL 3's
    /// general path (`EVP_PKEY_fromdata`, then a verify context) builds the group again for each key and costs
    /// three times as much; decoding a SubjectPublicKeyInfo ten times. `spkiDER` is the wrapped form.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when the point is not one of `curve`.
    public convenience init(ecPoint point: [UInt8], curve: EllipticCurve) throws(SignatureError) {
        let n = curve.coordinateByteCount
        let fits =
            switch point.first {
            case 0x02, 0x03: point.count == 1 + n
            case 0x04: point.count == 1 + 2 * n
            default: false
            }
        guard fits else {
            let start = point.first.map { String($0, radix: 16) } ?? "-"
            throw SignatureError(
                code: .invalidKey, message: "\(point.count) bytes starting \(start) are not a \(curve.rawValue) point.")
        }
        let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
        let algorithm = Self.derSequence(ecPublicKey + curve.oidDER)
        let bitString = [0x03] + Self.derLength(point.count + 1) + [0x00] + point
        let spki = Self.derSequence(algorithm + bitString)
        ERR_clear_error()
        guard let group = curve.group,
            let key = point.withUnsafeBufferPointer({ COpenSSL_EC_KEY_from_point(group, $0.baseAddress, $0.count) })
        else {
            throw .fromOpenSSL(.invalidKey, "The bytes are not a point on \(curve.rawValue).")
        }
        guard let pkey = COpenSSL_EVP_PKEY_holding_EC_KEY(key) else {
            COpenSSL_EC_KEY_free(key)
            throw .fromOpenSSL(.invalidKey, "OpenSSL could not make a key of the point on \(curve.rawValue).")
        }
        let kind: KeyKind = curve == .p256 ? .ecP256 : .other("EC \(curve.openSSLName)")
        self.init(pointKey: key, pkey: pkey, kind: kind, scalarByteCount: n, spkiDER: spki)
    }

    /// Reads a bare 32-byte Ed25519 public key.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when it does not have 32 bytes.
    public convenience init(ed25519 raw: [UInt8]) throws(SignatureError) {
        guard raw.count == 32 else {
            throw SignatureError(code: .invalidKey, message: "An Ed25519 key has 32 bytes, not \(raw.count).")
        }
        let spki: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + raw
        try self.init(spkiDER: spki)
    }

    private static func derSequence(_ contents: [UInt8]) -> [UInt8] {
        [0x30] + derLength(contents.count) + contents
    }

    /// A DER length: short form below 128, else long form.
    private static func derLength(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        if count < 0x100 { return [0x81, UInt8(count)] }
        return [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
    }
}
