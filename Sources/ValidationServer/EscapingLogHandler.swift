import FareCore
import Logging

/// A log handler that escapes control characters in every message and metadata value (see `PrintableText`)
/// before another handler writes them.
///
/// The server logs text it did not choose: device ids, record ids, request paths, error messages that quote
/// them. A newline in any of them would forge a second log line, an escape sequence would rewrite the terminal
/// of whoever reads the log. Escaping in the handler covers every line, Hummingbird's own included, whatever the
/// call site interpolated.
public struct EscapingLogHandler: LogHandler {
    private var wrapped: any LogHandler

    /// Wraps `handler`.
    public init(wrapping handler: any LogHandler) {
        wrapped = handler
    }

    /// A standard-error handler with escaping, for `Logger(label:factory:)`.
    public static func standardError(label: String) -> EscapingLogHandler {
        EscapingLogHandler(wrapping: StreamLogHandler.standardError(label: label))
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = Logger.Message(stringLiteral: PrintableText.escaped(event.message.description))
        event.metadata = event.metadata.map(Self.escaped)
        if let error = event.error {
            // Error descriptions quote input too; the wrapped handler gets the escaped text, not the error.
            event.metadata = (event.metadata ?? [:]).merging(
                ["error": .string(PrintableText.escaped(String(describing: error)))], uniquingKeysWith: { $1 })
            event.error = nil
        }
        wrapped.log(event: event)
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue.map(Self.escaped) }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = Self.escaped(newValue) }
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    private static func escaped(_ metadata: Logger.Metadata) -> Logger.Metadata {
        metadata.mapValues(escaped)
    }

    private static func escaped(_ value: Logger.Metadata.Value) -> Logger.Metadata.Value {
        switch value {
        case .string(let text): .string(PrintableText.escaped(text))
        case .stringConvertible(let convertible): .string(PrintableText.escaped(convertible.description))
        case .dictionary(let dictionary): .dictionary(escaped(dictionary))
        case .array(let array): .array(array.map(escaped))
        }
    }
}
