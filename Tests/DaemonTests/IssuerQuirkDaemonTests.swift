import FareCore
import Foundation
import Logging
import QuirkyTickets
import Scanners
import TestSupport
import Testing
import TicketFormats
import TrustStore
import Verification

@testable import Daemon
@testable import Presentation

/// A daemon pipeline over a store that trusts a quirky issuer's key, delivering to the hub the page reads.
private struct QuirkyDaemon {
    let bench: EndpointBench
    let pipeline: InspectionPipeline
    let issuer: QuirkyIssuer
    let from = UICDay(year: 2026, month: 3, day: 1)!
    let until = UICDay(year: 2026, month: 3, day: 31)!

    init() throws {
        // A gate configured to show holder data: the printed layout is shown to compare with the paper.
        bench = try EndpointBench(loginRequired: false, options: .init(gateHolderData: true))
        issuer = try QuirkyIssuer.dsa()
        try bench.store.saveKey(
            KeyRecord(
                family: .uic, issuer: "1186", keyID: "1", algorithm: issuer.algorithmText,
                spki: issuer.publicKey.spkiDER, source: "test"))
        let trust = StoreTrust(store: bench.store)
        let verifier = TicketVerifier(
            keys: trust, revocations: trust, clock: FixedClock(try Date("2026-03-15T12:00:00Z", strategy: .iso8601)))
        pipeline = InspectionPipeline(
            verifier: verifier, journal: bench.store.inspectionJournal, replay: ReplayCheck(mode: .gate),
            sessions: nil, sinks: [EventHubSink(hub: bench.hub)], metrics: bench.metrics, status: bench.status,
            logger: Logger(label: "test"))
    }

    /// Scans a ticket with `quirks` and returns the event line the sinks were given, decoded.
    func scan(_ quirks: Set<TicketQuirk>) async throws -> (event: VerdictEvent, line: String) {
        let payload = try issuer.ticket(quirks, from: from, until: until)
        let lines = bench.hub.subscribe(replayLast: false)
        let event = await pipeline.inspect(ScanEvent(payload: payload, symbology: .aztec, device: "front-door"))
        for await published in lines where published.event.id == event.id {
            return (try VerdictEvent.decoder.decode(VerdictEvent.self, from: Data(published.line.utf8)), published.line)
        }
        throw LoopbackError(description: "the verdict never reached the hub")
    }
}

@Suite("the daemon with genuine tickets as issuers write them")
struct IssuerQuirkDaemonTests {
    @Test("a quirky ticket: valid on the event line and in the journal, with the issuer-quirk warning")
    func quirkyTicketEvent() async throws {
        let daemon = try QuirkyDaemon()
        let (event, line) = try await daemon.scan([.paddedRecordLengths, .paddedLayoutNumbers, .fewerLayoutFields])
        #expect(event.verdict == .valid, "\(event.reason)")
        #expect(event.warnings == ["issuer-quirk", "issuer-quirk"])
        #expect(event.warningMessages[0].contains("the length of record U_HEAD at byte 8 of the inflated data"))
        #expect(event.warningMessages[1].contains("record U_TLAY announces 5 fields"))
        #expect(event.layout?.joined(separator: "\n").contains("København H") == true)
        #expect(event.unreadableRecords == nil)
        #expect(!line.contains("unreadableRecords"))
        let journal = try daemon.bench.store.inspectionJournal.allInspections()
        #expect(journal.map(\.id) == [event.id])
        #expect(journal.first?.verdict == "valid")
        #expect(journal.first?.warningCodes == "issuer-quirk,issuer-quirk")
        // The journal keeps what the inspector read: which quirk, which record, which byte.
        let kept = try #require(journal.first?.warnings).map { "\($0.code): \($0.message)" }
        #expect(kept == zip(event.warnings, event.warningMessages).map { "\($0): \($1)" })
        #expect(kept.first?.contains("the length of record U_HEAD at byte 8 of the inflated data") == true)
    }

    @Test("each tolerated quirk: valid on the event line, issuer-quirk in the event and the journal")
    func everyQuirk() async throws {
        let daemon = try QuirkyDaemon()
        for quirk in TicketQuirk.tolerated {
            let (event, _) = try await daemon.scan([quirk])
            #expect(event.verdict == .valid, "\(quirk): \(event.reason)")
            #expect(event.warnings == ["issuer-quirk"], "\(quirk)")
            #expect(event.warningMessages.first?.contains(" at byte ") == true, "\(quirk)")
            let name = try #require(quirk.warningName)
            #expect(event.warningMessages.first?.contains(name) == true, "\(quirk): \(event.warningMessages)")
        }
        let journal = try daemon.bench.store.inspectionJournal.allInspections()
        #expect(journal.count == TicketQuirk.tolerated.count)
        #expect(journal.allSatisfy { $0.verdict == "valid" && $0.warningCodes == "issuer-quirk" })
        let kept = journal.flatMap(\.warnings).map { "\($0.code): \($0.message)" }.joined(separator: "\n")
        for quirk in TicketQuirk.tolerated {
            #expect(kept.contains("(\(quirk.warningName ?? "?")): "), "the journal does not name \(quirk)")
        }
    }

    @Test("a layout no tolerance reads: valid, the record listed on the event line, in the journal's warnings")
    func unreadableLayoutEvent() async throws {
        let daemon = try QuirkyDaemon()
        let (event, line) = try await daemon.scan([.brokenLayout])
        #expect(event.verdict == .valid, "\(event.reason)")
        #expect(event.warnings == ["unreadable-record"])
        #expect(event.layout == nil)
        let record = try #require(event.unreadableRecords?.first)
        #expect(record.tag == "U_TLAY" && record.version == "01" && record.place == .inflatedData)
        #expect(record.reason.contains("field 3's text"))
        #expect(line.contains("\"unreadableRecords\":[{"))
        #expect(line.contains("\"location\":\"U_TLAY 01 at byte \(record.offset) of the inflated data\""))
        #expect(try daemon.bench.store.inspectionJournal.allInspections().first?.warningCodes == "unreadable-record")
    }
}

@Suite("unreadable records without holder data")
struct UnreadableRecordRedactionTests {
    @Test("a gate's line keeps where a record broke and why, but not the text it quotes (a name in a layout)")
    func quotedTextLeftOut() throws {
        let record = UnreadableRecord(
            tag: "U_TLAY", version: "01", offset: 94,
            reason: "The line of field 3 of the U_TLAY record at byte 120 is \"Kim Berger 12.0\", not 2 digits.")
        let published = EndpointBench.event(
            .valid, reason: "Genuine.",
            warnings: [
                VerdictWarning(
                    code: VerdictWarning.unreadableRecordCode,
                    message:
                        "The U_TLAY 01 at byte 94 cannot be read; the ticket was judged on its other records. \(record.reason)"
                )
            ], unreadable: [record])
        #expect(published.line.contains("Kim Berger"))
        let redacted = published.event.withoutHolderData
        let line = redacted.jsonLine
        #expect(!line.contains("Kim Berger"), "\(line)")
        #expect(
            redacted.unreadableRecords?.first?.reason
                == "The line of field 3 of the U_TLAY record at byte 120 is \"…\", not 2 digits.")
        #expect(redacted.warningMessages.first?.hasSuffix("at byte 120 is \"…\", not 2 digits.") == true)
        #expect(redacted.unreadableRecords?.first?.location == "U_TLAY 01 at byte 94 of the inflated data")
        // An opening quote without its end: what follows is left out too.
        #expect(VerdictEvent.withoutQuotedText("is \"Kim") == "is \"…")
    }
}

@Suite(
    "the inspector page with genuine tickets as issuers write them", .timeLimit(.minutes(3)),
    .disabled(
        if: ProcessInfo.processInfo.environment["FARECHECK_SKIP_BROWSER"] == "1",
        "FARECHECK_SKIP_BROWSER=1: the headless Chromium tests of the inspector page were skipped"))
struct IssuerQuirkPageTests {
    @Test func thePageNamesTheQuirkAndListsTheUnreadableRecord() async throws {
        let daemon = try QuirkyDaemon()
        _ = try await daemon.scan([.brokenLayout, .paddedDataLength])
        try await daemon.bench.run { port in
            let browser = try HeadlessChromium(width: 360, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 360, height: 640)
            try await browser.waitUntil(InspectorPageBrowserTests.verdictShown)
            let dom = try await browser.dom()
            #expect(dom.contains(#"data-state="valid""#))
            // The quirk, named with its record and byte, among the warnings.
            let warnings = try await browser.evaluate("document.getElementById('warnings').textContent") as? String
            #expect(warnings?.contains("numbers padded with spaces instead of zeros") == true, "\(warnings ?? "")")
            #expect(warnings?.contains("data length of the #UT header at byte 64 of the barcode") == true)
            // The unreadable layout, listed with where it is and why; no printed layout is pretended.
            #expect(try await browser.evaluate("document.getElementById('unreadable').hidden") as? Bool == false)
            let listed = try await browser.evaluate("document.getElementById('unreadable').textContent") as? String
            #expect(listed?.contains("Unreadable: U_TLAY 01 at byte") == true, "\(listed ?? "")")
            #expect(listed?.contains("field 3's text") == true)
            #expect(try await browser.evaluate("document.getElementById('layout').hidden") as? Bool == true)
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-quirks-360.png")

            // The next scan, a ticket read whole: the list goes away, the drawn layout comes back.
            _ = try await daemon.scan([.layoutLengthsInCharacters])
            try await browser.waitUntil("document.getElementById('unreadable').hidden")
            #expect(try await browser.evaluate("document.getElementById('layout').hidden") as? Bool == false)
            let grid = try await browser.evaluate("document.getElementById('layout-grid').textContent") as? String
            #expect(grid?.contains("Malmö C") == true)

            // Every tolerated quirk, one scan each: the page shows the verdict and the warning that names it.
            for quirk in TicketQuirk.tolerated {
                let (event, _) = try await daemon.scan([quirk])
                #expect(event.verdict == .valid, "\(quirk): \(event.reason)")
                let message = try #require(event.warningMessages.first, "\(quirk)")
                #expect(message.contains("(\(quirk.warningName ?? "?")): "), "\(quirk): \(message)")
                let literal = String(decoding: try JSONEncoder().encode(message), as: UTF8.self)
                try await browser.waitUntil("document.getElementById('warnings').textContent.includes(\(literal))")
                let state = try await browser.evaluate("document.getElementById('verdict').dataset.state") as? String
                #expect(state == "valid", "\(quirk)")
            }
            try await browser.quit()
        }
    }
}
