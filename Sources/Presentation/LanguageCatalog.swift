import FareCore
import Foundation

/// One language of the inspector page: the page's own words, the verdict kinds, the instructions, the ticket's field
/// labels and farecheck's sentences, each by its English key or template (see ``Explanation``), and who made it.
///
/// A catalog is a JSON object of sections (`text`, `verdicts`, `labels`, `sentences`, …), each an object of strings,
/// and `about`: `language` (its tag), `name` (the language's own name, which the page's switch shows), `madeBy`, and
/// optionally `englishName` and `locale` (the tag dates and numbers are written by, e.g. `en-GB`). The built-in ones
/// are `Languages/LANG.json`; an agency adds or overrides one with a file of the same form in `[http] languages_dir`.
/// English is the reference: it holds every template of this version, and a catalog is checked against it
/// (``check(against:)``).
public struct LanguageCatalog: Sendable, Equatable, CustomStringConvertible {
    /// The language and its name (never its every entry: a catalog in a log line stays one line).
    public var description: String { "\(about.language) (\(about.name))" }

    /// The catalog's `about`.
    public struct About: Sendable, Equatable {
        public var language: LanguageTag
        /// The language's own name (`Dansk`), as the switch lists it.
        public var name: String
        public var englishName: String?
        /// The tag dates and numbers are written by (`en-GB`); the language's own when absent.
        public var locale: LanguageTag?
        /// Who made the translation.
        public var madeBy: String

        var entries: [String: String] {
            var entries = ["language": language.rawValue, "name": name, "madeBy": madeBy]
            if let englishName { entries["englishName"] = englishName }
            if let locale { entries["locale"] = locale.rawValue }
            return entries
        }
    }

    /// Why a file is not a catalog at all.
    public struct ReadError: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    public var about: About
    /// Every section but `about`: its entries by key (an English template, label or id) .
    public var sections: [String: [String: String]]

    /// The keys of `about`.
    static let aboutKeys: Set<String> = ["language", "name", "englishName", "locale", "madeBy"]

    /// Reads a catalog's JSON.
    public init(json: [UInt8]) throws(ReadError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(json))
        } catch {
            throw ReadError(message: "not JSON: \((error as NSError).userInfo["NSDebugDescription"] ?? error)")
        }
        guard let top = object as? [String: Any] else {
            throw ReadError(message: "not a JSON object of sections")
        }
        var sections: [String: [String: String]] = [:]
        for (name, value) in top {
            guard let entries = value as? [String: Any] else {
                throw ReadError(message: "section \"\(name)\" is not an object")
            }
            var strings: [String: String] = [:]
            for (key, entry) in entries {
                guard let text = entry as? String else {
                    throw ReadError(message: "\"\(name)\" → \"\(key)\" is not a string")
                }
                strings[key] = text
            }
            sections[name] = strings
        }
        guard let about = sections.removeValue(forKey: "about") else {
            throw ReadError(message: "no \"about\" section (language, name, madeBy)")
        }
        if let unknown = about.keys.sorted().first(where: { !Self.aboutKeys.contains($0) }) {
            throw ReadError(
                message: "\"about\" → \"\(unknown)\" is not known (\(Self.aboutKeys.sorted().joined(separator: ", ")))")
        }
        guard let written = about["language"], let language = LanguageTag(written) else {
            throw ReadError(
                message: "\"about\" → \"language\" must be a language tag such as \"da\" or \"de-AT\" (got "
                    + "\(about["language"].map { "\"\($0)\"" } ?? "none"))")
        }
        for key in ["name", "madeBy"] where (about[key] ?? "").trimmingCharacters(in: .whitespaces).isEmpty {
            throw ReadError(message: "\"about\" → \"\(key)\" is missing or empty")
        }
        var locale: LanguageTag?
        if let text = about["locale"] {
            guard let tag = LanguageTag(text) else {
                throw ReadError(
                    message: "\"about\" → \"locale\" must be a language tag such as \"en-GB\" (got \"\(text)\")")
            }
            locale = tag
        }
        self.about = About(
            language: language, name: about["name"]!, englishName: about["englishName"], locale: locale,
            madeBy: about["madeBy"]!)
        self.sections = sections
    }

    /// The catalog with `other`'s entries over its own, and `other`'s `about` (an agency's file overriding some
    /// sentences of a built-in language: what it does not say stays the built-in catalog's).
    public func overridden(by other: LanguageCatalog) -> LanguageCatalog {
        var merged = self
        merged.about = other.about
        for (name, entries) in other.sections {
            merged.sections[name, default: [:]].merge(entries) { _, new in new }
        }
        return merged
    }

    /// The section only the operator report reads (`farecheck-server`, `ReportWords`): the page's catalogs leave
    /// it out.
    public static let reportSection = "report"

    /// The catalog as the page reads it: one JSON object, keys sorted, without the operator report's words.
    public var json: String {
        var object: [String: [String: String]] = sections
        object[Self.reportSection] = nil
        object["about"] = about.entries
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// What checking a catalog against the English found.
    public struct Check: Sendable, Equatable {
        /// An entry of a section.
        public struct Entry: Sendable, Hashable, Comparable, CustomStringConvertible {
            public var section: String
            public var key: String
            public var description: String { "\(section) → \"\(key)\"" }
            public static func < (lhs: Entry, rhs: Entry) -> Bool {
                (lhs.section, lhs.key) < (rhs.section, rhs.key)
            }
        }

        /// Entries the English has and the catalog lacks: said in English on the page.
        public var missing: [Entry] = []
        /// Why the catalog cannot be used, one sentence each: a template it does not know, a translation that
        /// drops or invents a value's place.
        public var problems: [String] = []
        /// Entries the catalog translates, of all the English has.
        public var translated = 0
        public var total = 0

        /// Whether the page may use the catalog (missing entries fall back to English; problems refuse it).
        public var isUsable: Bool { problems.isEmpty }
    }

    /// Checks the catalog against `english`, which holds every template of this version: every entry of the
    /// English should be there (a missing one is listed), none other may be (a key this version does not know is a
    /// typo, or a template of another version), and each translation must name the same places (`{0}`, `{1}`, …)
    /// as its English.
    public func check(against english: LanguageCatalog) -> Check {
        var result = Check()
        for (name, entries) in english.sections {
            let mine = sections[name] ?? [:]
            for (key, englishText) in entries {
                result.total += 1
                guard let translated = mine[key] else {
                    result.missing.append(Check.Entry(section: name, key: key))
                    continue
                }
                result.translated += 1
                let wanted = Explanation.places(in: englishText)
                let found = Explanation.places(in: translated)
                if wanted != found {
                    let dropped = wanted.subtracting(found).sorted()
                    let invented = found.subtracting(wanted).sorted()
                    var what: [String] = []
                    if !dropped.isEmpty { what.append("drops \(dropped.joined(separator: ", "))") }
                    if !invented.isEmpty { what.append("invents \(invented.joined(separator: ", "))") }
                    result.problems.append(
                        "\(name) → \"\(key)\": the translation \(what.joined(separator: " and ")) (\"\(translated)\")")
                }
            }
        }
        for (name, entries) in sections.sorted(by: { $0.key < $1.key }) {
            guard let known = english.sections[name] else {
                result.problems.append("section \"\(name)\" is not one of this version's")
                continue
            }
            for key in entries.keys.sorted() where known[key] == nil {
                result.problems.append("\(name) → \"\(key)\" is not a template of this version")
            }
        }
        result.missing.sort()
        result.problems.sort()
        return result
    }

    /// The catalog a translator starts from: every entry with its English as a draft, `about` naming `language`
    /// and asking for the language's own name and the translator (a check refuses it until they are given).
    public func template(for language: LanguageTag) -> String {
        var object: [String: [String: String]] = sections
        object["about"] = ["language": language.rawValue, "name": "", "englishName": "", "madeBy": ""]
        let data =
            (try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])) ?? Data()
        return String(decoding: data, as: UTF8.self)
    }

    // MARK: The built-in catalogs

    /// The languages farecheck ships, in the order the switch lists them: English, then the others.
    public static let builtIn: [LanguageCatalog] = [
        PackageResources.en_json, PackageResources.de_json, PackageResources.fr_json, PackageResources.nl_json,
        PackageResources.da_json, PackageResources.it_json, PackageResources.pl_json, PackageResources.cs_json,
        PackageResources.sl_json,
    ].map { json in
        do {
            return try LanguageCatalog(json: json)
        } catch {
            preconditionFailure("a built-in catalog does not read: \(error)")
        }
    }

    /// The English catalog: every template of this version.
    public static let english = builtIn[0]
}

extension Explanation {
    /// The places (`{0}`, `{1}`, …) a template names.
    public static func places(in template: String) -> Set<String> {
        var found: Set<String> = []
        pieces(of: template) { piece in
            if case .place(_, let written) = piece { found.insert(String(written)) }
        }
        return found
    }
}
