import FareCore
import Foundation
import SeededRandom
import TestSupport
import Testing

@Suite("times as a person writes them (TimeInput)")
struct TimeInputTests {
    let berlin = TimeZone(identifier: "Europe/Berlin")!
    /// The `now` of these tests.
    let now = utc(2026, 11, 29, 9, 15, 0)

    func read(_ text: String, in zone: TimeZone? = nil) throws -> TimeInput {
        try TimeInput(parsing: text, now: now, zone: zone ?? berlin)
    }

    /// The instant `date` as Foundation's ISO 8601 formatter writes it in `style`, read back.
    func roundTrip(_ date: Date, _ style: Date.ISO8601FormatStyle, zone: TimeZone) throws -> TimeInput {
        try TimeInput(parsing: date.formatted(style), now: now, zone: zone)
    }

    @Test("every instant Foundation's ISO 8601 formatter writes, in any offset, with or without a fraction, reads back")
    func foundationInstants() throws {
        var random = SeededRandomNumberGenerator(seed: 52)
        let named = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"]
            .compactMap(TimeZone.init(identifier:))
        for _ in 0..<3000 {
            // Years 1600 to 9999, short of its last day, which an offset east of UTC writes as the year 10000
            // (Foundation's calendar turns Julian before 1582); a named zone from 1970 to 2100 (before, its local
            // mean time has an offset in seconds, which ISO 8601 cannot write).
            let zoneKind = Int.random(in: 0..<3, using: &random)
            let lowest: Int64 = zoneKind == 2 ? 0 : -11_676_096_000_000
            let highest: Int64 = zoneKind == 2 ? 4_102_444_800_000 : 253_402_128_000_000
            let millis = Int64.random(in: lowest...highest, using: &random)
            let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
            let zone: TimeZone
            switch zoneKind {
            case 0: zone = .gmt
            case 1: zone = TimeZone(secondsFromGMT: Int.random(in: -48...56, using: &random) * 900)!
            default: zone = named[Int.random(in: 0..<named.count, using: &random)]
            }
            let fraction = Bool.random(using: &random)
            let style = Date.ISO8601FormatStyle(
                dateTimeSeparator: Bool.random(using: &random) ? .standard : .space,
                timeZoneSeparator: Bool.random(using: &random) ? .colon : .omitted,
                includingFractionalSeconds: fraction, timeZone: zone)
            let text = date.formatted(style)
            let read = try roundTrip(date, style, zone: berlin)
            // The formatter cuts the fraction to milliseconds, or drops it: the instant, less at most that (give or
            // take what a `Date` can tell apart, 30 µs in the year 9999).
            let precision = max(0.000_001, 4 * date.timeIntervalSince1970.ulp)
            let lost = date.timeIntervalSince(read.date)
            #expect(lost > -precision && lost < (fraction ? 0.001 : 1) + precision, "\(text): \(lost)")
            // And what Foundation's own parser reads from the same text.
            let foundation = try Date(text, strategy: style)
            #expect(abs(read.date.timeIntervalSince(foundation)) < precision, "\(text)")
            #expect(read.form == .instant && read.zone == nil && read.reading == nil, "\(text)")
        }
    }

    @Test("a local time Foundation writes without an offset reads back in its zone, or is refused when it is ambiguous")
    func foundationLocalTimes() throws {
        var random = SeededRandomNumberGenerator(seed: 29)
        let zones = ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "Asia/Tokyo", "UTC"]
            .compactMap(TimeZone.init(identifier:))
        for _ in 0..<3000 {
            let zone = zones[Int.random(in: 0..<zones.count, using: &random)]
            // Whole minutes 1970 to 2100, a quarter of them within a day of a change of offset.
            var seconds = Int64.random(in: 0...4_102_444_800, using: &random) / 60 * 60
            if Int.random(in: 0..<4, using: &random) == 0,
                let change = zone.nextDaylightSavingTimeTransition(
                    after: Date(timeIntervalSince1970: TimeInterval(seconds)))
            {
                seconds =
                    Int64(change.timeIntervalSince1970) / 60 * 60 + Int64.random(in: -90...90, using: &random) * 60
            }
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            var style = Date.ISO8601FormatStyle(timeZone: zone).year().month().day()
            style = style.time(includingFractionalSeconds: false)
            let text = date.formatted(style)
            #expect(!text.contains("Z") && !text.contains("+"), "\(text)")
            let offsets = Set(
                [-3600, 0, 3600].map { zone.secondsFromGMT(for: date.addingTimeInterval(TimeInterval($0))) })
            switch Result(catching: { () throws(TimeInputError) in try TimeInput(parsing: text, now: now, zone: zone) })
            {
            case .success(let read):
                #expect(read.date == date, "\(text) in \(zone.identifier)")
                #expect(read.form == .localTime && read.zone == zone)
            case .failure(let error):
                // Only a wall-clock time the zone passes twice is refused (Foundation writes none it skips).
                #expect(offsets.count > 1 && error.problem.contains("happens twice"), "\(text): \(error)")
            }
        }
    }

    @Test("a date alone is the start of that day in the zone, as Foundation's calendar says, midnight skipped or not")
    func datesAlone() throws {
        let zones = ["Europe/Berlin", "America/Havana", "America/Santiago", "Asia/Beirut", "America/Asuncion", "UTC"]
            .compactMap(TimeZone.init(identifier:))
        for zone in zones {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            for days in stride(from: 18_262, to: 22_000, by: 1) {  // 2020 to 2030
                let (year, month, day) = CivilTime.date(fromDays: days)
                let text = [(year, 4), (month, 2), (day, 2)].map { value, width in
                    String(repeating: "0", count: width - String(value).count) + String(value)
                }.joined(separator: "-")
                let read = try TimeInput(parsing: text, now: now, zone: zone)
                let components = DateComponents(year: year, month: month, day: day)
                let start = try #require(calendar.date(from: components).map { calendar.startOfDay(for: $0) })
                #expect(read.date == start, "\(text) in \(zone.identifier)")
                #expect(read.form == .date)
            }
        }
    }

    @Test("forms a person types: what each names, and how a time without an offset says its zone")
    func typedForms() throws {
        let local = try read("2026-11-29T12:30")
        #expect(local.date == utc(2026, 11, 29, 11, 30, 0) && local.form == .localTime)
        #expect(local.reading == "2026-11-29T12:30 read as 2026-11-29T12:30:00+01:00 (Europe/Berlin)")
        #expect(try read("2026-11-29 12:30:00").date == utc(2026, 11, 29, 11, 30, 0))
        #expect(try read("2026-11-29t12:30:15.250").date == utc(2026, 11, 29, 11, 30, 15).addingTimeInterval(0.25))
        #expect(try read("2026-11-29T12:00Z").date == utc(2026, 11, 29, 12, 0, 0))
        #expect(try read("2026-11-29T12:00z").date == utc(2026, 11, 29, 12, 0, 0))
        #expect(try read("2026-11-29T12:00:00+05:30").date == utc(2026, 11, 29, 6, 30, 0))
        #expect(try read("2026-11-29T12:00:00-0330").date == utc(2026, 11, 29, 15, 30, 0))
        #expect(try read("2026-11-29T12:00:00-00:00").date == utc(2026, 11, 29, 12, 0, 0))
        let fraction = try read("2026-11-29T12:00:00.123456789Z").date.timeIntervalSince(utc(2026, 11, 29, 12, 0, 0))
        #expect(abs(fraction - 0.123_456_789) < 0.000_001)
        let day = try read("2026-11-29")
        #expect(day.date == utc(2026, 11, 28, 23, 0, 0) && day.form == .date)
        #expect(day.reading == "2026-11-29 read as 2026-11-29T00:00:00+01:00 (Europe/Berlin)")
        let summer = try read("2026-07-01")
        #expect(summer.reading == "2026-07-01 read as 2026-07-01T00:00:00+02:00 (Europe/Berlin)")
        #expect(try read("2024-02-29").date == utc(2024, 2, 28, 23, 0, 0))
        #expect(try read("2000-02-29", in: .gmt).date == utc(2000, 2, 29))
        #expect(try read("0000-01-01T00:00Z").date == utc(0, 1, 1))
        #expect(try read("9999-12-31T23:59:59Z").date == utc(9999, 12, 31, 23, 59, 59))
        // The clocks go back: 02:30 happens twice; with an offset, it is one of them.
        #expect(try read("2026-10-25T02:30+01:00").date == utc(2026, 10, 25, 1, 30, 0))
        #expect(try read("2026-10-25T02:30+02:00").date == utc(2026, 10, 25, 0, 30, 0))
        for (text, offset) in [("now", 0), ("now+2h", 7200), ("now-30m", -1800), ("now+1d", 86_400), ("now+90s", 90)] {
            let relative = try read(text)
            #expect(relative.date == now.addingTimeInterval(TimeInterval(offset)), "\(text)")
            #expect(relative.form == .relative && relative.reading == nil)
        }
        #expect(
            TimeInput.format(utc(2026, 11, 29, 11, 30, 0), in: TimeZone(secondsFromGMT: -12_600)!)
                == "2026-11-29T08:00:00-03:30")
    }

    @Test(
        "what is not one of the forms is refused, naming the option, what is wrong and the accepted forms",
        arguments: [
            ("2026-11-29garbage", "\"garbage\" follows the date"),
            ("2026-11-29T25:99:99Z", "the hour 25 is not 00 to 23"),
            ("2026-11-29T23:60Z", "the minute 60 is not 00 to 59"),
            ("2026-11-29T23:59:60Z", "the second 60 (a leap second) is not 00 to 59"),
            ("2026-11-29T23:59:99Z", "the second 99 is not 00 to 59"),
            ("2026-02-29", "the day 29 is not 01 to 28 (February 2026 has 28 days)"),
            ("1900-02-29", "February 1900 has 28 days"),
            ("2026-11-31", "the day 31 is not 01 to 30"),
            ("2026-11-00", "the day 00 is not 01 to 30"),
            ("2026-13-01", "the month 13 is not 01 to 12"),
            ("2026-00-10", "the month 00 is not 01 to 12"),
            ("2026-11-29T12:30:00+24:00", "the offset 24:00 is not 00:00 to 23:59"),
            ("2026-11-29T12:30:00+01:60", "the offset 01:60"),
            ("2026-11-29T12:30+01", "the offset is not ±HH:MM"),
            ("2026-11-29T12:30:00Zjunk", "\"junk\" follows the offset"),
            ("2026-11-29T12:30:00 ", "\" \" follows the time"),
            ("2026-11-29T12:30:00.Z", "the fraction of a second is not 1 to 9 digits"),
            ("2026-11-29T12:30:00.1234567890Z", "the fraction of a second is not 1 to 9 digits"),
            ("2026-11-29T12:30.5", "\".5\" follows the time"),
            ("2026-11-29T12", "the time after the date is not HH:MM or HH:MM:SS"),
            ("2026-11-29T1230", "the time after the date is not HH:MM or HH:MM:SS"),
            ("2026-11-29T", "the time after the date is not HH:MM or HH:MM:SS"),
            ("2026-03-29T02:30", "2026-03-29T02:30 does not exist in Europe/Berlin"),
            (
                "2026-10-25T02:30",
                "happens twice in Europe/Berlin (2026-10-25T02:30:00+02:00 and 2026-10-25T02:30:00+01:00)"
            ),
            (" 2026-11-29", "not a time"),
            ("20261129", "not a time"),
            ("2026-W48-7", "not a time"),
            ("2026-333", "not a time"),
            ("+2026-11-29", "not a time"),
            ("tomorrow", "not a time"),
            ("", "not a time"),
            ("nowish", "\"ish\" follows now"),
            ("now+", "now+ takes a whole number of 1 to 9 digits and a unit"),
            ("now+2", "the amount has no unit"),
            ("now+2w", "\"w\" is not a unit (s, m, h or d)"),
            ("now+1.5h", "\".5h\" is not a unit"),
            ("now+-2h", "now+ takes a whole number"),
            ("now+2hours", "\"ours\" follows the unit"),
            ("now+9999999999d", "now+ takes a whole number of 1 to 9 digits"),
            ("now+999999999d", "lies outside the years 0000 to 9999"),
            ("now 2h", "\" 2h\" follows now"),
        ])
    func refused(text: String, problem: String) throws {
        let error = try #require(throws: TimeInputError.self) { try read(text) }
        #expect(error.problem.contains(problem), "\(text): \(error.problem)")
        let message = error.message(option: "--at")
        #expect(message.hasPrefix("--at \"\(text)\": "), "\(message)")
        #expect(message.hasSuffix(TimeInput.acceptedForms), "\(message)")
    }
}
