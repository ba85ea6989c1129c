import COpenSSL

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// An X.509 certificate, read for its public key, subject and validity window.
///
/// The certificate's own signature and chain are not checked here: for ticket keys, trust comes from
/// the key list the certificate was imported from.
public struct X509Certificate: Sendable, Hashable, CustomStringConvertible {
    /// The certificate's DER encoding, exactly as read.
    public let der: [UInt8]
    /// The subject's public key.
    public let publicKey: PublicKey
    /// The subject name on one line, as `openssl x509 -noout -subject` prints it
    /// (`C = DE, O = DB Vertrieb GmbH, CN = …`).
    public let subject: String
    /// The issuer name, in the same form as `subject`.
    public let issuer: String
    /// The start of the validity window (UTC), or nil when the certificate's time field cannot be read.
    public let notBefore: Date?
    /// The end of the validity window (UTC), or nil when the certificate's time field cannot be read.
    public let notAfter: Date?

    /// Reads a DER certificate.
    ///
    /// - Throws: `SignatureError` with code `.invalidCertificate` when the bytes are not exactly one certificate.
    public init(der: [UInt8]) throws(SignatureError) {
        ERR_clear_error()
        guard let (x509, consumed) = derDecoded(der, { cursor, count in d2i_X509(nil, cursor, count) }) else {
            throw .fromOpenSSL(.invalidCertificate, "The bytes are not a DER X.509 certificate.")
        }
        defer { X509_free(x509) }
        guard consumed == der.count else {
            throw SignatureError(
                code: .invalidCertificate,
                message: "The certificate is followed by \(der.count - consumed) unexpected bytes."
            )
        }
        try self.init(x509: x509, der: der)
    }

    /// Reads the first PEM `CERTIFICATE` block of a text.
    ///
    /// - Throws: `SignatureError` with code `.invalidCertificate` when there is none.
    public init(pem: String) throws(SignatureError) {
        ERR_clear_error()
        let x509 = withMemoryBIO(Array(pem.utf8)) { bio in PEM_read_bio_X509(bio, nil, nil, nil) } ?? nil
        guard let x509 else {
            throw .fromOpenSSL(.invalidCertificate, "The text holds no PEM \"CERTIFICATE\" block.")
        }
        defer { X509_free(x509) }
        guard let der = derEncoded({ i2d_X509(x509, $0) }) else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not encode the certificate.")
        }
        try self.init(x509: x509, der: der)
    }

    /// Reads the parts of a decoded certificate; `x509` stays owned by the caller.
    private init(x509: OpaquePointer, der: [UInt8]) throws(SignatureError) {
        guard let pkey = X509_get_pubkey(x509) else {
            throw .fromOpenSSL(
                .invalidCertificate,
                "The certificate's public key is of a kind or form OpenSSL cannot read."
            )
        }
        self.der = der
        self.publicKey = try PublicKey(adopting: pkey)
        self.subject = Self.oneLine(X509_get_subject_name(x509))
        self.issuer = Self.oneLine(X509_get_issuer_name(x509))
        self.notBefore = Self.date(X509_get0_notBefore(x509))
        self.notAfter = Self.date(X509_get0_notAfter(x509))
        OpenSSLError.discardQueue()
    }

    /// The certificate as a PEM `CERTIFICATE` block.
    public var pem: String {
        // Base64 of bytes already in memory cannot fail short of running out of memory.
        pemEncoded(der, label: "CERTIFICATE") ?? ""
    }

    /// The subject and key kind.
    public var description: String { "X509Certificate(\(subject), \(publicKey.kind))" }

    /// Two certificates are equal when their DER encodings are.
    public static func == (lhs: X509Certificate, rhs: X509Certificate) -> Bool {
        lhs.der == rhs.der
    }

    /// Hashes the DER encoding, consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(der)
    }

    /// Makes a self-signed X.509 v3 certificate, for tests and for issuing demo tickets.
    ///
    /// It is signed with SHA-256 (ECDSA, RSA PKCS#1 v1.5, DSA) or with EdDSA's own hashing.
    ///
    /// - Parameters:
    ///   - privateKey: The key whose public half the certificate carries and that signs it.
    ///   - subject: The subject (and issuer) name, as `CN=Demo Transit, O=Demo, C=DE` or `/CN=Demo Transit/O=Demo`;
    ///     a text without `=` becomes the common name.
    ///   - notBefore: Start of validity.
    ///   - notAfter: End of validity.
    /// - Throws: `SignatureError` with code `.invalidSubjectName` or `.certificateCreationFailed`.
    public static func selfSigned(
        privateKey: PrivateKey,
        subject: String,
        notBefore: Date,
        notAfter: Date
    ) throws(SignatureError) -> X509Certificate {
        ERR_clear_error()
        guard let x509 = X509_new() else {
            throw .fromOpenSSL(.certificateCreationFailed, "OpenSSL could not allocate a certificate.")
        }
        defer { X509_free(x509) }
        let name = try makeName(subject)
        defer { X509_NAME_free(name) }
        // EdDSA signs the certificate itself; the other algorithms sign its SHA-256 digest.
        let signatureDigest: OpaquePointer? = privateKey.family == .eddsa ? nil : DigestAlgorithm.sha256.evpMD
        guard X509_set_version(x509, 2) == 1,
            setRandomSerialNumber(x509),
            X509_set_subject_name(x509, name) == 1,
            X509_set_issuer_name(x509, name) == 1,
            ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970.rounded(.down))) != nil,
            ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970.rounded(.down))) != nil,
            X509_set_pubkey(x509, privateKey.pkey) == 1,
            X509_sign(x509, privateKey.pkey, signatureDigest) > 0
        else {
            throw .fromOpenSSL(.certificateCreationFailed, "OpenSSL could not build or sign the certificate.")
        }
        guard let der = derEncoded({ i2d_X509(x509, $0) }) else {
            throw .fromOpenSSL(.encodingFailed, "OpenSSL could not encode the certificate.")
        }
        return try X509Certificate(der: der)
    }

    private static func setRandomSerialNumber(_ x509: OpaquePointer) -> Bool {
        // 127 random bits: positive, unique, within RFC 5280's 20 bytes.
        guard let number = BN_new() else { return false }
        defer { BN_free(number) }
        guard BN_rand(number, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1 else { return false }
        return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil
    }

    private static func makeName(_ text: String) throws(SignatureError) -> OpaquePointer {
        let trimmed = text.trimmingSpaces
        let parts: [Substring]
        if !trimmed.contains("=") {
            parts = ["CN=\(trimmed)"]
        } else if trimmed.hasPrefix("/") {
            parts = trimmed.dropFirst().split(separator: "/")
        } else {
            parts = trimmed.split(separator: ",")
        }
        guard !parts.isEmpty, let name = X509_NAME_new() else {
            throw SignatureError(code: .invalidSubjectName, message: "The subject name \"\(text)\" is empty.")
        }
        for part in parts {
            let pair = part.split(separator: "=", maxSplits: 1)
            let field = pair.first.map { String($0).trimmingSpaces } ?? ""
            let value = pair.count == 2 ? String(pair[1]).trimmingSpaces : ""
            guard !field.isEmpty, !value.isEmpty,
                X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1
            else {
                X509_NAME_free(name)
                throw .fromOpenSSL(
                    .invalidSubjectName,
                    "\"\(part)\" in the subject name is not FIELD=value with a known field (CN, O, OU, C, L, ST, ...)."
                )
            }
        }
        return name
    }

    private static func oneLine(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        let text = bytesWritten { bio in X509_NAME_print_ex(bio, name, 0, COpenSSL_XN_FLAG_ONELINE_UTF8()) >= 0 }
        return text.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }

    /// Converts an ASN.1 time to a `Date` by its distance from the Unix epoch, which avoids the C
    /// library's time zone handling altogether.
    private static func date(_ time: UnsafePointer<ASN1_TIME>?) -> Date? {
        guard let time, let epoch = ASN1_TIME_set(nil, 0) else { return nil }
        defer { ASN1_TIME_free(epoch) }
        var days: Int32 = 0
        var seconds: Int32 = 0
        guard ASN1_TIME_diff(&days, &seconds, epoch, time) == 1 else {
            OpenSSLError.discardQueue()
            return nil
        }
        return Date(timeIntervalSince1970: Double(days) * 86_400 + Double(seconds))
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
