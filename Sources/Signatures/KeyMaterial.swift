import COpenSSL

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// A public key read from a key file, with the certificate it came in if there was one.
public enum KeyMaterial: Sendable {
    /// An X.509 certificate (PEM or DER); its public key is the key.
    case certificate(X509Certificate)
    /// A bare public key (PEM `PUBLIC KEY` or `RSA PUBLIC KEY`, or DER SubjectPublicKeyInfo).
    case publicKey(PublicKey)

    /// The public key, from the certificate or bare.
    public var publicKey: PublicKey {
        switch self {
        case .certificate(let certificate): certificate.publicKey
        case .publicKey(let key): key
        }
    }

    /// The certificate, when the file held one.
    public var certificate: X509Certificate? {
        switch self {
        case .certificate(let certificate): certificate
        case .publicKey: nil
        }
    }

    /// Reads a key file in any of the forms keys are handed around in.
    ///
    /// Recognised: a PEM certificate (the first one, if there are several), a DER certificate, a PEM
    /// `PUBLIC KEY` or PKCS#1 `RSA PUBLIC KEY`, a DER SubjectPublicKeyInfo, and base64 of a DER certificate or
    /// SubjectPublicKeyInfo without PEM lines (as in the UIC key list).
    ///
    /// - Parameter bytes: The file's contents.
    /// - Throws: `SignatureError` with code `.privateKeyInsteadOfPublicKey` for a private key (saying how to
    ///   get its public half), `.unrecognisedKeyFile` for anything else, naming what was found.
    public init(parsingKeyFile bytes: [UInt8]) throws(SignatureError) {
        ERR_clear_error()
        if bytes.containsSequence(Self.pemBoundary) {
            self = try Self.parsePEM(bytes)
        } else if bytes.first == 0x30 {
            self = try Self.parseDER(bytes, describedAs: "DER data")
        } else if Self.looksLikeBase64(bytes) {
            guard let decoded = Self.base64Decoded(bytes), decoded.first == 0x30 else {
                throw SignatureError(
                    code: .unrecognisedKeyFile,
                    message: "The key file looks like base64 text, but it does not decode to DER "
                        + "(damaged or cut base64?); expected a certificate or public key."
                )
            }
            self = try Self.parseDER(decoded, describedAs: "base64 text")
        } else {
            let start = bytes.prefix(8).map { String($0, radix: 16).leftPadded(to: 2) }.joined(separator: " ")
            throw SignatureError(
                code: .unrecognisedKeyFile,
                message: bytes.isEmpty
                    ? "The key file is empty."
                    : "The key file is neither PEM (no \"-----BEGIN\" line) nor DER (it starts with \(start)); "
                        + "expected a certificate or public key."
            )
        }
    }

    private struct PEMBlock {
        var label: String
        var der: [UInt8]
    }

    private static let pemBoundary = Array("-----BEGIN ".utf8)

    private static let privateKeyLabels: Set<String> = [
        "PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "EC PRIVATE KEY", "RSA PRIVATE KEY", "DSA PRIVATE KEY",
        "OPENSSH PRIVATE KEY", "ANY PRIVATE KEY",
    ]

    private static func parsePEM(_ bytes: [UInt8]) throws(SignatureError) -> KeyMaterial {
        let blocks = pemBlocks(bytes)
        for block in blocks {
            switch block.label {
            case "CERTIFICATE", "X509 CERTIFICATE":
                return .certificate(try X509Certificate(der: block.der))
            case "TRUSTED CERTIFICATE":
                // OpenSSL's trusted form appends trust settings after the certificate.
                return .certificate(try X509Certificate(der: certificatePrefix(block.der)))
            case "PUBLIC KEY":
                return .publicKey(try PublicKey(spkiDER: block.der))
            case "RSA PUBLIC KEY":
                guard let (pkey, _) = derDecoded(block.der, { d2i_PublicKey(EVP_PKEY_RSA, nil, $0, $1) }) else {
                    throw .fromOpenSSL(.invalidKey, "The PEM \"RSA PUBLIC KEY\" block is not a PKCS#1 RSA public key.")
                }
                return .publicKey(try PublicKey(adopting: pkey))
            default:
                continue
            }
        }
        let labels = blocks.map(\.label)
        if let privateLabel = labels.first(where: privateKeyLabels.contains) {
            throw privateKeyGiven("PEM \"\(privateLabel)\"")
        }
        let found =
            labels.isEmpty
            ? "no readable PEM block"
            : "only PEM " + labels.map { "\"\($0)\"" }.joined(separator: ", ")
        throw SignatureError(
            code: .unrecognisedKeyFile,
            message: "The key file holds \(found); expected a \"CERTIFICATE\" or \"PUBLIC KEY\" block."
        )
    }

    /// Every PEM block of a text, with its label and decoded content; text around the blocks is skipped.
    private static func pemBlocks(_ bytes: [UInt8]) -> [PEMBlock] {
        let blocks = withMemoryBIO(bytes) { bio in
            var blocks: [PEMBlock] = []
            while true {
                var name: UnsafeMutablePointer<CChar>?
                var header: UnsafeMutablePointer<CChar>?
                var data: UnsafeMutablePointer<UInt8>?
                var length = 0
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else { break }
                defer {
                    COpenSSL_free(name)
                    COpenSSL_free(header)
                    COpenSSL_free(data)
                }
                let label = name.map { String(cString: $0) } ?? ""
                let der = data.map { Array(UnsafeBufferPointer(start: $0, count: length)) } ?? []
                blocks.append(PEMBlock(label: label, der: der))
            }
            return blocks
        }
        // The loop ends with "no start line" on the rest of the text, which is not a failure.
        OpenSSLError.discardQueue()
        return blocks ?? []
    }

    private static func parseDER(_ bytes: [UInt8], describedAs form: String) throws(SignatureError) -> KeyMaterial {
        let certificateError: SignatureError
        do {
            return .certificate(try X509Certificate(der: bytes))
        } catch {
            certificateError = error
        }
        if let key = try? PublicKey(spkiDER: bytes) {
            return .publicKey(key)
        }
        if let (pkey, consumed) = derDecoded(bytes, { d2i_AutoPrivateKey(nil, $0, $1) }) {
            EVP_PKEY_free(pkey)
            if consumed == bytes.count {
                throw privateKeyGiven("\(form) of a private key")
            }
        }
        // Each attempt failed in its own way; the certificate's reason is the one a person can act on,
        // since certificates are what key lists hand out.
        OpenSSLError.discardQueue()
        throw SignatureError(
            code: .unrecognisedKeyFile,
            message: "The key file's \(form) is neither an X.509 certificate nor a SubjectPublicKeyInfo public key.",
            cause: certificateError.cause
        )
    }

    private static func privateKeyGiven(_ found: String) -> SignatureError {
        OpenSSLError.discardQueue()
        return SignatureError(
            code: .privateKeyInsteadOfPublicKey,
            message: "The key file holds a private key (\(found)), not a public key or certificate. "
                + "Give its public half instead, e.g. from `openssl pkey -in KEYFILE -pubout -out public.pem`, "
                + "and keep the private key where it was."
        )
    }

    /// The leading DER certificate of `bytes`, or all of `bytes` when there is none (so the error says so).
    private static func certificatePrefix(_ bytes: [UInt8]) -> [UInt8] {
        guard let (x509, consumed) = derDecoded(bytes, { d2i_X509(nil, $0, $1) }) else { return bytes }
        X509_free(x509)
        return Array(bytes.prefix(consumed))
    }

    /// Whether the bytes are nothing but base64 text (line breaks and spaces allowed), and enough of it to be a key.
    private static func looksLikeBase64(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 16
            && bytes.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="),
                    UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: " "), UInt8(ascii: "\t"):
                    true
                default:
                    false
                }
            }
    }

    private static func base64Decoded(_ bytes: [UInt8]) -> [UInt8]? {
        Data(base64Encoded: Data(bytes), options: .ignoreUnknownCharacters).map { Array($0) }
    }
}

extension [UInt8] {
    fileprivate func containsSequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count, let first = needle.first else { return false }
        var index = startIndex
        while let found = self[index...].firstIndex(of: first) {
            if self[found...].starts(with: needle) { return true }
            index = found + 1
        }
        return false
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        String(repeating: "0", count: Swift.max(0, width - count)) + self
    }
}
