import FareCore
import Foundation
import SeededRandom
import Testing

@testable import Daemon
@testable import Presentation

/// The event line is written by hand (`VerdictEvent+JSONLine.swift`) for speed: a socket client, the page, the log
/// and the gate hook must still read the very bytes `JSONEncoder` writes with `VerdictEvent.encoder`.
@Suite("The hand-written event line")
struct VerdictEventLineTests {
    static func encoderLine(_ event: VerdictEvent) throws -> String {
        String(decoding: try VerdictEvent.encoder.encode(event), as: UTF8.self)
    }

    /// Text that needs escaping, and text that must not be escaped: quotes, backslashes, every control character,
    /// slashes, DEL, accents, a line separator, an emoji.
    static let awkwardTexts: [String] = [
        "", "plain", #"Kim "Berger""#, #"C:\tickets\"#, "a/b/c", "Zürich–Genève", "\u{2028}\u{2029}", "🚆 ok",
        String((0..<32).map { Character(Unicode.Scalar(UInt8($0))) }), "\u{7F}", "tab\tnew\nline\r",
    ]

    /// Instants on whole seconds and between them, before 1970, near the ends of the years 1 and 9999, and beyond.
    static let awkwardDates: [Date] = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000.999),
        Date(timeIntervalSince1970: -0.5), Date(timeIntervalSince1970: -86_401.25),
        Date(timeIntervalSince1970: 951_782_400),  // 2000-02-29
        Date(timeIntervalSince1970: -62_135_596_800),  // 0001-01-01
        Date(timeIntervalSince1970: 253_402_300_799),  // 9999-12-31T23:59:59
        Date(timeIntervalSince1970: 253_402_300_800), Date(timeIntervalSince1970: -62_135_596_801),
        .distantPast, .distantFuture,
    ]

    @Test("the fixtures' lines, events and reports, are the encoder's bytes")
    func fixtures() throws {
        for inspection in VerdictEventFormTests.fixtures() {
            let event = VerdictEvent(inspection)
            #expect(event.jsonLine == (try Self.encoderLine(event)))
            #expect(event.withoutHolderData.jsonLine == (try Self.encoderLine(event.withoutHolderData)))
            var report = VerdictEvent.report(inspection)
            report.expected = "valid"
            report.layout = ["a", "b/c"]
            #expect(report.jsonLine == (try Self.encoderLine(report)))
        }
    }

    @Test("awkward text, dates, durations and nested explanations are the encoder's bytes")
    func awkwardValues() throws {
        let base = VerdictEvent(VerdictEventFormTests.fixtures()[0])
        for text in Self.awkwardTexts {
            var event = base
            event.reason = text
            event.holder = text
            event.device = SourceName(text)
            event.zones = [text, text]
            event.details = [VerdictEvent.Detail(label: text, value: text)]
            event.warningMessages = [text]
            event.explanation = "Ticket \(text) of \(Explanation.verbatim(text))."
            event.holderCheck = TicketHolder(
                name: text, givenName: text, familyName: text, dateOfBirth: HolderDate(year: 986, month: 2),
                idDocuments: [IDDocument(kind: .idCard, number: text), IDDocument(kind: .other, number: text)],
                note: text)
            #expect(event.jsonLine == (try Self.encoderLine(event)), "text \(text.debugDescription)")
        }
        for date in Self.awkwardDates {
            var event = base
            event.inspectedAt = date
            event.validFrom = date
            event.clockFloor = date
            event.documents = [VerdictEvent.Document(kind: "pass", summary: "", validFrom: date, validUntil: nil)]
            event.explanation = "Valid until \(date: date)."
            #expect(event.jsonLine == (try Self.encoderLine(event)), "date \(date.timeIntervalSince1970)")
        }
        for seconds: TimeInterval in [0, 1, 1.5, 60, 86_400 * 400, 0.000_001, 1e21, -3, 123_456.789] {
            var event = base
            let inner: Explanation = "for \(duration: seconds), \(3) times"
            event.explanation = "Seen \(inner)"
            event.warningExplanations = [inner, "", "Again \(inner)."]
            #expect(event.jsonLine == (try Self.encoderLine(event)), "duration \(seconds)")
        }
        var sparse = base
        sparse.documents = [VerdictEvent.Document(kind: "pass", summary: "x", validFrom: nil, validUntil: nil)]
        sparse.details = []
        sparse.zones = []
        sparse.explanation = nil
        sparse.warningExplanations = []
        sparse.keys = []
        #expect(sparse.jsonLine == (try Self.encoderLine(sparse)))
    }

    @Test("a thousand events with random fields are the encoder's bytes")
    func randomEvents() throws {
        var random = SeededRandomNumberGenerator(seed: 27)
        let base = VerdictEvent(VerdictEventFormTests.fixtures()[0])
        let pool = Array(#"aZ09 "\/é€🚆"#) + (0..<32).map { Character(Unicode.Scalar(UInt8($0))) }
        func text() -> String {
            String((0..<Int(random.next() % 12)).map { _ in pool[Int(random.next() % UInt64(pool.count))] })
        }
        func date() -> Date {
            Date(timeIntervalSince1970: Double(Int64(bitPattern: random.next()) % 8_000_000_000_000) / 1000)
        }
        for _ in 0..<1000 {
            var event = base
            event.id = InspectionID(text())
            event.reason = text()
            event.issuer = random.next() % 2 == 0 ? nil : IssuerID(text())
            event.ticketId = random.next() % 2 == 0 ? nil : text()
            event.inspectedAt = date()
            event.validUntil = random.next() % 2 == 0 ? nil : date()
            event.latencyMicros = Int(truncatingIfNeeded: random.next())
            event.passengers = random.next() % 2 == 0 ? nil : Int(truncatingIfNeeded: random.next())
            event.warnings = (0..<Int(random.next() % 3)).map { _ in text() }
            event.explanation = "\(text()) \(date: date()) \(Int(truncatingIfNeeded: random.next()))"
            let kinds = IDDocumentKind.allCases
            let maybe = { random.next() % 2 == 0 ? nil : text() }
            event.holderCheck =
                random.next() % 3 == 0
                ? nil
                : TicketHolder(
                    name: maybe(), givenName: maybe(), familyName: maybe(),
                    dateOfBirth: random.next() % 2 == 0
                        ? nil
                        : HolderDate(year: 1900 + Int(random.next() % 120), month: random.next() % 2 == 0 ? nil : 7),
                    idDocuments: (0..<Int(random.next() % 3)).map { _ in
                        IDDocument(kind: kinds[Int(random.next() % UInt64(kinds.count))], number: text())
                    },
                    note: maybe())
            if random.next() % 2 == 0 { event = event.withoutHolderData }
            #expect(event.jsonLine == (try Self.encoderLine(event)))
        }
    }
}
