import FareCore

/// Why a payload could not be taken apart: the reason a `malformed` or `unsupported` verdict gives.
///
/// Parsers throw this and only this; the verifier turns it into a verdict. The message is a
/// sentence for a person and names the offset where one helps.
public typealias FormatError = CodedError<FormatFailure>

/// The domain of `FormatError`: payloads that could not be taken apart.
public enum FormatFailure: ErrorDomain {
    /// The code and the message.
    public static func description(of error: FormatError) -> String { "\(error.code): \(error.message)" }
}

extension ErrorCode where Domain == FormatFailure {
    /// The bytes are not in the format they claim to be in (a `malformed` verdict).
    public static var malformed: Self { Self("malformed") }
    /// The payload is well-formed but uses something farecheck does not support.
    public static var unsupported: Self { Self("unsupported") }
}

extension CodedError where Domain == FormatFailure {
    /// A payload that breaks its format's rules.
    public static func malformed(_ message: String) -> FormatError { FormatError(code: .malformed, message: message) }
    /// A payload that uses a feature farecheck does not implement.
    public static func unsupported(_ message: String) -> FormatError {
        FormatError(code: .unsupported, message: message)
    }
}
