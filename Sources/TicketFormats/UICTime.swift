import FareCore
import Foundation

/// A calendar day as UIC records write it (`DDMMYYYY`, `DD.MM.YYYY`), without a time of day.
public struct UICDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The year, e.g. 2021.
    public var year: Int
    /// The month, 1–12.
    public var month: Int
    /// The day of the month, 1–31.
    public var day: Int

    /// A day, or `nil` when the day does not exist in the Gregorian calendar.
    public init?(year: Int, month: Int, day: Int) {
        guard UICTime.isValidDay(year: year, month: month, day: day) else { return nil }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The first instant of the day in the issuer's local time (see `UICTime`).
    public var start: Date { UICTime.date(self, hour: 0, minute: 0, second: 0) }
    /// The last whole second of the day (23:59:59) in the issuer's local time.
    ///
    /// The last second rather than the next midnight, so that the end shows as the day it belongs to.
    public var end: Date { UICTime.date(self, hour: 23, minute: 59, second: 59) }

    /// `DD.MM.YYYY`, the way DB tickets print a day.
    public var description: String {
        guard (0...9999).contains(year) else {
            return "\(day.twoDigits).\(month.twoDigits).\(year)"
        }
        // Ten ASCII bytes written directly: interpolating three numbers costs several times more, and a
        // holder's date of birth is on every personal ticket's verdict.
        let digits = UInt8(ascii: "0")
        let (day, month, year) = (self.day, self.month, self.year)
        return String(unsafeUninitializedCapacity: 10) { buffer in
            buffer[0] = digits + UInt8(day / 10 % 10)
            buffer[1] = digits + UInt8(day % 10)
            buffer[2] = UInt8(ascii: ".")
            buffer[3] = digits + UInt8(month / 10 % 10)
            buffer[4] = digits + UInt8(month % 10)
            buffer[5] = UInt8(ascii: ".")
            buffer[6] = digits + UInt8(year / 1000)
            buffer[7] = digits + UInt8(year / 100 % 10)
            buffer[8] = digits + UInt8(year / 10 % 10)
            buffer[9] = digits + UInt8(year % 10)
            return 10
        }
    }

    /// Earlier days first.
    public static func < (lhs: UICDay, rhs: UICDay) -> Bool {
        (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
    }

    /// Reads `DDMMYYYY` (8 ASCII digits).
    static func compact(_ bytes: some Collection<UInt8>) -> UICDay? {
        // In place where the bytes are contiguous (an array slice always is): this runs for every scan.
        if let day = bytes.withContiguousStorageIfAvailable({ compact(digits: $0) }) { return day }
        return Array(bytes).withUnsafeBufferPointer { compact(digits: $0) }
    }

    private static func compact(digits: UnsafeBufferPointer<UInt8>) -> UICDay? {
        guard digits.count == 8,
            let day = UICFieldCursor.asciiNumber(digits[0..<2]),
            let month = UICFieldCursor.asciiNumber(digits[2..<4]),
            let year = UICFieldCursor.asciiNumber(digits[4..<8])
        else { return nil }
        return UICDay(year: year, month: month, day: day)
    }

    /// Reads `DD.MM.YYYY`, with surrounding spaces tolerated.
    static func dotted(_ text: String) -> UICDay? {
        // On the UTF-8 bytes in place: String splitting is far slower, and this runs for every scan.
        var text = text
        return text.withUTF8 { bytes in
            var start = 0
            var end = bytes.count
            while start < end, isASCIIWhitespace(bytes[start]) { start += 1 }
            while end > start, isASCIIWhitespace(bytes[end - 1]) { end -= 1 }
            let digits = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard digits.count == 10, digits[2] == UInt8(ascii: "."), digits[5] == UInt8(ascii: "."),
                let day = UICFieldCursor.asciiNumber(digits[0..<2]),
                let month = UICFieldCursor.asciiNumber(digits[3..<5]),
                let year = UICFieldCursor.asciiNumber(digits[6..<10])
            else { return nil }
            return UICDay(year: year, month: month, day: day)
        }
    }

    /// `DDMMYYYY`, the compact form of validity blocks.
    var compactDigits: [UInt8] { uicDigits(day, width: 2) + uicDigits(month, width: 2) + uicDigits(year, width: 4) }
}

/// Local time of UIC 918.3 tickets: the times in the records carry no zone.
///
/// Assumption: the records state the issuer's local time, and farecheck reads them as Europe/Berlin
/// (CET, UTC+1, with CEST, UTC+2, in summer), the zone of Deutsche Bahn, the issuer of every ticket
/// whose content farecheck decodes. The rules are computed here rather than taken from the host's time
/// zone database, so that the same ticket gives the same times on every inspector device:
/// summer time from the last Sunday of March to the last Sunday of October (of September up to 1995,
/// 6 April to 28 September in 1980), switching at 01:00 UTC; no summer time before 1980.
/// A local time that occurs twice (the hour before the switch back) is read as the first, summer-time
/// occurrence; one that does not exist (the hour skipped in March) is read with the winter offset.
public enum UICTime {
    /// The instant of a local Europe/Berlin wall-clock time.
    public static func date(_ day: UICDay, hour: Int, minute: Int, second: Int = 0) -> Date {
        date(day, hour: hour, minute: minute, second: second, in: .berlin)
    }

    /// The offset from UTC of Europe/Berlin at `date`, in seconds (3600 or 7200).
    public static func berlinOffset(at date: Date) -> Int { offset(at: date, in: .berlin) }

    /// A zone that keeps the EU's summer time (`summerTime(year:)`): its offsets from UTC in winter and summer.
    /// Europe/Berlin here; Europe/London for UK rail tickets (`UKTime`).
    struct Zone: Sendable {
        var winterOffset: Int
        var summerOffset: Int

        static let berlin = Zone(winterOffset: 3_600, summerOffset: 7_200)
        static let london = Zone(winterOffset: 0, summerOffset: 3_600)
    }

    /// The instant of a wall-clock time in `zone`.
    static func date(_ day: UICDay, hour: Int, minute: Int, second: Int = 0, in zone: Zone) -> Date {
        let local =
            (daysFromCivil(year: day.year, month: day.month, day: day.day) * 86_400)
            + hour * 3_600 + minute * 60 + second
        // Try summer time first: during the doubled hour this picks the first occurrence.
        let asSummer = local - zone.summerOffset
        let utc = isSummerTime(utcSeconds: asSummer) ? asSummer : local - zone.winterOffset
        return Date(timeIntervalSince1970: TimeInterval(utc))
    }

    /// The offset from UTC of `zone` at `date`, in seconds.
    static func offset(at date: Date, in zone: Zone) -> Int {
        isSummerTime(utcSeconds: wholeSeconds(date)) ? zone.summerOffset : zone.winterOffset
    }

    static func isValidDay(year: Int, month: Int, day: Int) -> Bool {
        guard (1...9999).contains(year), (1...12).contains(month), day >= 1 else { return false }
        return day <= daysIn(month: month, year: year)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Whether Berlin keeps summer time at `utcSeconds` since 1970.
    static func isSummerTime(utcSeconds: Int) -> Bool {
        let year = civil(fromDays: floorDivide(utcSeconds, 86_400)).year
        return summerTime(year: year).contains(utcSeconds)
    }

    /// When Berlin keeps summer time in `year`, in UTC seconds since 1970 (empty before 1980). Summer time
    /// starts and ends at 01:00 UTC.
    static func summerTime(year: Int) -> Range<Int> {
        let index = year - tabulatedYears.lowerBound
        if summerTimeTable.indices.contains(index) { return summerTimeTable[index] }
        return computedSummerTime(year: year)
    }

    /// The years whose summer time is worked out once, when first needed: every year a VDV date can name.
    private static let tabulatedYears = 1990...2117
    private static let summerTimeTable: [Range<Int>] = tabulatedYears.map(computedSummerTime)

    private static func computedSummerTime(year: Int) -> Range<Int> {
        let bounds: (start: Int, end: Int)
        switch year {
        case ..<1980: return 0..<0
        case 1980: bounds = (daysFromCivil(year: 1980, month: 4, day: 6), daysFromCivil(year: 1980, month: 9, day: 28))
        case 1981...1995: bounds = (lastSunday(year: year, month: 3), lastSunday(year: year, month: 9))
        default: bounds = (lastSunday(year: year, month: 3), lastSunday(year: year, month: 10))
        }
        return (bounds.start * 86_400 + 3_600)..<(bounds.end * 86_400 + 3_600)
    }

    /// Days since 1970-01-01 of the last Sunday of a month.
    private static func lastSunday(year: Int, month: Int) -> Int {
        let last = daysFromCivil(year: year, month: month, day: daysIn(month: month, year: year))
        // 1970-01-01 was a Thursday: weekday 0 = Sunday is (days + 4) mod 7.
        let weekday = ((last + 4) % 7 + 7) % 7
        return last - weekday
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        CivilTime.days(year: year, month: month, day: day)
    }

    /// The Gregorian date of a day since 1970-01-01.
    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) { CivilTime.date(fromDays: days) }

    /// The wall-clock fields of `date` in Berlin, for display and for encoding test tickets.
    static func localFields(of date: Date) -> (day: UICDay, hour: Int, minute: Int, second: Int) {
        localFields(of: date, in: .berlin)
    }

    /// The wall-clock fields of `date` in `zone`.
    static func localFields(of date: Date, in zone: Zone) -> (day: UICDay, hour: Int, minute: Int, second: Int) {
        let utc = wholeSeconds(date)
        let local = utc + (isSummerTime(utcSeconds: utc) ? zone.summerOffset : zone.winterOffset)
        let days = floorDivide(local, 86_400)
        let seconds = local - days * 86_400
        let civil = civil(fromDays: days)
        // Out of UICDay's range only for dates no ticket carries (before year 1 or after 9999).
        let day = UICDay(year: civil.year, month: civil.month, day: civil.day) ?? UICDay(year: 1970, month: 1, day: 1)!
        return (day, seconds / 3_600, seconds % 3_600 / 60, seconds % 60)
    }

    /// Seconds since 1970, clamped to about ±35 000 years so that no date (not even an infinite one) traps.
    private static func wholeSeconds(_ date: Date) -> Int {
        let seconds = date.timeIntervalSince1970
        guard seconds.isFinite else { return seconds > 0 ? 1 << 40 : -(1 << 40) }
        return Int(min(max(seconds, -0x1p40), 0x1p40).rounded(.down))
    }

    private static func floorDivide(_ a: Int, _ b: Int) -> Int {
        let q = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q
    }
}

/// The bytes `trimmingASCIIWhitespace()` trims: space, tab, line feed, carriage return.
private func isASCIIWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
}
