import FareCore
import Foundation
import Presentation

/// The operator report's words in one language: the `report` section of a language catalog (the inspector page's
/// catalogs, `Presentation/Languages/LANG.json`, and the agency's in `--languages-dir`), each entry the catalog
/// lacks said in English. The verdicts are named as the inspector page names them (the catalog's `verdicts`).
struct ReportWords: Sendable {
    /// The catalog's section that holds the report's entries.
    static let section = LanguageCatalog.reportSection

    let catalog: LanguageCatalog

    /// English: every entry of this version.
    static let english = ReportWords(catalog: .english)

    /// The language, as the page's `lang` says it.
    var language: LanguageTag { catalog.about.language }

    /// The entry `id`, its text escaped for HTML, with `{0}`, `{1}`, … standing for `arguments` (HTML already).
    func html(_ id: String, _ arguments: [String] = []) -> String {
        Self.substitute(entry(id), arguments, escape: OperatorReportPage.escape)
    }

    /// The entry `id` as plain text, with `{0}`, `{1}`, … standing for `arguments`.
    func text(_ id: String, _ arguments: String...) -> String {
        Self.substitute(entry(id), arguments) { String($0) }
    }

    /// `count` with its noun, by the entries `IDOne` (1) and `IDOther` (every other count), `{0}` the count.
    func count(_ count: Int, _ id: String) -> String {
        text(count == 1 ? "\(id)One" : "\(id)Other", "\(count)")
    }

    /// A verdict's name: the inspector page's word for a kind this version knows, the name as uploaded otherwise.
    func verdict(_ verdict: Recorded<VerdictKind>) -> String {
        guard let kind = verdict.known else { return verdict.text }
        return catalog.sections["verdicts"]?[kind.rawValue] ?? LanguageCatalog.english.sections["verdicts"]?[
            kind.rawValue] ?? verdict.text
    }

    /// A share as a percentage with one decimal, written as the language writes decimals (`12.5 %`, `12,5 %`).
    func percent(_ share: Double) -> String {
        let text = String(format: "%.1f %%", share * 100)
        return decimalComma ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    /// Whether the catalog's locale writes a decimal comma (every language farecheck ships but English does).
    private var decimalComma: Bool {
        let locale = Locale(identifier: (catalog.about.locale ?? catalog.about.language).rawValue)
        return locale.decimalSeparator == ","
    }

    private func entry(_ id: String) -> String {
        if let text = catalog.sections[Self.section]?[id] { return text }
        guard let english = LanguageCatalog.english.sections[Self.section]?[id] else {
            preconditionFailure("the English catalog has no report entry \(id)")
        }
        return english
    }

    /// `template` with each `{N}` replaced by `arguments[N]` and the rest of it passed through `escape`.
    static func substitute(
        _ template: String, _ arguments: [String], escape: (Substring) -> String
    ) -> String {
        var result = ""
        Explanation.pieces(of: template) { piece in
            switch piece {
            case .words(let words): result += escape(words)
            case .place(let index, _) where arguments.indices.contains(index): result += arguments[index]
            case .place(_, let written): result += escape(written)
            }
        }
        return result
    }
}

/// The languages the operator report speaks, and which one a request gets: the one the operator chose (the
/// filter's `lang`, kept in a cookie), else the server's `--report-language`, else the browser's
/// (`Accept-Language`, in its order of preference; `de-AT` falls back to `de`), else English.
public struct ReportLanguages: Sendable {
    /// The catalogs: the built-in ones and the agency's (`PageLanguages.load`).
    public var languages: PageLanguages
    /// The language of an operator who chose none (`--report-language`); nil: the browser's.
    public var preferred: LanguageTag?

    public init(languages: PageLanguages = .builtIn, preferred: LanguageTag? = nil) {
        self.languages = languages
        self.preferred = preferred
    }

    /// The cookie that keeps an operator's choice.
    static let cookie = "farecheck_report_lang"

    /// The catalog for `tag`: its own, else its language's.
    func catalog(for tag: LanguageTag) -> LanguageCatalog? { languages.catalog(for: tag) }

    /// The words for a request that chose `chosen` (the query's `lang`, else the cookie's) and sent
    /// `acceptLanguage`.
    func words(chosen: String?, acceptLanguage: String?) -> ReportWords {
        if let chosen, let tag = LanguageTag(chosen), let catalog = catalog(for: tag) {
            return ReportWords(catalog: catalog)
        }
        if let preferred, let catalog = catalog(for: preferred) { return ReportWords(catalog: catalog) }
        for tag in Self.preferences(acceptLanguage ?? "") {
            if let catalog = catalog(for: tag) { return ReportWords(catalog: catalog) }
        }
        return .english
    }

    /// The languages of an `Accept-Language` header, most wanted first (`q`; equal ones in the header's order),
    /// those refused (`q=0`) and those that are not language tags (`*`) left out.
    static func preferences(_ header: String) -> [LanguageTag] {
        var ranked: [(tag: LanguageTag, quality: Double, position: Int)] = []
        for (position, item) in header.split(separator: ",").prefix(32).enumerated() {
            let parts = item.split(separator: ";")
            guard let first = parts.first,
                let tag = LanguageTag(first.trimmingCharacters(in: .whitespaces))
            else { continue }
            var quality = 1.0
            for parameter in parts.dropFirst() {
                let pair = parameter.split(separator: "=", maxSplits: 1).map {
                    $0.trimmingCharacters(in: .whitespaces)
                }
                if pair.count == 2, pair[0] == "q", let value = Double(pair[1]), value >= 0, value <= 1 {
                    quality = value
                }
            }
            if quality > 0 { ranked.append((tag, quality, position)) }
        }
        return ranked.sorted { ($0.quality, -$0.position) > ($1.quality, -$1.position) }.map(\.tag)
    }
}
