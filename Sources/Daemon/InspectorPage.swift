import FareCore
import Foundation
import Presentation

/// The inspector page served at `/`: one self-contained document that shows the last verdict, large.
///
/// The server sends only the frame; the script renders each verdict from `/events`, so the page that is
/// tested in a browser is the page that updates live. Ticket fields come from scanned payloads, which
/// anyone can write, so the script only ever sets them as text, never as markup.
///
/// The document, its style sheet and its script are files of their own (`Resources/inspector.html`,
/// `inspector.css`, `inspector.js`), embedded in the program when it is built, so an installed `farecheck` needs
/// nothing beside it. The document names the other two as files (it opens from disk while one works on it);
/// the server puts them inline, so the page is one document and its policy lets nothing else load.
public enum InspectorPage {
    /// Nothing outside the document may load: no fonts, images or scripts from elsewhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// How the page speaks: the languages it has catalogs for, its language when the browser's is not wanted, and
    /// the time zone of its dates.
    public struct Locale: Sendable {
        /// The configured language (`[http] language`); `nil`: the browser's.
        public var language: LanguageTag?
        /// The IANA time zone the page writes dates in (`[http] time_zone`, else the validator's own).
        public var timeZone: String
        /// The catalogs: the built-in ones, and `[http] languages_dir`'s.
        public var languages: PageLanguages

        public init(language: LanguageTag? = nil, timeZone: String? = nil, languages: PageLanguages = .builtIn) {
            self.language = language
            self.timeZone = timeZone ?? TimeZone.current.identifier
            self.languages = languages
        }
    }

    /// The document; `loginRequired` shows the login form while no inspector is logged in.
    static func html(loginRequired: Bool, locale: Locale = Locale()) -> String {
        document(loginRequired: loginRequired, locale: locale)
    }

    /// The resource files as they are embedded.
    static let template = String(decoding: PackageResources.inspector_html, as: UTF8.self)
    static let styleSheet = String(decoding: PackageResources.inspector_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.inspector_js, as: UTF8.self)

    /// Where the document names its style sheet and its script, each on a line of its own, and the values the
    /// server fills in.
    static let styleSheetLink = "<link rel=\"stylesheet\" href=\"inspector.css\">\n"
    static let scriptElement = "<script src=\"inspector.js\"></script>\n"
    static let loginRequiredPlaceholder = "{{login-required}}"
    static let languagePlaceholder = "{{language}}"
    static let timeZonePlaceholder = "{{time-zone}}"
    static let catalogsPlaceholder = "{{catalogs}}"

    /// The one document: the style sheet, the script and the catalogs inline where the template names them.
    static func document(loginRequired: Bool, locale: Locale = Locale()) -> String {
        precondition(
            [
                styleSheetLink, scriptElement, loginRequiredPlaceholder, languagePlaceholder, timeZonePlaceholder,
                catalogsPlaceholder,
            ].allSatisfy(template.contains),
            "inspector.html no longer names inspector.css, inspector.js or a {{placeholder}} as InspectorPage expects")
        // In this order, each first occurrence is the template's own: the placeholders are filled in before the
        // catalogs, the style sheet and the script go in; the script element before the style sheet (which comes
        // ahead of it) goes in. Only a configured language name and a checked time zone name are put in
        // attributes, and neither has a character that needs escaping.
        return
            template
            .replacingFirst(loginRequiredPlaceholder, with: loginRequired ? "true" : "false")
            .replacingFirst(languagePlaceholder, with: locale.language?.rawValue ?? "")
            .replacingFirst(timeZonePlaceholder, with: Self.attributeSafe(locale.timeZone))
            .replacingFirst(scriptElement, with: "<script>\n" + script + "</script>\n")
            .replacingFirst(catalogsPlaceholder, with: locale.languages.json)
            .replacingFirst(styleSheetLink, with: "<style>\n" + styleSheet + "</style>\n")
    }

    /// A time zone name as it may stand in an attribute: IANA names are letters, digits, `/`, `_`, `+` and `-`.
    private static func attributeSafe(_ name: String) -> String {
        name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "/_+-".contains($0)) } ? name : "UTC"
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
