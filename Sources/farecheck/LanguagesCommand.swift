import ArgumentParser
import FareCore
import Foundation
import Presentation

/// `farecheck languages`: for an agency's translator, the inspector page's catalog to start from, and the check the
/// daemon runs on a catalog before it loads it.
struct LanguagesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "languages",
        abstract: "Write a catalog to translate the inspector page from, and check a translated one.",
        discussion: """
            The page speaks the built-in languages and every LANG.json in [http] languages_dir (default \
            /etc/farecheck/languages), read at the daemon's start. See docs/inspector-page.md, "Translating the page".
            """,
        subcommands: [Template.self, Check.self, List.self]
    )

    /// `languages template`.
    struct Template: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "template",
            abstract:
                "Print every entry of the page with its English as a draft: farecheck languages template da > da.json",
            discussion: """
                Translate each value, never a key; keep every {0}, {1}, … of a value (each is a date, a name or a \
                number the page puts in). Fill in "about": the language's own name (as the language switch lists \
                it) and who made the translation. A catalog for a built-in language may hold only the entries it \
                changes.
                """)

        @Argument(help: "The language's tag (da, de-AT, …), which is also the file's name.") var language: String

        func validate() throws {
            guard LanguageTag(language) != nil else {
                throw ValidationError("\"\(language)\" is not a language tag such as da or de-AT")
            }
        }

        func run() throws {
            printLine(LanguageCatalog.english.template(for: LanguageTag(language)!))
        }
    }

    /// `languages check`.
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check",
            abstract: "Check a catalog as the daemon does before loading it: coverage, and what would refuse it.",
            discussion: """
                Exit status 0 when the daemon would load it (entries it lacks are said in English, and listed), \
                1 when it would refuse it: not JSON, named for another language than it says, a template this \
                version does not know, or a translation that drops or invents a {0}.
                """)

        @Argument(help: "The catalog files (LANG.json).") var files: [String]

        func run() throws {
            var refused = 0
            for file in files {
                guard let data = FileManager.default.contents(atPath: file) else {
                    printLine("\(file): cannot be read")
                    refused += 1
                    continue
                }
                let read = PageLanguages.read(file: file, json: Array(data))
                if let catalog = read.catalog, let check = read.check,
                    let own = try? LanguageCatalog(json: Array(data)).check(against: .english)
                {
                    let builtIn = LanguageCatalog.builtIn.contains { $0.about.language == catalog.about.language }
                    let rest =
                        builtIn && own.translated < own.total ? ", the rest from the built-in catalog" : ""
                    printLine(
                        "\(file): \(catalog.about.name) (\(catalog.about.language)): \(own.translated) of "
                            + "\(own.total) entries\(rest); the daemon loads it")
                    printLine("  made by \(catalog.about.madeBy)")
                    for entry in check.missing.prefix(20) { printLine("  missing (said in English): \(entry)") }
                    if check.missing.count > 20 { printLine("  … and \(check.missing.count - 20) more missing") }
                } else {
                    refused += 1
                    printLine("\(file): refused; the daemon would not load it")
                    for problem in read.check?.problems ?? read.findings.map(\.message) { printLine("  \(problem)") }
                }
            }
            if refused > 0 { throw ExitCode(1) }
        }
    }

    /// `languages list`.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List the built-in languages: tag, own name, English name, who made it.")

        func run() {
            for catalog in LanguageCatalog.builtIn {
                let about = catalog.about
                printLine("\(about.language)\t\(about.name)\t\(about.englishName ?? "")\t\(about.madeBy)")
            }
        }
    }
}
