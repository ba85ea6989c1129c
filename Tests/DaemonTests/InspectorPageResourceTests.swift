import Daemon
import FareCore
import Foundation
import Presentation
import TestSupport
import Testing

/// The inspector page is its resource files (Sources/Daemon/Resources): the document served at `/` is
/// inspector.html with inspector.css, inspector.js and the catalogs (Sources/Presentation/Languages) put inline, and the
/// configured language and time zone filled in, whatever the files say today.
@Suite(.timeLimit(.minutes(2)))
struct InspectorPageResourceTests {
    /// The page's files as they are in the source tree.
    static func resource(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Sources/Daemon/Resources/\(name)").standardized
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test(
        "GET / serves inspector.html with inspector.css, inspector.js and the catalogs inline, one document",
        arguments: [true, false])
    func thePageIsItsResourceFiles(loginRequired: Bool) async throws {
        let html = try Self.resource("inspector.html")
        let css = try Self.resource("inspector.css")
        let js = try Self.resource("inspector.js")
        // The catalogs, one object by language, inline in a script element the page reads as JSON (checked below
        // against the files).
        let catalogs = PageLanguages.builtIn.json
        // The document names its style sheet and script as files, so that it opens from disk while one works on it.
        let link = "<link rel=\"stylesheet\" href=\"inspector.css\">\n"
        let script = "<script src=\"inspector.js\"></script>\n"
        #expect(html.contains(link) && html.contains(script))
        let expected =
            html
            .replacingOccurrences(of: "{{login-required}}", with: loginRequired ? "true" : "false")
            .replacingOccurrences(of: "{{language}}", with: "de")
            .replacingOccurrences(of: "{{time-zone}}", with: "Europe/Paris")
            .replacingOccurrences(of: script, with: "<script>\n" + js + "</script>\n")
            .replacingOccurrences(of: "{{catalogs}}", with: catalogs)
            .replacingOccurrences(of: link, with: "<style>\n" + css + "</style>\n")

        let bench = try EndpointBench(
            loginRequired: loginRequired,
            options: .init(locale: InspectorPage.Locale(language: LanguageTag("de"), timeZone: "Europe/Paris")))
        try await bench.run { port in
            let page = try await LoopbackHTTP.request(port: port, "GET", "/")
            #expect(page.status == 200)
            #expect(page.headers["content-type"] == "text/html; charset=utf-8")
            // One document under a policy that lets nothing load from elsewhere, not even from this server.
            #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
            #expect(page.text == expected)
            #expect(page.text.contains("data-login-required=\"\(loginRequired)\""))
            #expect(!page.text.contains("inspector.css") && !page.text.contains("inspector.js"))
            // The inline catalogs are the nine files, each as written but for the operator report's words (the
            // page never shows them), English first.
            let start = try #require(page.text.range(of: "<script type=\"application/json\" id=\"catalogs\">"))
            let end = try #require(page.text[start.upperBound...].range(of: "</script>"))
            let inline = String(page.text[start.upperBound..<end.lowerBound])
            let parsed = try JSONSerialization.jsonObject(with: Data(inline.utf8)) as? [String: Any] ?? [:]
            let tags = ["en", "de", "fr", "nl", "da", "it", "pl", "cs", "sl"]
            #expect(inline.hasPrefix("{\"en\": ") && Set(parsed.keys) == Set(tags))
            for tag in tags {
                let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                    .appendingPathComponent("../../Sources/Presentation/Languages/\(tag).json").standardized
                var file = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
                #expect(file.removeValue(forKey: LanguageCatalog.reportSection) != nil, "\(tag)")
                #expect(NSDictionary(dictionary: file) == parsed[tag] as? NSDictionary, "\(tag)")
            }
        }
    }
}
