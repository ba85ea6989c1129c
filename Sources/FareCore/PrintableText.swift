/// Text from outside (a staff id typed at a login, a record id a device uploaded, a ticket's holder line) made
/// safe to write into a log line or onto a terminal.
///
/// A newline in such text would forge a second log line; an escape sequence would move the cursor or recolour a
/// terminal. Every control character (C0, DEL, C1), every Unicode line or paragraph separator and every format
/// character (general category Cf: the bidirectional overrides, isolates and marks, which reorder what a reader
/// sees; the zero-width ones, which hide text) is written as a visible escape (`\n`, `\t`, `\r`, `\\`, else
/// `\u{1B}`), so the text reads the same and can be told apart from what surrounds it. Printable text, accented
/// letters included, passes unchanged.
public struct PrintableText: Sendable, Hashable, CustomStringConvertible {
    /// The escaped text.
    public let description: String

    /// `text` with every control character escaped.
    public init(_ text: some StringProtocol) {
        description = Self.escaped(text)
    }

    /// An identifier's text with every control character escaped: identifiers come from tickets, devices and servers.
    public init(_ identifier: some TextIdentifier) {
        description = Self.escaped(identifier.rawValue)
    }

    /// `text` with every control character escaped (see the type's summary).
    public static func escaped(_ text: some StringProtocol) -> String {
        // Most text needs nothing: return it as it is without building a copy.
        guard text.unicodeScalars.contains(where: needsEscape) else { return String(text) }
        var result = ""
        result.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case "\\": result += "\\\\"
            case _ where needsEscape(scalar):
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Whether `scalar` is written escaped: C0 controls, DEL, C1 controls, the line and paragraph separators,
    /// the format characters (Cf: bidirectional overrides, isolates and marks such as U+202E, U+2066, U+200F and
    /// U+061C reorder what a terminal shows; zero-width ones such as U+200B and U+FEFF hide text), and the backslash
    /// itself (so that a `\n` typed in the input cannot pass for an escaped newline).
    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x5C, 0x7F...0x9F: true
        case 0x2028, 0x2029: true
        // The first format character is U+00AD: text below it (ASCII, most Latin) needs no table lookup.
        case 0xAD...: scalar.properties.generalCategory == .format
        default: false
        }
    }

    /// Whether `scalar` is a format character (general category Cf) or a line or paragraph separator: what a
    /// reader cannot see but which changes what is shown (bidirectional controls, zero-width characters).
    public static func isInvisibleFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x2028, 0x2029: true
        case 0xAD...: scalar.properties.generalCategory == .format
        default: false
        }
    }
}
