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
    /// The point is handed to OpenSSL as key parameters (`EVP_PKEY_fromdata`), which checks that it lies on the
    /// curve: a tenth of the cost of wrapping it in a SubjectPublicKeyInfo and decoding that, which matters
    /// because every DOSIPAS barcode brings its own level-2 key. `spkiDER` is the wrapped form.
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
        guard let pkey = Self.ecKey(point: point, groupName: curve.openSSLName) else {
            throw .fromOpenSSL(.invalidKey, "The bytes are not a point on \(curve.rawValue).")
        }
        try self.init(adopting: pkey, spkiDER: spki)
    }

    /// An OpenSSL EC public key from its group and point, or `nil` when OpenSSL refuses them.
    private static func ecKey(point: [UInt8], groupName: String) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_fromdata_init(context) == 1 else { return nil }
        var pkey: OpaquePointer?
        var group = Array(groupName.utf8CString)
        var octets = point
        // OSSL_PARAM keeps pointers to its key names and values: every one must outlive EVP_PKEY_fromdata, so none
        // may be a temporary C string bridged from a Swift String.
        var groupKey = Array(OSSL_PKEY_PARAM_GROUP_NAME.utf8CString)
        var pointKey = Array(OSSL_PKEY_PARAM_PUB_KEY.utf8CString)
        let result = groupKey.withUnsafeMutableBufferPointer { groupKeyBuffer in
            pointKey.withUnsafeMutableBufferPointer { pointKeyBuffer in
                group.withUnsafeMutableBufferPointer { groupBuffer in
                    octets.withUnsafeMutableBytes { pointBuffer in
                        var parameters = [
                            OSSL_PARAM_construct_utf8_string(groupKeyBuffer.baseAddress, groupBuffer.baseAddress, 0),
                            OSSL_PARAM_construct_octet_string(
                                pointKeyBuffer.baseAddress, pointBuffer.baseAddress, pointBuffer.count),
                            OSSL_PARAM_construct_end(),
                        ]
                        return EVP_PKEY_fromdata(context, &pkey, Self.publicKeySelection, &parameters)
                    }
                }
            }
        }
        guard result == 1, let pkey else { return nil }
        return pkey
    }

    /// `EVP_PKEY_PUBLIC_KEY`, a macro expression Swift does not import: the key's domain parameters
    /// (`OSSL_KEYMGMT_SELECT_ALL_PARAMETERS`, 0x84) and its public part (0x02).
    private static let publicKeySelection: Int32 = 0x86

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
