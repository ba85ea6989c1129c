import FareCore
import Foundation
import TestSupport
import Testing
import ValidationAPI

@testable import ValidationServer

/// The server's smaller edges (issue 47): the Host allow-list, the figures marked as data, spreadsheet formulas
/// hidden behind invisible or look-alike characters, and text from tickets that would reorder a log line.
@Suite("The server's smaller edges", .timeLimit(.minutes(5)))
struct ServerEdgeTests {
    @Test(
        "with --allowed-host, a request naming another host gets 421 and the error body; without, every name is answered"
    )
    func allowedHosts() async throws {
        let bench = try ServerBench(.sqlite)
        let token = try bench.addDevice("v1")
        let server = try bench.startServer(extra: [
            "--allowed-host", "Fleet.Example.org.", "--allowed-host", "127.0.0.1",
        ])
        for path in ["/v1/health", "/v1/keys", "/report.json"] {
            let rebinding = try await LoopbackHTTP.request(
                port: server.port, "GET", path,
                headers: ["Host": "evil.example:\(server.port)", "Authorization": "Bearer \(token)"])
            #expect(rebinding.status == 421, "\(path)")
            let body = try WireFormat.decode(ErrorBody.self, from: rebinding.body)
            #expect(body.error == "misdirected-request")
        }
        let posted = try await LoopbackHTTP.request(
            port: server.port, "POST", "/v1/inspections",
            headers: ["Host": "evil.example", "Authorization": "Bearer \(token)"], body: Array(#"{"records":[]}"#.utf8))
        #expect(posted.status == 421)
        for host in ["fleet.example.org", "FLEET.example.org:443", "127.0.0.1:\(server.port)"] {
            let named = try await LoopbackHTTP.request(port: server.port, "GET", "/v1/health", headers: ["Host": host])
            #expect(named.status == 200, "Host \(host)")
        }
        server.stop()

        let open = try bench.startServer()
        let any = try await LoopbackHTTP.request(
            port: open.port, "GET", "/v1/health", headers: ["Host": "evil.example"])
        #expect(any.status == 200)
        open.stop()

        for bad in ["", "two words", "host/path", "a\u{202E}b"] {
            let refused = try bench.admin(["serve", "--listen", "127.0.0.1:0", "--allowed-host", bad])
            #expect(refused.status == 2, "\(bad.debugDescription)")
            #expect(refused.stderr.contains("--allowed-host"), "\(refused.stderr)")
        }
    }

    @Test("/report.json and /report.csv, and their refusals, are marked nosniff with a policy that loads nothing")
    func figuresHeaders() async throws {
        let fleet = try await ReportFleet(.sqlite)
        for path in OperatorAuthTests.figures {
            let answers = [
                try await OperatorAuthTests.get(fleet, path, token: fleet.operatorToken),
                try await OperatorAuthTests.get(fleet, path),
            ]
            #expect(answers.map(\.status) == [200, 401])
            for answer in answers {
                #expect(answer.headers["x-content-type-options"] == "nosniff", "\(path) \(answer.status)")
                #expect(
                    answer.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'",
                    "\(path) \(answer.status)")
            }
        }
        await fleet.stop()
    }

    @Test(
        "a CSV cell is defused after leading whitespace, line breaks, control and zero-width characters, and for full-width ＝ ＋ － ＠"
    )
    func csvLookAlikes() {
        let defused = [
            " =1+1", "  +49", "\n=HYPERLINK(\"x\")", "\r\n@SUM(A1)", "\u{0}=1", "\u{1F}-x", "\u{7F}=1", "\u{85}=1",
            "\u{A0}=1", "\u{3000}=1", "\u{200B}=1", "\u{200C}+1", "\u{200D}-x", "\u{2060}@x", "\u{FEFF}=1",
            "\u{200B} \u{FEFF}\t=1", "\u{202E}=1", "＝1+1", "＋49", "－x", "＠SUM(A1)", " ＝cmd", "\u{200B}＠x",
            "\t", "\rx",
        ]
        for text in defused {
            #expect(OperatorReportCSV.isFormula(text), "\(text.debugDescription)")
            let field = OperatorReportCSV.field(text)
            // Compared by scalar: a zero-width joiner after the quote joins it in one Character.
            let unquoted =
                field.unicodeScalars.first == "\"" ? field.unicodeScalars.dropFirst() : field.unicodeScalars[...]
            #expect(unquoted.first == "'", "\(text.debugDescription) → \(field.debugDescription)")
        }
        for text in ["tram-7", "-1200", "a=b", " tram", "\u{200B}tram", "", " ", "x＝1"] {
            #expect(!OperatorReportCSV.isFormula(text), "\(text.debugDescription)")
        }
        #expect(OperatorReportCSV.field("-1200") == "-1200")
        #expect(OperatorReportCSV.field(" -1200") == "' -1200")
        #expect(OperatorReportCSV.field("\u{200B}=1") == "'\u{200B}=1")
        #expect(OperatorReportCSV.field("\n=1") == "\"'\n=1\"")
        #expect(OperatorReportCSV.field("＝1") == "'＝1")
    }

    @Test("bidi and other format controls in an uploaded id never reach the log raw", arguments: Backend.available)
    func formatControlsEscapedInLog(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let token = try bench.addDevice("validator-a")
        let server = try bench.startServer(extra: ["--log-level", "info"])
        // What a ticket's text can carry: overrides, isolates, marks, zero-width characters, a tag character.
        let formatting =
            "\u{202E}\u{202A}\u{2067}\u{2069}\u{200F}\u{200E}\u{061C}\u{200B}\u{200D}\u{2060}\u{FEFF}\u{E0041}"
        let hostileID = "ticket-\(formatting)-gpj.exe"
        let record = InspectionOwnershipTests.record(hostileID)
        _ = try await InspectionOwnershipTests.upload([record], to: server, token: token)
        var conflicting = record
        conflicting.reason = "other"
        // The refusal logs the id.
        let answer = try await InspectionOwnershipTests.upload([conflicting], to: server, token: token)
        #expect(answer.results?.first?.outcome == .refused)
        server.stop()
        let log = server.log
        #expect(log.contains("refused 1 inspections"), "\(log)")
        let raw = log.unicodeScalars.filter { $0.properties.generalCategory == .format }
        #expect(raw.isEmpty, "raw format characters in the log: \(raw.map { String($0.value, radix: 16) })")
        // Each is written as an escape (in the ids list, whose quoting doubles the backslash).
        for scalar in formatting.unicodeScalars {
            let escape = "u{\(String(scalar.value, radix: 16, uppercase: true))}"
            #expect(log.contains(escape), "\(escape) in \(log)")
        }
    }
}
