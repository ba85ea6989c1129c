import DaemonConfig
import Testing

/// What parsing `text` as a configuration is refused with; `nil`, recorded as an issue where the test called it, when
/// the text is accepted.
func refusal(of text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ConfigurationError? {
    do {
        _ = try DaemonConfiguration.parse(text)
        Issue.record("accepted: \(text)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}
