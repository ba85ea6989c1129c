import Foundation

/// A sentence for the inspector, kept as what it says and what it names, so that it can be said in another
/// language: the reason of a verdict, a warning.
///
/// A verdict's reason is written where it is decided, in English, as an interpolated string literal:
///
///     reason: "The ticket expired on \(date: end)\(which)."
///
/// The literal's own text becomes the ``template`` (`The ticket expired on {0}{1}.`), and each interpolated value
/// an ``Argument``: text from the ticket or the trust data, a date, a number, a duration, or another explanation
/// (a clause such as `, the open ticket`, itself translatable). ``english`` puts them together again, exactly as
/// the sentence was written, for the CLI, the journal and the log.
///
/// The template is the key that translations are found by, as a message id is in gettext: the English sentence
/// stays where the decision is made, and the page's catalogs (`Sources/Presentation/Languages/LANG.json`) say it in
/// each language, with the arguments put in their place and dates written the inspector's way. A sentence whose
/// template has no translation is shown in English, marked as English.
public struct Explanation: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringInterpolation {
    /// A value a sentence names.
    public indirect enum Argument: Sendable, Hashable {
        /// Text as it is: an issuer, a key id, a ticket id, a revocation's stated reason, a decoder's message.
        case text(String)
        /// An instant, written in English as ISO 8601 (as the CLI always has), on the page in the inspector's
        /// language and the validator's time zone.
        case date(Date)
        /// A whole number.
        case number(Int)
        /// A length of time in seconds, written in its largest whole unit (`5 minutes`, `3 days`).
        case duration(TimeInterval)
        /// A clause or sentence of its own, translated by its own template.
        case explanation(Explanation)

        /// The argument as the English sentence writes it.
        public var english: String {
            switch self {
            case .text(let text): text
            case .date(let date): date.formatted(.iso8601)
            case .number(let number): String(number)
            case .duration(let seconds): Explanation.englishDuration(seconds)
            case .explanation(let explanation): explanation.english
            }
        }
    }

    /// The sentence's own words, with each argument's place marked `{0}`, `{1}`, … in order.
    public private(set) var template: String
    /// The values named, in the order of their places.
    public private(set) var arguments: [Argument]

    /// A sentence that names nothing.
    public init(stringLiteral value: String) {
        template = value
        arguments = []
    }

    public init(stringInterpolation: StringInterpolation) {
        template = stringInterpolation.template
        arguments = stringInterpolation.arguments
    }

    /// Text that is not one of farecheck's sentences (a decoder's message, an answer from the server, a reason
    /// stored before explanations were kept): shown as it is, in every language.
    public static func verbatim(_ text: String) -> Explanation {
        var explanation = Explanation(stringLiteral: Self.verbatimTemplate)
        explanation.arguments = [.text(text)]
        return explanation
    }

    /// Parts said one after another, separated by commas (`Deutschland-Ticket, 2nd class, 1 adult`), as one
    /// template, `{0}, {1}`, nested: a list of any length needs no template of its own. `nil` for no part.
    public static func list(_ parts: [Argument]) -> Explanation? {
        guard let last = parts.last else { return nil }
        var tail: Explanation
        switch last {
        case .explanation(let clause): tail = clause
        case .text(let text): tail = .verbatim(text)
        default:
            tail = Explanation(stringLiteral: verbatimTemplate)
            tail.arguments = [last]
        }
        for part in parts.dropLast().reversed() {
            var joined = Explanation(stringLiteral: listTemplate)
            joined.arguments = [part, .explanation(tail)]
            tail = joined
        }
        return tail
    }

    /// The template of ``list(_:)``'s each step.
    public static let listTemplate = "{0}, {1}"

    /// The template of ``verbatim(_:)``: a sentence that is only its one argument.
    public static let verbatimTemplate = "{0}"

    /// Whether this is text as it came (``verbatim(_:)``), with no sentence of farecheck's to translate.
    public var isVerbatim: Bool { template == Self.verbatimTemplate }

    /// Replaces each argument by what `transform` makes of it (to leave out what must not be shown).
    public mutating func replaceArguments(_ transform: (Argument) -> Argument) {
        arguments = arguments.map(transform)
    }

    /// The sentence in English, as it was written.
    public var english: String {
        guard !arguments.isEmpty else { return template }
        var result = ""
        result.reserveCapacity(template.utf8.count + 16 * arguments.count)
        Self.pieces(of: template) { piece in
            switch piece {
            case .words(let words): result += words
            case .place(let index, _) where arguments.indices.contains(index): result += arguments[index].english
            case .place(_, let written): result += written
            }
        }
        return result
    }

    /// A piece of a template: its own words, or a place (`{0}`, `{1}`, …) where a value goes.
    public enum TemplatePiece: Equatable, Sendable {
        case words(Substring)
        /// A place: the index of its value, and the place as written (`{1}`).
        case place(Int, written: Substring)
    }

    /// Hands `body` the pieces of `template` in order: a place is `{`, digits and `}`; every other `{` is a word.
    /// (The English here, a translation on the page and the operator report all read templates so.)
    public static func pieces(of template: String, _ body: (TemplatePiece) -> Void) {
        var rest = Substring(template)
        var words = rest.startIndex
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            let digits = after.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, after.dropFirst(digits.count).first == "}" else {
                rest = after
                continue
            }
            // A number too large for an index is a place no value fills.
            let index = Int(digits) ?? .max
            let close = after.index(after: digits.endIndex)
            if words < open { body(.words(template[words..<open])) }
            body(.place(index, written: template[open..<close]))
            words = close
            rest = template[close...]
        }
        if words < template.endIndex { body(.words(template[words...])) }
    }

    public var description: String { english }

    /// Two sentences as one: the second's places numbered after the first's.
    public static func + (lhs: Explanation, rhs: Explanation) -> Explanation {
        var joined = lhs
        joined.template += renumbered(rhs.template, by: lhs.arguments.count)
        joined.arguments += rhs.arguments
        return joined
    }

    /// `template` with each place `{n}` written `{n + offset}`.
    private static func renumbered(_ template: String, by offset: Int) -> String {
        guard offset > 0, template.contains("{") else { return template }
        var result = ""
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}"),
            let index = Int(rest[rest.index(after: open)..<close])
        {
            result += rest[..<open] + "{\(index + offset)}"
            rest = rest[rest.index(after: close)...]
        }
        return result + rest
    }

    /// `seconds` in its largest whole unit, in English: `90 seconds`, `5 minutes`, `3 hours`, `2 days`.
    static func englishDuration(_ seconds: TimeInterval) -> String {
        switch seconds {
        case ..<120: "\(Int(seconds)) seconds"
        case ..<7200: "\(Int(seconds / 60)) minutes"
        case ..<172_800: "\(Int(seconds / 3600)) hours"
        default: "\(Int(seconds / 86400)) days"
        }
    }

    /// Collects an interpolated literal: its text into the template, its values into the arguments.
    public struct StringInterpolation: StringInterpolationProtocol {
        var template = ""
        var arguments: [Argument] = []

        public init(literalCapacity: Int, interpolationCount: Int) {
            template.reserveCapacity(literalCapacity + 3 * interpolationCount)
            arguments.reserveCapacity(interpolationCount)
        }

        public mutating func appendLiteral(_ literal: String) {
            template += literal
        }

        /// Text as it is (an issuer, a key id, a message that is not farecheck's).
        public mutating func appendInterpolation(_ text: String) {
            append(.text(text))
        }

        /// Text as it is, from anything that describes itself (a key id, a format's name).
        public mutating func appendInterpolation<Value: CustomStringConvertible>(_ value: Value) {
            append(.text(value.description))
        }

        /// An error's own description, as it is.
        public mutating func appendInterpolation(_ error: any Error) {
            append(.text(String(describing: error)))
        }

        public mutating func appendInterpolation(_ number: Int) {
            append(.number(number))
        }

        /// An instant, written in the reader's language.
        public mutating func appendInterpolation(date: Date) {
            append(.date(date))
        }

        /// A length of time, in its largest whole unit.
        public mutating func appendInterpolation(duration seconds: TimeInterval) {
            append(.duration(seconds))
        }

        /// A clause of its own (translated by its own template). An empty clause keeps its place, so that the
        /// sentence's template is the same with or without it.
        public mutating func appendInterpolation(_ clause: Explanation) {
            append(.explanation(clause))
        }

        private mutating func append(_ argument: Argument) {
            template += "{\(arguments.count)}"
            arguments.append(argument)
        }
    }
}

extension Explanation: Codable {
    private enum CodingKeys: String, CodingKey { case template, arguments }
    private enum ArgumentKeys: String, CodingKey { case text, date, number, duration, explanation }

    /// `{"template": "The ticket expired on {0}{1}.", "arguments": [{"date": "…"}, {"explanation": {…}}]}`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(template, forKey: .template)
        var list = container.nestedUnkeyedContainer(forKey: .arguments)
        for argument in arguments {
            var item = list.nestedContainer(keyedBy: ArgumentKeys.self)
            switch argument {
            case .text(let text): try item.encode(text, forKey: .text)
            case .date(let date): try item.encode(date, forKey: .date)
            case .number(let number): try item.encode(number, forKey: .number)
            case .duration(let seconds): try item.encode(seconds, forKey: .duration)
            case .explanation(let explanation): try item.encode(explanation, forKey: .explanation)
            }
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        template = try container.decode(String.self, forKey: .template)
        arguments = []
        var list = try container.nestedUnkeyedContainer(forKey: .arguments)
        while !list.isAtEnd {
            let item = try list.nestedContainer(keyedBy: ArgumentKeys.self)
            if let text = try item.decodeIfPresent(String.self, forKey: .text) {
                arguments.append(.text(text))
            } else if let date = try item.decodeIfPresent(Date.self, forKey: .date) {
                arguments.append(.date(date))
            } else if let number = try item.decodeIfPresent(Int.self, forKey: .number) {
                arguments.append(.number(number))
            } else if let seconds = try item.decodeIfPresent(TimeInterval.self, forKey: .duration) {
                arguments.append(.duration(seconds))
            } else if let explanation = try item.decodeIfPresent(Explanation.self, forKey: .explanation) {
                arguments.append(.explanation(explanation))
            } else {
                throw DecodingError.dataCorruptedError(
                    in: list, debugDescription: "an argument is none of text, date, number, duration, explanation")
            }
        }
    }
}
