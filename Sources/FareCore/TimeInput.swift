import Foundation

/// A moment in time as a person writes it for an option or a configuration key: the one reading every time-taking
/// option of `farecheck` and `farecheck-server` goes through.
///
/// Accepted, and nothing else (no text before or after, every field range-checked, nothing rolled over to the next
/// minute, hour or day):
/// - An instant, RFC 3339 (ISO 8601 extended): `2026-11-29T12:30:00Z`, `2026-11-29T12:30:00+01:00`; the seconds may
///   be left out (`2026-11-29T12:30Z`), or followed by a fraction of up to 9 digits (`12:30:00.25Z`); `T` or a space
///   between date and time; the offset `Z`, `±HH:MM` or `±HHMM`. Lower-case `t` and `z` are read as RFC 3339 allows.
/// - A date and time without an offset, `2026-11-29T12:30` or `2026-11-29 12:30:00`: the wall-clock time in the
///   local zone. One the zone skips (the clocks go forward) or passes twice (they go back) is refused, asking for
///   an offset.
/// - A date alone, `2026-11-29`: the start of that day in the local zone (midnight; the first moment of the day
///   when the zone skips midnight).
/// - `now`, or `now` plus or minus a whole number of seconds, minutes, hours or days: `now+90s`, `now-30m`,
///   `now+2h`, `now+1d`.
///
/// Years run from 0000 to 9999 in the proleptic Gregorian calendar; a second of 60 (a leap second) is refused, as a
/// `Date` has none. Pure: the clock and the zone are given.
public struct TimeInput: Sendable, Equatable {
    /// How the text named its moment.
    public enum Form: Sendable, Equatable {
        /// With `Z` or an offset: the same instant wherever it is read.
        case instant
        /// A date and time without an offset: the wall-clock time in `zone`.
        case localTime
        /// A date alone: the start of that day in `zone`.
        case date
        /// `now`, or `now` plus or minus a duration.
        case relative
    }

    /// The moment the text names.
    public let date: Date
    /// How the text named it.
    public let form: Form
    /// The text as given.
    public let text: String
    /// The zone a local time or a date was read in; `nil` for an instant and for `now…`.
    public let zone: TimeZone?

    /// The accepted forms, for messages and help: what a refusal tells the person to give instead.
    public static let acceptedForms =
        "an RFC 3339 time such as 2026-11-29T12:30:00Z or 2026-11-29T12:30+01:00 (seconds optional), "
        + "2026-11-29T12:30 or 2026-11-29 (midnight) in the local time zone, or now, now+2h, now-30m "
        + "(units s, m, h, d)"

    /// What the help of an option that takes a time adds: the accepted forms.
    public static let optionHelp =
        "RFC 3339 (2026-11-29T12:30:00Z, 2026-11-29T12:30+01:00), a local time or a date in this machine's zone "
        + "(2026-11-29T12:30, 2026-11-29 for midnight; TZ, else /etc/localtime), or now, now+2h, now-30m (s, m, h, d)."

    /// Reads the value of a command-line option: `now` is the current time, and a local time or a date is read in
    /// the system's zone (`TZ`, else /etc/localtime), the validator's or the server's own.
    public init(option text: String) throws(TimeInputError) {
        try self.init(parsing: text, now: Date(), zone: .current)
    }

    /// Reads `text`.
    ///
    /// - Parameters:
    ///   - now: What `now` is.
    ///   - zone: The zone a date alone or a time without an offset is read in (the validator's own: `TZ`, else
    ///     `/etc/localtime`).
    /// - Throws: `TimeInputError` saying what is wrong with the text.
    public init(parsing text: String, now: Date, zone: TimeZone) throws(TimeInputError) {
        self.text = text
        var reader = Reader(text)
        if text.hasPrefix("now") {
            date = try reader.relative(to: now)
            form = .relative
            self.zone = nil
            return
        }
        let day = try reader.date()
        guard let separator = reader.peek() else {
            date = try Self.startOfDay(day, in: zone, text: text)
            form = .date
            self.zone = zone
            return
        }
        guard separator == UInt8(ascii: "T") || separator == UInt8(ascii: "t") || separator == UInt8(ascii: " ")
        else {
            throw reader.failure("\(reader.quotedRest) follows the date")
        }
        reader.advance()
        let time = try reader.time()
        let local = Int64(day) * 86_400 + Int64(time.secondOfDay)
        guard let offset = try reader.offset() else {
            date = try Self.localInstant(local, fraction: time.fraction, in: zone, text: text)
            form = .localTime
            self.zone = zone
            return
        }
        date = Date(timeIntervalSince1970: TimeInterval(local - Int64(offset)) + time.fraction)
        form = .instant
        self.zone = nil
    }

    /// How a time read in a zone was taken, for the output: `2026-11-29 read as 2026-11-29T00:00:00+01:00
    /// (Europe/Berlin)`; `nil` for an instant and for `now…`, which need no zone.
    public var reading: String? {
        guard let zone else { return nil }
        return "\(PrintableText(text)) read as \(Self.format(date, in: zone)) (\(zone.identifier))"
    }

    /// `date` as RFC 3339 with the offset `zone` has at that moment, to the second (and milliseconds when it has
    /// any): `2026-11-29T00:00:00+01:00`.
    public static func format(_ date: Date, in zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let civil = CivilTime(unixSeconds: Int64(seconds) + Int64(offset))
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        var text =
            String(repeating: "0", count: max(0, 4 - String(civil.year).count)) + "\(civil.year)-\(two(civil.month))-"
            + "\(two(civil.day))T\(two(civil.hour)):\(two(civil.minute)):\(two(civil.second))"
        let millis = Int(((date.timeIntervalSince1970 - seconds) * 1000).rounded())
        if millis > 0, millis < 1000 {
            text += "." + String(repeating: "0", count: 3 - String(millis).count) + "\(millis)"
        }
        let magnitude = abs(offset)
        text += (offset < 0 ? "-" : "+") + "\(two(magnitude / 3600)):\(two(magnitude % 3600 / 60))"
        if magnitude % 60 != 0 { text += ":\(two(magnitude % 60))" }
        return text
    }

    /// The offsets `zone` has around the local time `local` (seconds since 1970 as if it were UTC): the one before
    /// and the one after a change of offset within a day and a half, or the one offset when there is none.
    private static func offsets(around local: Int64, in zone: TimeZone) -> (before: Int, after: Int) {
        let span: Int64 = 36 * 3600
        let before = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local - span)))
        let after = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(local + span)))
        return (before, after)
    }

    /// The instants that read as `local` in `zone`: none in a gap (the clocks go forward), two in an overlap.
    private static func instants(reading local: Int64, in zone: TimeZone) -> [Int64] {
        let around = offsets(around: local, in: zone)
        var found: [Int64] = []
        for offset in Set([around.before, around.after]) {
            let instant = local - Int64(offset)
            if zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(instant))) == offset {
                found.append(instant)
            }
        }
        return found.sorted()
    }

    /// The wall-clock time `local` in `zone`, or a refusal when the zone skips it or passes it twice.
    private static func localInstant(
        _ local: Int64, fraction: Double, in zone: TimeZone, text: String
    ) throws(TimeInputError) -> Date {
        let found = instants(reading: local, in: zone)
        let shown = PrintableText(text)
        switch found.count {
        case 1:
            return Date(timeIntervalSince1970: TimeInterval(found[0]) + fraction)
        case 0:
            throw TimeInputError(
                text: text,
                problem: "\(shown) does not exist in \(zone.identifier) (the clocks go forward then); give an offset")
        default:
            let readings = found.map { format(Date(timeIntervalSince1970: TimeInterval($0)), in: zone) }
            throw TimeInputError(
                text: text,
                problem: "\(shown) happens twice in \(zone.identifier) (\(readings.joined(separator: " and "))); "
                    + "give the offset")
        }
    }

    /// The first moment of the day `days` after 1970-01-01 in `zone`: midnight, or the end of a gap that skips it.
    private static func startOfDay(_ days: Int, in zone: TimeZone, text: String) throws(TimeInputError) -> Date {
        let midnight = Int64(days) * 86_400
        if let first = instants(reading: midnight, in: zone).first {
            return Date(timeIntervalSince1970: TimeInterval(first))
        }
        // Midnight falls in a gap: the day starts when the clocks go forward, read with the offset before.
        return Date(timeIntervalSince1970: TimeInterval(midnight - Int64(offsets(around: midnight, in: zone).before)))
    }
}

/// A time that could not be read: what is wrong with it, and the forms that are accepted.
public struct TimeInputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    public var text: String
    /// What is wrong, in a few words: `the hour 25 is not 00 to 23`.
    public var problem: String

    public init(text: String, problem: String) {
        self.text = text
        self.problem = problem
    }

    /// The problem and the accepted forms (an option parser names the option and the value before it).
    public var description: String { "\(problem); give \(TimeInput.acceptedForms)" }

    /// The whole message for `option` (or a configuration key): `--since "yesterday": not a time; give …`.
    public func message(option: String) -> String { "\(option) \"\(PrintableText(text))\": \(description)" }
}

/// A cursor over the text's bytes: every read checks what it finds.
private struct Reader {
    let text: String
    let bytes: [UInt8]
    var index = 0

    init(_ text: String) {
        self.text = text
        bytes = Array(text.utf8)
    }

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }
    mutating func advance() { index += 1 }

    /// What is left, quoted for a message (at most 30 characters).
    var quotedRest: String {
        let rest = String(decoding: bytes[index...], as: UTF8.self)
        return "\"" + PrintableText(rest.prefix(30)).description + (rest.count > 30 ? "…\"" : "\"")
    }

    func failure(_ problem: String) -> TimeInputError { TimeInputError(text: text, problem: problem) }

    /// Exactly `count` ASCII digits.
    mutating func digits(_ count: Int) -> Int? {
        guard index + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[index..<index + count] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        index += count
        return value
    }

    mutating func expect(_ character: Character) -> Bool {
        guard let ascii = character.asciiValue, peek() == ascii else { return false }
        index += 1
        return true
    }

    /// `YYYY-MM-DD`, as days since 1970-01-01.
    mutating func date() throws(TimeInputError) -> Int {
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else {
            throw failure("not a time (a date is YYYY-MM-DD, e.g. 2026-11-29)")
        }
        guard (1...12).contains(month) else { throw failure("the month \(two(month)) is not 01 to 12") }
        let length = Self.daysIn(month: month, year: year)
        guard (1...length).contains(day) else {
            throw failure(
                "the day \(two(day)) is not 01 to \(length) (\(Self.monthNames[month - 1]) \(year) has \(length) days)")
        }
        return CivilTime.days(year: year, month: month, day: day)
    }

    /// `HH:MM`, `HH:MM:SS` or `HH:MM:SS.fraction`, as the second of the day and the fraction.
    mutating func time() throws(TimeInputError) -> (secondOfDay: Int, fraction: Double) {
        guard let hour = digits(2), expect(":"), let minute = digits(2) else {
            throw failure("the time after the date is not HH:MM or HH:MM:SS")
        }
        var second = 0
        var fraction = 0.0
        if expect(":") {
            guard let read = digits(2) else { throw failure("the seconds are not two digits") }
            second = read
            if expect(".") {
                let start = index
                while let byte = peek(), byte >= 0x30, byte <= 0x39 { advance() }
                guard (1...9).contains(index - start) else {
                    throw failure("the fraction of a second is not 1 to 9 digits")
                }
                fraction = Double("0." + String(decoding: bytes[start..<index], as: UTF8.self)) ?? 0
            }
        }
        guard hour <= 23 else { throw failure("the hour \(two(hour)) is not 00 to 23") }
        guard minute <= 59 else { throw failure("the minute \(two(minute)) is not 00 to 59") }
        guard second <= 59 else {
            throw failure(
                second == 60
                    ? "the second 60 (a leap second) is not 00 to 59" : "the second \(two(second)) is not 00 to 59")
        }
        return (hour * 3600 + minute * 60 + second, fraction)
    }

    /// `Z`, `±HH:MM` or `±HHMM` and the end of the text, as seconds east of UTC; `nil` at the end of the text.
    mutating func offset() throws(TimeInputError) -> Int? {
        guard let byte = peek() else { return nil }
        var offset: Int
        if byte == UInt8(ascii: "Z") || byte == UInt8(ascii: "z") {
            advance()
            offset = 0
        } else if byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
            advance()
            guard let hours = digits(2) else { throw failure("the offset is not ±HH:MM") }
            _ = expect(":")
            guard let minutes = digits(2) else { throw failure("the offset is not ±HH:MM") }
            guard hours <= 23, minutes <= 59 else {
                throw failure("the offset \(two(hours)):\(two(minutes)) is not 00:00 to 23:59")
            }
            offset = (hours * 60 + minutes) * 60
            if byte == UInt8(ascii: "-") { offset = -offset }
        } else {
            throw failure("\(quotedRest) follows the time (an offset is Z or ±HH:MM)")
        }
        guard peek() == nil else { throw failure("\(quotedRest) follows the offset") }
        return offset
    }

    /// `now`, `now+N<unit>` or `now-N<unit>`, unit `s`, `m`, `h` or `d`, N up to 9 digits.
    mutating func relative(to now: Date) throws(TimeInputError) -> Date {
        index = 3
        guard let sign = peek() else { return now }
        guard sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else {
            throw failure("\(quotedRest) follows now (now+2h, now-30m)")
        }
        advance()
        let start = index
        while let byte = peek(), byte >= 0x30, byte <= 0x39 { advance() }
        guard (1...9).contains(index - start) else {
            throw failure(
                "now\(sign == UInt8(ascii: "+") ? "+" : "-") takes a whole number of 1 to 9 digits and a unit")
        }
        let amount = Int(String(decoding: bytes[start..<index], as: UTF8.self)) ?? 0
        let unit: Int
        switch peek() {
        case UInt8(ascii: "s"): unit = 1
        case UInt8(ascii: "m"): unit = 60
        case UInt8(ascii: "h"): unit = 3600
        case UInt8(ascii: "d"): unit = 86_400
        case nil: throw failure("the amount has no unit (s, m, h or d)")
        default: throw failure("\(quotedRest) is not a unit (s, m, h or d)")
        }
        advance()
        guard peek() == nil else { throw failure("\(quotedRest) follows the unit") }
        let seconds = TimeInterval(amount * unit) * (sign == UInt8(ascii: "+") ? 1 : -1)
        let date = now.addingTimeInterval(seconds)
        guard Self.representable.contains(date.timeIntervalSince1970) else {
            throw failure("\(PrintableText(text)) lies outside the years 0000 to 9999")
        }
        return date
    }

    /// From 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z.
    static let representable: ClosedRange<TimeInterval> = -62_167_219_200...253_402_300_799

    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
        "December",
    ]

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
