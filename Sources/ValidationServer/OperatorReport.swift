import FareCore
import Foundation

/// A calendar day in UTC, as the report's `day` parameter names it (`2026-03-14`).
///
/// The report counts an inspection on the day its validator gave the verdict (`inspectedAt`, the validator's
/// clock), from 00:00 to 24:00 UTC: the day an operator asks about is the day on the platform, not the day the
/// records happened to reach the server.
///
/// Days are counted in the proleptic Gregorian calendar with integer arithmetic, as RFC 3339's `full-date` (the
/// OpenAPI `format: date`) reads them: Foundation's Gregorian calendar turns Julian before 1582, and would accept
/// a 29 February that the document calls no date.
public struct ReportDay: Sendable, Hashable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    /// The day `text` names, strictly `YYYY-MM-DD` (year 0001 to 9999) with a day that exists; nil for anything else.
    public init?(text: some StringProtocol) {
        let bytes = Array(String(text).utf8)
        let digits = [0, 1, 2, 3, 5, 6, 8, 9]
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) })
        else { return nil }
        func number(_ range: Range<Int>) -> Int { range.reduce(0) { $0 * 10 + Int(bytes[$1] - UInt8(ascii: "0")) } }
        let (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        guard year >= 1, (1...12).contains(month), (1...Self.length(ofMonth: month, in: year)).contains(day) else {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// The UTC day that holds `date`.
    public init(containing date: Date) {
        let days = Int((date.timeIntervalSince1970 / 86_400).rounded(.down))
        (year, month, day) = Self.civil(fromDays: days)
    }

    /// Midnight UTC at the start of the day.
    public var start: Date { Date(timeIntervalSince1970: TimeInterval(Self.days(year, month, day)) * 86_400) }

    /// Midnight UTC at the end of the day (the start of the next one).
    public var end: Date { start.addingTimeInterval(24 * 3600) }

    /// `YYYY-MM-DD`.
    public var description: String {
        String(format: "%04d-%02d-%02d", year, month, day)
    }

    private static func length(ofMonth month: Int, in year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date.
    private static func days(_ year: Int, _ month: Int, _ day: Int) -> Int {
        CivilTime.days(year: year, month: month, day: day)
    }

    /// The date `days` after 1970-01-01: the inverse of `days(_:_:_:)`.
    private static func civil(fromDays days: Int) -> (Int, Int, Int) { CivilTime.date(fromDays: days) }
}

/// A fixed offset from UTC that the report's day and hours are counted in (`tz=+02:00`), UTC by default.
///
/// An offset, not a named zone: a day in a zone with summer time would have 23 or 25 hours on the days the clocks
/// change, and the report's 24 hourly bars would no longer be the hours on the platform clock. An operator in such a
/// zone picks the offset in force (`+01:00` in winter, `+02:00` in summer in central Europe).
public struct ReportOffset: Sendable, Hashable, CustomStringConvertible {
    /// Minutes east of UTC, from −14:00 to +14:00.
    public let minutes: Int

    /// UTC.
    public static let utc = ReportOffset(checkedMinutes: 0)

    private init(checkedMinutes: Int) {
        minutes = checkedMinutes
    }

    /// `UTC`, or `+HH:MM` / `-HH:MM` from −14:00 to +14:00; nil for anything else.
    public init?(text: some StringProtocol) {
        let bytes = Array(String(text).utf8)
        if bytes == Array("UTC".utf8) {
            minutes = 0
            return
        }
        let digits = [1, 2, 4, 5]
        guard bytes.count == 6, bytes[0] == UInt8(ascii: "+") || bytes[0] == UInt8(ascii: "-"),
            bytes[3] == UInt8(ascii: ":"),
            digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[$0]) })
        else { return nil }
        func number(_ at: Int) -> Int {
            Int(bytes[at] - UInt8(ascii: "0")) * 10 + Int(bytes[at + 1] - UInt8(ascii: "0"))
        }
        let (hours, minutes) = (number(1), number(4))
        guard minutes < 60, hours * 60 + minutes <= 14 * 60 else { return nil }
        self.minutes = (bytes[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 60 + minutes)
    }

    /// `UTC`, or the offset as `+02:00`.
    public var description: String {
        guard minutes != 0 else { return "UTC" }
        let size = abs(minutes)
        return (minutes < 0 ? "-" : "+") + String(format: "%02d:%02d", size / 60, size % 60)
    }
}

/// What the report is asked for: a day in a time zone, and one device or every device.
public struct ReportQuery: Sendable, Hashable {
    /// The day.
    public var day: ReportDay
    /// The device (its registered id) whose inspections alone are counted; nil for the whole fleet.
    public var deviceID: String?
    /// The offset the day and its hours are counted in.
    public var offset: ReportOffset

    /// Makes a query.
    public init(day: ReportDay, deviceID: String? = nil, offset: ReportOffset = .utc) {
        self.day = day
        self.deviceID = deviceID
        self.offset = offset
    }

    /// The first instant of the day in its time zone.
    public var start: Date { day.start.addingTimeInterval(-TimeInterval(offset.minutes * 60)) }
    /// The instant the next day starts.
    public var end: Date { start.addingTimeInterval(24 * 3600) }
}

/// Who decided an inspection's verdict, as the report groups them: the validator offline, the server's online
/// check, or not told (validators older than the `decidedBy` field).
public enum DecisionSide: String, Sendable, Hashable, CaseIterable, Codable {
    case offline
    case online
    case unstated = "not-stated"
}

/// The operator report's figures for one day, as `/report.json` serves them and the page draws them.
///
/// Every count is of inspections the validators uploaded, counted on the day and hour (UTC) of `inspectedAt`. The
/// upload lag of an inspection is the time from its verdict (the validator's clock) to its arrival at the server
/// (the server's clock): how long the records of a validator wait for a connection.
public struct OperatorReport: Sendable, Equatable, Codable {
    /// The day, `YYYY-MM-DD`, in `timeZone`.
    public var day: String
    /// The time zone of the day and hours: `UTC`, or an offset such as `+02:00`.
    public var timeZone: String
    /// The device counted alone, or nil for every device.
    public var device: String?
    /// The inspections counted.
    public var inspections: Int
    /// 24 entries, hour 0 to 23, each with its count (0 included).
    public var perHour: [HourCount]
    /// The devices with inspections on the day, by id (byte order).
    public var perDevice: [DeviceCount]
    /// The verdicts given, most frequent first (ties by name).
    public var verdicts: [VerdictCount]
    /// How many inspections each side decided, every side listed (0 included), offline first.
    public var decidedBy: [DecisionCount]
    /// The upload lag of each device's inspections, by id.
    public var syncLag: [DeviceLag]
    /// The audit: first uses the server withdrew on the day (a revoked device's claims, `first-uses forget`),
    /// oldest first; with a device, that device's.
    public var withdrawals: [Withdrawal] = []

    /// A first use withdrawn: the ticket, the device whose claim it was, when and why.
    public struct Withdrawal: Sendable, Equatable, Codable {
        public var device: String
        public var format: String
        public var issuer: String
        /// Lowercase hex.
        public var ticketID: String
        public var withdrawnAt: Date
        public var reason: String
    }

    /// One hour's count.
    public struct HourCount: Sendable, Equatable, Codable {
        /// The hour, 0 to 23 (in the report's time zone): inspections from `hour`:00 to `hour`:59.
        public var hour: Int
        public var inspections: Int
    }

    /// One device's count, split by who decided.
    public struct DeviceCount: Sendable, Equatable, Codable {
        public var device: String
        public var inspections: Int
        public var offline: Int
        public var online: Int
        public var notStated: Int
    }

    /// One verdict's count; a verdict name this version does not know is counted under its own name.
    public struct VerdictCount: Sendable, Equatable, Codable {
        public var verdict: Recorded<VerdictKind>
        public var inspections: Int
    }

    /// One side's count and its share of the day's inspections.
    public struct DecisionCount: Sendable, Equatable, Codable {
        public var decidedBy: DecisionSide
        public var inspections: Int
        /// `inspections` over all the day's inspections, from 0 to 1, rounded to 4 decimals (0 on an empty day).
        public var share: Double
    }

    /// One device's upload lag, in milliseconds.
    ///
    /// Percentiles are nearest-rank (the smallest lag with at least that share of the device's inspections at or
    /// below it), so each is the lag of a real inspection and both databases compute the same one.
    public struct DeviceLag: Sendable, Equatable, Codable {
        public var device: String
        public var inspections: Int
        public var p50Milliseconds: Int64
        public var p95Milliseconds: Int64
        public var maxMilliseconds: Int64
        /// When the last of the day's inspections of this device reached the server.
        public var lastUploadAt: Date
    }

    /// Whether there is nothing to show.
    public var isEmpty: Bool { inspections == 0 }

    /// The count of one side.
    public func count(decidedBy side: DecisionSide) -> Int {
        decidedBy.first { $0.decidedBy == side }?.inspections ?? 0
    }
}

extension SQLServerStore {
    public func operatorReport(_ query: ReportQuery) async throws(ServerError) -> OperatorReport {
        let from = query.start.unixMilliseconds
        let to = query.end.unixMilliseconds
        // Text holding U+0000 names no device PostgreSQL could hold: nothing, on both backends.
        let device = query.deviceID.map { $0.contains("\0") ? "\u{FFFD}" : $0 }
        var filter = "inspected_at >= ? AND inspected_at < ?"
        var arguments: [SQLValue] = [.integer(from), .integer(to)]
        if let device {
            filter += " AND device_id = ?"
            arguments.append(.text(device))
        }
        let day = query.day.description
        return try await read("read the report for \(day)") { [byteOrder, filter, arguments] session in
            var hours = Array(repeating: 0, count: 24)
            // The hour is computed in an inner query: PostgreSQL cannot match a GROUP BY expression holding a
            // parameter with the one in the select list.
            for row in try await session.query(
                """
                SELECT hour_of_day, count(*) AS inspections
                FROM (SELECT (inspected_at - ?) / 3600000 AS hour_of_day FROM inspection WHERE \(filter)) AS hours
                GROUP BY hour_of_day ORDER BY hour_of_day
                """,
                [.integer(from)] + arguments)
            {
                let hour = Int(try row.integer("hour_of_day"))
                if hours.indices.contains(hour) { hours[hour] = Int(try row.integer("inspections")) }
            }
            let perDevice = try await session.query(
                """
                SELECT device_id, count(*) AS inspections,
                    count(CASE WHEN decided_by = 'offline' THEN 1 END) AS offline,
                    count(CASE WHEN decided_by = 'online' THEN 1 END) AS online
                FROM inspection WHERE \(filter)
                GROUP BY device_id ORDER BY device_id\(byteOrder)
                """,
                arguments
            ).map { row in
                let inspections = Int(try row.integer("inspections"))
                let offline = Int(try row.integer("offline"))
                let online = Int(try row.integer("online"))
                return OperatorReport.DeviceCount(
                    device: try row.text("device_id"), inspections: inspections, offline: offline, online: online,
                    notStated: inspections - offline - online)
            }
            let verdicts = try await session.query(
                """
                SELECT verdict, count(*) AS inspections FROM inspection WHERE \(filter)
                GROUP BY verdict ORDER BY count(*) DESC, verdict\(byteOrder)
                """,
                arguments
            ).map { row in
                OperatorReport.VerdictCount(
                    verdict: Recorded(text: try row.text("verdict")), inspections: Int(try row.integer("inspections")))
            }
            // Nearest-rank percentiles in integers: the row at rank r of n is at or above the p-th percentile when
            // r * 100 >= p * n, and the percentile is the smallest such lag.
            let lags = try await session.query(
                """
                SELECT device_id, count(*) AS inspections, max(upload_lag) AS max_lag, max(received_at) AS last_upload,
                    min(CASE WHEN lag_rank * 100 >= 50 * lag_count THEN upload_lag END) AS p50,
                    min(CASE WHEN lag_rank * 100 >= 95 * lag_count THEN upload_lag END) AS p95
                FROM (
                    SELECT device_id, received_at, received_at - inspected_at AS upload_lag,
                        row_number() OVER (PARTITION BY device_id ORDER BY received_at - inspected_at) AS lag_rank,
                        count(*) OVER (PARTITION BY device_id) AS lag_count
                    FROM inspection WHERE \(filter)
                ) AS lags
                GROUP BY device_id ORDER BY device_id\(byteOrder)
                """,
                arguments
            ).map { row in
                OperatorReport.DeviceLag(
                    device: try row.text("device_id"), inspections: Int(try row.integer("inspections")),
                    p50Milliseconds: try row.integer("p50"), p95Milliseconds: try row.integer("p95"),
                    maxMilliseconds: try row.integer("max_lag"),
                    lastUploadAt: Date(unixMilliseconds: try row.integer("last_upload")))
            }
            let total = hours.reduce(0, +)
            let sides: [DecisionSide: Int] = [
                .offline: perDevice.map(\.offline).reduce(0, +), .online: perDevice.map(\.online).reduce(0, +),
                .unstated: perDevice.map(\.notStated).reduce(0, +),
            ]
            let decidedBy = DecisionSide.allCases.map { side in
                let count = sides[side] ?? 0
                let share = total == 0 ? 0 : (Double(count) / Double(total) * 10_000).rounded() / 10_000
                return OperatorReport.DecisionCount(decidedBy: side, inspections: count, share: share)
            }
            var withdrawalFilter = "withdrawn_at >= ? AND withdrawn_at < ?"
            var withdrawalArguments: [SQLValue] = [.integer(from), .integer(to)]
            if let device {
                withdrawalFilter += " AND device_id = ?"
                withdrawalArguments.append(.text(device))
            }
            let withdrawals = try await session.query(
                """
                SELECT device_id, format, issuer, ticket_id, withdrawn_at, reason FROM first_use_withdrawal
                WHERE \(withdrawalFilter) ORDER BY withdrawn_at, device_id\(byteOrder), ticket_id LIMIT 1000
                """,
                withdrawalArguments
            ).map { row in
                OperatorReport.Withdrawal(
                    device: try row.text("device_id"), format: try row.text("format"), issuer: try row.text("issuer"),
                    ticketID: try row.text("ticket_id"),
                    withdrawnAt: Date(unixMilliseconds: try row.integer("withdrawn_at")), reason: try row.text("reason")
                )
            }
            return OperatorReport(
                day: day, timeZone: query.offset.description, device: query.deviceID, inspections: total,
                perHour: hours.enumerated().map { OperatorReport.HourCount(hour: $0.offset, inspections: $0.element) },
                perDevice: perDevice, verdicts: verdicts, decidedBy: decidedBy, syncLag: lags, withdrawals: withdrawals)
        }
    }
}
