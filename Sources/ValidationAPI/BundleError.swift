/// Why a signed document (a key bundle or a revocation delta) was refused, or could not be made.
///
/// Every refusal leaves the validator's store as it was: the sync channel can never inject a key.
public struct BundleError: Error, Sendable, CustomStringConvertible {
    /// What kind of refusal this is. New codes may be added, so match with a `default` case.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The code's stable name, for logs and for scripts that read them.
        public let name: String

        private init(_ name: String) {
            self.name = name
        }

        /// The code's name.
        public var description: String { name }

        /// The document names a trust anchor the validator does not pin.
        public static let unknownAnchor = Code("unknown-anchor")
        /// The signature does not verify with the named anchor over the payload bytes.
        public static let badSignature = Code("bad-signature")
        /// The signature is good but the payload is not the JSON document expected.
        public static let undecodablePayload = Code("undecodable-payload")
        /// The document names a signature algorithm other than ES256.
        public static let unsupportedAlgorithm = Code("unsupported-algorithm")
        /// The envelope itself is not a signed document (not JSON, missing fields, bad base64).
        public static let malformedDocument = Code("malformed-document")
        /// A key bundle is older than the one already held.
        public static let rollback = Code("rollback")
        /// A document could not be signed (wrong kind of key, OpenSSL failure).
        public static let signingFailed = Code("signing-failed")
    }

    /// What kind of refusal this is.
    public var code: Code
    /// What went wrong and, where there is something to do, what to do about it.
    public var message: String
    /// The failure underneath (a decoding or OpenSSL error), when there is one.
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
}
