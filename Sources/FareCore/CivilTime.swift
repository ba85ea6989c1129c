/// A UTC date and time of the proleptic Gregorian calendar, from and to a count of days since 1970-01-01 (years
/// counted from March, so that the leap day ends a year, in eras of 400 years of 146 097 days): without Foundation's
/// calendars, for the paths every verdict takes (ticket dates, blocklist versions, verdict lines, reports).
public struct CivilTime: Sendable, Equatable {
    public var year: Int
    public var month: Int
    public var day: Int
    public var hour: Int
    public var minute: Int
    public var second: Int

    /// The UTC fields of a time in whole seconds since 1970-01-01.
    public init(unixSeconds: Int64) {
        let days = Int(unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400)
        let secondOfDay = Int(unixSeconds - Int64(days) * 86_400)
        hour = secondOfDay / 3600
        minute = secondOfDay % 3600 / 60
        second = secondOfDay % 60
        (year, month, day) = Self.date(fromDays: days)
    }

    /// The date `days` after 1970-01-01: the inverse of ``days(year:month:day:)``.
    public static func date(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// Days since 1970-01-01 of a date (no range checks: the caller checks the fields).
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
