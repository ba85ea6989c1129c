import Testing

@testable import TicketFormats

@Suite("UIC codes and days as read from records")
struct UICCodeAndDayTests {
    @Test(
        "a code is matched trimmed and, when all digits, without leading zeros",
        arguments: [
            ("1080", "1080"), ("0080", "80"), (" 0080 ", "80"), ("0", "0"), ("000", "0"), ("TT005", "TT005"),
            (" TT005", "TT005"), ("0TT5", "0TT5"), ("", ""), ("7", "7"), ("1080 ", "1080"), ("\t42\r\n", "42"),
            ("00007", "7"), ("  ", ""),
        ])
    func normalizedCodes(text: String, expected: String) {
        #expect(UICKeyList.normalizedCode(text) == expected)
    }

    @Test("a DD.MM.YYYY day is read with spaces around it, and nothing else is a day")
    func dottedDays() {
        #expect(UICDay.dotted("01.02.2026") == UICDay(year: 2026, month: 2, day: 1))
        #expect(UICDay.dotted(" 31.12.2025\t") == UICDay(year: 2025, month: 12, day: 31))
        for text in [
            "1.02.2026", "01.2.2026", "01.02.26", "01-02-2026", "01.02.2026x", "31.02.2026", "01..2.2026",
            "0a.02.2026", "", "01.02.2026.", "01.02 2026",
        ] {
            #expect(UICDay.dotted(text) == nil, "\(text)")
        }
    }

    @Test("a DDMMYYYY day is read from contiguous and other collections alike")
    func compactDays() {
        let digits = Array("x01022026".utf8)
        #expect(UICDay.compact(digits[1...]) == UICDay(year: 2026, month: 2, day: 1))
        #expect(UICDay.compact(Array("01022026".utf8).reversed().reversed()) == UICDay(year: 2026, month: 2, day: 1))
        #expect(UICDay.compact(digits) == nil)
        #expect(UICDay.compact(Array("3102202".utf8)) == nil)
        #expect(UICDay.compact(Array("30022026".utf8)) == nil)
    }
}
