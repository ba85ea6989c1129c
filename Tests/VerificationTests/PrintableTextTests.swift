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

    @Test("printable text, accents and scripts included, is unchanged")
    func printableTextUnchanged() {
        for text in ["inspector-17", "Zoë Müller-Lüdenscheidt", "Łukasz Żółć", "Σωκράτης", "山田太郎", ""] {
            #expect(PrintableText.escaped(text) == text)
            #expect(PrintableText(text).description == text)
        }
    }
}
