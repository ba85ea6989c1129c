import FareCore

/// Why a signed document (a key bundle or a revocation delta) was refused, or could not be made.
///
/// Every refusal leaves the validator's store as it was: the sync channel can never inject a key.
public typealias BundleError = CodedError<BundleFailure>

/// The domain of `BundleError`: signed documents refused or not made.
public enum BundleFailure: ErrorDomain {}

extension ErrorCode where Domain == BundleFailure {
    /// The document names a trust anchor the validator does not pin.
    public static var unknownAnchor: Self { Self("unknown-anchor") }
    /// The signature does not verify with the named anchor over the payload bytes.
    public static var badSignature: Self { Self("bad-signature") }
    /// The signature is good but the payload is not the JSON document expected.
    public static var undecodablePayload: Self { Self("undecodable-payload") }
    /// The document names a signature algorithm other than ES256.
    public static var unsupportedAlgorithm: Self { Self("unsupported-algorithm") }
    /// The envelope itself is not a signed document (not JSON, missing fields, bad base64).
    public static var malformedDocument: Self { Self("malformed-document") }
    /// A key bundle is older than the one already held.
    public static var rollback: Self { Self("rollback") }
    /// A document could not be signed (wrong kind of key, OpenSSL failure).
    public static var signingFailed: Self { Self("signing-failed") }
}
