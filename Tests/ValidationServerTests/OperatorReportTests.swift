import FareCore
import Foundation
import NIOHTTP1
import TestSupport
import Testing
import ValidationAPI

@testable import ValidationServer

/// The operator report's figures, as an operator downloads them: the day a small fleet uploaded, counted on
/// SQLite and on PostgreSQL alike.
@Suite("The operator report's figures", .timeLimit(.minutes(5)))
struct OperatorReportTests {
    @Test(
        "the JSON counts the day per hour, device, verdict and decider, with each device's upload lag",
        arguments: Backend.available)
    func figuresOfTheDay(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        let report = try await fleet.report("day=\(ReportFleet.day)")
        #expect(report == ReportFleet.expectedDay)

        // The shape the document describes, field by field.
        let answer = try await send(.GET, "\(fleet.baseURL)/report.json?day=2026-03-14", token: fleet.operatorToken)
        #expect(answer.header("Content-Type") == "application/json")
        #expect(answer.header("Cache-Control") == "no-store")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any])
        #expect(
            Set(object.keys)
                == [
                    "day", "timeZone", "inspections", "perHour", "perDevice", "verdicts", "decidedBy", "syncLag",
                    "withdrawals",
                ])
        // No first use was withdrawn on that day: the audit is an empty list.
        #expect((object["withdrawals"] as? [Any])?.isEmpty == true)
        let lags = try #require(object["syncLag"] as? [[String: Any]])
        #expect(lags.last?["lastUploadAt"] as? String == "2026-03-14T08:00:30Z")
        #expect(lags.last?["p95Milliseconds"] as? Int == 900_000)
        await fleet.stop()
    }

    @Test(
        "a device filter counts that device alone; an empty day is an empty report, not an error",
        arguments: Backend.available)
    func filters(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        let tram = try await fleet.report("day=2026-03-14&device=tram-7")
        #expect(tram.device == "tram-7")
        #expect(tram.inspections == 5)
        #expect(tram.perHour == ReportFleet.hours([7: 3, 8: 2]))
        #expect(tram.perDevice == [ReportFleet.expectedDay.perDevice[2]])
        #expect(
            tram.verdicts == [
                .init(verdict: "valid", inspections: 3), .init(verdict: "expired", inspections: 1),
                .init(verdict: "revoked", inspections: 1),
            ])
        #expect(
            tram.decidedBy == [
                .init(decidedBy: .offline, inspections: 3, share: 0.6),
                .init(decidedBy: .online, inspections: 2, share: 0.4),
                .init(decidedBy: .unstated, inspections: 0, share: 0),
            ])
        #expect(tram.syncLag == [ReportFleet.expectedDay.syncLag[2]])

        // The hostile id is a device like any other (percent-encoded in the URL).
        let hostile = try await fleet.report("day=2026-03-14&device=%3Dcmd%3Cb%3E%22x%22%26")
        #expect(hostile.inspections == 1)
        #expect(hostile.perHour == ReportFleet.hours([23: 1]))

        // The day is 00:00 to 24:00 UTC: the last millisecond before it and its end belong to the days around it.
        let before = try await fleet.report("day=2026-03-13")
        #expect(before.inspections == 1 && before.perHour[23].inspections == 1)
        let after = try await fleet.report("day=2026-03-15")
        #expect(after.inspections == 1 && after.perHour[0].inspections == 1)
        // Its upload lag is negative: the validator's clock ran ahead of the server's.
        #expect(after.syncLag.first?.p50Milliseconds == -(16 * 3_600_000 + 40 * 60_000))

        // In another time zone the day starts at its own midnight (22:00 UTC the day before at +02:00), and the
        // hours are its own.
        let east = try await fleet.report("day=2026-03-14&tz=%2B02:00")
        #expect(east.timeZone == "+02:00")
        #expect(east.inspections == 9)
        #expect(east.perHour == ReportFleet.hours([1: 1, 9: 3, 10: 2, 11: 1, 12: 1, 14: 1]))
        #expect(!east.perDevice.contains { $0.device == ReportFleet.hostileDevice })
        let west = try await fleet.report("day=2026-03-14&tz=-05:30&device=bus-12")
        #expect(west.timeZone == "-05:30")
        #expect(west.perHour == ReportFleet.hours([4: 1, 5: 1, 6: 1]))
        let westCSV = try await send(
            .GET, "\(fleet.baseURL)/report.csv?day=2026-03-14&tz=-05:30", token: fleet.operatorToken)
        #expect(westCSV.text.contains("\r\n2026-03-14,time-zone,offset,minutes,-330\r\n"))

        let empty = try await fleet.report("day=2026-03-16")
        #expect(empty.inspections == 0)
        #expect(empty.perHour == ReportFleet.hours([:]))
        #expect(empty.perDevice.isEmpty && empty.verdicts.isEmpty && empty.syncLag.isEmpty)
        #expect(empty.decidedBy.map(\.inspections) == [0, 0, 0])

        // Without a day, the report is of the server's today (its clock stopped at the last upload: 03-15).
        #expect(try await fleet.report("").day == "2026-03-15")

        for bad in [
            "day=2026-02-30", "day=14.03.2026", "day=2026-3-14", "day=yesterday", "day=", "day=0000-01-01",
            "tz=Europe/Berlin", "tz=%2B14:30", "tz=2:00", "tz=", "tz=utc",
        ] {
            let answer = try await send(.GET, "\(fleet.baseURL)/report.json?\(bad)", token: fleet.operatorToken)
            #expect(answer.status == 400, "\(bad)")
            #expect(answer.errorBody?.error == "bad-request")
        }
        await fleet.stop()
    }

    @Test("the CSV is RFC 4180, one figure a row, with every formula-like cell defused", arguments: Backend.available)
    func csv(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        let answer = try await send(
            .GET, "\(fleet.baseURL)/report.csv?day=2026-03-14&device=tram-7", token: fleet.operatorToken)
        #expect(answer.status == 200)
        #expect(answer.header("Content-Type") == "text/csv; charset=utf-8; header=present")
        #expect(answer.header("Content-Disposition") == "attachment; filename=\"farecheck-report-2026-03-14.csv\"")
        var expected = [
            "day,figure,subject,measure,value", "2026-03-14,time-zone,offset,minutes,0",
            "2026-03-14,total,tram-7,inspections,5",
        ]
        for hour in 0..<24 {
            let count = [7: 3, 8: 2][hour] ?? 0
            expected.append("2026-03-14,hour,\(hour < 10 ? "0" : "")\(hour),inspections,\(count)")
        }
        expected += [
            "2026-03-14,device,tram-7,inspections,5", "2026-03-14,device,tram-7,offline,3",
            "2026-03-14,device,tram-7,online,2", "2026-03-14,device,tram-7,not-stated,0",
            "2026-03-14,verdict,valid,inspections,3", "2026-03-14,verdict,expired,inspections,1",
            "2026-03-14,verdict,revoked,inspections,1",
            "2026-03-14,decided-by,offline,inspections,3", "2026-03-14,decided-by,offline,share,0.6000",
            "2026-03-14,decided-by,online,inspections,2", "2026-03-14,decided-by,online,share,0.4000",
            "2026-03-14,decided-by,not-stated,inspections,0", "2026-03-14,decided-by,not-stated,share,0.0000",
            "2026-03-14,sync-lag,tram-7,p50-ms,300000", "2026-03-14,sync-lag,tram-7,p95-ms,900000",
            "2026-03-14,sync-lag,tram-7,max-ms,900000", "2026-03-14,sync-lag,tram-7,last-upload,2026-03-14T08:00:30Z",
        ]
        #expect(answer.text == expected.map { $0 + "\r\n" }.joined())

        // The whole fleet: the hostile id is quoted (it holds quotes) and defused (it starts with `=`).
        let fleetCSV = try await send(.GET, "\(fleet.baseURL)/report.csv?day=2026-03-14", token: fleet.operatorToken)
        let lines = fleetCSV.text.components(separatedBy: "\r\n")
        #expect(lines.contains("2026-03-14,device,\"'=cmd<b>\"\"x\"\"&\",inspections,1"))
        #expect(lines.contains("2026-03-14,sync-lag,\"'=cmd<b>\"\"x\"\"&\",last-upload,2026-03-15T00:00:09Z"))
        #expect(!lines.contains { $0.contains(",=") || $0.hasPrefix("=") })
        await fleet.stop()
    }

    @Test(
        "SQLite and PostgreSQL give the same report, byte for byte, for the fleet and for each device",
        .enabled(if: Backend.postgresURL != nil, "FARECHECK_TEST_POSTGRES_URL is not set"))
    func sameOnBothDatabases() async throws {
        let sqlite = try await ReportFleet(.sqlite)
        let postgres = try await ReportFleet(.postgres)
        let queries = [
            "day=2026-03-14", "day=2026-03-14&device=tram-7", "day=2026-03-14&device=bus-12", "day=2026-03-15",
            "day=2026-03-13",
        ]
        for query in queries {
            for path in ["/report.json", "/report.csv"] {
                let one = try await send(.GET, "\(sqlite.baseURL)\(path)?\(query)", token: sqlite.operatorToken)
                let other = try await send(
                    .GET, "\(postgres.baseURL)\(path)?\(query)", token: postgres.operatorToken)
                #expect(one.status == 200 && other.status == 200)
                #expect(one.text == other.text, "\(path)?\(query)")
            }
        }
        await sqlite.stop()
        await postgres.stop()
    }

    @Test("the CSV defuses every cell a spreadsheet would run, and quotes as RFC 4180 says")
    func csvFields() {
        #expect(OperatorReportCSV.field("=1+1") == "'=1+1")
        #expect(OperatorReportCSV.field("+49") == "'+49")
        #expect(OperatorReportCSV.field("@SUM(A1)") == "'@SUM(A1)")
        #expect(OperatorReportCSV.field("-x") == "'-x")
        #expect(OperatorReportCSV.field("-1200") == "-1200")
        #expect(OperatorReportCSV.field("a,b") == "\"a,b\"")
        #expect(OperatorReportCSV.field("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(OperatorReportCSV.field("two\nlines") == "\"two\nlines\"")
        #expect(OperatorReportCSV.field("tram-7") == "tram-7")
    }

    @Test("a time zone is UTC or a fixed offset from -14:00 to +14:00")
    func offsets() {
        #expect(ReportOffset(text: "UTC")?.minutes == 0)
        #expect(ReportOffset(text: "+02:00")?.minutes == 120)
        #expect(ReportOffset(text: "-05:30")?.minutes == -330)
        #expect(ReportOffset(text: "+14:00")?.minutes == 840)
        #expect(ReportOffset(text: "-00:00")?.description == "UTC")
        #expect(ReportOffset(text: "+05:45")?.description == "+05:45")
        for bad in ["+14:01", "+15:00", "+2:00", "+02:60", "02:00", "Z", "utc", "Europe/Berlin", "+02:00 ", ""] {
            #expect(ReportOffset(text: bad) == nil, "\(bad)")
        }
    }

    @Test("a day is strictly YYYY-MM-DD, a day of the proleptic Gregorian calendar, and each has its 24 hours")
    func days() {
        #expect(ReportDay(text: "2026-03-14")?.start == Date(timeIntervalSince1970: 1_773_446_400))
        #expect(ReportDay(text: "2026-03-14")?.end == Date(timeIntervalSince1970: 1_773_446_400 + 86_400))
        #expect(ReportDay(text: "1970-01-01")?.start == Date(timeIntervalSince1970: 0))
        #expect(ReportDay(text: "1969-12-31")?.start == Date(timeIntervalSince1970: -86_400))
        // 1 March 1500 is 171 605 days before 1970 in the proleptic Gregorian calendar (Python's `date` agrees).
        #expect(ReportDay(text: "1500-03-01")?.start == Date(timeIntervalSince1970: -171_605 * 86_400))
        for good in ["2024-02-29", "2000-02-29", "0001-01-01", "9999-12-31", "1582-10-10"] {
            #expect(ReportDay(text: good)?.description == good)
        }
        for bad in [
            "2026-02-29", "1900-02-29", "1500-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "0000-01-01",
            "26-03-14", "2026-03-14T00:00:00Z", "２０２６-03-14", "+026-03-14", "2026-03-1a", "",
        ] {
            #expect(ReportDay(text: bad) == nil, "\(bad)")
        }
        // Every instant of a day is in it, back and forth across leap years and centuries.
        for days in stride(from: -719_000, through: 2_932_000, by: 997) {
            let start = Date(timeIntervalSince1970: TimeInterval(days) * 86_400)
            let day = ReportDay(containing: start.addingTimeInterval(86_399.999))
            #expect(day.start == start, "\(day)")
            #expect(ReportDay(text: day.description) == day)
            #expect(ReportDay(containing: start.addingTimeInterval(-0.001)).end == start)
        }
    }
}
