import FareCore

/// Why the `[[trust.source]]` entries of a configuration cannot be used. Its message is whole: the file, the line
/// (for a TOML syntax error, the one place the reader knows it), the source (by name, or by its place when its name
/// is what is wrong), the key, and what would be accepted.
public typealias TrustConfigurationError = CodedError<TrustConfigurationFailure>

/// The domain of `TrustConfigurationError`: configurations of followed publishers that cannot be used.
public enum TrustConfigurationFailure: ErrorDomain {
    /// Where in the configuration the fault is.
    public struct Details: Hashable, Sendable {
        /// The configuration file, as the caller named it.
        public var file: String
        /// The line, counted from 1, when the TOML reader gives one (a syntax error).
        public var line: Int?
        /// The source: `"uic-main"` by its name, or `#2` by its place among the `[[trust.source]]` entries.
        public var source: String?
        /// The key at fault (`url`, `tls_spki`), or the table (`trust`, `trust.source`).
        public var key: String?

        /// Details of a fault in `file`.
        public init(file: String, line: Int? = nil, source: String? = nil, key: String? = nil) {
            self.file = file
            self.line = line
            self.source = source
            self.key = key
        }
    }

    /// The message alone: it already says where the fault is.
    public static func description(of error: CodedError<Self>) -> String { error.message }
}

extension ErrorCode where Domain == TrustConfigurationFailure {
    /// The file cannot be read (missing, not readable by this user).
    public static var unreadable: Self { Self("unreadable") }
    /// The file is not TOML.
    public static var syntax: Self { Self("syntax") }
    /// A key no `[[trust.source]]` (or `[trust]`) takes: almost always a typo.
    public static var unknownKey: Self { Self("unknown-key") }
    /// A required key is missing.
    public static var missingKey: Self { Self("missing-key") }
    /// A value of another type than the key takes (a string for a number): never coerced.
    public static var wrongType: Self { Self("wrong-type") }
    /// A value of the right type that the key does not accept (out of range, an unknown kind, a URL's scheme).
    public static var invalidValue: Self { Self("invalid-value") }
    /// A key that the source's kind does not take (`ldap_base` for a key list).
    public static var notForKind: Self { Self("not-for-kind") }
    /// Two keys that exclude each other (`tls_ca` and `tls_spki`).
    public static var conflict: Self { Self("conflict") }
    /// Two sources of the same name.
    public static var duplicateName: Self { Self("duplicate-name") }
}
