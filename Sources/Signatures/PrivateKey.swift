import COpenSSL

/// A private key that makes signatures, for issuing (test) tickets and for tests.
///
/// Immutable once made and safe to share: every signature uses its own OpenSSL context.
public final class PrivateKey: Sendable, CustomStringConvertible {
    /// The OpenSSL key. `nonisolated(unsafe)`: it is only read after `init`, and OpenSSL 3 allows
    /// concurrent operations on one `EVP_PKEY`.
    nonisolated(unsafe) let pkey: OpaquePointer
    /// What kind of key this is.
    public let kind: KeyKind
    /// The public half, for checking this key's signatures and for certificates.
    public let publicKey: PublicKey
    let family: KeyFamily

    /// Takes ownership of `pkey` (freeing it if this throws).
    init(adopting pkey: OpaquePointer) throws(SignatureError) {
        // The public half is made from the SPKI encoding so that it holds no private material.
        guard let spki = derEncoded({ i2d_PUBKEY(pkey, $0) }) else {
            let error = SignatureError.fromOpenSSL(.encodingFailed, "OpenSSL could not encode the public key.")
            EVP_PKEY_free(pkey)
            throw error
        }
        let publicKey: PublicKey
        do {
            publicKey = try PublicKey(spkiDER: spki)
        } catch {
            EVP_PKEY_free(pkey)
            throw error
        }
        (self.kind, self.family) = KeyFamily.describe(pkey)
        self.pkey = pkey
        self.publicKey = publicKey
    }

    deinit {
        EVP_PKEY_free(pkey)
    }

    /// Reads a PEM private key: PKCS#8 `PRIVATE KEY` (what `openssl genpkey` writes), or the traditional
    /// `EC PRIVATE KEY`, `RSA PRIVATE KEY` and `DSA PRIVATE KEY` forms.
    ///
    /// - Throws: `SignatureError` with code `.encryptedPrivateKey` for a passphrase-protected key (never
    ///   prompted for), `.invalidKey` when the text holds no private key.
    public convenience init(pem: String) throws(SignatureError) {
        ERR_clear_error()
        if pem.contains("ENCRYPTED PRIVATE KEY") || pem.contains("Proc-Type: 4,ENCRYPTED") {
            throw Self.encryptedKeyError
        }
        // OpenSSL's default passphrase callback prompts on the terminal; this one declines at once.
        let pkey =
            withMemoryBIO(Array(pem.utf8)) { bio in
                PEM_read_bio_PrivateKey(bio, nil, { _, _, _, _ in 0 }, nil)
            } ?? nil
        guard let pkey else {
            throw .fromOpenSSL(
                .invalidKey,
                "The text holds no PEM private key "
                    + "(PKCS#8 \"PRIVATE KEY\" or a traditional \"EC/RSA/DSA PRIVATE KEY\")."
            )
        }
        try self.init(adopting: pkey)
    }

    /// Reads a DER private key, PKCS#8 or one of the traditional forms.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when the bytes are not an unencrypted private key.
    public convenience init(der: [UInt8]) throws(SignatureError) {
        ERR_clear_error()
        guard let (pkey, consumed) = derDecoded(der, { cursor, count in d2i_AutoPrivateKey(nil, cursor, count) })
        else {
            throw .fromOpenSSL(.invalidKey, "The bytes are not an unencrypted DER private key (PKCS#8 or traditional).")
        }
        guard consumed == der.count else {
            EVP_PKEY_free(pkey)
            throw SignatureError(
                code: .invalidKey,
                message: "The private key is followed by \(der.count - consumed) unexpected bytes."
            )
        }
        try self.init(adopting: pkey)
    }

    private static let encryptedKeyError = SignatureError(
        code: .encryptedPrivateKey,
        message: "The private key is protected by a passphrase; decrypt it first, "
            + "e.g. `openssl pkey -in key.pem -out plain.pem`, and keep the result private."
    )

    /// Generates a new key.
    ///
    /// - Parameter kind: `.ecP256`, `.ed25519`, `.rsa(bits:)` with 2048, 3072 or 4096 bits, or `.dsa(bits:qBits:)`
    ///   with 1024/160, 2048/224, 2048/256 or 3072/256. DSA parameter generation takes up to a few seconds.
    /// - Throws: `SignatureError` with code `.unsupportedKeyKind` for other kinds, `.keyGenerationFailed`
    ///   when OpenSSL fails.
    public static func generate(_ kind: KeyKind) throws(SignatureError) -> PrivateKey {
        ERR_clear_error()
        let pkey: OpaquePointer?
        switch kind {
        case .ecP256:
            pkey = generateKey(algorithm: "EC") { EVP_PKEY_CTX_set_group_name($0, "P-256") == 1 }
        case .ed25519:
            pkey = generateKey(algorithm: "ED25519") { _ in true }
        case .rsa(let bits):
            guard [2048, 3072, 4096].contains(bits) else {
                throw unsupported(kind, "RSA keys have 2048, 3072 or 4096 bits")
            }
            pkey = generateKey(algorithm: "RSA") { EVP_PKEY_CTX_set_rsa_keygen_bits($0, Int32(bits)) == 1 }
        case .dsa(let bits, let qBits):
            guard [1024: [160], 2048: [224, 256], 3072: [256]][bits]?.contains(qBits) == true else {
                throw unsupported(kind, "DSA keys are 1024/160, 2048/224, 2048/256 or 3072/256")
            }
            pkey = generateDSAKey(bits: bits, qBits: qBits)
        case .other(let name):
            throw unsupported(kind, "this module generates ECDSA P-256, Ed25519, RSA and DSA keys, not \(name)")
        }
        guard let pkey else {
            throw .fromOpenSSL(.keyGenerationFailed, "OpenSSL could not generate a key of kind \(kind).")
        }
        return try PrivateKey(adopting: pkey)
    }

    private static func unsupported(_ kind: KeyKind, _ reason: String) -> SignatureError {
        SignatureError(code: .unsupportedKeyKind, message: "Cannot generate a key of kind \(kind): \(reason).")
    }

    private static func generateKey(algorithm: String, configure: (OpaquePointer) -> Bool) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(context) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1, configure(context), EVP_PKEY_generate(context, &pkey) == 1 else {
            return nil
        }
        return pkey
    }

    private static func generateDSAKey(bits: Int, qBits: Int) -> OpaquePointer? {
        // DSA needs domain parameters (p, q, g) first; OpenSSL picks the FIPS 186-4 hash for q's size.
        guard let parameterContext = EVP_PKEY_CTX_new_from_name(nil, "DSA", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(parameterContext) }
        var parameters: OpaquePointer?
        guard EVP_PKEY_paramgen_init(parameterContext) == 1,
            EVP_PKEY_CTX_set_dsa_paramgen_bits(parameterContext, Int32(bits)) == 1,
            EVP_PKEY_CTX_set_dsa_paramgen_q_bits(parameterContext, Int32(qBits)) == 1,
            EVP_PKEY_generate(parameterContext, &parameters) == 1, let parameters
        else { return nil }
        defer { EVP_PKEY_free(parameters) }
        guard let keyContext = EVP_PKEY_CTX_new_from_pkey(nil, parameters, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(keyContext) }
        var pkey: OpaquePointer?
        guard EVP_PKEY_keygen_init(keyContext) == 1, EVP_PKEY_generate(keyContext, &pkey) == 1 else { return nil }
        return pkey
    }

    /// The key as an unencrypted PKCS#8 PEM `PRIVATE KEY` block, as `openssl genpkey` writes it.
    ///
    /// Whoever holds this text can sign in this key's name: write it only to places meant for it.
    public var pemPKCS8: String {
        get throws(SignatureError) {
            ERR_clear_error()
            let pem = bytesWritten { bio in PEM_write_bio_PKCS8PrivateKey(bio, pkey, nil, nil, 0, nil, nil) == 1 }
            guard let pem else { throw .fromOpenSSL(.encodingFailed, "OpenSSL could not encode the private key.") }
            return String(decoding: pem, as: UTF8.self)
        }
    }

    /// The key as unencrypted DER PKCS#8 `PrivateKeyInfo`.
    public var pkcs8DER: [UInt8] {
        get throws(SignatureError) {
            ERR_clear_error()
            // The same encoder as `pemPKCS8`, so the two forms always hold the same bytes.
            let der = bytesWritten { bio in i2d_PKCS8PrivateKey_bio(bio, pkey, nil, nil, 0, nil, nil) == 1 }
            guard let der else { throw .fromOpenSSL(.encodingFailed, "OpenSSL could not encode the private key.") }
            return der
        }
    }

    /// The key's kind, never its contents.
    public var description: String { "PrivateKey(\(kind))" }

    /// Signs a message.
    ///
    /// ECDSA and DSA signatures in `.raw` encoding are `r ‖ s`, each left-padded with zeros to the size of
    /// the curve order or of `q` (64 bytes for P-256 and DSA-2048/256); in `.der` encoding they are minimal
    /// DER without padding.
    ///
    /// - Parameters:
    ///   - message: The bytes to sign (hashed here with the scheme's hash, except for EdDSA).
    ///   - scheme: The scheme; it must fit the key's kind.
    /// - Returns: The signature.
    /// - Throws: `SignatureError` with code `.schemeDoesNotFitKey` when the scheme needs another kind of key,
    ///   `.signingFailed` when OpenSSL fails.
    public func signature(for message: [UInt8], scheme: SignatureScheme) throws(SignatureError) -> [UInt8] {
        ERR_clear_error()
        switch (scheme, family) {
        case (.eddsa, .eddsa):
            return try eddsaSignature(for: message)
        case (.ecdsa(let algorithm, let encoding), .ec(let width)),
            (.dsa(let algorithm, let encoding), .dsa(let width)):
            let der = try digestSignature(for: digest(algorithm, message)) { _ in true }
            guard encoding == .raw else { return der }
            guard let raw = SignatureIntegers.raw(fromDER: der, width: width) else {
                throw SignatureError(code: .signingFailed, message: "OpenSSL returned a signature that is not DER.")
            }
            return raw
        case (.rsaPSS(let algorithm), .rsa):
            return try digestSignature(for: digest(algorithm, message)) { PublicKey.configurePSS($0, algorithm) }
        default:
            throw SignatureError(
                code: .schemeDoesNotFitKey,
                message: "This \(kind) key cannot make \(scheme) signatures; pick a scheme of its kind."
            )
        }
    }

    private func digestSignature(
        for digest: [UInt8],
        configure: (OpaquePointer) -> Bool
    ) throws(SignatureError) -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not set up signing with the \(kind) key.")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var length = 0
        guard EVP_PKEY_sign_init(context) == 1, configure(context),
            EVP_PKEY_sign(context, nil, &length, digest, digest.count) == 1
        else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not set up signing with the \(kind) key.")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_PKEY_sign(context, &signature, &length, digest, digest.count) == 1 else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not sign with the \(kind) key.")
        }
        signature.removeLast(signature.count - length)
        return signature
    }

    private func eddsaSignature(for message: [UInt8]) throws(SignatureError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not set up signing with the \(kind) key.")
        }
        defer { EVP_MD_CTX_free(context) }
        var length = 0
        let sized = withBytes(message) { base, count in
            EVP_DigestSignInit_ex(context, nil, nil, nil, nil, pkey, nil) == 1
                && EVP_DigestSign(context, nil, &length, base, count) == 1
        }
        guard sized else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not set up signing with the \(kind) key.")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = withBytes(message) { base, count in
            EVP_DigestSign(context, &signature, &length, base, count) == 1
        }
        guard signed else {
            throw .fromOpenSSL(.signingFailed, "OpenSSL could not sign with the \(kind) key.")
        }
        signature.removeLast(signature.count - length)
        return signature
    }
}
