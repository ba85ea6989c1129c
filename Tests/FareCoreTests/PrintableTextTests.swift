import FareCore
import Testing

@Suite("Text from outside, made safe for logs and terminals")
struct PrintableTextTests {
    @Test("a newline cannot forge a second log line, an escape sequence cannot reach the terminal")
    func controlCharactersAreEscaped() {
        #expect(
            PrintableText.escaped("mallory\n2026-11-25 level=info login ok staff=admin")
                == "mallory\\n2026-11-25 level=info login ok staff=admin")
        #expect(PrintableText.escaped("id\u{1B}[2J\u{7}") == "id\\u{1B}[2J\\u{7}")
        #expect(PrintableText.escaped("a\r\tb\u{0}") == "a\\r\\tb\\u{0}")
        #expect(PrintableText.escaped("x\u{85}y\u{2028}z\u{202E}") == "x\\u{85}y\\u{2028}z\\u{202E}")
        // A backslash typed in the input is escaped too, so "\n" typed as two characters reads differently.
        #expect(PrintableText.escaped("a\\nb") == "a\\\\nb")
        #expect(!PrintableText.escaped("\u{1B}]0;title\u{7}").unicodeScalars.contains { $0.value < 0x20 })
    }

    @Test("bidi controls and other format characters (Cf) are escaped: a log line reads as it is stored")
    func formatCharactersAreEscaped() {
        // "exe.gpj" behind U+202E shows as "jpg.exe"; marks and isolates reorder, zero-width characters hide text.
        #expect(PrintableText.escaped("ticket\u{202E}exe.gpj") == "ticket\\u{202E}exe.gpj")
        let cases: [(String, String)] = [
            ("\u{202A}\u{202B}\u{202C}\u{202D}", "\\u{202A}\\u{202B}\\u{202C}\\u{202D}"),
            ("\u{2066}\u{2067}\u{2068}\u{2069}", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}"),
            ("a\u{200E}b\u{200F}c\u{61C}d", "a\\u{200E}b\\u{200F}c\\u{61C}d"),
            ("\u{200B}\u{200C}\u{200D}\u{2060}\u{FEFF}", "\\u{200B}\\u{200C}\\u{200D}\\u{2060}\\u{FEFF}"),
            ("soft\u{AD}hyphen, tag\u{E0041}", "soft\\u{AD}hyphen, tag\\u{E0041}"),
        ]
        for (text, escaped) in cases {
            #expect(PrintableText.escaped(text) == escaped, "\(text.debugDescription)")
            #expect(!PrintableText.escaped(text).unicodeScalars.contains { $0.properties.generalCategory == .format })
        }
        #expect(PrintableText.isInvisibleFormatting("\u{202E}") && PrintableText.isInvisibleFormatting("\u{2028}"))
        #expect(!PrintableText.isInvisibleFormatting("a") && !PrintableText.isInvisibleFormatting("\n"))
    }

    @Test("printable text, accents and scripts included, is unchanged")
    func printableTextUnchanged() {
        for text in ["inspector-17", "Zoë Müller-Lüdenscheidt", "Łukasz Żółć", "Σωκράτης", "山田太郎", "مرحبا", "🚆", ""] {
            #expect(PrintableText.escaped(text) == text)
            #expect(PrintableText(text).description == text)
        }
    }
}
