/// A language as the inspector page, its catalogs and its configuration name it: a BCP 47 tag of a language and,
/// optionally, a script and a region (`da`, `de-AT`, `sr-Latn`, `pt-BR`), written in its usual case (language in
/// lowercase, script in title case, region in uppercase) whatever case it was given in.
///
/// Only plausible tags are made: a language of two or three letters, then at most a script of four letters and a
/// region of two letters or three digits. Anything else (`english`, `de_DE`, `x`) is refused, so that a catalog file
/// named wrongly is named, not loaded under a tag no browser sends.
public struct LanguageTag: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The tag as written here (`de-AT`).
    public let rawValue: String
    /// The language alone (`de` of `de-AT`).
    public let language: String

    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = parts.first, (2...3).contains(first.count), first.allSatisfy(Self.isASCIILetter),
            parts.count <= 3
        else { return nil }
        var written = [first.lowercased()]
        var sawScript = false
        var sawRegion = false
        for part in parts.dropFirst() {
            if !sawScript, !sawRegion, part.count == 4, part.allSatisfy(Self.isASCIILetter) {
                written.append(part.prefix(1).uppercased() + part.dropFirst().lowercased())
                sawScript = true
            } else if !sawRegion,
                (part.count == 2 && part.allSatisfy(Self.isASCIILetter))
                    || (part.count == 3 && part.allSatisfy { $0.isASCII && $0.isNumber })
            {
                written.append(part.uppercased())
                sawRegion = true
            } else {
                return nil
            }
        }
        rawValue = written.joined(separator: "-")
        language = written[0]
    }

    /// The tag of the language alone: a regional variant falls back to it (`de-AT` → `de`).
    public var languageOnly: LanguageTag { LanguageTag(language)! }

    /// English, the language every template is written in.
    public static let english = LanguageTag("en")!

    public var description: String { rawValue }

    public static func < (lhs: LanguageTag, rhs: LanguageTag) -> Bool { lhs.rawValue < rhs.rawValue }

    private static func isASCIILetter(_ character: Character) -> Bool { character.isASCII && character.isLetter }
}
