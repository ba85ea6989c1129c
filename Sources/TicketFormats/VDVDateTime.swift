import Foundation

/// The VDV compact date-time: 4 bytes, big-endian, local time in Germany with 2-second resolution.
///
/// Bits from the top: year − 1990 (7), month (4), day (5), hour (5), minute (6), second ÷ 2 (5).
///
/// Time zone: the fields are Europe/Berlin wall-clock time, converted with the rules of `UICTime`
/// (computed, not the host's database, so every device gives the same instant). Hours 24–31, which
/// the 5 bits allow, roll into the next day. The hour that occurs twice when summer time ends is read
/// so that it never lengthens a ticket: a validity begin as the later occurrence, a validity end as
/// the earlier one (`Reading`); an hour skipped in March is read with the winter offset.
public struct VDVDateTime: Sendable, Hashable, CustomStringConvertible {
    /// The 32-bit word as carried.
    public var raw: UInt32

    /// A date-time from its word.
    public init(raw: UInt32) {
        self.raw = raw
    }

    /// A date-time from its 4 big-endian bytes.
    init(_ bytes: ArraySlice<UInt8>) {
        raw = bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// A date-time from its fields (for writing test tickets); fields out of range are cut to their bits.
    public init(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) {
        let fields: [(Int, Int)] = [(year - 1990, 7), (month, 4), (day, 5), (hour, 5), (minute, 6), (second / 2, 5)]
        raw = fields.reduce(0) { word, field in
            word << UInt32(field.1) | (UInt32(truncatingIfNeeded: field.0) & ((1 << UInt32(field.1)) - 1))
        }
    }

    /// The year (1990–2117).
    public var year: Int { 1990 + Int(raw >> 25) }
    /// The month; 1–12 when valid.
    public var month: Int { Int(raw >> 21 & 0x0F) }
    /// The day of the month; 1–31 when valid.
    public var day: Int { Int(raw >> 16 & 0x1F) }
    /// The hour, 0–31 (24 and above roll into the next day).
    public var hour: Int { Int(raw >> 11 & 0x1F) }
    /// The minute; 0–59 when valid.
    public var minute: Int { Int(raw >> 5 & 0x3F) }
    /// The second, even, 0–62.
    public var second: Int { Int(raw & 0x1F) * 2 }

    /// Whether all bits are zero, which means "no time" in transaction data.
    public var isZero: Bool { raw == 0 }

    /// Which instant to take when the local time occurs twice (the last hour of summer time).
    public enum Reading: Sendable {
        /// The first occurrence (summer time): for ends, so that validity is not lengthened.
        case earlier
        /// The second occurrence (winter time): for begins, so that validity does not start early.
        case later
    }

    /// The instant, or `nil` when the fields are no date (month 0 or 13+, day 0 or past the month's
    /// end, minute 60+, second 60+).
    public func instant(_ reading: Reading) -> Date? {
        guard let day = UICDay(year: year, month: month, day: day), minute < 60, second < 60 else { return nil }
        let local =
            UICTime.daysFromCivil(year: day.year, month: day.month, day: day.day) * 86_400 + hour * 3_600
            + minute * 60 + second
        let asSummer = local - 7_200
        let asWinter = local - 3_600
        // Both readings lie within a day of the local date, and no summer time change falls near New Year:
        // the bounds of the local date's year decide both.
        let summer = UICTime.summerTime(year: day.year)
        let summerFits = summer.contains(asSummer)
        let winterFits = !summer.contains(asWinter)
        let utc: Int
        switch (summerFits, winterFits) {
        case (true, true): utc = reading == .earlier ? asSummer : asWinter
        case (true, false): utc = asSummer
        default: utc = asWinter
        }
        return Date(timeIntervalSince1970: TimeInterval(utc))
    }

    /// `2023-03-31 23:59:58` (local wall-clock time, as carried), or the hex word when it is no date.
    public var description: String {
        guard UICDay(year: year, month: month, day: day) != nil, minute < 60, second < 60 else {
            return "0x" + String(raw, radix: 16, uppercase: true)
        }
        // ASCII digits into one buffer: string interpolation of six numbers costs several times more,
        // and every verdict shows a sale time.
        var ascii: [UInt8] = []
        ascii.reserveCapacity(19)
        func append(_ value: Int, digits: Int, then separator: UInt8?) {
            var divisor = 1
            for _ in 1..<digits { divisor *= 10 }
            while divisor > 0 {
                ascii.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
            if let separator { ascii.append(separator) }
        }
        append(year, digits: 4, then: UInt8(ascii: "-"))
        append(month, digits: 2, then: UInt8(ascii: "-"))
        append(day, digits: 2, then: UInt8(ascii: " "))
        append(hour, digits: 2, then: UInt8(ascii: ":"))
        append(minute, digits: 2, then: UInt8(ascii: ":"))
        append(second, digits: 2, then: nil)
        return String(decoding: ascii, as: UTF8.self)
    }
}
