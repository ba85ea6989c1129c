import Foundation
import TestSupport
import Testing

/// `farecheck languages`, as an agency's translator runs it, and `farecheck daemon --check` on a languages_dir.
@Suite("farecheck languages")
struct LanguagesCLITests {
    @Test("template, translate, check: refused until about is filled, then loaded with what it lacks listed")
    func translatorsRound() throws {
        let bench = Workbench()
        let template = try bench.farecheck(["languages", "template", "hr"])
        #expect(template.status == 0)
        let file = bench.path("hr.json")
        try template.text.write(toFile: file, atomically: true, encoding: .utf8)
        // As written, the template says nothing of the language's name or its translator.
        let refused = try bench.farecheck(["languages", "check", file])
        #expect(refused.status == 1)
        #expect(
            refused.text.contains("refused") && refused.text.contains("\"name\" is missing or empty"), "\(refused.text)"
        )

        // The translator fills in about and one verdict, and leaves a {0} out of one sentence.
        var text = template.text
            .replacingOccurrences(of: "\"name\" : \"\"", with: "\"name\" : \"Hrvatski\"")
            .replacingOccurrences(of: "\"madeBy\" : \"\"", with: "\"madeBy\" : \"HŽPP\"")
            .replacingOccurrences(of: "\"expired\" : \"expired\"", with: "\"expired\" : \"istekla\"")
        let broken = text.replacingOccurrences(
            of: "\"The ticket expired on {0}{1}.\" : \"The ticket expired on {0}{1}.\"",
            with: "\"The ticket expired on {0}{1}.\" : \"Karta je istekla.\"")
        try broken.write(toFile: file, atomically: true, encoding: .utf8)
        let placeless = try bench.farecheck(["languages", "check", file])
        #expect(placeless.status == 1)
        #expect(
            placeless.text.contains("sentences → \"The ticket expired on {0}{1}.\": the translation drops {0}, {1}"),
            "\(placeless.text)")

        // Every other entry still English: loaded, the page saying them in English. Fully translated entries
        // count; a draft left as the English counts as translated too (the check cannot tell a word kept).
        text = text.replacingOccurrences(of: "\"valid\" : \"valid\",", with: "")
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let loaded = try bench.farecheck(["languages", "check", file])
        #expect(loaded.status == 0, "\(loaded.text)")
        #expect(loaded.text.contains("Hrvatski (hr):") && loaded.text.contains("the daemon loads it"), "\(loaded.text)")
        #expect(loaded.text.contains("made by HŽPP"))
        #expect(loaded.text.contains("missing (said in English): verdicts → \"valid\""), "\(loaded.text)")

        #expect(try bench.farecheck(["languages", "template", "croatian"]).status != 0)
        let list = try bench.farecheck(["languages", "list"])
        #expect(list.text.split(separator: "\n").count == 9 && list.text.contains("sl\tSlovenščina\tSlovenian"))
    }

    @Test("daemon --check names every language the page will speak, and a catalog it would not load")
    func daemonCheck() throws {
        let bench = Workbench()
        let directory = bench.path("languages")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try #"{"about": {"language": "hr", "name": "Hrvatski", "madeBy": "HŽPP"}, "verdicts": {"expired": "istekla"}}"#
            .write(toFile: directory + "/hr.json", atomically: true, encoding: .utf8)
        try #"{"about": {"language": "sv", "name": "Svenska", "madeBy": "x"}, "verdicts": {"expird": "utgått"}}"#
            .write(toFile: directory + "/sv.json", atomically: true, encoding: .utf8)
        let config = bench.path("farecheck.toml")
        try """
        store = "\(bench.db)"
        [[source]]
        name = "bench"
        images = "\(bench.directory)"
        [http]
        listen = "127.0.0.1:0"
        languages_dir = "\(directory)"
        language = "hr"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let run = try bench.farecheck(["daemon", "--check", "--config", config])
        #expect(run.status != 0, "a refused catalog is a problem for --check")
        #expect(
            run.stderr.contains(
                "language catalog \(directory)/sv.json: verdicts → \"expird\" is not a template of this version; not loaded"
            ),
            "\(run.stderr)")
        #expect(run.stderr.contains("\(directory)/hr.json: hr loaded;"), "\(run.stderr)")
        #expect(run.stderr.contains("the inspector page speaks en (English), de (Deutsch)"), "\(run.stderr)")
        #expect(run.stderr.contains("sl (Slovenščina), hr (Hrvatski)"), "\(run.stderr)")
    }
}
