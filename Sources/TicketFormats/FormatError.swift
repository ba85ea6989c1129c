/// Why a payload could not be taken apart: the reason a `malformed` or `unsupported` verdict gives.
///
/// Parsers throw this and only this; the verifier turns it into a verdict. The message is a
/// sentence for a person and names the offset where one helps.
public struct FormatError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of problem this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        let name: String
        /// The bytes are not in the format they claim to be in (a `malformed` verdict).
        public static let malformed = Code(name: "malformed")
        /// The payload is well-formed but uses something farecheck does not support.
        public static let unsupported = Code(name: "unsupported")
        public var description: String { name }
    }

    /// The kind of problem.
    public var code: Code
    /// A sentence saying what is wrong.
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// A payload that breaks its format's rules.
    public static func malformed(_ message: String) -> FormatError { FormatError(.malformed, message) }
    /// A payload that uses a feature farecheck does not implement.
    public static func unsupported(_ message: String) -> FormatError { FormatError(.unsupported, message) }

    public var description: String { "\(code): \(message)" }
}
