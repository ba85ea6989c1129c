import COpenSSL
import Synchronization

/// A public key that checks signatures: ECDSA, EdDSA, RSASSA-PSS or DSA, through OpenSSL.
///
/// A key is immutable once made and may be shared between threads and tasks; checking a signature
/// touches no shared state beyond OpenSSL's own reference counts.
public final class PublicKey: Sendable, Hashable, CustomStringConvertible {
    /// The OpenSSL key. `nonisolated(unsafe)`: it is only read after `init`, and OpenSSL 3 allows
    /// concurrent operations on one `EVP_PKEY`.
    nonisolated(unsafe) let pkey: OpaquePointer
    /// What kind of key this is.
    public let kind: KeyKind
    /// The key as DER `SubjectPublicKeyInfo`, as found in certificates and `PUBLIC KEY` PEM files.
    public let spkiDER: [UInt8]
    let family: KeyFamily

    /// For ECDSA and DSA: a context already set up to verify with this key, copied for each check.
    ///
    /// In OpenSSL 3, `EVP_PKEY_CTX_new` + `EVP_PKEY_verify_init` look up the provider's algorithm and
    /// the key's provider-side form on every call (about 3 µs, 3–4 % of an ECDSA P-256 check); a copy
    /// (`EVP_PKEY_CTX_dup`) costs 0.2 µs. Each call gets its own copy, so checks can run concurrently.
    nonisolated(unsafe) private let digestVerifyTemplate: OpaquePointer?
    /// For RSA: a verify context per hash (indexed by `DigestAlgorithm.index`) set up for PSS, for the
    /// same reason; an RSA check is short, so the setup would otherwise be a fifth of it.
    nonisolated(unsafe) private let pssVerifyTemplates: [OpaquePointer?]
    /// For EdDSA: an `EVP_MD_CTX` after `EVP_DigestVerifyInit`, copied for each check.
    nonisolated(unsafe) private let eddsaVerifyTemplate: OpaquePointer?
    /// For ECDSA and DSA: copies of `digestVerifyTemplate` that have verified, kept for the next checks. OpenSSL
    /// lets one initialised context verify again and again (`openssl speed` does so); a copy and its release cost
    /// 0.2 µs and five allocations a check. Each context is used by one check at a time.
    private let readyContexts = VerifyContextPool()
    /// For RSA: the raw form, which checks PS256 signatures (`RSAPSS`) faster than OpenSSL's general path.
    private let pssRawKey: RSARawPublicKey?
    /// For an EC key: the `EC_KEY` that checks its ECDSA signatures from r and s themselves, without a verify
    /// context and without the DER that `EVP_PKEY_verify` decodes and encodes again (more than a microsecond a check
    /// beside a P-256 check's 70). A key read from a bare point (`init(ecPoint:curve:)`) has this alone: it comes
    /// with one barcode and is checked once or twice. Only read after `init`, and OpenSSL's ECDSA verification only
    /// reads the key, so checks on several threads share it.
    nonisolated(unsafe) private let ecKey: OpaquePointer?
    /// For DSA: the key's tables of powers once it has been used a few times (`DSAFixedBase`), which check its
    /// signatures in about a third of OpenSSL's time.
    private let dsaTables = Mutex<FixedBaseTableState<DSAFixedBase>>(.counting(0))
    /// For an ECDSA P-256 key read from a SubjectPublicKeyInfo (trust data, not a barcode's point): its table of
    /// multiples once it has been used many times (`P256FixedBase`), which checks its signatures in under a third of
    /// OpenSSL's time.
    private let ecTables = Mutex<FixedBaseTableState<P256FixedBase>>(.counting(0))

    /// Reads a DER `SubjectPublicKeyInfo`.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when the bytes are not one.
    public convenience init(spkiDER: [UInt8]) throws(SignatureError) {
        ERR_clear_error()
        guard let (pkey, consumed) = derDecoded(spkiDER, { cursor, count in d2i_PUBKEY(nil, cursor, count) }) else {
            throw .fromOpenSSL(.invalidKey, "The bytes are not a DER SubjectPublicKeyInfo (public key).")
        }
        guard consumed == spkiDER.count else {
            EVP_PKEY_free(pkey)
            throw SignatureError(
                code: .invalidKey,
                message: "The public key is followed by \(spkiDER.count - consumed) unexpected bytes."
            )
        }
        try self.init(adopting: pkey)
    }

    /// Reads a PEM `PUBLIC KEY` (SubjectPublicKeyInfo) block, the form `openssl pkey -pubout` writes.
    ///
    /// - Throws: `SignatureError` with code `.invalidKey` when the text holds no such block.
    public convenience init(pem: String) throws(SignatureError) {
        ERR_clear_error()
        let pkey = withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_PUBKEY(bio, nil, nil, nil) } ?? nil
        guard let pkey else {
            throw .fromOpenSSL(
                .invalidKey,
                "The text holds no PEM \"PUBLIC KEY\" block; a certificate or private key is read by another type."
            )
        }
        try self.init(adopting: pkey)
    }

    /// Takes ownership of `pkey` (freeing it if this throws) and prepares the verify contexts.
    ///
    /// - Parameter knownSPKI: the key's SubjectPublicKeyInfo when the caller has it, which spares an encoding
    ///   (OpenSSL 3's encoders are slow next to a signature check).
    init(adopting pkey: OpaquePointer, spkiDER knownSPKI: [UInt8]? = nil) throws(SignatureError) {
        guard let spki = knownSPKI ?? derEncoded({ i2d_PUBKEY(pkey, $0) }) else {
            let error = SignatureError.fromOpenSSL(.encodingFailed, "OpenSSL could not encode the public key.")
            EVP_PKEY_free(pkey)
            throw error
        }
        let (kind, family) = KeyFamily.describe(pkey)
        var digestVerifyTemplate: OpaquePointer?
        var pssVerifyTemplates = [OpaquePointer?](repeating: nil, count: DigestAlgorithm.allCases.count)
        var eddsaVerifyTemplate: OpaquePointer?
        switch family {
        case .ec, .dsa:
            digestVerifyTemplate = Self.makeVerifyContext(pkey) { _ in true }
        case .rsa:
            for algorithm in DigestAlgorithm.allCases {
                pssVerifyTemplates[algorithm.index] = Self.makeVerifyContext(pkey) { context in
                    Self.configurePSS(context, algorithm)
                }
            }
        case .eddsa:
            if let context = EVP_MD_CTX_new() {
                if EVP_DigestVerifyInit_ex(context, nil, nil, nil, nil, pkey, nil) == 1 {
                    eddsaVerifyTemplate = context
                } else {
                    EVP_MD_CTX_free(context)
                }
            }
        case .unsupported:
            break
        }
        // A context that cannot be set up only means that scheme is unavailable for this key.
        OpenSSLError.discardQueue()
        self.pkey = pkey
        self.kind = kind
        self.spkiDER = spki
        self.family = family
        self.digestVerifyTemplate = digestVerifyTemplate
        self.pssVerifyTemplates = pssVerifyTemplates
        self.eddsaVerifyTemplate = eddsaVerifyTemplate
        // Outside 512–8192 bits or with an unusual exponent the raw form is refused: OpenSSL then checks alone.
        self.pssRawKey =
            if case .rsa = family, let n = Self.bigNumber(OSSL_PKEY_PARAM_RSA_N, of: pkey),
                let e = Self.bigNumber(OSSL_PKEY_PARAM_RSA_E, of: pkey)
            {
                try? RSARawPublicKey(modulus: n, exponent: e)
            } else {
                nil
            }
        self.ecKey = if case .ec = family { COpenSSL_EC_KEY_of(pkey) } else { nil }
    }

    /// Takes ownership of `pointKey` (an `EC_KEY` on a named curve, whose point OpenSSL checked lies on it) and of
    /// `pkey`, which holds the same key for anything but a signature check.
    init(pointKey: OpaquePointer, pkey: OpaquePointer, kind: KeyKind, scalarByteCount: Int, spkiDER: [UInt8]) {
        self.pkey = pkey
        self.kind = kind
        self.spkiDER = spkiDER
        self.family = .ec(scalarByteCount: scalarByteCount)
        self.digestVerifyTemplate = nil
        self.pssVerifyTemplates = [OpaquePointer?](repeating: nil, count: DigestAlgorithm.allCases.count)
        self.eddsaVerifyTemplate = nil
        self.pssRawKey = nil
        self.ecKey = pointKey
    }

    deinit {
        EVP_PKEY_CTX_free(digestVerifyTemplate)
        for template in pssVerifyTemplates {
            EVP_PKEY_CTX_free(template)
        }
        EVP_MD_CTX_free(eddsaVerifyTemplate)
        COpenSSL_EC_KEY_free(ecKey)
        EVP_PKEY_free(pkey)
    }

    /// The key as a PEM `PUBLIC KEY` block.
    public var pem: String {
        // Base64 of bytes already in memory cannot fail short of running out of memory.
        pemEncoded(spkiDER, label: "PUBLIC KEY") ?? ""
    }

    /// The key's kind, e.g. `PublicKey(Ed25519)`.
    public var description: String { "PublicKey(\(kind))" }

    /// Whether this key can check signatures of `scheme` at all (the right kind of key, and OpenSSL
    /// accepts the combination).
    public func supports(_ scheme: SignatureScheme) -> Bool {
        switch (scheme, family) {
        case (.ecdsa, .ec): digestVerifyTemplate != nil || ecKey != nil
        case (.dsa, .dsa): digestVerifyTemplate != nil
        case (.rsaPSS(let algorithm), .rsa): pssVerifyTemplates[algorithm.index] != nil
        case (.eddsa, .eddsa): eddsaVerifyTemplate != nil
        default: false
        }
    }

    /// Checks a signature over a message.
    ///
    /// Never throws and never traps: a signature that is malformed, of the wrong length, or made for
    /// another scheme than this key's kind, is simply not valid.
    ///
    /// - Parameters:
    ///   - signature: The signature bytes, encoded as `scheme` says.
    ///   - message: The signed bytes (for ECDSA, DSA and PSS, hashed here with the scheme's hash).
    ///   - scheme: How the signature was made.
    /// - Returns: Whether the signature is valid for this key and message.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], scheme: SignatureScheme) -> Bool {
        guard signature.count <= Self.maximumSignatureByteCount else { return false }
        guard let algorithm = scheme.digestAlgorithm else {
            return isValidEdDSASignature(signature, for: message)
        }
        guard supports(scheme) else { return false }
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { buffer in
            let count = digest(algorithm, message, into: buffer.baseAddress!)
            return isValidSignature(signature, digest: UnsafeBufferPointer(rebasing: buffer[..<count]), scheme: scheme)
        }
    }

    /// Checks an ECDSA, DSA or RSASSA-PSS signature over a digest computed by the caller.
    ///
    /// Useful when one message is checked under several schemes, or its digest is all there is.
    ///
    /// - Parameters:
    ///   - signature: The signature bytes, encoded as `scheme` says.
    ///   - digest: The message's digest with `scheme`'s hash; another length is not valid.
    ///   - scheme: How the signature was made; EdDSA, which signs messages and not digests, is never valid here.
    /// - Returns: Whether the signature is valid for this key and digest.
    public func isValidSignature(_ signature: [UInt8], forDigest digest: [UInt8], scheme: SignatureScheme) -> Bool {
        guard signature.count <= Self.maximumSignatureByteCount,
            let algorithm = scheme.digestAlgorithm, digest.count == algorithm.outputByteCount,
            supports(scheme)
        else { return false }
        return digest.withUnsafeBufferPointer { isValidSignature(signature, digest: $0, scheme: scheme) }
    }

    /// Longer than any signature of any key this module accepts (RSA-16384: 2048 bytes), so garbage
    /// of any size is turned away before it reaches a parser.
    private static let maximumSignatureByteCount = 4096

    /// The same check through OpenSSL alone, never `RSAPSS`, `DSAFixedBase` or `P256FixedBase`: for the tests that
    /// hold them to OpenSSL's answers.
    func isValidSignatureThroughOpenSSL(_ signature: [UInt8], for message: [UInt8], scheme: SignatureScheme) -> Bool {
        guard let algorithm = scheme.digestAlgorithm else { return false }
        return isValidSignatureThroughOpenSSL(
            signature, forDigest: Signatures.digest(algorithm, message), scheme: scheme)
    }

    /// The same over a digest.
    func isValidSignatureThroughOpenSSL(_ signature: [UInt8], forDigest digest: [UInt8], scheme: SignatureScheme)
        -> Bool
    {
        guard supports(scheme) else { return false }
        return digest.withUnsafeBufferPointer {
            isValidSignature(signature, digest: $0, scheme: scheme, openSSLOnly: true)
        }
    }

    /// Whether this DSA key checks with its tables now (for the tests).
    var dsaTablesMade: Bool {
        dsaTables.withLock { $0.isMade }
    }

    /// Whether this ECDSA key checks with its table now (for the tests).
    var ecTablesMade: Bool {
        ecTables.withLock { $0.isMade }
    }

    private func isValidSignature(
        _ signature: [UInt8],
        digest: UnsafeBufferPointer<UInt8>,
        scheme: SignatureScheme,
        openSSLOnly: Bool = false
    ) -> Bool {
        let template: OpaquePointer?
        let encodedSignature: [UInt8]
        switch (scheme, family) {
        case (.ecdsa(_, let encoding), .ec(let scalarByteCount)):
            // COSE fixes the raw length to twice the curve's size; anything else is malformed.
            if encoding == .raw && signature.count != 2 * scalarByteCount { return false }
            guard let (r, s) = Self.integers(signature, encoding) else { return false }
            // Only a key from trust data gets tables: a point from a barcode (no template) is checked once or twice.
            if !openSSLOnly, digestVerifyTemplate != nil, kind == .ecP256,
                let tables = ecTables.withLock({ $0.tablesForCheck(pkey: pkey) })
            {
                return tables.isValid(r: r, s: s, digest: digest)
            }
            if let ecKey, !openSSLOnly || digestVerifyTemplate == nil {
                let result = r.withUnsafeBufferPointer { r in
                    s.withUnsafeBufferPointer { s in
                        COpenSSL_ECDSA_verify_integers(
                            digest.baseAddress, digest.count, r.baseAddress, r.count, s.baseAddress, s.count, ecKey)
                    }
                }
                if result != 1 { OpenSSLError.discardQueue() }
                return result == 1
            }
            (template, encodedSignature) = (digestVerifyTemplate, SignatureIntegers.der(r: r, s: s))
        case (.dsa(_, let encoding), .dsa):
            // UIC 918.3 raw fields are split in half whatever the key's q size, so any even length is read.
            guard let (r, s) = Self.integers(signature, encoding) else { return false }
            if !openSSLOnly, digestVerifyTemplate != nil,
                let tables = dsaTables.withLock({ $0.tablesForCheck(pkey: pkey) }),
                let valid = tables.isValid(r: r, s: s, digest: digest)
            {
                return valid
            }
            (template, encodedSignature) = (digestVerifyTemplate, SignatureIntegers.der(r: r, s: s))
        case (.rsaPSS(let algorithm), .rsa(let modulusByteCount)):
            // RFC 8017 wants exactly k bytes; OpenSSL would also take fewer (as if zeros were cut from the
            // front), which would make one signature valid in several forms.
            guard signature.count == modulusByteCount else { return false }
            if algorithm == .sha256, let pssRawKey, !openSSLOnly {
                return RSAPSS.isValid(signature, messageDigest: digest, key: pssRawKey)
            }
            (template, encodedSignature) = (pssVerifyTemplates[algorithm.index], signature)
        default:
            return false
        }
        // ECDSA and DSA contexts are kept between checks (`readyContexts`); PSS's are copied for each.
        let pooled = template == digestVerifyTemplate
        guard let template, let context = (pooled ? readyContexts.take() : nil) ?? EVP_PKEY_CTX_dup(template) else {
            OpenSSLError.discardQueue()
            return false
        }
        let result = withBytes(encodedSignature) { signatureBase, signatureCount in
            EVP_PKEY_verify(context, signatureBase, signatureCount, digest.baseAddress, digest.count)
        }
        guard result == 1 else {
            // A context that failed is not kept: only one that just verified is known to be as it was.
            EVP_PKEY_CTX_free(context)
            OpenSSLError.discardQueue()
            return false
        }
        if pooled { readyContexts.give(back: context) } else { EVP_PKEY_CTX_free(context) }
        return true
    }

    private func isValidEdDSASignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard family == .eddsa, let eddsaVerifyTemplate, let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_MD_CTX_copy_ex(context, eddsaVerifyTemplate) == 1 else {
            OpenSSLError.discardQueue()
            return false
        }
        let result = withBytes(signature) { signatureBase, signatureCount in
            withBytes(message) { messageBase, messageCount in
                EVP_DigestVerify(context, signatureBase, signatureCount, messageBase, messageCount)
            }
        }
        guard result == 1 else {
            OpenSSLError.discardQueue()
            return false
        }
        return true
    }

    /// r and s of a signature in `encoding`, as unsigned magnitudes; nil when it is not one.
    private static func integers(_ signature: [UInt8], _ encoding: SignatureEncoding) -> (
        r: ArraySlice<UInt8>, s: ArraySlice<UInt8>
    )? {
        switch encoding {
        case .raw: SignatureIntegers.splitRaw(signature)
        case .der: SignatureIntegers.parseDER(signature)
        }
    }

    /// Makes a context for `EVP_PKEY_verify` with this key, configured by `configure`, or nil.
    private static func makeVerifyContext(
        _ pkey: OpaquePointer,
        configure: (OpaquePointer) -> Bool
    ) -> OpaquePointer? {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1, configure(context) else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    /// Sets up a sign or verify context for RSASSA-PSS with `algorithm` for the message, for MGF1, and a
    /// salt as long as the digest (as COSE PS256/384/512 require).
    static func configurePSS(_ context: OpaquePointer, _ algorithm: DigestAlgorithm) -> Bool {
        EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
            && EVP_PKEY_CTX_set_signature_md(context, algorithm.evpMD) == 1
            && EVP_PKEY_CTX_set_rsa_mgf1_md(context, algorithm.evpMD) == 1
            && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
    }

    /// Two keys are equal when their SubjectPublicKeyInfo encodings are.
    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool {
        lhs.spkiDER == rhs.spkiDER
    }

    /// Hashes the SubjectPublicKeyInfo encoding, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(spkiDER)
    }
}

/// Verify contexts ready for another check, shared by the threads that check with one key. Holds at most a few
/// (one per thread that checks at once, in practice); more are released.
final class VerifyContextPool: Sendable {
    /// A context owned by the pool while it is in it.
    private struct Ready: @unchecked Sendable { let context: OpaquePointer }
    private let contexts = Mutex<[Ready]>([])
    private static let capacity = 8

    /// A ready context, or `nil` when none is left (the caller then copies the template).
    func take() -> OpaquePointer? {
        contexts.withLock { $0.popLast()?.context }
    }

    /// Keeps `context` for the next check, or releases it when enough are kept.
    func give(back context: OpaquePointer) {
        let ready = Ready(context: context)
        let kept = contexts.withLock { contexts in
            guard contexts.count < Self.capacity else { return false }
            contexts.append(ready)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    deinit {
        contexts.withLock { contexts in
            for ready in contexts { EVP_PKEY_CTX_free(ready.context) }
        }
    }
}
