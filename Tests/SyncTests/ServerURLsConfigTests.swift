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
}
