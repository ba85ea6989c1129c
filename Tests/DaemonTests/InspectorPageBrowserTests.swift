import Daemon
import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats
import TrustStore
import Verification

@testable import Presentation

#if canImport(Glibc)
    import Glibc
#endif

/// The inspector page in a real browser (headless Chromium): what the inspector sees after a scan.
@Suite(
    .timeLimit(.minutes(3)),
    .disabled(
        if: ProcessInfo.processInfo.environment["FARECHECK_SKIP_BROWSER"] == "1",
        "FARECHECK_SKIP_BROWSER=1: the headless Chromium tests of the inspector page were skipped"))
struct InspectorPageBrowserTests {
    /// What the script has rendered once a verdict arrived.
    static let verdictShown = "document.getElementById('verdict').dataset.state !== 'waiting'"

    @Test func thePageRendersTheLiveVerdict() async throws {
        let bench = try EndpointBench(loginRequired: true)
        try bench.store.saveStaff(
            StaffRecord(staffID: "K-204", name: "Kim Berger", pin: try PINHash(pin: "482913", secret: nil)))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 480, height: 800)
            try await browser.open("http://127.0.0.1:\(port)/", width: 480, height: 800)
            // Nobody is logged in and the daemon needs an inspector: the login form shows, and no verdict reaches
            // the page (a scan now is not shown to this browser).
            try await browser.waitUntil("document.getElementById('login').hidden === false")
            bench.hub.publish(EndpointBench.event(.valid, reason: "Published before the login."))
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await browser.dom().contains("Waiting for the first scan"))
            #expect(!(try await browser.dom().contains("Published before the login.")))

            // The inspector logs in through the page's form: a wrong PIN is refused with the reason, the
            // right one closes the form, names the inspector, and opens the live stream (the session cookie).
            try await browser.submitLogin(staffID: "K-204", pin: "111111")
            try await browser.waitUntil("document.getElementById('login-error').textContent !== ''")
            #expect(try await browser.dom().contains("Unknown staff id or wrong PIN."))
            try await browser.submitLogin(staffID: "K-204", pin: "482913")
            try await browser.waitUntil("document.getElementById('login').hidden")
            #expect(try await browser.dom().contains("Inspector: Kim Berger (K-204)"))
            #expect(bench.sessions.current()?.staffID == "K-204")
            try await browser.waitUntil("document.getElementById('link').dataset.state === 'live'")
            // The cookie is HttpOnly: the page's script cannot read it.
            #expect(try await browser.evaluate("document.cookie") as? String == "")

            let event = EndpointBench.event(
                .revoked, reason: "Reported stolen at the ticket office on Tuesday.", product: "Day pass",
                warnings: [VerdictWarning(code: "seen-before", message: "Seen before: tram 12, 10:41, by K-118.")],
                unreadable: [
                    UnreadableRecord(tag: "U_TLAY", version: "01", offset: 94, reason: "Field 3's text overruns.")
                ])
            bench.hub.publish(event)
            try await browser.waitUntil("document.getElementById('verdict-reason').textContent.includes('Tuesday')")
            let dom = try await browser.dom()
            let served = try await LoopbackHTTP.request(port: port, "GET", "/")

            // Rendered by the page's script from the event stream: none of it is in the HTML the server sent.
            for text in [
                "Reported stolen at the ticket office on Tuesday.", "Day pass", "Seen before: tram 12",
                "Field 3's text overruns.",
            ] {
                #expect(dom.contains(text), "the page does not show \(text)")
                #expect(!served.text.contains(text))
            }
            #expect(dom.contains(">revoked</"))
            #expect(dom.contains(#"data-state="invalid""#))
            // The logged-in inspector sees the holder, to check it against an ID.
            #expect(dom.contains("Compare with ID"))
            #expect(dom.contains("ID ****1234"))
            #expect(dom.contains("2 passengers"))
            #expect(dom.contains("front-door"))
            // The verdict's colour is the first thing an inspector sees.
            let background = try await browser.evaluate(
                "getComputedStyle(document.getElementById('verdict')).backgroundColor")
            #expect(background as? String == "rgb(164, 22, 26)")

            let png = try await browser.screenshot()
            #expect(png.count > 1000)
            #expect(png.prefix(8) == Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
            HeadlessChromium.keep(png, as: "inspector-revoked.png")

            // Logging out clears the holder from the screen and shows the form again.
            _ = try await browser.evaluate("document.getElementById('logout').click()")
            try await browser.waitUntil("document.getElementById('login').hidden === false")
            try await browser.waitUntil("document.getElementById('verdict').dataset.state === 'waiting'")
            #expect(!(try await browser.dom().contains("ID ****1234")))
            // Nothing of the last ticket stays: its unreadable records go with it.
            #expect(!(try await browser.dom().contains("Field 3's text overruns.")))
            #expect(try await browser.evaluate("document.getElementById('unreadable').hidden") as? Bool == true)
            #expect(bench.sessions.current() == nil)
            try await browser.quit()
        }
    }

    @Test func aValidTicketTurnsThePageGreenAndLoginHides() async throws {
        let bench = try EndpointBench(loginRequired: false)
        bench.hub.publish(EndpointBench.event(.valid, reason: "Genuine, within its validity, not revoked."))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 480, height: 800)
            try await browser.open("http://127.0.0.1:\(port)/", width: 480, height: 800)
            try await browser.waitUntil(Self.verdictShown)
            let dom = try await browser.dom()
            #expect(dom.contains(#"data-state="valid""#))
            #expect(dom.contains(">valid</"))
            #expect(dom.contains("Genuine, within its validity, not revoked."))
            let background = try await browser.evaluate(
                "getComputedStyle(document.getElementById('verdict')).backgroundColor")
            #expect(background as? String == "rgb(11, 107, 43)")
            // Without inspector mode there is no login form.
            #expect(try await browser.evaluate("document.getElementById('login').hidden") as? Bool == true)
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-valid.png")
            try await browser.quit()
        }
    }

    /// Whether every word of the verdict is drawn on one line: a word broken across two lines has two boxes.
    static let verdictWordsWhole = """
        (() => {
          const node = document.getElementById('verdict-word').firstChild;
          const text = node.textContent;
          let start = 0;
          for (const word of text.split(' ')) {
            const range = document.createRange();
            range.setStart(node, start);
            range.setEnd(node, start + word.length);
            if (range.getClientRects().length !== 1) return false;
            start += word.length + 1;
          }
          return true;
        })()
        """

    /// Whether the page fits the window, with nothing to scroll.
    static let fitsWithoutScrolling = """
        document.documentElement.scrollHeight <= window.innerHeight
          && document.documentElement.scrollWidth <= window.innerWidth
        """

    /// A genuine ticket whose own key is missing while a key with its issuer and id, listed for DOSIPAS, is held:
    /// the page says unknown key, and opens "Keys checked" to say why that key did not count.
    @Test func anUnknownKeyVerdictShowsTheKeysCheckedAndWhy() async throws {
        let bench = try EndpointBench(loginRequired: false)
        let payload = Array(
            try Data(
                contentsOf: URL(
                    fileURLWithPath: Fixtures.path("uic/db-city-mobil-v1-sha1.bin")
                )))
        var trust = TrustSnapshot()
        trust.add(
            TrustedKey(
                family: .uic, issuer: "80", keyID: "7", algorithm: "SHA256withECDSA",
                publicKey: try PrivateKey.generate(.ecP256).publicKey,
                listing: UICKeyListing(versionType: "DOS", barcodeVersion: "2")))
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(Date(timeIntervalSince1970: 1_610_366_400)))
            .verify(payload)
        #expect(verdict.kind == .unknownKey, "\(verdict.reason)")
        let inspection = Inspection(
            source: "front-door", symbology: .aztec, payloadByteCount: payload.count, payloadDigest: [],
            verdict: verdict)
        bench.hub.publish(VerdictEvent(inspection).published)
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 360, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 360, height: 640)
            try await browser.waitUntil(Self.verdictShown)
            #expect(try await browser.evaluate("document.getElementById('keys').open") as? Bool == true)
            let shown = try await browser.evaluate("document.getElementById('keys-list').textContent") as? String
            #expect(
                shown?.contains("80/7 \u{2014} skipped: listed for DOSIPAS barcodes (DOS), not #UT01") == true,
                "\(String(describing: shown))")
            #expect(shown?.contains("DOS, barcode version 2, SHA256withECDSA; ECDSA P-256") == true)
            #expect(try await browser.evaluate(Self.verdictWordsWhole) as? Bool == true)
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-unknown-key-360.png")
        }
    }

    @Test func aUFlexTicketOnAPhoneShowsHolderAndValidityWithoutBreakingAWord() async throws {
        let bench = try EndpointBench(loginRequired: false, options: .init(gateHolderData: true))
        let uic = Fixtures.path("uic")
        let list = try UICKeyList.parse(
            xml: Array(try Data(contentsOf: URL(fileURLWithPath: uic + "/uic-publickeys-snapshot.xml"))))
        _ = try bench.store.importUICKeyList(list)
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: uic + "/db-deutschland-ticket-2025.bin")))
        let trust = StoreTrust(store: bench.store)
        let verifier = TicketVerifier(
            keys: trust, revocations: trust, clock: FixedClock(Date(timeIntervalSince1970: 1_740_744_000)))
        let verdict = try verifier.verify(payload)
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        var inspection = Inspection(
            source: "front-door", symbology: .aztec, payloadByteCount: payload.count, payloadDigest: [],
            verdict: verdict)
        inspection.printedLayout = UIC918_3.printedLayout(of: payload)
        bench.hub.publish(VerdictEvent(inspection).published)
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 360, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 360, height: 640)
            try await browser.waitUntil(Self.verdictShown)
            let dom = try await browser.dom()
            // What an inspector checks on a Deutschland-Ticket: the holder against an ID, the product, the window.
            // The holder as fields, each marked for comparing with the passenger's ID.
            let holder = try await browser.evaluate(
                "[...document.querySelectorAll('#holder-fields dt, #holder-fields dd')].map((cell) => cell.textContent)"
            )
            #expect(
                holder as? [String] == [
                    "Name", "Max Mustermann compare with ID", "Date of birth", "1 January 2001 compare with ID",
                ], "\(String(describing: holder))")
            #expect(dom.contains("Deutschland-Ticket"))
            #expect(dom.contains("Open ticket: 2nd class, 1 adult"))
            #expect(dom.contains("QWXY3BTA"))
            let shownWindow = try await browser.evaluate(
                "[...document.querySelectorAll('#facts dt')].find(t => t.textContent === 'Valid').nextSibling.textContent"
            )
            #expect((shownWindow as? String)?.contains("2025") == true, "\(String(describing: shownWindow))")
            // The printed layout is there to compare with the paper, folded away.
            #expect(dom.contains("Gültig vom 01.02.2025 bis 01.03.2025"))
            #expect(try await browser.evaluate("document.getElementById('layout').hidden") as? Bool == false)
            #expect(try await browser.evaluate(Self.fitsWithoutScrolling) as? Bool == true)
            #expect(try await browser.evaluate(Self.verdictWordsWhole) as? Bool == true)
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-uflex-360.png")

            // The longest verdict words on the same phone: each stays whole on its line.
            for kind in [VerdictKind.invalidSignature, .unsupported, .notYetValid, .unknownKey] {
                bench.hub.publish(EndpointBench.event(kind, reason: "A sentence saying why."))
                let word = kind.rawValue.replacingOccurrences(of: "-", with: " ")
                try await browser.waitUntil("document.getElementById('verdict-word').textContent === '\(word)'")
                #expect(try await browser.evaluate(Self.verdictWordsWhole) as? Bool == true, "\(word) is broken")
                if kind == .invalidSignature {
                    HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-invalid-360.png")
                }
            }
            try await browser.quit()
        }
    }

    @Test func aClockThatCannotBeTrustedIsSaidAboveEverythingUntilItIsPutRight() async throws {
        // A gate configured to show holder data: what to check on a genuine ticket stays on the page.
        let bench = try EndpointBench(loginRequired: false, options: .init(gateHolderData: true))
        let uic = Fixtures.path("uic")
        let list = try UICKeyList.parse(
            xml: Array(try Data(contentsOf: URL(fileURLWithPath: uic + "/uic-publickeys-snapshot.xml"))))
        _ = try bench.store.importUICKeyList(list)
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: uic + "/db-deutschland-ticket-2025.bin")))
        let trust = StoreTrust(store: bench.store)
        // The device clock reads February 2025; the store's floor (this release's date) says it is later.
        let wallClock = Date(timeIntervalSince1970: 1_740_744_000)
        let verdict = try TicketVerifier(
            keys: trust, revocations: trust, clock: FixedClock(wallClock), trustedTime: bench.store
        ).verify(payload)
        #expect(verdict.kind == .clockUntrusted, "\(verdict.reason)")
        bench.status.clockChecked(
            DaemonStatus.Clock(
                trusted: false, wallClock: wallClock, floor: FarecheckRelease.date, floorSource: .release,
                message: verdict.reason))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 360, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 360, height: 640)
            // Before any scan: the status says so.
            try await browser.waitUntil("!document.getElementById('clock-warning').hidden")
            let banner = try await browser.evaluate("document.getElementById('clock-warning').textContent") as? String
            #expect(
                banner?.hasPrefix("Device clock wrong: it reads 28 Feb 2025") == true, "\(String(describing: banner))")
            #expect(banner?.contains("but it is at least 25 Nov 2026") == true)
            #expect(banner?.contains("Set the clock (NTP)") == true)

            bench.hub.publish(
                VerdictEvent(
                    Inspection(
                        source: "front-door", symbology: .aztec, payloadByteCount: payload.count, payloadDigest: [],
                        verdict: verdict)
                ).published)
            try await browser.waitUntil(Self.verdictShown)
            let dom = try await browser.dom()
            #expect(dom.contains(">clock untrusted</"))
            #expect(dom.contains(#"data-state="doubt""#))
            // Whether the ticket is genuine is still told, and what to check on it.
            #expect(dom.contains("valid (the ticket is genuine)"))
            #expect(dom.contains("Max Mustermann") && dom.contains("1 January 2001"))
            let background = try await browser.evaluate(
                "getComputedStyle(document.getElementById('verdict')).backgroundColor")
            #expect(background as? String == "rgb(122, 67, 0)")
            #expect(try await browser.evaluate(Self.verdictWordsWhole) as? Bool == true)
            #expect(
                try await browser.evaluate("document.getElementById('health').textContent") as? String
                    == "\u{00B7} Degraded: clock untrusted")
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-clock-untrusted-360.png")

            // The clock is put right: the next verdict clears the warning.
            bench.status.clockChecked(
                DaemonStatus.Clock(
                    trusted: true, wallClock: Date(), floor: FarecheckRelease.date, floorSource: .release))
            bench.hub.publish(EndpointBench.event(.valid, reason: "Genuine, within its validity, not revoked."))
            try await browser.waitUntil("document.getElementById('clock-warning').hidden")
            #expect(try await browser.dom().contains(#"data-state="valid""#))
            try await browser.quit()
        }
    }

    @Test func aDOSIPASTicketShowsBothSignatureLevelsAndTheBarcodeTime() async throws {
        let bench = try EndpointBench(loginRequired: false, options: .init(gateHolderData: true))
        let dosipas = Fixtures.path("dosipas")
        let list = try UICKeyList.parse(
            xml: Array(try Data(contentsOf: Fixtures.url("uic/uic-publickeys-snapshot.xml"))))
        _ = try bench.store.importUICKeyList(list)
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: dosipas + "/cts-ticket.bin")))
        let trust = StoreTrust(store: bench.store)
        // Inside the ticket's window, but long after its dynamic barcode was made: a copy.
        let verdict = try TicketVerifier(
            keys: trust, revocations: trust, clock: FixedClock(try Date("2026-02-12T19:00:00Z", strategy: .iso8601))
        ).verify(payload)
        #expect(verdict.format == .uic9189)
        bench.hub.publish(
            VerdictEvent(
                Inspection(
                    source: "front-door", symbology: .aztec, payloadByteCount: payload.count, payloadDigest: [],
                    verdict: verdict)
            ).published)
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 360, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 360, height: 640)
            try await browser.waitUntil(Self.verdictShown)
            #expect(try await browser.evaluate("document.getElementById('all-fields').hidden") as? Bool == false)
            let fields = try await browser.evaluate("document.getElementById('all-fields-list').textContent") as? String
            for label in ["level 1 check", "level 2 check", "barcode generated", "security provider"] {
                #expect(fields?.contains(label) == true, "the page does not show \(label)")
            }
            #expect(try await browser.evaluate(Self.fitsWithoutScrolling) as? Bool == true)
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-dosipas-360.png")
            try await browser.quit()
        }
    }
}
