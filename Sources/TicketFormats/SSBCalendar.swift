import Foundation

/// The days of SSB tickets, which carry no year (version 3: only its last digit) and no time zone.
///
/// Time zone rule: the days are read as Central European Time (UTC+1, UTC+2 in EU summer time, computed by
/// `UICTime` the same way on every device), the zone of SŽ and of nearly every SSB issuer; a day runs from its
/// 00:00:00 to its 23:59:59 in that zone. The inspection time picks the year:
/// - version 3 issuing day: the latest year ending in the year digit whose day is not after the inspection day
///   plus one (a ticket is not issued in the future; the day of slack covers a clock or zone just behind);
/// - version 1 and 2 days of validity (a day of the year only): the latest such day not after the inspection day
///   plus 60 days (tickets bought up to two months ahead still read as coming), the last day on or after the first.
public enum SSBCalendar {
    /// How far ahead of the inspection day a version 1 or 2 first day of validity may lie.
    public static let legacyLookaheadDays = 60

    /// The issuing day of a version 3 ticket, or `nil` when `dayOfYear` is not a day of any candidate year
    /// (0, above 366, or 366 where no year ending in the digit is a leap year).
    public static func issuingDay(yearInDecade: Int, dayOfYear: Int, inspectedAt reference: Date) -> UICDay? {
        guard (0...9).contains(yearInDecade), (1...366).contains(dayOfYear) else { return nil }
        let today = UICTime.localFields(of: reference).day
        let latest = UICTime.daysFromCivil(year: today.year, month: today.month, day: today.day) + 1
        var year = today.year - ((today.year - yearInDecade) % 10 + 10) % 10
        // Ten decades back is far more than needed to pass a leap year or the inspection day.
        for _ in 0..<10 {
            if let days = days(year: year, dayOfYear: dayOfYear), days <= latest {
                return day(fromDays: days)
            }
            year -= 10
        }
        return nil
    }

    /// A version 1 or 2 day of the year placed by the rule above, or `nil` for 0 or above 366.
    public static func legacyDay(dayOfYear: Int, inspectedAt reference: Date) -> UICDay? {
        guard (1...366).contains(dayOfYear) else { return nil }
        let today = UICTime.localFields(of: reference).day
        let latest = UICTime.daysFromCivil(year: today.year, month: today.month, day: today.day) + legacyLookaheadDays
        var year = today.year + 1
        for _ in 0..<10 {
            if let days = days(year: year, dayOfYear: dayOfYear), days <= latest { return day(fromDays: days) }
            year -= 1
        }
        return nil
    }

    /// The first day with `dayOfYear` on or after `start`, or `nil` for 0 or above 366.
    public static func legacyDay(dayOfYear: Int, onOrAfter start: UICDay) -> UICDay? {
        guard (1...366).contains(dayOfYear) else { return nil }
        let first = UICTime.daysFromCivil(year: start.year, month: start.month, day: start.day)
        for year in start.year...(start.year + 8) {
            if let days = days(year: year, dayOfYear: dayOfYear), days >= first { return day(fromDays: days) }
        }
        return nil
    }

    /// `day` plus `count` days.
    public static func adding(_ count: Int, to day: UICDay) -> UICDay? {
        self.day(fromDays: UICTime.daysFromCivil(year: day.year, month: day.month, day: day.day) &+ count)
    }

    /// Days since 1970 of day `dayOfYear` of `year`, or `nil` when the year has no such day.
    private static func days(year: Int, dayOfYear: Int) -> Int? {
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        guard dayOfYear >= 1, dayOfYear <= (leap ? 366 : 365) else { return nil }
        return UICTime.daysFromCivil(year: year, month: 1, day: 1) + dayOfYear - 1
    }

    private static func day(fromDays days: Int) -> UICDay? {
        let civil = UICTime.civil(fromDays: days)
        return UICDay(year: civil.year, month: civil.month, day: civil.day)
    }
}
