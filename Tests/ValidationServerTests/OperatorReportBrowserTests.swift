import Foundation
import Presentation
import TestSupport
import Testing

@testable import ValidationServer

/// The operator report in a real browser (headless Chromium), as an operator uses it: log in, pick a day and a
/// device, read the plots, on a desk screen and on a phone.
@Suite(
    .timeLimit(.minutes(5)),
    .disabled(
        if: ProcessInfo.processInfo.environment["FARECHECK_SKIP_BROWSER"] == "1",
        "FARECHECK_SKIP_BROWSER=1: the headless Chromium tests of the operator report were skipped"))
struct OperatorReportBrowserTests {
    /// Types the token into the login form and sends it, as an operator does, then waits for the report.
    static func logIn(_ browser: HeadlessChromium, token: String) async throws {
        try await waitUntil(browser, "document.getElementById('login-form') !== null")
        let quoted = String(decoding: try JSONSerialization.data(withJSONObject: [token]), as: UTF8.self)
        // The form's submission navigates away, and the browser may say so instead of answering: the wait below is
        // what tells whether it worked.
        _ = try? await browser.evaluate(
            """
            (() => {
              const form = document.getElementById('login-form');
              form.token.value = \(quoted)[0];
              form.requestSubmit();
              return true;
            })()
            """)
        do {
            try await waitUntil(browser, "document.getElementById('operator') !== null")
        } catch {
            throw LoopbackError(description: "\(error); the page: \(try await browser.dom())")
        }
    }

    /// Sets the filter form's day and device and sends it, as an operator does, then waits for the new page (the old
    /// one carries a mark the new one does not).
    static func filter(_ browser: HeadlessChromium, day: String, device: String, tz: String = "UTC") async throws {
        let values = String(decoding: try JSONSerialization.data(withJSONObject: [day, device, tz]), as: UTF8.self)
        _ = try? await browser.evaluate(
            """
            (() => {
              const [day, device, tz] = \(values);
              window.farecheckOldPage = true;
              const form = document.querySelector('form.filter');
              form.day.value = day;
              form.device.value = device;
              form.tz.value = tz;
              form.requestSubmit();
              return true;
            })()
            """)
        try await waitUntil(
            browser,
            "window.farecheckOldPage === undefined && document.readyState === 'complete'"
                + " && document.querySelector('form.filter') !== null")
    }

    /// Waits until `condition` is true in the page, as `HeadlessChromium.waitUntil` does, but asks again when the
    /// browser answers that the page is navigating (a form was just sent) instead of failing at once.
    static func waitUntil(_ browser: HeadlessChromium, _ condition: String) async throws {
        var lastError: (any Error)?
        for _ in 0..<200 {
            do {
                if try await browser.evaluate(condition) as? Bool == true { return }
            } catch {
                lastError = error
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw LoopbackError(
            description: "the page never got to: \(condition) (\(lastError.map { "\($0)" } ?? "no error"))")
    }

    static func count(_ browser: HeadlessChromium, _ selector: String) async throws -> Int {
        try await browser.evaluate("document.querySelectorAll(\(quoted(selector))).length") as? Int ?? -1
    }

    static func text(_ browser: HeadlessChromium, _ selector: String) async throws -> String {
        try await browser.evaluate("(document.querySelector(\(quoted(selector))) || {}).textContent || ''") as? String
            ?? ""
    }

    static func quoted(_ text: String) -> String {
        String(
            String(decoding: try! JSONSerialization.data(withJSONObject: [text]), as: UTF8.self).dropFirst().dropLast())
    }

    @Test(
        "at 1280 px: log in through the form, the day's plots show its bars and labels, the device filter changes them",
        arguments: Backend.available)
    func desk(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        let browser = try HeadlessChromium(width: 1280, height: 2200)
        try await browser.open("\(fleet.baseURL)/report", width: 1280, height: 2200)
        try await Self.logIn(browser, token: fleet.operatorToken)
        // The session cookie is HttpOnly: the page cannot read it (and runs no script of its own anyway).
        #expect(try await browser.evaluate("document.cookie") as? String == "")
        #expect(try await Self.text(browser, "#operator") == "alex@agency")

        try await Self.filter(browser, day: "2026-03-14", device: "")
        #expect(try await Self.text(browser, "#total") == "9")
        // One bar per hour with inspections (07, 08, 09, 10, 12, 23), and the hours labelled every three.
        #expect(try await Self.count(browser, "#hours-plot rect.bar") == 6)
        #expect(
            try await browser.evaluate(
                "[...document.querySelectorAll('#hours-plot rect.bar')].map(r => r.dataset.hour).join(',')") as? String
                == "7,8,9,10,12,23")
        #expect(
            try await browser.evaluate(
                "[...document.querySelectorAll('#hours-plot text.tick')].map(t => t.textContent).join(' ')") as? String
                == "00 03 06 09 12 15 18 21 3 0")
        // The busiest hour's bar is the tallest, drawn to the top of the plot.
        #expect(
            try await browser.evaluate(
                """
                (() => { const bars = [...document.querySelectorAll('#hours-plot rect.bar')];
                  const h = bars.map(b => b.getBBox().height); return h[0] === Math.max(...h) && h[0] > 3 * h[2]; })()
                """) as? Bool == true)
        #expect(try await Self.count(browser, "#devices-plot rect.bar") == 3)
        #expect(
            try await browser.evaluate(
                "[...document.querySelectorAll('#devices-plot text.label')].map(t => t.textContent).join('|')")
                as? String == "=cmd<b>\"x\"&|bus-12|tram-7")
        #expect(try await Self.count(browser, "#verdicts-plot rect.bar") == 4)
        #expect(try await Self.count(browser, "#decided-plot rect") == 3)
        #expect(try await Self.count(browser, "#lag-plot rect.bar") == 3)
        // Every plot is an image with a name for screen readers, and its figures are in a table too.
        #expect(try await Self.count(browser, "svg[role=img][aria-label]") == 5)
        #expect(try await Self.text(browser, "#lag table tbody tr:last-child").contains("5 min 00 s"))
        // The hostile device id is shown as the text it is, never run as markup.
        #expect(try await Self.count(browser, "main b") == 0)
        // axe-core's WCAG 2 A and AA rules (contrast, names, structure) find nothing on the report.
        let violations = try await browser.accessibilityViolations()
        #expect(violations.isEmpty, "\(violations.map(\.description).joined(separator: "\n"))")
        HeadlessChromium.keep(try await browser.screenshot(), as: "report-1280.png")

        try await Self.filter(browser, day: "2026-03-14", device: "tram-7")
        #expect(try await Self.text(browser, "#total") == "5")
        #expect(try await Self.count(browser, "#hours-plot rect.bar") == 2)
        #expect(try await Self.count(browser, "#devices-plot rect.bar") == 1)
        #expect(try await Self.text(browser, "#scope").contains("device tram-7"))
        #expect(
            try await browser.evaluate("document.getElementById('csv').getAttribute('href')") as? String
                == "/report.csv?day=2026-03-14&device=tram-7")

        // Another time zone: the day and its hours move, and so do the bars and the links.
        try await Self.filter(browser, day: "2026-03-14", device: "", tz: "+02:00")
        #expect(try await Self.text(browser, "#total") == "9")
        #expect(
            try await browser.evaluate(
                "[...document.querySelectorAll('#hours-plot rect.bar')].map(r => r.dataset.hour).join(',')") as? String
                == "1,9,10,11,12,14")
        #expect(try await Self.text(browser, "#hours-title") == "Inspections per hour (UTC+02:00)")
        #expect(
            try await browser.evaluate("document.getElementById('json').getAttribute('href')") as? String
                == "/report.json?day=2026-03-14&tz=%2B02%3A00")

        try await Self.filter(browser, day: "2026-03-16", device: "")
        #expect(try await Self.text(browser, "#empty") == "No inspections on this day.")
        #expect(try await Self.count(browser, "svg.plot") == 0)
        try await browser.quit()
        await fleet.stop()
    }

    @Test(
        "at 320 px: the report fits the width (no sideways scrolling) and keeps its plots", arguments: Backend.available
    )
    func phone(backend: Backend) async throws {
        let fleet = try await ReportFleet(backend)
        let browser = try HeadlessChromium(width: 320, height: 640)
        try await browser.open("\(fleet.baseURL)/report", width: 320, height: 640)
        try await Self.waitUntil(browser, "document.getElementById('login-form') !== null")
        let loginWidth = try await browser.evaluate("document.documentElement.scrollWidth") as? Int
        #expect(loginWidth.map { $0 <= 320 } == true, "the login page is \(loginWidth ?? -1) px wide")
        try await Self.logIn(browser, token: fleet.operatorToken)
        try await Self.filter(browser, day: "2026-03-14", device: "")
        #expect(try await Self.count(browser, "#hours-plot rect.bar") == 6)
        let pageWidth = try await browser.evaluate("document.documentElement.scrollWidth") as? Int
        #expect(pageWidth.map { $0 <= 320 } == true, "the page is \(pageWidth ?? -1) px wide")
        // The plots shrink with the page: none is wider than the screen.
        #expect(
            try await browser.evaluate(
                "[...document.querySelectorAll('svg.plot')].every(s => s.getBoundingClientRect().right <= window.innerWidth)"
            ) as? Bool == true)
        let violations = try await browser.accessibilityViolations()
        #expect(violations.isEmpty, "at 320 px: \(violations.map(\.description).joined(separator: "\n"))")
        HeadlessChromium.keep(try await browser.screenshot(), as: "report-320.png")
        try await browser.quit()
        await fleet.stop()
    }

    @Test("in each of the nine languages at 1280 and 320 px: its words, no sideways scrolling, axe-core clean")
    func languages() async throws {
        let fleet = try await ReportFleet(.sqlite)
        for (width, height) in [(1280, 1800), (320, 640)] {
            let browser = try HeadlessChromium(width: width, height: height)
            try await browser.open("\(fleet.baseURL)/report", width: width, height: height)
            try await Self.logIn(browser, token: fleet.operatorToken)
            for catalog in LanguageCatalog.builtIn {
                let tag = catalog.about.language.rawValue
                _ = try? await browser.evaluate(
                    "window.farecheckOldPage = true; location.href = '/report?day=2026-03-14&lang=\(tag)'; true")
                try await Self.waitUntil(
                    browser,
                    "window.farecheckOldPage === undefined && document.readyState === 'complete'"
                        + " && document.documentElement.lang === '\(tag)'")
                let heading = try #require(catalog.sections["report"]?["heading"])
                #expect(try await Self.text(browser, "h1") == heading, "\(tag)")
                #expect(try await Self.count(browser, "svg[role=img][aria-label]") == 5, "\(tag)")
                let pageWidth = try await browser.evaluate("document.documentElement.scrollWidth") as? Int
                #expect(pageWidth.map { $0 <= width } == true, "\(tag) at \(width) px is \(pageWidth ?? -1) px wide")
                let violations = try await browser.accessibilityViolations()
                #expect(violations.isEmpty, "\(tag) at \(width) px: \(violations.map(\.description))")
                HeadlessChromium.keep(try await browser.screenshot(), as: "report-\(tag)-\(width).png")
            }
            if width == 1280 {
                // The switch in the filter: Deutsch, shown; the report stays German without asking again.
                _ = try? await browser.evaluate(
                    """
                    (() => { window.farecheckOldPage = true; const form = document.querySelector('form.filter');
                      form.lang.value = 'de'; form.requestSubmit(); return true; })()
                    """)
                try await Self.waitUntil(
                    browser, "window.farecheckOldPage === undefined && document.documentElement.lang === 'de'")
                _ = try? await browser.evaluate("window.farecheckOldPage = true; location.href = '/report'; true")
                try await Self.waitUntil(
                    browser, "window.farecheckOldPage === undefined && document.readyState === 'complete'")
                #expect(try await Self.text(browser, "h1") == "Betreiberbericht")
            }
            try await browser.quit()
        }
        await fleet.stop()
    }
}
