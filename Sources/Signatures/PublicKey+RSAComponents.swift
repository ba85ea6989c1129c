import COpenSSL

extension PublicKey {
    /// An RSA key's modulus n and public exponent e, big-endian without leading zero bytes; `nil` for a key of
    /// another kind. For formats whose RSA block is recovered with the raw public operation (`RSARawPublicKey`),
    /// when the key was stored as a `SubjectPublicKeyInfo`.
    public var rsaComponents: (modulus: [UInt8], exponent: [UInt8])? {
        guard case .rsa = kind else { return nil }
        guard let modulus = Self.bigNumber(OSSL_PKEY_PARAM_RSA_N, of: pkey),
            let exponent = Self.bigNumber(OSSL_PKEY_PARAM_RSA_E, of: pkey)
        else {
            return nil
        }
        return (modulus, exponent)
    }

    /// The big-number parameter `name` of `pkey` (OpenSSL 3's `EVP_PKEY_get_bn_param`), big-endian.
    static func bigNumber(_ name: String, of pkey: OpaquePointer) -> [UInt8]? {
        var number: OpaquePointer? = nil
        guard EVP_PKEY_get_bn_param(pkey, name, &number) == 1, let number else { return nil }
        defer { BN_free(number) }
        let count = Int((BN_num_bits(number) + 7) / 8)
        var bytes = [UInt8](repeating: 0, count: count)
        guard BN_bn2bin(number, &bytes) == Int32(count) else { return nil }
        return bytes
    }
}

extension RSARawPublicKey {
    /// The raw form of an RSA `PublicKey`, for the unpadded public operation.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` for a key that is not RSA, or whose numbers
    ///   `init(modulus:exponent:)` refuses.
    public convenience init(_ key: PublicKey) throws(SignatureError) {
        guard let (modulus, exponent) = key.rsaComponents else {
            throw SignatureError(code: .invalidKey, message: "The key is a \(key.kind) key, not an RSA key.")
        }
        try self.init(modulus: modulus, exponent: exponent)
    }
}
