import Daemon
import FareCore
import Foundation
import Scanners
import Sync
import TestSupport
import Testing
import TicketFormats
import TrustStore
import ValidationAPI
import Verification

@testable import Presentation

/// The inspector page in each of its nine languages, in a real browser (headless Chromium) at the widths of a small
/// phone (320 px) and a desk (1280 px), English, German and French at a handheld's (480 px) too: a real
/// Deutschland-Ticket, judged expired by the real verifier, as an inspector in Berlin, Paris, Copenhagen or Ljubljana
/// sees it; the browser's language chosen, and a catalog an agency dropped into `languages_dir`.
@Suite(
    .timeLimit(.minutes(5)),
    .disabled(
        if: ProcessInfo.processInfo.environment["FARECHECK_SKIP_BROWSER"] == "1",
        "FARECHECK_SKIP_BROWSER=1: the headless Chromium tests of the inspector page were skipped"))
struct InspectorPageLanguageTests {
    /// What an inspector reads in each language.
    struct Expected: Sendable, CustomTestStringConvertible {
        var language: String
        /// The verdict word, as the page writes it (before the style sheet puts it in capitals).
        var word: String
        /// The reason, in full, with the ticket's end of validity in the language's form and the validator's
        /// time zone (Europe/Berlin: 03:00 on 1 March 2025); for the languages read from their catalog, its words
        /// before the date.
        var reason: String
        /// Whether `reason` is the reason's beginning only.
        var reasonIsPrefix = false
        /// Labels of the ticket's facts and of the holder check, and the holder's date of birth as written.
        var labels: [String]
        /// The mark beside each holder field.
        var compare: String
        /// The page's own words elsewhere.
        var words: [String]

        var testDescription: String { language }
    }

    static let detailed = [
        Expected(
            language: "en", word: "expired", reason: "The ticket expired on 1 Mar 2025, 03:00.",
            labels: ["Product", "Valid", "Category", "Issuer", "Ticket", "Name", "Date of birth", "1 January 2001"],
            compare: "compare with ID",
            words: ["Trust data", "Scanner front-door", "All fields", "2nd class, 1 adult"]),
        Expected(
            language: "de", word: "abgelaufen", reason: "Das Ticket ist am 01.03.2025, 03:00 abgelaufen.",
            labels: ["Produkt", "Gültig", "Kategorie", "Ausgeber", "Ticket", "Name", "Geburtsdatum", "1. Januar 2001"],
            compare: "mit Ausweis vergleichen",
            words: ["Vertrauensdaten", "Scanner front-door", "Alle Felder", "2. Klasse, 1 Erwachsener"]),
        Expected(
            language: "fr", word: "expiré", reason: "Le billet a expiré le 1 mars 2025, 03:00.",
            labels: [
                "Produit", "Valable", "Catégorie", "Émetteur", "Billet", "Nom", "Date de naissance", "1 janvier 2001",
            ],
            compare: "comparer avec la pièce d’identité",
            words: ["données de confiance", "Lecteur front-door", "Tous les champs", "2e classe, 1 adulte"]),
    ]

    /// Every other built-in language, as its catalog says it: the verdict word, the reason's words before the date,
    /// the labels and the page's words.
    static let fromCatalogs: [Expected] = LanguageCatalog.builtIn.dropFirst(3).map { catalog in
        let text = catalog.sections["text"] ?? [:]
        let sentence = catalog.sections["sentences"]?["The ticket expired on {0}{1}."] ?? "?"
        return Expected(
            language: catalog.about.language.rawValue, word: catalog.sections["verdicts"]?["expired"] ?? "?",
            reason: String(sentence[..<(sentence.range(of: "{0}")?.lowerBound ?? sentence.endIndex)]),
            reasonIsPrefix: true,
            labels: ["product", "valid", "category", "issuer", "ticket", "holderName", "dateOfBirth"].map {
                text[$0] ?? "?"
            },
            compare: text["compareMark"] ?? "?",
            words: [
                text["allFields"] ?? "?", (text["scanner"] ?? "?").replacingOccurrences(of: "{0}", with: "front-door"),
            ])
    }

    static let languages = detailed + fromCatalogs

    /// The widths the page is checked at, each with a screen height of its kind (a handheld's for the three detailed
    /// languages only).
    static func screens(_ language: String) -> [(width: Int, height: Int)] {
        ["en", "de", "fr"].contains(language)
            ? [(320, 640), (480, 854), (1280, 900)] : [(320, 640), (1280, 900)]
    }

    /// The Deutschland-Ticket of DB (UIC 918.3 with U_FLEX) judged on 15 March 2025, after its month.
    static func expiredDeutschlandTicket(_ store: TrustStore) throws -> PublishedVerdict {
        let list = try UICKeyList.parse(xml: try Fixtures.bytes("uic/uic-publickeys-snapshot.xml"))
        _ = try store.importUICKeyList(list)
        let payload = try Fixtures.bytes("uic/db-deutschland-ticket-2025.bin")
        let trust = StoreTrust(store: store)
        let verifier = TicketVerifier(
            keys: trust, revocations: trust, clock: FixedClock(try Date("2025-03-15T09:00:00Z", strategy: .iso8601)))
        let verdict = try verifier.verify(payload)
        #expect(verdict.kind == .expired, "\(verdict.reason)")
        var inspection = Inspection(
            source: "front-door", symbology: .aztec, payloadByteCount: payload.count, payloadDigest: [],
            verdict: verdict)
        inspection.printedLayout = UIC918_3.printedLayout(of: payload)
        return VerdictEvent(inspection).published
    }

    /// Whether no word on the page is drawn across two lines: each run of letters between spaces and hyphens of
    /// every visible text has one box.
    static let noWordBroken = """
        (() => {
          const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
          const broken = [];
          for (let node = walker.nextNode(); node; node = walker.nextNode()) {
            const parent = node.parentElement;
            if (!parent || parent.closest('[hidden], script, style, pre, .visually-hidden')) continue;
            // What a closed <details> holds is not drawn (Chromium may lay it out at no width).
            const folded = parent.closest('details:not([open])');
            if (folded && !parent.closest('summary')) continue;
            const text = node.textContent;
            const pattern = /[^\\s\\-\\u2013\\u2014\\/]+/g;
            for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
              const range = document.createRange();
              range.setStart(node, match.index);
              range.setEnd(node, match.index + match[0].length);
              const lines = new Set([...range.getClientRects()].map((rect) => Math.round(rect.top)));
              if (lines.size > 1) broken.push(match[0]);
            }
          }
          return broken;
        })()
        """

    /// The reason as shown, its spaces plain (Intl writes a narrow no-break space before AM).
    static let reasonShown = "document.getElementById('verdict-reason').textContent.replace(/\\s/g, ' ')"

    /// Whether the page is as wide as the window at most: nothing to scroll sideways.
    static let noSidewaysScroll = "document.documentElement.scrollWidth <= window.innerWidth"

    @Test(arguments: languages)
    func theVerdictInTheConfiguredLanguageAtEveryWidth(_ expected: Expected) async throws {
        let bench = try EndpointBench(
            loginRequired: false,
            options: .init(
                gateHolderData: true,
                locale: InspectorPage.Locale(language: LanguageTag(expected.language), timeZone: "Europe/Berlin")))
        bench.hub.publish(try Self.expiredDeutschlandTicket(bench.store))
        try await bench.run { port in
            // One browser, a new page per width (starting Chromium is most of a page's time).
            let browser = try HeadlessChromium(width: 1280, height: 900)
            for screen in Self.screens(expected.language) {
                // The browser prefers English: the configured language wins over it.
                try await browser.open(
                    "http://127.0.0.1:\(port)/", width: screen.width, height: screen.height, languages: ["en-US", "en"])
                try await browser.waitUntil(InspectorPageBrowserTests.verdictShown)
                let at = "\(expected.language) at \(screen.width) px"
                #expect(try await browser.evaluate("document.documentElement.lang") as? String == expected.language)
                #expect(
                    try await browser.evaluate("document.getElementById('verdict-word').textContent") as? String
                        == expected.word, "\(at)")
                let reason = try await browser.evaluate(Self.reasonShown) as? String ?? ""
                if expected.reasonIsPrefix {
                    #expect(
                        reason.hasPrefix(expected.reason) && reason.count > expected.reason.count + 8,
                        "\(at): \(reason)")
                } else {
                    #expect(reason == expected.reason, "\(at)")
                }
                // Every sentence is in the page's language: nothing is left marked as English.
                #expect(
                    try await browser.evaluate(
                        "document.querySelectorAll('#verdict-reason [lang], #warnings [lang]').length")
                        as? Int == 0, "\(at)")
                let shown = try await browser.evaluate("document.body.innerText") as? String ?? ""
                for label in expected.labels + expected.words {
                    #expect(shown.contains(label), "\(at): no \(label)")
                }
                // The holder check: each field marked for comparing with an ID.
                let marks =
                    try await browser.evaluate(
                        "[...document.querySelectorAll('#holder-fields .compare')].map((mark) => mark.textContent)")
                    as? [String] ?? []
                #expect(!marks.isEmpty && marks.allSatisfy { $0 == expected.compare }, "\(at): \(marks)")
                #expect(try await browser.evaluate(Self.noSidewaysScroll) as? Bool == true, "\(at) scrolls sideways")
                let broken = try await browser.evaluate(Self.noWordBroken) as? [String]
                #expect(broken == [], "\(at): words broken across lines: \(broken ?? [])")
                let violations = try await browser.accessibilityViolations()
                #expect(violations.isEmpty, "\(at): \(violations.map(\.description).joined(separator: "\n"))")
                HeadlessChromium.keep(
                    try await browser.screenshot(), as: "inspector-\(expected.language)-\(screen.width).png")
            }
            try await browser.quit()
        }
    }

    @Test func theBrowsersLanguageAndTheSwitchOperatedByKeyboard() async throws {
        // No language configured: the browser's decides.
        let bench = try EndpointBench(
            loginRequired: false,
            options: .init(gateHolderData: true, locale: InspectorPage.Locale(timeZone: "Europe/Berlin")))
        bench.hub.publish(try Self.expiredDeutschlandTicket(bench.store))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 480, height: 854)
            try await browser.open(
                "http://127.0.0.1:\(port)/", width: 480, height: 854, languages: ["fr-FR", "fr", "en"])
            try await browser.waitUntil(InspectorPageBrowserTests.verdictShown)
            #expect(try await browser.evaluate("document.documentElement.lang") as? String == "fr")
            #expect(
                try await browser.evaluate("document.getElementById('verdict-word').textContent") as? String == "expiré"
            )
            // The switch lists every language by its own name, in its own language, the page's chosen.
            #expect(try await browser.evaluate("document.getElementById('languages').value") as? String == "fr")
            let names = try await browser.evaluate(
                "[...document.querySelectorAll('#languages option')].map((option) => option.lang + ' ' + option.textContent)"
            )
            #expect(
                names as? [String] == LanguageCatalog.builtIn.map { "\($0.about.language) \($0.about.name)" },
                "\(String(describing: names))")

            // The inspector tabs to the switch and picks Deutsch with the keyboard (one up from Français): the page
            // speaks German at once.
            var reached = false
            for _ in 0..<10 {
                try await browser.press("Tab")
                if try await browser.evaluate("document.activeElement.id") as? String == "languages" {
                    reached = true
                    break
                }
            }
            #expect(reached, "Tab never reached the language switch")
            try await browser.press("ArrowUp")
            try await browser.waitUntil("document.documentElement.lang === 'de'")
            #expect(
                try await browser.evaluate("document.getElementById('verdict-word').textContent") as? String
                    == "abgelaufen")
            #expect(
                try await browser.evaluate(Self.reasonShown) as? String
                    == "Das Ticket ist am 01.03.2025, 03:00 abgelaufen.")
            // The focus is drawn where the keyboard is.
            let outline = try await browser.evaluate("getComputedStyle(document.activeElement).outlineStyle")
            #expect(outline as? String == "solid")

            // The choice is kept for this browser: after a reload the page is German, whatever the browser prefers.
            try await browser.reload()
            try await browser.waitUntil(InspectorPageBrowserTests.verdictShown)
            #expect(try await browser.evaluate("document.documentElement.lang") as? String == "de")
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-switched-de-480.png")
            try await browser.quit()
        }
    }

    @Test func anAgencysCatalogOverridesABuiltInSentenceAndABrokenOneIsNotLoaded() async throws {
        let directory = Workbench()
        // Danish, one sentence said the agency's way; Swedish, a language farecheck does not ship, whose translator
        // dropped a date's place: refused whole.
        try """
        {"about": {"language": "da", "name": "Dansk", "madeBy": "Trafikselskabet, oversættelsesgruppen"},
         "sentences": {"The ticket expired on {0}{1}.": "Billetten er ikke længere gyldig: udløbet den {0}{1}."}}
        """.write(toFile: directory.path("da.json"), atomically: true, encoding: .utf8)
        var swedish = LanguageCatalog.english.template(for: LanguageTag("sv")!)
        swedish = swedish.replacingOccurrences(of: "\"name\" : \"\"", with: "\"name\" : \"Svenska\"")
            .replacingOccurrences(of: "\"madeBy\" : \"\"", with: "\"madeBy\" : \"test\"")
            .replacingOccurrences(
                of: "\"The ticket expired on {0}{1}.\" : \"The ticket expired on {0}{1}.\"",
                with: "\"The ticket expired on {0}{1}.\" : \"Biljetten har gått ut{1}.\"")
        try swedish.write(toFile: directory.path("sv.json"), atomically: true, encoding: .utf8)
        let languages = PageLanguages.load(directory: directory.directory, required: true)
        #expect(
            languages.findings.map(\.description) == [
                "language catalog \(directory.path("sv.json")): sentences → \"The ticket expired on {0}{1}.\": the "
                    + "translation drops {0} (\"Biljetten har gått ut{1}.\"); not loaded"
            ])
        #expect(
            languages.catalogs.map(\.about.language.rawValue) == LanguageCatalog.builtIn.map(\.about.language.rawValue))

        let bench = try EndpointBench(
            loginRequired: false,
            options: .init(
                gateHolderData: true, locale: InspectorPage.Locale(timeZone: "Europe/Berlin", languages: languages)))
        bench.hub.publish(try Self.expiredDeutschlandTicket(bench.store))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 320, height: 640)
            // A browser in Denmark: da-DK, found as Danish.
            try await browser.open(
                "http://127.0.0.1:\(port)/", width: 320, height: 640, languages: ["da-DK", "sv", "en"])
            try await browser.waitUntil(InspectorPageBrowserTests.verdictShown)
            #expect(try await browser.evaluate("document.documentElement.lang") as? String == "da")
            let reason = try await browser.evaluate(Self.reasonShown) as? String ?? ""
            #expect(reason.hasPrefix("Billetten er ikke længere gyldig: udløbet den "), "\(reason)")
            // What the agency's file does not say is the built-in Danish.
            #expect(
                try await browser.evaluate("document.getElementById('verdict-word').textContent") as? String
                    == "udløbet")
            #expect(
                try await browser.evaluate(
                    "[...document.querySelectorAll('#languages option')].some((o) => o.value === 'sv')")
                    as? Bool == false)
            let violations = try await browser.accessibilityViolations()
            #expect(violations.isEmpty, "\(violations.map(\.description).joined(separator: "\n"))")
            HeadlessChromium.keep(try await browser.screenshot(), as: "inspector-agency-da-320.png")
            try await browser.quit()
        }
    }

    @Test func aLockedLoginIsSaidInThePagesLanguageWithHowLong() async throws {
        let bench = try EndpointBench(
            loginRequired: true,
            options: .init(locale: InspectorPage.Locale(language: LanguageTag("de"), timeZone: "Europe/Berlin")),
            lockoutRules: LoginLockoutRules(failuresBeforeLock: 1, firstLock: 90))
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 320, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 320, height: 640, languages: ["en"])
            try await browser.waitUntil("document.getElementById('login').hidden === false")
            try await browser.submitLogin(staffID: "K-204", pin: "111111")
            try await browser.waitUntil("document.getElementById('login-error').textContent !== ''")
            #expect(
                try await browser.evaluate("document.getElementById('login-error').textContent") as? String
                    == "Unbekannte Personalnummer oder falsche PIN.")
            // Locked now: the server says for how long (Retry-After); the page says it in German.
            try await browser.submitLogin(staffID: "K-204", pin: "222222")
            try await browser.waitUntil("document.getElementById('login-error').textContent.startsWith('Zu viele')")
            let said = try await browser.evaluate("document.getElementById('login-error').textContent") as? String ?? ""
            #expect(
                said.hasPrefix("Zu viele fehlgeschlagene Anmeldungen; erneut versuchen in ")
                    && said.hasSuffix(" Sekunden."), "\(said)")
            try await browser.quit()
        }
    }

    @Test func aStaleSourceAMissingScannerAndAFailedSyncAreSaidInThePagesLanguage() async throws {
        let bench = try EndpointBench(
            loginRequired: false,
            options: .init(locale: InspectorPage.Locale(language: LanguageTag("de"), timeZone: "Europe/Berlin")))
        bench.status.trustSourcesChecked([
            TrustSourceHealth(
                name: "uic", kind: "uic-keylist", version: "a1b2", lastSuccess: Date(), ageSeconds: 60, stale: false),
            TrustSourceHealth(
                name: "dtvg", kind: "dtvg-blocklist", version: "41", lastSuccess: nil, ageSeconds: nil, stale: true),
        ])
        // A scanner whose node is missing (unplugged), and one never opened; the device's own words stay in /healthz.
        bench.status.addScanner(name: "front", device: "/dev/ttyACM9")
        bench.status.addScanner(name: "rear", device: "/dev/ttyACM8")
        bench.status.scanner(
            "front", connected: false, reason: "/dev/ttyACM9 does not exist; is the scanner plugged in?",
            problem: .missing)
        // A sync round that could not reach the server: its kind in German, the daemon's sentence in /healthz.
        bench.status.syncFailed(
            "Cannot get the key bundle from http://127.0.0.2:9: connection refused", problem: .unreachable)
        try await bench.run { port in
            let browser = try HeadlessChromium(width: 320, height: 640)
            try await browser.open("http://127.0.0.1:\(port)/", width: 320, height: 640, languages: ["en"])
            // Beside the trust data's age in the footer, marked stale (drawn as a warning).
            try await browser.waitUntil("document.getElementById('trust').textContent.includes('dtvg')")
            let trust = try await browser.evaluate("document.getElementById('trust').textContent") as? String ?? ""
            #expect(trust.hasSuffix(" \u{00B7} Vertrauensquelle dtvg veraltet") && !trust.contains("uic"), "\(trust)")
            #expect(try await browser.evaluate("document.getElementById('trust').dataset.stale") as? String == "true")
            // The health line names each scanner and its trouble in German.
            try await browser.waitUntil("document.getElementById('health').textContent.includes('front')")
            let health = try await browser.evaluate("document.getElementById('health').textContent") as? String ?? ""
            #expect(
                health.contains("front: nicht gefunden (ausgesteckt?); rear: noch nicht geöffnet")
                    && health.contains("Synchronisation: der Server ist nicht erreichbar (Netz?)")
                    && !health.contains("plugged in") && !health.contains("Cannot get"), "\(health)")
            try await browser.quit()
        }
    }
}
