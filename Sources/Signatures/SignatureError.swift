import FareCore

/// A key, certificate or signing operation that could not be carried out.
///
/// A signature that does not verify is not an error: `PublicKey.isValidSignature` returns `false`.
/// This error is for work that could not be done at all, such as a key file that holds no key.
public typealias SignatureError = CodedError<SignatureFailure>

/// The domain of `SignatureError`: key, certificate and signing work that could not be done.
public enum SignatureFailure: ErrorDomain {}

extension ErrorCode where Domain == SignatureFailure {
    /// The bytes are not a public or private key that OpenSSL can decode.
    public static var invalidKey: Self { Self("invalidKey") }
    /// The bytes are not an X.509 certificate that OpenSSL can decode.
    public static var invalidCertificate: Self { Self("invalidCertificate") }
    /// A key file holds something else than a certificate or public key (a request, parameters, noise).
    public static var unrecognisedKeyFile: Self { Self("unrecognisedKeyFile") }
    /// A private key was given where a public key or certificate was expected.
    public static var privateKeyInsteadOfPublicKey: Self { Self("privateKeyInsteadOfPublicKey") }
    /// A private key is encrypted with a passphrase, which this module does not ask for.
    public static var encryptedPrivateKey: Self { Self("encryptedPrivateKey") }
    /// The key kind (or size) is not one this module generates or signs with.
    public static var unsupportedKeyKind: Self { Self("unsupportedKeyKind") }
    /// The signature scheme needs another kind of key than the one given.
    public static var schemeDoesNotFitKey: Self { Self("schemeDoesNotFitKey") }
    /// OpenSSL failed to generate a key.
    public static var keyGenerationFailed: Self { Self("keyGenerationFailed") }
    /// OpenSSL failed to make a signature.
    public static var signingFailed: Self { Self("signingFailed") }
    /// A certificate's subject name could not be read.
    public static var invalidSubjectName: Self { Self("invalidSubjectName") }
    /// OpenSSL failed to build or sign a certificate.
    public static var certificateCreationFailed: Self { Self("certificateCreationFailed") }
    /// OpenSSL failed to encode a key or certificate (almost always: out of memory).
    public static var encodingFailed: Self { Self("encodingFailed") }
    /// A signature cannot be taken through the key's public operation at all (wrong length, not
    /// smaller than the RSA modulus): for message recovery, where there is no yes/no check.
    public static var invalidSignature: Self { Self("invalidSignature") }
    /// OpenSSL failed to hash or to produce random bytes.
    public static var hashingFailed: Self { Self("hashingFailed") }
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

extension CodedError where Domain == SignatureFailure {
    /// Makes an error whose cause is what OpenSSL left on this thread's error queue, and empties the queue.
    static func fromOpenSSL(_ code: Code, _ message: String) -> SignatureError {
        SignatureError(code: code, message: message, cause: OpenSSLError.takeQueue())
    }
}
