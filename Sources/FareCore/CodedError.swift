/// The errors of one module (`SignatureFailure`, `BundleFailure`, `ServerFailure`): a name for the type
/// `CodedError<Domain>` and its codes (`ErrorCode<Domain>`), and how its causes are written.
public protocol ErrorDomain: Sendable {
    /// A cause as the error's description writes it; by default as the cause describes itself.
    static func text(ofCause cause: any Error) -> String
}

extension ErrorDomain {
    /// The cause as it describes itself.
    public static func text(ofCause cause: any Error) -> String { "\(cause)" }
}

/// A failure's kind: a stable name for logs and scripts, of one domain only (`ErrorCode<SignatureFailure>`), so that
/// one module's code is never compared with another's. New codes may be added: match with a `default` case.
///
/// Each domain declares its codes in an extension constrained to itself
/// (`extension ErrorCode where Domain == BundleFailure { public static var rollback: Self { Self("rollback") } }`).
public struct ErrorCode<Domain: ErrorDomain>: Hashable, Sendable, CustomStringConvertible {
    /// The code's stable name.
    public let name: String

    /// A code named `name`; for the module that declares its domain's codes.
    package init(_ name: String) {
        self.name = name
    }

    /// The code's name.
    public var description: String { name }
}

/// The shape of farecheck's errors: what kind of failure (`code`), a sentence a person can act on (`message`), and
/// the failure underneath, if any (`cause`). A module names its own (`public typealias SignatureError =
/// CodedError<SignatureFailure>`).
public struct CodedError<Domain: ErrorDomain>: Error, CustomStringConvertible {
    /// The domain's codes.
    public typealias Code = ErrorCode<Domain>

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and, where there is something to do, what to do about it.
    public var message: String
    /// The failure underneath (a decoding, OpenSSL or database error), when there is one.
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
        return "\(message) [\(code)] (cause: \(Domain.text(ofCause: cause)))"
    }
}
