import FareCore
import Foundation
import Presentation
import Scanners
import Sync
import TestSupport
import Testing

/// An agency's catalog, checked as the daemon checks it before the page uses it: what refuses it (naming the
/// entry), what it may lack (said in English), and how it lays over a built-in language.
@Suite("the page's language catalogs")
struct LanguageCatalogTests {
    /// A catalog file's text: `about` for `language`, and `sections` as given.
    static func catalog(_ language: String, name: String = "Test", _ sections: [String: [String: String]]) -> [UInt8] {
        var object: [String: [String: String]] = sections
        object["about"] = ["language": language, "name": name, "madeBy": "a test"]
        return Array(try! JSONSerialization.data(withJSONObject: object))
    }

    @Test("language tags: plausible ones in their usual case; a name, an underscore or a bare letter refused")
    func tags() {
        #expect(LanguageTag("DE-at")?.rawValue == "de-AT")
        #expect(LanguageTag("sr-latn-rs")?.rawValue == "sr-Latn-RS")
        #expect(LanguageTag("es-419")?.rawValue == "es-419")
        #expect(LanguageTag("de-AT")?.languageOnly == LanguageTag("de"))
        for bad in ["", "x", "english", "de_AT", "de-", "de-AT-x-y", "d1", "de-AT-FR"] {
            #expect(LanguageTag(bad) == nil, "\(bad)")
        }
    }

    @Test("the nine built-in catalogs check clean against the English, each saying who made it")
    func builtInCatalogs() {
        #expect(
            LanguageCatalog.builtIn.map(\.about.language.rawValue) == [
                "en", "de", "fr", "nl", "da", "it", "pl", "cs", "sl",
            ])
        for catalog in LanguageCatalog.builtIn {
            let check = catalog.check(against: .english)
            #expect(
                check.isUsable && check.missing.isEmpty && check.translated == check.total, "\(catalog.about.language)")
            #expect(!catalog.about.madeBy.isEmpty && !catalog.about.name.isEmpty)
        }
        #expect(LanguageCatalog.english.check(against: .english).total > 300)
        // Every kind of scanner trouble the page may be told has its words (the others are checked against these).
        let problems = LanguageCatalog.english.sections["scannerProblems"] ?? [:]
        #expect(Set(problems.keys) == Set(ScannerProblem.allCases.map(\.rawValue)))
        // And every kind of sync failure.
        let syncProblems = LanguageCatalog.english.sections["syncProblems"] ?? [:]
        #expect(Set(syncProblems.keys) == Set(SyncFailure.codes.map(\.name)))
    }

    @Test("a translation that drops or invents a value's place is refused, naming the template")
    func placesRefused() throws {
        let template = "The ticket expired on {0}{1}."
        let dropped = try LanguageCatalog(json: Self.catalog("hr", ["sentences": [template: "Karta je istekla{1}."]]))
        let check = dropped.check(against: .english)
        #expect(!check.isUsable)
        #expect(check.problems == ["sentences → \"\(template)\": the translation drops {0} (\"Karta je istekla{1}.\")"])
        let invented = try LanguageCatalog(json: Self.catalog("hr", ["text": ["passengers": "{0} putnika, {1}"]]))
        #expect(
            invented.check(against: .english).problems == [
                "text → \"passengers\": the translation invents {1} (\"{0} putnika, {1}\")"
            ])
    }

    @Test("an entry or a section this version does not know refuses the catalog; a missing entry is only listed")
    func unknownAndMissing() throws {
        let typo = try LanguageCatalog(
            json: Self.catalog("hr", ["verdicts": ["expried": "istekla"], "extra": ["a": "b"]]))
        #expect(
            typo.check(against: .english).problems == [
                "section \"extra\" is not one of this version's",
                "verdicts → \"expried\" is not a template of this version",
            ])
        let partial = try LanguageCatalog(json: Self.catalog("hr", ["verdicts": ["expired": "istekla"]]))
        let check = partial.check(against: .english)
        #expect(check.isUsable && check.translated == 1 && check.missing.count == check.total - 1)
        #expect(check.missing.contains { $0.section == "verdicts" && $0.key == "valid" })
    }

    @Test(
        "what does not read as a catalog is refused with what is wrong",
        arguments: [
            ("not json", "not JSON"),
            ("[1]", "not a JSON object of sections"),
            (#"{"text": {"a": 1}, "about": {}}"#, "\"text\" → \"a\" is not a string"),
            (#"{"text": {}}"#, "no \"about\" section"),
            (#"{"about": {"language": "croatian", "name": "Hrvatski", "madeBy": "x"}}"#, "must be a language tag"),
            (#"{"about": {"language": "hr", "name": " ", "madeBy": "x"}}"#, "\"about\" → \"name\" is missing or empty"),
            (
                #"{"about": {"language": "hr", "name": "Hrvatski", "madeBy": "x", "author": "y"}}"#,
                "\"about\" → \"author\" is not known"
            ),
        ])
    func unreadable(_ text: String, _ said: String) {
        do {
            _ = try LanguageCatalog(json: Array(text.utf8))
            Issue.record("read: \(text)")
        } catch {
            #expect(error.message.contains(said), "\(error.message)")
        }
    }

    @Test(
        "a directory's catalogs: a new language added, a built-in one and a regional one laid over theirs, a bad one refused"
    )
    func directory() throws {
        let bench = Workbench()
        let write = { (name: String, bytes: [UInt8]) in
            try Data(bytes).write(to: URL(fileURLWithPath: bench.path(name)))
        }
        try write("hr.json", Self.catalog("hr", name: "Hrvatski", ["verdicts": ["expired": "istekla"]]))
        try write("da.json", Self.catalog("da", name: "Dansk", ["verdicts": ["expired": "ikke gyldig længere"]]))
        try write("de-AT.json", Self.catalog("de-at", name: "Deutsch (Österreich)", ["text": ["ticket": "Fahrschein"]]))
        try write("sv.json", Self.catalog("no", ["verdicts": ["expired": "utløpt"]]))
        try write("notes.txt", Array("not a catalog".utf8))
        let languages = PageLanguages.load(directory: bench.directory)
        let tags = languages.catalogs.map(\.about.language.rawValue)
        #expect(tags == ["en", "de", "fr", "nl", "da", "it", "pl", "cs", "sl", "de-AT", "hr"])
        let danish = try #require(languages.catalogs.first { $0.about.language.rawValue == "da" })
        #expect(danish.sections["verdicts"]?["expired"] == "ikke gyldig længere")
        #expect(danish.sections["verdicts"]?["valid"] == LanguageCatalog.builtIn[4].sections["verdicts"]?["valid"])
        let austrian = try #require(languages.catalogs.first { $0.about.language.rawValue == "de-AT" })
        #expect(
            austrian.sections["text"]?["ticket"] == "Fahrschein"
                && austrian.sections["verdicts"]?["expired"] == "abgelaufen")
        #expect(languages.speaks(LanguageTag("hr-HR")!) && !languages.speaks(LanguageTag("sv")!))
        let said = languages.findings.map(\.description)
        #expect(said.count == 2, "\(said)")
        #expect(said.contains { $0.contains("hr.json") && $0.contains("hr loaded;") && $0.contains("said in English") })
        #expect(said.contains { $0.contains("sv.json") && $0.contains("says it is \"no\" but is named sv.json") })
        // The page gets them in that order, one JSON object.
        let json = try JSONSerialization.jsonObject(with: Data(languages.json.utf8)) as? [String: Any]
        #expect(json?.count == 11)
        #expect(languages.json.hasPrefix("{\"en\": "))

        // A directory configured by name and absent is said; the default's absence is not.
        #expect(PageLanguages.load(directory: bench.path("none"), required: true).findings.count == 1)
        #expect(PageLanguages.load(directory: bench.path("none")).findings.isEmpty)
    }
}
