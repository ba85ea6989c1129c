import Daemon
import FareCore
import Foundation
import Testing

@testable import Presentation

/// The one JSON form of an inspection (`VerdictEvent`) in its two shapes: the daemon's event line and the CLI's report
/// (`verify --json`), each byte for byte what it was when they were two types (`VerdictEvent`, `VerdictReport`).
@Suite("The event line and the CLI report")
struct VerdictEventFormTests {
    /// A ticket with every field, a verdict with a floor, keys, warnings and an unreadable record; a payload that
    /// made no ticket; a plain valid FC1 ticket.
    static func fixtures() -> [Inspection] {
        let t0 = Date(timeIntervalSince1970: 1_800_000_000)
        var ticket = Ticket(
            format: .uic9183, issuer: "1080", ticketID: [0xde, 0xad], validFrom: t0, validUntil: t0 + 86400,
            issuedAt: t0 - 3600, product: "Flexpreis", zones: ["A", "B"], category: "adult", passengers: 2,
            holder: "Kim \"Berger\"", activatedAt: t0 - 60, reactivations: 3,
            details: [("header version", "01"), ("holder/name", "Kim Berger")],
            documents: [TicketDocument(kind: "openTicket", validFrom: t0, validUntil: t0 + 10, summary: "2nd class")])
        ticket.unreadableRecords = [
            UnreadableRecord(tag: "U_TLAY", version: "01", offset: 53, reason: "Broken at \"Kim\".")
        ]
        var verdict = Verdict(
            kind: .clockUntrusted, reason: "The clock is behind.", signature: .valid, format: .uic9183, issuer: "1080",
            keyID: "00001", ticket: ticket,
            warnings: [
                VerdictWarning(code: "unreadable-record", message: "The U_TLAY at \"Kim\" cannot."),
                VerdictWarning(code: "seen-before", message: "Seen."),
            ],
            inspectedAt: t0,
            keys: [KeyConsideration(issuer: "1080", keyID: "00001", listing: "TLB", outcome: .verified, reason: "ok")])
        verdict.clockFloor = TrustedTimeFloor(instant: t0 + 100, source: .keyBundle)
        var full = Inspection(
            id: "id-1", source: "/dev/ttyACM0", symbology: .microQR, payloadByteCount: 321, payloadDigest: [1],
            verdict: verdict, decidedBy: .online, inspector: "staff-7", latency: .microseconds(1234))
        full.printedLayout = ["line 1", "  line 2"]
        full.unreadableRecords = ticket.unreadableRecords
        let bare = Inspection(
            id: "id-2", source: "stdin", symbology: nil, payloadByteCount: 3, payloadDigest: [2],
            verdict: Verdict(kind: .malformed, reason: "Not a ticket.", signature: .notChecked, inspectedAt: t0))
        var fc1 = Verdict(
            kind: .valid, reason: "Valid.", signature: .valid, format: .fc1, issuer: "demo", keyID: "0a",
            ticket: Ticket(format: .fc1, issuer: "demo", ticketID: [1]), inspectedAt: t0)
        fc1.warnings = []
        let valid = Inspection(
            id: "id-3", source: "img.png", symbology: .aztec, payloadByteCount: 9, payloadDigest: [3], verdict: fc1)
        return [full, bare, valid]
    }

    /// The event lines of the fixtures, as the daemon printed them before the event and the report were one type,
    /// with the fields added since: `explanation` and `warningExplanations` (the page's translations, issue 26).
    static let eventLines = [
        #"{"category":"adult","clockFloor":"2027-01-15T08:01:40Z","clockFloorSource":"key-bundle","decidedBy":"online","details":[{"label":"header version","value":"01"},{"label":"holder/name","value":"Kim Berger"}],"device":"/dev/ttyACM0","documents":[{"kind":"openTicket","summary":"2nd class","validFrom":"2027-01-15T08:00:00Z","validUntil":"2027-01-15T08:00:10Z"}],"explanation":{"arguments":[],"template":"The clock is behind."},"format":"uic-918-3","holder":"Kim \"Berger\"","id":"id-1","inspectedAt":"2027-01-15T08:00:00Z","inspector":"staff-7","issuer":"1080","keyId":"00001","keys":[{"issuer":"1080","keyId":"00001","listing":"TLB","outcome":"verified","reason":"ok"}],"latencyMicros":1234,"layout":["line 1","  line 2"],"passengers":2,"payloadBytes":321,"product":"Flexpreis","reason":"The clock is behind.","signature":"valid","symbology":"micro-qr","ticketId":"dead","unreadableRecords":[{"location":"U_TLAY 01 at byte 53 of the inflated data","offset":53,"place":"inflated-data","reason":"Broken at \"Kim\".","tag":"U_TLAY","version":"01"}],"validFrom":"2027-01-15T08:00:00Z","validUntil":"2027-01-16T08:00:00Z","verdict":"clock-untrusted","warningExplanations":[{"arguments":[],"template":"The U_TLAY at \"Kim\" cannot."},{"arguments":[],"template":"Seen."}],"warningMessages":["The U_TLAY at \"Kim\" cannot.","Seen."],"warnings":["unreadable-record","seen-before"],"zones":["A","B"]}"#,
        #"{"decidedBy":"offline","device":"stdin","explanation":{"arguments":[],"template":"Not a ticket."},"id":"id-2","inspectedAt":"2027-01-15T08:00:00Z","latencyMicros":0,"payloadBytes":3,"reason":"Not a ticket.","signature":"not-checked","verdict":"malformed","warningMessages":[],"warnings":[]}"#,
        #"{"decidedBy":"offline","device":"img.png","explanation":{"arguments":[],"template":"Valid."},"format":"fc1","id":"id-3","inspectedAt":"2027-01-15T08:00:00Z","issuer":"demo","keyId":"0a","latencyMicros":0,"payloadBytes":9,"reason":"Valid.","signature":"valid","symbology":"aztec","ticketId":"01","verdict":"valid","warningMessages":[],"warnings":[]}"#,
    ]

    /// The CLI reports of the fixtures (with `expected` and a layout set), as `verify --json` printed them before.
    static let reportLines = [
        #"{"activatedAt":"2027-01-15T07:59:00Z","category":"adult","clockFloor":"2027-01-15T08:01:40Z","clockFloorSource":"key-bundle","details":[{"label":"header version","value":"01"},{"label":"holder/name","value":"Kim Berger"}],"expected":"valid","format":"uic-918-3","holder":"Kim \"Berger\"","inspectedAt":"2027-01-15T08:00:00Z","issuedAt":"2027-01-15T07:00:00Z","issuer":"1080","keyId":"00001","keys":[{"issuer":"1080","keyId":"00001","listing":"TLB","outcome":"verified","reason":"ok"}],"layout":["a"],"passengers":2,"payloadBytes":321,"product":"Flexpreis","reactivations":3,"reason":"The clock is behind.","signature":"valid","source":"/dev/ttyACM0","symbology":"micro-qr","ticketId":"dead","unreadableRecords":[{"location":"U_TLAY 01 at byte 53 of the inflated data","offset":53,"place":"inflated-data","reason":"Broken at \"Kim\".","tag":"U_TLAY","version":"01"}],"validFrom":"2027-01-15T08:00:00Z","validUntil":"2027-01-16T08:00:00Z","verdict":"clock-untrusted","warningMessages":["The U_TLAY at \"Kim\" cannot.","Seen."],"warnings":["unreadable-record","seen-before"],"zones":["A","B"]}"#,
        #"{"expected":"valid","inspectedAt":"2027-01-15T08:00:00Z","layout":["a"],"payloadBytes":3,"reason":"Not a ticket.","signature":"not-checked","source":"stdin","verdict":"malformed","warningMessages":[],"warnings":[]}"#,
        #"{"expected":"valid","format":"fc1","inspectedAt":"2027-01-15T08:00:00Z","issuer":"demo","keyId":"0a","layout":["a"],"payloadBytes":9,"reason":"Valid.","signature":"valid","source":"img.png","symbology":"aztec","ticketId":"01","verdict":"valid","warningMessages":[],"warnings":[]}"#,
    ]

    /// The CLI's encoder (`jsonLine` in the farecheck target): sorted keys, ISO 8601 dates.
    static func cliLine(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601))
        }
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    @Test("each shape is the bytes it was; the event line reads back as the same event")
    func sameBytes() throws {
        for (index, inspection) in Self.fixtures().enumerated() {
            let event = VerdictEvent(inspection)
            #expect(event.jsonLine == Self.eventLines[index])
            #expect(try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(event.jsonLine.utf8)) == event)
            var report = VerdictEvent.report(inspection)
            // The report leaves out the event's own fields, and the layout unless the CLI draws it.
            #expect(report.form == .report && report.layout == nil)
            report.expected = "valid"
            report.layout = ["a"]
            #expect(try Self.cliLine(report) == Self.reportLines[index])
        }
    }
}
