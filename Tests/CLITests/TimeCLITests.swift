import Foundation
import TestSupport
import Testing

/// Every option that takes a time, read one way (`TimeInput`): a time without an offset in the validator's zone,
/// said on standard error; anything else a usage error.
@Suite("farecheck's time options")
struct TimeCLITests {
    let bench = Workbench()

    /// Runs farecheck with the bench's store in the zone `zone` (`TZ`).
    func farecheck(_ arguments: [String], zone: String = "Europe/Berlin") throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_DB"] = bench.db
        environment["TZ"] = zone
        return try bench.run(Workbench.farecheck, arguments, environment: environment)
    }

    /// The files and folders under the bench's directory, relative to it.
    func contents() throws -> [String] {
        try FileManager.default.subpathsOfDirectory(atPath: bench.directory).sorted()
    }

    @Test("--at takes a local time in the validator's zone and says so; a date alone is midnight there")
    func verifyAt() throws {
        #expect(
            try farecheck(["keys", "generate", "--issuer", "demo-transit", "--out", bench.path("k.key")]).status == 0)
        // Valid 12:00 to 12:45 in Berlin.
        let issued = try farecheck([
            "issue", "--key", bench.path("k.key"), "--valid-from", "2026-11-29T11:00:00Z", "--valid-until",
            "2026-11-29T12:45+01:00", "--payload-out", bench.path("t.bin"),
        ])
        #expect(issued.status == 0, "\(issued.stderr)")
        for local in ["2026-11-29T12:30", "2026-11-29 12:30:00", "2026-11-29T12:30:00.000"] {
            let run = try farecheck(["verify", "--payload-file", bench.path("t.bin"), "--at", local])
            #expect(run.status == 0, "\(local): \(run.text) \(run.stderr)")
            #expect(run.text.contains("checked at 2026-11-29T11:30:00Z"), "\(run.text)")
            #expect(
                run.stderr.contains("--at \(local) read as 2026-11-29T12:30:00+01:00 (Europe/Berlin)"), "\(run.stderr)")
        }
        // In another zone the same wall-clock time is another instant.
        let london = try farecheck(
            ["verify", "--payload-file", bench.path("t.bin"), "--at", "2026-11-29T12:30"], zone: "Europe/London")
        #expect(london.status == 1 && london.text.hasPrefix("EXPIRED"), "\(london.text)")
        #expect(london.stderr.contains("(Europe/London)"))
        let utcNoon = try farecheck(["verify", "--payload-file", bench.path("t.bin"), "--at", "2026-11-29T12:00Z"])
        #expect(utcNoon.status == 1 && utcNoon.text.contains("checked at 2026-11-29T12:00:00Z"), "\(utcNoon.text)")
        #expect(!utcNoon.stderr.contains("read as"))
        let day = try farecheck(["verify", "--payload-file", bench.path("t.bin"), "--at", "2026-11-29", "--json"])
        #expect(day.status == 1)
        #expect(day.jsonLines.first?["inspectedAt"] as? String == "2026-11-28T23:00:00Z", "\(day.text)")
        #expect(day.stderr.contains("--at 2026-11-29 read as 2026-11-29T00:00:00+01:00 (Europe/Berlin)"))
    }

    @Test(
        "a time that is not one of the forms is a usage error (64) naming the option and the accepted forms",
        arguments: [
            (["verify", "--payload-file", "t.bin", "--at"], "2026-11-29T25:99:99Z", "the hour 25 is not 00 to 23"),
            (["verify", "--payload-file", "t.bin", "--at"], "2026-11-29garbage", "\"garbage\" follows the date"),
            (["issue", "--key", "k.key", "--payload-out", "t.bin", "--valid-from"], "2026-02-30", "has 28 days"),
            (["keys", "generate", "--issuer", "x", "--out", "k.key", "--not-after"], "now+2w", "is not a unit"),
        ])
    func refusedTimes(arguments: [String], value: String, problem: String) throws {
        let option = try #require(arguments.last)
        let run = try farecheck(
            arguments.map { $0.hasSuffix(".bin") || $0.hasSuffix(".key") ? bench.path($0) : $0 } + [value])
        #expect(run.status == 64, "\(run.stderr)")
        #expect(run.stderr.contains("'\(value)' is invalid for '\(option) <time>'"), "\(run.stderr)")
        #expect(run.stderr.contains(problem) && run.stderr.contains("RFC 3339"), "\(run.stderr)")
        let made = try contents()
        #expect(made.isEmpty, "a refused time made \(made)")
    }

    @Test("issue reads both ends of the validity in one way: a local time with seconds and one without")
    func issueWindow() throws {
        #expect(
            try farecheck(["keys", "generate", "--issuer", "demo-transit", "--out", bench.path("k.key")]).status == 0)
        let issued = try farecheck([
            "issue", "--key", bench.path("k.key"), "--valid-from", "2026-11-29 12:30:00", "--valid-until",
            "2026-11-29T18:00", "--payload-out", bench.path("t.bin"),
        ])
        #expect(issued.status == 0, "\(issued.stderr)")
        #expect(issued.stderr.contains("--valid-until 2026-11-29T18:00 read as 2026-11-29T18:00:00+01:00"))
        let run = try farecheck(["verify", "--payload-file", bench.path("t.bin"), "--json", "--at", "now"])
        let verdict = try #require(run.jsonLines.first)
        #expect(verdict["validFrom"] as? String == "2026-11-29T11:30:00Z")
        #expect(verdict["validUntil"] as? String == "2026-11-29T17:00:00Z")
    }
}
