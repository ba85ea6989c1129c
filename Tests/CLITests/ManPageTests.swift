import Foundation
import TestSupport
import Testing

/// The man pages the package installs, made as scripts/build-deb.sh makes them: farecheck(1) and
/// farecheck-server(1) from the programs' own help, farecheck.toml(5) from Config/farecheck.toml (issue 52).
@Suite("man pages")
struct ManPageTests {
    /// Runs a script of scripts/ with python3; the troff it wrote, from `out`.
    func make(_ script: String, _ arguments: [String], page: String) throws -> String {
        let bench = Workbench()
        let run = try bench.run(
            "/usr/bin/env", ["python3", repositoryRoot + "/scripts/" + script] + arguments + [bench.directory, "test"])
        try #require(run.status == 0, "\(script) failed: \(run.stderr)")
        return try String(contentsOfFile: bench.path(page), encoding: .utf8)
    }

    /// The entries of a section: the tags of its `.TP` paragraphs, up to the next `.SH`.
    func entries(_ page: String, section: String) -> [String] {
        guard let start = page.range(of: ".SH \(section)\n") else { return [] }
        let rest = page[start.upperBound...]
        let body = rest.range(of: "\n.SH ").map { rest[..<$0.lowerBound] } ?? rest
        let lines = body.components(separatedBy: "\n")
        return lines.indices.filter { lines[$0] == ".TP" && $0 + 1 < lines.count }.map {
            lines[$0 + 1].replacingOccurrences(of: "\\fB", with: "").replacingOccurrences(of: "\\fR", with: "")
        }
    }

    @Test(
        "both programs' pages have EXIT STATUS (0, 1, 2, 64), ENVIRONMENT, FILES and SEE ALSO",
        arguments: [
            "farecheck", "farecheck-server",
        ])
    func sections(program: String) throws {
        let binary = (Workbench.farecheck as NSString).deletingLastPathComponent + "/" + program
        let page = try make("make-man.py", [binary], page: program + ".1")
        #expect(entries(page, section: "EXIT STATUS") == ["0", "1", "2", "64"])
        let environment = entries(page, section: "ENVIRONMENT")
        #expect(environment.contains(program == "farecheck" ? "FARECHECK_DB" : "FARECHECK_SERVER_DB"), "\(environment)")
        #expect(!entries(page, section: "FILES").isEmpty)
        #expect(page.contains(".SH SEE ALSO\n"))
        #expect(page.contains("\\fBfarecheck.toml\\fR(5)"))
        // The table is the one --help prints, not a second copy that could drift.
        let help = try Workbench().run(binary, ["--help"])
        #expect(help.text.contains("64  usage error"), "\(help.text)")
        // The labelled paragraphs left the description.
        let description = page.components(separatedBy: ".SH DESCRIPTION\n").last?.components(separatedBy: "\n.SH ")
            .first
        #expect(description?.contains("Exit status:") == false)
    }

    @Test("farecheck.toml(5) documents every table and key of Config/farecheck.toml, with its value")
    func configurationPage() throws {
        let configuration = repositoryRoot + "/Config/farecheck.toml"
        let page = try make("make-config-man.py", [configuration], page: "farecheck.toml.5")
        let text = try String(contentsOfFile: configuration, encoding: .utf8)
        // Every key line of the file, set or shown commented out (`# key = value`).
        let keyLine = try Regex(#"^(?:#\s*)?([a-z_]+)\s*=\s*\S"#)
        let keys = text.components(separatedBy: "\n").compactMap { line in
            line.firstMatch(of: keyLine).map { String(line[$0.range]).replacingOccurrences(of: "#", with: "") }
        }.map { $0.components(separatedBy: "=")[0].trimmingCharacters(in: .whitespaces) }
        let entries = entries(page, section: "KEYS")
        #expect(entries.count == keys.count, "\(entries.count) entries for \(keys.count) keys")
        #expect(entries.map { $0.components(separatedBy: " = ")[0] } == keys)
        #expect(entries.contains("trigger_mode = \"presentation\" (default)"))
        #expect(entries.contains("url = \"https://validation.example.org\" (example)"))
        for table in ["[verification]", "[[scanner]]", "[[camera]] (none by default)", "[sync] (none by default)"] {
            #expect(page.contains(".SS \(table)\n"), "no subsection \(table)")
        }
    }
}
