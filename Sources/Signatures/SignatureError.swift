/// A key, certificate or signing operation that could not be carried out.
///
/// A signature that does not verify is not an error: `PublicKey.isValidSignature` returns `false`.
/// This error is for work that could not be done at all, such as a key file that holds no key.
public struct SignatureError: Error, CustomStringConvertible {
    /// What kind of failure this is. New codes may be added, so match with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for logs and for scripts that read them.
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The code's name.
        public var description: String { name }

        /// The bytes are not a public or private key that OpenSSL can decode.
        public static let invalidKey = Code("invalidKey")
        /// The bytes are not an X.509 certificate that OpenSSL can decode.
        public static let invalidCertificate = Code("invalidCertificate")
        /// A key file holds something else than a certificate or public key (a request, parameters, noise).
        public static let unrecognisedKeyFile = Code("unrecognisedKeyFile")
        /// A private key was given where a public key or certificate was expected.
        public static let privateKeyInsteadOfPublicKey = Code("privateKeyInsteadOfPublicKey")
        /// A private key is encrypted with a passphrase, which this module does not ask for.
        public static let encryptedPrivateKey = Code("encryptedPrivateKey")
        /// The key kind (or size) is not one this module generates or signs with.
        public static let unsupportedKeyKind = Code("unsupportedKeyKind")
        /// The signature scheme needs another kind of key than the one given.
        public static let schemeDoesNotFitKey = Code("schemeDoesNotFitKey")
        /// OpenSSL failed to generate a key.
        public static let keyGenerationFailed = Code("keyGenerationFailed")
        /// OpenSSL failed to make a signature.
        public static let signingFailed = Code("signingFailed")
        /// A certificate's subject name could not be read.
        public static let invalidSubjectName = Code("invalidSubjectName")
        /// OpenSSL failed to build or sign a certificate.
        public static let certificateCreationFailed = Code("certificateCreationFailed")
        /// OpenSSL failed to encode a key or certificate (almost always: out of memory).
        public static let encodingFailed = Code("encodingFailed")
        /// A signature cannot be taken through the key's public operation at all (wrong length, not
        /// smaller than the RSA modulus): for message recovery, where there is no yes/no check.
        public static let invalidSignature = Code("invalidSignature")
        /// OpenSSL failed to hash or to produce random bytes.
        public static let hashingFailed = Code("hashingFailed")
    }

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and, where there is something to do, what to do about it.
    public var message: String
    /// What OpenSSL reported, when the failure came from it.
    public var cause: (any Error)?

    /// Makes an error from its parts.
    public init(code: Code, message: String, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// The message, the code and the cause, on one line for logs.
    public var description: String {
        guard let cause else { return "\(message) [\(code)]" }
        return "\(message) [\(code)] (cause: \(cause))"
    }

    /// Makes an error whose cause is what OpenSSL left on this thread's error queue, and empties the queue.
    static func fromOpenSSL(_ code: Code, _ message: String) -> SignatureError {
        SignatureError(code: code, message: message, cause: OpenSSLError.takeQueue())
    }
}

/// The entries OpenSSL put on its per-thread error queue during a failed operation, oldest first.
public struct OpenSSLError: Error, CustomStringConvertible {
    /// One line per entry, as `openssl` itself prints them, e.g.
    /// `error:1E08010C:DECODER routines::unsupported: No supported data to decode.`.
    public var entries: [String]

    /// Makes an error from queue entries already read.
    public init(entries: [String]) {
        self.entries = entries
    }

    /// The entries separated by semicolons.
    public var description: String {
        entries.isEmpty ? "OpenSSL gave no reason" : entries.joined(separator: "; ")
    }
}
