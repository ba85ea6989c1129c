import DaemonConfig
import Sync
import Testing

/// `[sync] urls`: several replicas of the server instead of one `url`.
@Suite("[sync] urls")
struct ServerURLsConfigTests {
    static func parse(_ sync: String) throws(ConfigurationError) -> DaemonConfiguration {
        try DaemonConfiguration.parse(
            "[scanner]\ndevice = \"auto\"\n[sync]\ntoken = \"t\"\nanchors = [\"demo\"]\n" + sync)
    }

    @Test("urls gives the servers in order; the client built from the table fails over between them")
    func accepted() throws {
        let parsed = try Self.parse(
            #"urls = ["https://a.example.org", "https://b.example.org/", "http://127.0.0.1:9"]"#)
        let sync = try #require(parsed.sync)
        #expect(sync.urls == ["https://a.example.org", "https://b.example.org/", "http://127.0.0.1:9"])
        #expect(sync.url == "https://a.example.org")
        let client = ValidationAPIClient.Configuration(sync: sync, token: "t", requestTimeout: .seconds(5))
        #expect(client.baseURLs == ["https://a.example.org", "https://b.example.org", "http://127.0.0.1:9"])
        #expect(client.baseURL == "https://a.example.org")
        try client.validate()
        // One url is a list of one.
        let one = try #require(try Self.parse(#"url = "https://a.example.org""#).sync)
        #expect(one.urls == ["https://a.example.org"])
        #expect(
            ValidationAPIClient.Configuration(sync: one, token: "t", requestTimeout: .seconds(5)).baseURLs == [
                "https://a.example.org"
            ])
    }

    @Test("exactly one of url and urls, each URL checked like url, none twice")
    func refused() {
        let cases: [(String, String)] = [
            ("", "sync.url: is required (or urls)"),
            (#"url = "https://a.example.org"\#nurls = ["https://b.example.org"]"#, "sync.urls: give url (one server)"),
            ("urls = []", "sync.urls: must name at least one server"),
            (#"urls = ["https://a.example.org", "ftp://b.example.org"]"#, "sync.urls: must be an https:// URL"),
            (
                #"urls = ["https://a.example.org", "http://b.example.org"]"#,
                "sync.urls: must be https:// (plain http:// only for a server on loopback), got \"http://b.example.org\""
            ),
            (
                #"urls = ["https://a.example.org", "https://a.example.org"]"#,
                "sync.urls: names \"https://a.example.org\" twice"
            ),
            (#"urls = "https://a.example.org""#, "sync.urls"),
            (
                #"urls = ["https://a.example.org", "http://127.0.0.1:9"]"# + "\nca_file = \"ca.pem\"",
                "sync.ca_file: needs an https:// url"
            ),
        ]
        for (text, expected) in cases {
            do {
                _ = try Self.parse(text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(expected), "\(text): \(error.description)")
            }
        }
    }
}
