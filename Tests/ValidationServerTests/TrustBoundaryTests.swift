import FareCore
import Foundation
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// What a device's token can send: every number and time that crosses into the server is range-checked, so that
/// the extremes get a 400 naming the field and the server goes on serving (one such upload used to stop it).
@Suite("farecheck-server: the extremes at the trust boundary", .timeLimit(.minutes(3)))
struct TrustBoundaryTests {
    /// Times no validator writes: Int64's ends, just before year 1, year 10000.
    static let extremeTimes: [Int64] = [
        .min, .max, WireFormat.millisecondRange.lowerBound - 1, WireFormat.millisecondRange.upperBound + 1,
    ]

    @Test("uploads with extreme times or names no validator writes get 400, and the server keeps serving")
    func extremeUploads() async throws {
        let bench = try ServerBench(.sqlite)
        let token = try bench.addDevice("gate-a")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        for time in Self.extremeTimes {
            for firstUse in [false, true] {
                var record = InspectionOwnershipTests.record("t-\(time)-\(firstUse)")
                record.inspectedAt = time
                record.firstUse = firstUse
                record.payload = firstUse ? Array("FC1:NCFOXN%TS3DH".utf8) : nil
                let answer = try await send(
                    .POST, url + "/v1/inspections", token: token,
                    body: try WireFormat.encode(InspectionBatch(records: [record])))
                #expect(answer.status == 400, "inspectedAt \(time): \(answer.status) \(answer.text)")
                #expect(answer.errorBody?.message.contains("inspectedAt \(time)") == true, "\(answer.text)")
            }
        }
        // The ends of the range are times like any other.
        for time in [WireFormat.millisecondRange.lowerBound, WireFormat.millisecondRange.upperBound] {
            var record = InspectionOwnershipTests.record("edge-\(time)")
            record.inspectedAt = time
            #expect(try await InspectionOwnershipTests.upload([record], to: server, token: token).accepted.count == 1)
        }
        // Names: a verdict, signature, format or symbology is [a-z0-9-]{1,40}.
        let names: [(String, (inout InspectionRecord) -> Void)] = [
            ("verdict", { $0.verdict = Recorded(text: "VALID") }),
            ("verdict", { $0.verdict = Recorded(text: String(repeating: "v", count: 41)) }),
            ("signature", { $0.signature = Recorded(text: "valid\n") }),
            ("format", { $0.format = Recorded(text: "fc1\u{202E}") }),
            ("symbology", { $0.symbology = Recorded(text: "") }),
        ]
        for (index, (field, change)) in names.enumerated() {
            var record = InspectionOwnershipTests.record("name-\(index)")
            change(&record)
            let answer = try await send(
                .POST, url + "/v1/inspections", token: token,
                body: try WireFormat.encode(InspectionBatch(records: [record])))
            #expect(answer.status == 400, "\(field): \(answer.text)")
            #expect(answer.errorBody?.message.contains(field) == true, "\(answer.text)")
        }
        // Query parameters at and past Int64's ends.
        for query in [
            "/v1/first-uses?since=9223372036854775807", "/v1/first-uses?since=9223372036854775808",
            "/v1/first-uses?since=NaN", "/v1/revocations?cursor=9223372036854775807",
            "/v1/revocations?cursor=-9223372036854775808", "/v1/revocations?cursor=1e99",
            "/v1/keys?since=9223372036854775807", "/v1/keys?since=-1",
        ] {
            let answer = try await send(.GET, url + query, token: token)
            #expect([200, 304, 400, 404].contains(answer.status), "\(query): \(answer.status) \(answer.text)")
        }
        // Still serving, the same process.
        #expect(try await send(.GET, url + "/v1/health").status == 200)
        #expect(server.process.isRunning, "\(server.log)")
    }

    @Test("first-use pages only carry times the API can write back, whatever a device uploaded")
    func pagesStayReadable() async throws {
        let policy = FirstUseClaimPolicy(backdateLimit: 300)
        let arrival = Date(timeIntervalSince1970: 1_800_000_000)
        // Ahead of the arrival, far back, or outside the range: counted from the arrival.
        for time in Self.extremeTimes + [1_800_000_000_000 + 1, 1_800_000_000_000 - 301_000, 0] {
            #expect(policy.usedAt(inspectedAt: time, receivedAt: arrival) == arrival, "\(time)")
        }
        // Within the sync period before it: the device's time.
        #expect(
            policy.usedAt(inspectedAt: 1_800_000_000_000 - 299_000, receivedAt: arrival)
                == arrival.addingTimeInterval(-299))
        // A date outside the range is not read from a page, nor converted to an integer.
        #expect(WireFormat.milliseconds(Date(timeIntervalSince1970: -1e15)) == nil)
        #expect(WireFormat.milliseconds(Date(timeIntervalSince1970: .infinity)) == nil)
        let yearZero = #"{"format":"fc1","issuer":"i","ticketID":"0a","device":"d","usedAt":"0000-06-01T00:00:00Z"}"#
        #expect(throws: (any Error).self) { try WireFormat.decode(FleetFirstUse.self, from: Array(yearZero.utf8)) }
    }

    @Test("the command lines refuse numbers past their range with a message, never a crash")
    func commandLineNumbers() throws {
        let bench = Workbench()
        try "token".write(toFile: bench.path("token"), atomically: true, encoding: .utf8)
        for timeout in ["1e308", "nan", "inf", "-1", "0", "3601"] {
            let run = try bench.farecheck([
                "sync", "--url", "http://127.0.0.1:9", "--token-file", bench.path("token"), "--timeout=\(timeout)",
                "--db", bench.path("store.sqlite"),
            ])
            #expect(run.status == 64 || run.status == 2, "--timeout \(timeout): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains("--timeout is seconds from 0.1 to 3600"), "\(run.stderr)")
        }
        for skew in ["nan", "1e308", "-5"] {
            let run = try bench.farecheck(["verify", "--payload-file", "/dev/null", "--clock-skew=\(skew)"])
            #expect(run.stderr.contains("--clock-skew is seconds from 0 to 86400"), "\(skew): \(run.stderr)")
        }
    }
}
