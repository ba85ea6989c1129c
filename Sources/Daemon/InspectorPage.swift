import Foundation

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
enum InspectorPage {
    /// Nothing outside the document may load: no fonts, images or scripts from elsewhere.
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; "
        + "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

    /// The document; `loginRequired` shows the login form while no inspector is logged in.
    static func html(loginRequired: Bool) -> String {
        loginRequired ? withLoginForm : withoutLoginForm
    }

    /// The resource files as they are embedded.
    static let template = String(decoding: PackageResources.inspector_html, as: UTF8.self)
    static let styleSheet = String(decoding: PackageResources.inspector_css, as: UTF8.self)
    static let script = String(decoding: PackageResources.inspector_js, as: UTF8.self)

    /// Where the document names its style sheet and its script, each on a line of its own, and the value the
    /// server fills in.
    static let styleSheetLink = "<link rel=\"stylesheet\" href=\"inspector.css\">\n"
    static let scriptElement = "<script src=\"inspector.js\"></script>\n"
    static let loginRequiredPlaceholder = "{{login-required}}"

    private static let withLoginForm = document(loginRequired: true)
    private static let withoutLoginForm = document(loginRequired: false)

    /// The one document: the style sheet and the script inline where the template names them.
    static func document(loginRequired: Bool) -> String {
        precondition(
            template.contains(styleSheetLink) && template.contains(scriptElement)
                && template.contains(loginRequiredPlaceholder),
            "inspector.html no longer names inspector.css, inspector.js or {{login-required}} as InspectorPage expects")
        // In this order, each first occurrence is the template's own: the placeholder comes before the style sheet
        // and the script go in, the script element before the style sheet (which comes ahead of it) goes in.
        return
            template
            .replacingFirst(loginRequiredPlaceholder, with: loginRequired ? "true" : "false")
            .replacingFirst(scriptElement, with: "<script>\n" + script + "</script>\n")
            .replacingFirst(styleSheetLink, with: "<style>\n" + styleSheet + "</style>\n")
    }
}

extension String {
    /// The string with the first occurrence of `target` replaced.
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = range(of: target) else { return self }
        return replacingCharacters(in: range, with: replacement)
    }
}
