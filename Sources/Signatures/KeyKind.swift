import COpenSSL

/// What kind of key a public or private key is: algorithm and size.
public enum KeyKind: Hashable, Sendable, CustomStringConvertible {
    /// ECDSA on NIST P-256 (secp256r1, prime256v1).
    case ecP256
    /// Ed25519.
    case ed25519
    /// RSA with a modulus of `bits` bits.
    case rsa(bits: Int)
    /// DSA with a prime `p` of `bits` bits and a subgroup order `q` of `qBits` bits
    /// (1024/160, 2048/224, 2048/256 in UIC 918.3).
    case dsa(bits: Int, qBits: Int)
    /// Any other key OpenSSL understands, named as OpenSSL names it (e.g. `EC secp384r1`, `ED448`).
    case other(String)

    /// The kind as people write it, e.g. `ECDSA P-256`, `DSA 2048/256`.
    public var description: String {
        switch self {
        case .ecP256: "ECDSA P-256"
        case .ed25519: "Ed25519"
        case .rsa(let bits): "RSA \(bits)"
        case .dsa(let bits, let qBits): "DSA \(bits)/\(qBits)"
        case .other(let name): name
        }
    }
}

/// The algorithm family of a key, with the sizes the signature codecs need.
enum KeyFamily: Hashable, Sendable {
    /// ECDSA: `r` and `s` each take `scalarByteCount` bytes in raw form.
    case ec(scalarByteCount: Int)
    /// DSA: `r` and `s` each take `scalarByteCount` bytes (the size of `q`) in raw form.
    case dsa(scalarByteCount: Int)
    /// RSA, plain or restricted to PSS: signatures are exactly `modulusByteCount` bytes.
    case rsa(modulusByteCount: Int)
    /// Ed25519 or Ed448.
    case eddsa
    /// A key this module can describe but not use.
    case unsupported

    /// Reads the kind and family of an OpenSSL key.
    static func describe(_ pkey: OpaquePointer) -> (KeyKind, KeyFamily) {
        let bits = Int(EVP_PKEY_get_bits(pkey))
        switch EVP_PKEY_get_base_id(pkey) {
        case EVP_PKEY_EC:
            let curve = groupName(pkey) ?? "explicit curve"
            let isP256 = curve == "prime256v1" || curve == "P-256" || curve == "secp256r1"
            return (isP256 ? .ecP256 : .other("EC \(curve)"), .ec(scalarByteCount: (bits + 7) / 8))
        case EVP_PKEY_ED25519:
            return (.ed25519, .eddsa)
        case EVP_PKEY_ED448:
            return (.other("ED448"), .eddsa)
        case EVP_PKEY_RSA, EVP_PKEY_RSA_PSS:
            return (.rsa(bits: bits), .rsa(modulusByteCount: (bits + 7) / 8))
        case EVP_PKEY_DSA:
            let qBits = subgroupBits(pkey)
            return (.dsa(bits: bits, qBits: qBits), qBits > 0 ? .dsa(scalarByteCount: (qBits + 7) / 8) : .unsupported)
        default:
            let name = EVP_PKEY_get0_type_name(pkey).map { String(cString: $0) } ?? "unknown key type"
            return (.other(name), .unsupported)
        }
    }

    private static func groupName(_ pkey: OpaquePointer) -> String? {
        var name = [CChar](repeating: 0, count: 80)
        var length = 0
        guard EVP_PKEY_get_group_name(pkey, &name, name.count, &length) == 1 else {
            OpenSSLError.discardQueue()
            return nil
        }
        return String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func subgroupBits(_ pkey: OpaquePointer) -> Int {
        var q: OpaquePointer?
        guard EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_Q, &q) == 1, let q else {
            OpenSSLError.discardQueue()
            return 0
        }
        defer { BN_free(q) }
        return Int(BN_num_bits(q))
    }
}
