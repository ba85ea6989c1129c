import DaemonConfig
import Testing

/// `[sync] urls`: several replicas of the server instead of one `url`, each checked as `url` is.
@Suite("[sync] urls")
struct SyncURLsTests {
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
            let error = refusal(
                of: "[scanner]\ndevice = \"auto\"\n[sync]\ntoken = \"t\"\nanchors = [\"demo\"]\n" + text)
            #expect(error?.description.contains(expected) == true, "\(text): \(String(describing: error))")
        }
    }
}
