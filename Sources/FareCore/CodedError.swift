/// A failure's kind: a stable name for logs and scripts, of one error type only (`ErrorCode<SignatureError>`), so
/// that one error's code is never compared with another's. New codes may be added: match with a `default` case.
///
/// Each error declares its codes in an extension constrained to itself
/// (`extension ErrorCode where Domain == BundleError { public static var rollback: Self { Self("rollback") } }`).
public struct ErrorCode<Domain>: Hashable, Sendable, CustomStringConvertible {
    /// The code's stable name.
    public let name: String

    /// A code named `name`; for the module that declares its error's codes.
    package init(_ name: String) {
        self.name = name
    }

    /// The code's name.
    public var description: String { name }
}

/// The shape of farecheck's errors: what kind of failure (`code`), a sentence a person can act on (`message`), and
/// the failure underneath, if any (`cause`).
public protocol CodedError: Error, CustomStringConvertible {
    /// What kind of failure this is.
    var code: ErrorCode<Self> { get }
    /// What went wrong and, where there is something to do, what to do about it.
    var message: String { get }
    /// The failure underneath (a decoding, OpenSSL or database error), when there is one.
    var cause: (any Error)? { get }
}

extension CodedError {
    /// The message, the code and the cause, on one line for logs.
    public var description: String {
        guard let cause else { return "\(message) [\(code)]" }
        return "\(message) [\(code)] (cause: \(cause))"
    }
}
