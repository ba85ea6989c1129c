import Foundation

/// The instant `year-month-day hour:minute:second` UTC, in the proleptic Gregorian calendar (as the ticket formats
/// count days; Foundation's Gregorian calendar turns Julian before 1582).
public func utc(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0) -> Date {
    // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    let days = era * 146_097 + dayOfEra - 719_468
    return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
}

/// The instant an ISO 8601 text names, e.g. `2023-03-01T00:00:00Z`; traps on anything else (test data only).
public func utc(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }
