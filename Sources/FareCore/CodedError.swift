/// The errors of one module (`SignatureFailure`, `SyncFailure`, `StoreFailure`, …): a name for the type
/// `CodedError<Domain>` and its codes (`ErrorCode<Domain>`), what its errors carry besides a code, a message and a
/// cause (`Details`), and how they are written.
public protocol ErrorDomain: Sendable {
    /// What the domain's errors carry besides code, message and cause: the file or device concerned, an errno. Its
    /// properties read and write as the error's own (`error.path`). `NoDetails` by default.
    associatedtype Details: Hashable, Sendable = NoDetails

    /// A cause as the error's description writes it; by default as the cause describes itself.
    static func text(ofCause cause: any Error) -> String

    /// The error on one line for logs; by default `message [code] (cause: …)`.
    static func description(of error: CodedError<Self>) -> String
}

extension ErrorDomain {
    /// The cause as it describes itself.
    public static func text(ofCause cause: any Error) -> String { "\(cause)" }

    /// The message, the code and the cause.
    public static func description(of error: CodedError<Self>) -> String {
        guard let cause = error.cause else { return "\(error.message) [\(error.code)]" }
        return "\(error.message) [\(error.code)] (cause: \(text(ofCause: cause)))"
    }
}

/// The details of a domain whose errors carry none.
public struct NoDetails: Hashable, Sendable {
    /// No details.
    public init() {}
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

/// A code in JSON is its name (`"unreachable"`), as `/healthz` gives a sync failure's.
extension ErrorCode: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}

/// The shape of farecheck's errors: what kind of failure (`code`), a sentence a person can act on (`message`), what
/// else the domain says about it (`details`: a path, a device), and the failure underneath, if any (`cause`). A module
/// names its own (`public typealias SignatureError = CodedError<SignatureFailure>`).
///
/// Two errors are equal when they would be reported alike: the same code, message and details, and causes that
/// read the same (a cause is not itself comparable).
@dynamicMemberLookup
public struct CodedError<Domain: ErrorDomain>: Error, Hashable, CustomStringConvertible {
    /// The domain's codes.
    public typealias Code = ErrorCode<Domain>

    /// What kind of failure this is.
    public var code: Code
    /// What went wrong and, where there is something to do, what to do about it.
    public var message: String
    /// What else the domain says about the failure; its properties read and write as the error's own.
    public var details: Domain.Details
    /// The failure underneath (a decoding, OpenSSL or database error), when there is one.
    public var cause: (any Error)?

    /// Makes an error from its parts.
    public init(code: Code, message: String, details: Domain.Details, cause: (any Error)? = nil) {
        self.code = code
        self.message = message
        self.details = details
        self.cause = cause
    }

    /// A property of `details`, as if it were the error's own (`error.path`, `error.device`).
    public subscript<Value>(dynamicMember keyPath: WritableKeyPath<Domain.Details, Value>) -> Value {
        get { details[keyPath: keyPath] }
        set { details[keyPath: keyPath] = newValue }
    }

    /// The error on one line for logs, as its domain writes it.
    public var description: String { Domain.description(of: self) }

    /// Whether the two would be reported alike.
    public static func == (left: Self, right: Self) -> Bool {
        left.code == right.code && left.message == right.message && left.details == right.details
            && left.cause.map(Domain.text(ofCause:)) == right.cause.map(Domain.text(ofCause:))
    }

    /// Hashes the code, the message and the details.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(message)
        hasher.combine(details)
    }
}

extension CodedError where Domain.Details == NoDetails {
    /// Makes an error from its parts.
    public init(code: Code, message: String, cause: (any Error)? = nil) {
        self.init(code: code, message: message, details: NoDetails(), cause: cause)
    }
}
