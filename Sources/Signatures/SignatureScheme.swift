/// How an ECDSA or DSA signature's two integers `r` and `s` are laid out in bytes.
public enum SignatureEncoding: Hashable, Sendable {
    /// `r ‖ s`, big-endian, each exactly half of the bytes (COSE ES256, UIC 918.3 version 2).
    case raw
    /// ASN.1 DER `SEQUENCE { r INTEGER, s INTEGER }` (X9.62, UIC 918.3 version 1). Zero bytes after the
    /// sequence are ignored, because UIC 918.3 pads the signature field with them.
    case der
}

/// An algorithm for making and checking signatures, with everything needed to check one.
public enum SignatureScheme: Hashable, Sendable, CustomStringConvertible {
    /// ECDSA over the key's curve with the given hash.
    case ecdsa(DigestAlgorithm, SignatureEncoding)
    /// EdDSA (Ed25519 or Ed448, by the key), over the message itself; no separate hash.
    case eddsa
    /// RSASSA-PSS with the given hash, MGF1 with the same hash, and a salt as long as the hash.
    case rsaPSS(DigestAlgorithm)
    /// DSA with the given hash; the digest is cut to the key's subgroup size as FIPS 186 says.
    case dsa(DigestAlgorithm, SignatureEncoding)

    /// COSE ES256: ECDSA P-256 with SHA-256, raw `r ‖ s`.
    public static let es256 = SignatureScheme.ecdsa(.sha256, .raw)
    /// COSE PS256: RSASSA-PSS with SHA-256.
    public static let ps256 = SignatureScheme.rsaPSS(.sha256)

    /// The hash applied to the message before signing, or nil for EdDSA, which hashes internally.
    public var digestAlgorithm: DigestAlgorithm? {
        switch self {
        case .ecdsa(let digest, _), .rsaPSS(let digest), .dsa(let digest, _): digest
        case .eddsa: nil
        }
    }

    /// The scheme as people write it, e.g. `DSA with SHA-1 (der)`.
    /// Read from tables made once: a verdict names the scheme that matched (DOSIPAS, for each level), and building
    /// the text anew each time cost an allocation per piece.
    public var description: String {
        switch self {
        case .ecdsa(let digest, let encoding): Self.names.ecdsa[digest.index * 2 + (encoding == .der ? 0 : 1)]
        case .eddsa: "EdDSA"
        case .rsaPSS(let digest): Self.names.pss[digest.index]
        case .dsa(let digest, let encoding): Self.names.dsa[digest.index * 2 + (encoding == .der ? 0 : 1)]
        }
    }

    /// The names of the ECDSA and DSA schemes (by digest, then DER before raw) and of the PSS ones (by digest).
    private static let names: (ecdsa: [String], dsa: [String], pss: [String]) = {
        let digests: [DigestAlgorithm] = [.sha1, .sha224, .sha256, .sha384, .sha512]
        func withEncodings(_ prefix: String) -> [String] {
            digests.flatMap { ["\(prefix) with \($0) (der)", "\(prefix) with \($0) (raw)"] }
        }
        return (withEncodings("ECDSA"), withEncodings("DSA"), digests.map { "RSASSA-PSS with \($0)" })
    }()
}
