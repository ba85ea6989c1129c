import FareCore
import Foundation

/// The languages the inspector page speaks: the built-in catalogs, and the agency's (`[http] languages_dir`), each
/// `LANG.json` adding a language or overriding a built-in one (its entries over the built-in's; a regional catalog
/// such as `de-AT.json` over its language's).
///
/// A catalog of the directory is checked against the English before it is used (``LanguageCatalog/check(against:)``):
/// one that does not read, is named for another language than it says, knows a template this version does not, or
/// drops or invents a value's place is not loaded, and said so (``findings``); one that lacks entries is loaded, the
/// entries it lacks said in English.
public struct PageLanguages: Sendable, CustomStringConvertible {
    /// What loading the directory found, one per catalog (or for the directory itself).
    public struct Finding: Sendable, Equatable, CustomStringConvertible {
        /// The file (or directory) it is about.
        public var file: String
        public var message: String
        /// Whether the catalog was refused (not loaded), rather than loaded with entries said in English.
        public var refused: Bool

        public var description: String { "language catalog \(file): \(message)" }
    }

    /// The catalogs, English first, then the built-in ones in their order, then the directory's new languages by tag.
    public private(set) var catalogs: [LanguageCatalog]
    public private(set) var findings: [Finding] = []

    /// The built-in languages only.
    public static let builtIn = PageLanguages(catalogs: LanguageCatalog.builtIn)

    init(catalogs: [LanguageCatalog]) {
        self.catalogs = catalogs
    }

    /// The built-in languages with the catalogs of `directory` (`LANG.json` files) added or put over them. A
    /// directory that does not exist adds nothing (and is a finding when `required`: it was configured by name).
    public static func load(directory: String, required: Bool = false) -> PageLanguages {
        var languages = PageLanguages.builtIn
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            if required {
                languages.findings.append(
                    Finding(file: directory, message: "no such directory: only the built-in languages", refused: false))
            }
            return languages
        }
        let names: [String]
        do {
            names = try manager.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        } catch {
            languages.findings.append(
                Finding(
                    file: directory, message: "cannot be read by this user: only the built-in languages", refused: true)
            )
            return languages
        }
        for name in names {
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = manager.contents(atPath: path) else {
                languages.findings.append(
                    Finding(file: path, message: "cannot be read by this user; not loaded", refused: true))
                continue
            }
            languages.add(file: path, json: Array(data))
        }
        return languages
    }

    /// Checks `json` (the file `file`, named `LANG.json`) and adds it when it can be used.
    mutating func add(file: String, json: [UInt8]) {
        let result = Self.read(file: file, json: json, over: catalogs)
        findings += result.findings
        guard let catalog = result.catalog else { return }
        if let index = catalogs.firstIndex(where: { $0.about.language == catalog.about.language }) {
            catalogs[index] = catalog
        } else {
            catalogs.append(catalog)
            let builtInCount = LanguageCatalog.builtIn.count
            catalogs[builtInCount...].sort { $0.about.language < $1.about.language }
        }
    }

    /// A catalog file as `farecheck languages check` and the daemon read it: the catalog the page would use (over
    /// the built-in one of its language, if any, from `known`), or none when it is refused, and what was found.
    public static func read(
        file: String, json: [UInt8], over known: [LanguageCatalog] = LanguageCatalog.builtIn
    ) -> (catalog: LanguageCatalog?, findings: [Finding], check: LanguageCatalog.Check?) {
        let stem = ((file as NSString).lastPathComponent as NSString).deletingPathExtension
        let catalog: LanguageCatalog
        do {
            catalog = try LanguageCatalog(json: json)
        } catch {
            return (nil, [Finding(file: file, message: "\(error.message); not loaded", refused: true)], nil)
        }
        guard LanguageTag(stem) == catalog.about.language else {
            return (
                nil,
                [
                    Finding(
                        file: file,
                        message: "says it is \"\(catalog.about.language)\" but is named \(stem).json (name it "
                            + "\(catalog.about.language).json); not loaded", refused: true)
                ], nil
            )
        }
        // A regional catalog (de-AT) says what differs from its language's (de): the rest is that one's.
        let base =
            known.first { $0.about.language == catalog.about.language }
            ?? known.first { $0.about.language == catalog.about.language.languageOnly }
        let candidate = base.map { $0.overridden(by: catalog) } ?? catalog
        let check = candidate.check(against: LanguageCatalog.english)
        guard check.isUsable else {
            let shown = check.problems.prefix(5).joined(separator: "; ")
            let more = check.problems.count > 5 ? "; and \(check.problems.count - 5) more" : ""
            return (nil, [Finding(file: file, message: "\(shown)\(more); not loaded", refused: true)], check)
        }
        var findings: [Finding] = []
        if !check.missing.isEmpty {
            let shown = check.missing.prefix(5).map(\.description).joined(separator: ", ")
            let more = check.missing.count > 5 ? ", …" : ""
            findings.append(
                Finding(
                    file: file,
                    message: "\(catalog.about.language) loaded; \(check.missing.count) of \(check.total) entries "
                        + "missing, said in English (\(shown)\(more))", refused: false))
        }
        return (candidate, findings, check)
    }

    /// The languages by tag (a service's description in a log line names them, never their every sentence).
    public var description: String {
        "PageLanguages(\(catalogs.map(\.about.language.rawValue).joined(separator: ", ")))"
    }

    /// The catalog for `tag`: its own (`de-AT`), else its language's (`de`).
    public func catalog(for tag: LanguageTag) -> LanguageCatalog? {
        catalogs.first { $0.about.language == tag } ?? catalogs.first { $0.about.language == tag.languageOnly }
    }

    /// Whether the page has a catalog for `tag`, or for its language alone.
    public func speaks(_ tag: LanguageTag) -> Bool { catalog(for: tag) != nil }

    /// The catalogs as one JSON object by language, in order, fit to stand inside a `<script>` element.
    public var json: String {
        let members = catalogs.map { "\"\($0.about.language.rawValue)\": \($0.json)" }
        // "</" would end the script element: JSON lets it be written "<\/".
        return ("{" + members.joined(separator: ",\n") + "}").replacingOccurrences(of: "</", with: "<\\/")
    }
}
