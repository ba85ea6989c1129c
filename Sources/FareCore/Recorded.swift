/// A name from one of farecheck's vocabularies (`VerdictKind`, `SignatureStatus`, `TicketFormat`, `Symbology`,
/// `Decider`) as a record keeps it: in the journal, in an inspection upload, on the server.
///
/// Typed where farecheck writes it (made from the vocabulary's case, so a misspelt name cannot be written) and open
/// where it reads it: a record written by another farecheck version, or uploaded by one, may name a kind this one
/// does not know, and it is kept and passed on as written, never refused or changed. On the wire and on disk it is
/// the name's text (the case's raw value), so the JSON and the SQLite columns are what they were as strings.
public struct Recorded<Known>: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByStringLiteral
where Known: RawRepresentable<String> & Sendable {
    /// The name as written: the known case's raw value, or the text another version wrote.
    public let text: String

    /// The name of `known`.
    public init(_ known: Known) {
        text = known.rawValue
    }

    /// A name read from a record, known or not.
    public init(text: String) {
        self.text = text
    }

    /// A name written in code (tests, fixtures), as `init(text:)`.
    public init(stringLiteral text: String) {
        self.text = text
    }

    /// The case the name is, or `nil` for a name this version does not know.
    public var known: Known? { Known(rawValue: text) }

    public var description: String { text }

    public init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    /// Whether the name is `known`'s.
    public static func == (name: Recorded, known: Known) -> Bool { name.text == known.rawValue }
}
