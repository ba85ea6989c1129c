import FareCore
import Foundation
import Presentation
import Testing

@testable import ValidationServer

/// The operator report in the inspector page's languages: the same catalogs (their `report` section), chosen by
/// the operator, the server or the browser.
@Suite("The operator report's languages")
struct OperatorReportLanguageTests {
    /// The report of the bench's day with a first use withdrawn and a publisher never reached, so that every
    /// section and every word of the report is on the page.
    static func fullPage(_ page: OperatorReportPage) -> String {
        var report = ReportFleet.expectedDay
        report.withdrawals = [
            .init(
                device: "gate-3", format: "fc1", issuer: "demo-transit", ticketID: "0a01",
                withdrawnAt: ReportFleet.date("2026-03-14T10:11:12Z"), reason: "device gate-3 revoked")
        ]
        let trust = [TrustSourceRow(name: "rsp6", state: nil, age: nil, limit: .seconds(86_400), stale: true)]
        return page.report(report, operatorName: "alex@agency", devices: ["tram-7", "bus-12"], trust: trust)
            + page.login(message: page.words.text("lockedToken", "5 min 00 s"))
            + page.problem(page.words.text("databaseFailed"))
    }

    /// The words of `text` between its places (`{0}`), as they stand in the page.
    static func literalParts(_ text: String) -> [String] {
        text.split(separator: /\{[0-9]+\}/).map { OperatorReportPage.escape($0.trimmingCharacters(in: .whitespaces)) }
    }

    @Test(
        "each built-in language has every entry of the report, and its report says none of the English sentences",
        arguments: LanguageCatalog.builtIn.dropFirst())
    func everyLanguage(catalog: LanguageCatalog) throws {
        let english = try #require(LanguageCatalog.english.sections[ReportWords.section])
        let own = catalog.sections[ReportWords.section] ?? [:]
        #expect(Set(own.keys) == Set(english.keys), "missing: \(Set(english.keys).subtracting(own.keys).sorted())")

        let page = Self.fullPage(OperatorReportPage(words: ReportWords(catalog: catalog)))
        let tag = catalog.about.language.rawValue
        #expect(page.contains("<html lang=\"\(tag)\">"))
        var leftInEnglish: [String] = []
        for (key, text) in english where own[key] != text {
            // A part short enough to be a word the language shares (CSV, Median, Format) says nothing.
            for part in Self.literalParts(text) where part.count >= 12 && page.contains(part) {
                leftInEnglish.append("\(key): \(part)")
            }
        }
        #expect(leftInEnglish.isEmpty, "\(tag): \(leftInEnglish)")
        // Who decided, in the language's words, in the summary, the plot and its legend.
        let unstated = try #require(own["sideUnstated"])
        #expect(page.contains(OperatorReportPage.escape(unstated)) && !page.contains("not stated"), "\(tag)")
        // The verdicts are the page's own words for them; the shares are written with the language's decimals.
        let revoked = try #require(catalog.sections["verdicts"]?["revoked"])
        #expect(page.contains("<tr><th scope=\"row\">\(OperatorReportPage.escape(revoked))</th><td>1</td></tr>"))
        let decimal = Locale(identifier: (catalog.about.locale ?? catalog.about.language).rawValue).decimalSeparator
        #expect(page.contains("66\(decimal ?? ".")7 %"))
        // The language switch names each language in its own words, marked as in that language.
        #expect(page.contains("<option value=\"\(tag)\" lang=\"\(tag)\" selected>\(catalog.about.name)</option>"))
        #expect(page.contains("<option value=\"en\" lang=\"en\">English</option>"))
    }

    @Test("English says the report as before, with the verdicts as the inspector page names them")
    func english() {
        let page = Self.fullPage(OperatorReportPage())
        #expect(page.contains("<html lang=\"en\">"))
        #expect(page.contains("2026-03-14 (UTC), all devices: <strong id=\"total\">9</strong> inspections."))
        #expect(page.contains("<tr><th scope=\"row\">invalid signature</th><td>1</td></tr>"))
        #expect(page.contains("<td class=\"stale\"><strong>stale:</strong> never (1 d 0 h)</td>"))
        #expect(page.contains("Too many wrong tries of this token: try again in 5 min 00 s."))
        #expect(page.contains("66.7 %"))
    }

    @Test("a sentence of the API stays English on a translated page, and says so")
    func englishProblem() {
        let german = OperatorReportPage(words: ReportWords(catalog: LanguageCatalog.builtIn[1]))
        #expect(german.problem(english: "day is a date").contains("<span lang=\"en\">day is a date</span>"))
        #expect(!OperatorReportPage().problem(english: "day is a date").contains("<span lang"))
    }

    @Test("Accept-Language is read in its order of preference; refused and unknown languages are left out")
    func acceptLanguage() {
        #expect(
            ReportLanguages.preferences("da-DK, da;q=0.9, en;q=0.8").map(\.rawValue) == ["da-DK", "da", "en"])
        #expect(ReportLanguages.preferences("en;q=0.2, fr;q=0, *;q=0.1, pl").map(\.rawValue) == ["pl", "en"])
        #expect(ReportLanguages.preferences("").isEmpty && ReportLanguages.preferences(";;,q=1").isEmpty)

        let languages = ReportLanguages()
        // The browser's first language the report speaks; a region falls back to its language.
        #expect(languages.words(chosen: nil, acceptLanguage: "sv-SE, de-AT;q=0.8, fr;q=0.5").language.rawValue == "de")
        #expect(languages.words(chosen: nil, acceptLanguage: "sv").language.rawValue == "en")
        // The operator's choice over the browser's; a choice the report cannot speak is no choice.
        #expect(languages.words(chosen: "cs", acceptLanguage: "de").language.rawValue == "cs")
        #expect(languages.words(chosen: "xx-<b>", acceptLanguage: "nl").language.rawValue == "nl")
        // The server's language over the browser's, the operator's over both.
        let danish = ReportLanguages(preferred: LanguageTag("da"))
        #expect(danish.words(chosen: nil, acceptLanguage: "de").language.rawValue == "da")
        #expect(danish.words(chosen: "it", acceptLanguage: "de").language.rawValue == "it")
    }

    @Test(
        "farecheck-server serve: the browser's language, the operator's choice kept, an agency's catalog laid over"
    )
    func served() async throws {
        let bench = try ServerBench(.sqlite)
        let languages = bench.path("languages")
        try FileManager.default.createDirectory(atPath: languages, withIntermediateDirectories: true)
        // The agency's Danish: one entry of its own over the built-in catalog.
        try Data(
            #"{"about": {"language": "da", "name": "Dansk", "madeBy": "Agency"}, "report": {"heading": "Rapport for kontrollører"}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: languages + "/da.json"))
        // A Swedish file whose sentence lost the operator's name.
        try Data(
            #"{"about": {"language": "sv", "name": "Svenska", "madeBy": "Agency"}, "report": {"loggedInAs": "Inloggad"}}"#
                .utf8
        ).write(to: URL(fileURLWithPath: languages + "/sv.json"))
        let server = try bench.startServer(extra: ["--languages-dir", languages])
        defer { server.stop() }
        let page = "\(server.baseURL)/report"

        // Logged out, the login form is in the browser's first language the report speaks.
        let french = try await send(.GET, page, headers: [("Accept-Language", "sv-SE, fr-CH;q=0.9, en;q=0.5")])
        #expect(
            french.text.contains("<html lang=\"fr\">") && french.text.contains("<h1>Rapport d&#39;exploitation</h1>"))
        #expect(french.header("Set-Cookie") == nil)
        // An operator's choice wins over the browser's and is kept.
        let danish = try await send(.GET, page + "?lang=da", headers: [("Accept-Language", "fr")])
        #expect(danish.text.contains("<h1>Rapport for kontrollører</h1>") && danish.text.contains(">Log ind</button>"))
        let cookie = try #require(danish.header("Set-Cookie"))
        #expect(cookie.hasPrefix("farecheck_report_lang=da;") && cookie.contains("HttpOnly"), "\(cookie)")
        // A cookie that names no language the report speaks (or no tag at all) is no choice.
        for junk in ["xx", "<script>", String(repeating: "d", count: 4000)] {
            let answer = try await send(
                .GET, page, headers: [("Cookie", "farecheck_report_lang=\(junk)"), ("Accept-Language", "it")])
            #expect(answer.status == 200 && answer.text.contains("<html lang=\"it\">"), "\(junk.prefix(10))")
        }
        let kept = [("Cookie", "farecheck_report_lang=da"), ("Accept-Language", "fr")]
        #expect(try await send(.GET, page, headers: kept).text.contains("<html lang=\"da\">"))
        // A wrong token is refused in that language.
        let refused = try await send(
            .POST, "\(server.baseURL)/report/login", body: Array("token=wrong".utf8), headers: kept)
        #expect(refused.status == 401 && refused.text.contains("Ukendt eller tilbagekaldt operatørnøgle."))
        // The broken Swedish is named once, with the entry at fault, and the report does not speak it.
        #expect(server.log.contains("sv.json: report → \"loggedInAs\": the translation drops {0}"), "\(server.log)")
        let swedish = try await send(.GET, page + "?lang=sv", headers: [("Accept-Language", "sv, de;q=0.5")])
        #expect(swedish.text.contains("<html lang=\"de\">") && swedish.header("Set-Cookie") == nil)
        server.stop()

        // The server's language for an operator who chose none, over the browser's.
        let preferring = try bench.startServer(extra: ["--languages-dir", languages, "--report-language", "da"])
        defer { preferring.stop() }
        let preferred = try await send(.GET, "\(preferring.baseURL)/report", headers: [("Accept-Language", "de")])
        #expect(preferred.text.contains("<h1>Rapport for kontrollører</h1>"))
        preferring.stop()
        // One the report does not speak stops the server before it listens.
        do {
            _ = try bench.startServer(extra: ["--languages-dir", languages, "--report-language", "sv"])
            Issue.record("the server started with --report-language sv")
        } catch {
            #expect("\(error)".contains("--report-language sv: expected a language the report speaks (en, de, "))
        }
    }
}
