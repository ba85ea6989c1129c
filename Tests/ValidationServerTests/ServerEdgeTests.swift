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
