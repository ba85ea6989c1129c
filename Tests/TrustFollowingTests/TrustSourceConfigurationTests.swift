import Foundation
import TestSupport
import Testing
import TrustFollowing
import TrustSources

@Suite("[[trust.source]] configuration")
struct TrustSourceConfigurationTests {
    /// One source of each kind, the first two with every key they take, the others with the fewest.
    static let full = """
        # The daemon's own sections may sit beside [trust]: they are not this reader's.
        [http]
        listen = "0.0.0.0:8080"

        [[trust.source]]
        name = "uic"
        kind = "uic-keylist"
        url = "https://railpublickey.uic.org/download.php"
        period = 7200
        jitter = 0.25
        tls_spki = ["47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]
        max_bytes = 1048576
        head_timeout = 2.5
        body_timeout = 60
        max_drop_share = 0.1
        protect_keys_used_within_days = 0
        stale_after = 86400
        allow_plain_http = false

        [[trust.source]]
        name = "vdv-directory"
        kind = "vdv-ldap"
        url = "ldaps://ldap-vdv-ion.telesec.de:636"
        ldap_base = "ou=Test,o=VDV Kernapplikations GmbH,c=de"
        tls_ca = "/etc/farecheck-server/telesec.pem"

        [[trust.source]]
        name = "vdv-blocklist"
        kind = "vdv-blocklist"
        url = "http://127.0.0.1:8443/blacklist.db"
        version_url = "http://127.0.0.1:8443/version.txt"
        allow_plain_http = true
        min_kept_share = 0.75

        [[trust.source]]
        name = "dtvg"
        kind = "dtvg-blocklist"
        url = "https://blocklists.example.org/dtvg/blacklistuic.zip"

        [[trust.source]]
        name = "rsp6"
        kind = "rsp6-keylist"
        url = "https://keys.example.org/rsp6/keys.json"
        """

    @Test("one source of each kind reads to the values written and its kind's defaults")
    func fullExample() throws {
        let configuration = try TrustFollowingConfiguration.parse(Self.full, file: "server.toml")
        #expect(configuration.sources.map(\.name) == ["uic", "vdv-directory", "vdv-blocklist", "dtvg", "rsp6"])
        #expect(
            configuration.sources.map(\.kind) == [.uicKeyList, .vdvLDAP, .vdvBlocklist, .dtvgBlocklist, .rsp6KeyList])

        let uic = try #require(configuration.source(named: "uic"))
        #expect(uic.url == "https://railpublickey.uic.org/download.php")
        #expect(uic.versionURL == nil)
        #expect(uic.period == .seconds(7200))
        #expect(uic.jitter == 0.25)
        #expect(uic.trust == .pinnedSPKI(["47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="]))
        #expect(uic.maximumBytes == 1_048_576)
        #expect(uic.headTimeout == .milliseconds(2500))
        #expect(uic.bodyTimeout == .seconds(60))
        #expect(uic.maximumDropShare == 0.1)
        #expect(uic.protectKeysUsedWithinDays == 0)
        #expect(uic.staleAfter == .seconds(86400))
        #expect(!uic.allowPlainHTTP)

        let directory = try #require(configuration.source(named: "vdv-directory"))
        #expect(directory.url == "ldaps://ldap-vdv-ion.telesec.de:636")
        #expect(directory.ldapBase == "ou=Test,o=VDV Kernapplikations GmbH,c=de")
        #expect(directory.trust == .pinnedCA(path: "/etc/farecheck-server/telesec.pem"))
        #expect(directory.period == .seconds(86_400))
        #expect(directory.staleAfter == .seconds(3 * 86_400))

        let vdv = try #require(configuration.source(named: "vdv-blocklist"))
        #expect(vdv.versionURL == "http://127.0.0.1:8443/version.txt")
        #expect(vdv.allowPlainHTTP)
        #expect(vdv.minimumKeptShare == 0.75)

        // The fewest keys: everything else is the kind's default, as the model's initialiser gives it.
        let dtvg = try #require(configuration.source(named: "dtvg"))
        #expect(
            dtvg
                == TrustSourceConfiguration(
                    name: "dtvg", kind: .dtvgBlocklist, url: "https://blocklists.example.org/dtvg/blacklistuic.zip"))
        #expect(dtvg.period == .seconds(3600))
        #expect(dtvg.staleAfter == .seconds(3 * 3600))
        #expect(dtvg.trust == .systemCAs)
        #expect(dtvg.jitter == 0.1)
        #expect(dtvg.maximumBytes == 256 << 20)
        #expect(dtvg.headTimeout == .seconds(30))
        #expect(dtvg.bodyTimeout == .seconds(300))
        #expect(dtvg.minimumKeptShare == 0.5)
        let rsp6 = try #require(configuration.source(named: "rsp6"))
        #expect(rsp6 == TrustSourceConfiguration(name: "rsp6", kind: .rsp6KeyList, url: rsp6.url))
        #expect(rsp6.ldapBase == TrustSourceConfiguration.vdvProductionBase)
    }

    @Test("no [[trust.source]]: the server follows nothing")
    func empty() throws {
        #expect(try TrustFollowingConfiguration.parse("", file: "server.toml").sources.isEmpty)
        let others = "[http]\nlisten = \"0.0.0.0:8080\"\n[database]\npath = \"/var/lib/x.sqlite\"\n"
        #expect(try TrustFollowingConfiguration.parse(others, file: "server.toml") == TrustFollowingConfiguration())
    }

    /// What parsing `text` is refused with, recorded as an issue where the test called it when it is accepted.
    static func refusal(of text: String, sourceLocation: SourceLocation = #_sourceLocation)
        -> TrustConfigurationError?
    {
        do {
            _ = try TrustFollowingConfiguration.parse(text, file: "server.toml")
            Issue.record("accepted: \(text)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "each refusal names the file, the source, the key and what is accepted",
        arguments: [
            // Unknown keys, named with the source.
            (entry("perod = 60"), "\"src\"", "perod", "unknown key (a [[trust.source]] takes name, kind, url"),
            ("[trust]\nsources = []\n", nil, "trust.sources", "unknown key ([trust] holds only [[trust.source]]"),
            // Names.
            ("[[trust.source]]\nkind = \"uic-keylist\"\nurl = \"https://a.example\"", "#1", "name", "is required"),
            (entry(name: "UIC"), "#1", "name", "must be 1 to 64 of a-z, 0-9 and -, e.g. \"uic\" (got \"UIC\")"),
            (entry(name: String(repeating: "a", count: 65)), "#1", "name", "must be 1 to 64"),
            (entry(name: ""), "#1", "name", "must be 1 to 64"),
            // Kinds.
            (
                entry(kind: "uic"), "\"src\"", "kind",
                "must be one of uic-keylist, vdv-ldap, vdv-blocklist, dtvg-blocklist, rsp6-keylist (got \"uic\")"
            ),
            ("[[trust.source]]\nname = \"a\"\nurl = \"https://a.example\"", "\"a\"", "kind", "is required: one of"),
            // URLs and their schemes.
            ("[[trust.source]]\nname = \"a\"\nkind = \"uic-keylist\"", "\"a\"", "url", "is required"),
            (entry(url: "http://publisher.example.org/list"), "\"src\"", "url", "is plain http://"),
            (entry(url: "ftp://publisher.example.org/list"), "\"src\"", "url", "must be an https:// URL such as"),
            (entry(url: "publisher.example.org/list"), "\"src\"", "url", "must be an https:// URL"),
            (entry(url: "ldaps://publisher.example.org"), "\"src\"", "url", "must be an https:// URL"),
            (entry(kind: "vdv-ldap", url: "https://ldap.example.org"), "\"src\"", "url", "must be an ldaps:// URL"),
            (entry(kind: "vdv-ldap", url: "ldap://ldap.example.org"), "\"src\"", "url", "is plain ldap://"),
            (
                entry("version_url = \"http://b.example/v.txt\"", kind: "vdv-blocklist"), "\"src\"", "version_url",
                "is plain http://"
            ),
            // Keys other kinds take.
            (entry("version_url = \"https://a.example/v\""), "\"src\"", "version_url", "is only for vdv-blocklist"),
            (entry("ldap_base = \"o=x\""), "\"src\"", "ldap_base", "is only for vdv-ldap sources, not uic-keylist"),
            (
                entry(
                    "tls_spki = [\"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\"]", kind: "vdv-ldap",
                    url: "ldaps://l.example"),
                "\"src\"", "tls_spki", "give tls_ca for LDAPS"
            ),
            (entry("max_drop_share = 0.5", kind: "dtvg-blocklist"), "\"src\"", "max_drop_share", "is only for"),
            (
                entry("protect_keys_used_within_days = 5", kind: "vdv-blocklist"), "\"src\"",
                "protect_keys_used_within_days", "not vdv-blocklist"
            ),
            (entry("min_kept_share = 0.5"), "\"src\"", "min_kept_share", "is only for vdv-blocklist, dtvg-blocklist"),
            // Ranges.
            (entry("period = 59"), "\"src\"", "period", "must be at least 60 seconds"),
            (entry("period = 60.5"), "\"src\"", "period", "must be a whole number"),
            (entry("jitter = 0.6"), "\"src\"", "jitter", "must be between 0 and 0.5"),
            (entry("jitter = nan"), "\"src\"", "jitter", "must be between 0 and 0.5"),
            (entry("max_bytes = 0"), "\"src\"", "max_bytes", "must be at least 1"),
            (entry("head_timeout = 0"), "\"src\"", "head_timeout", "must be more than 0 seconds"),
            (entry("body_timeout = -1"), "\"src\"", "body_timeout", "must be between 0 and 86400"),
            (entry("max_drop_share = 1.5"), "\"src\"", "max_drop_share", "must be between 0 and 1"),
            (entry("protect_keys_used_within_days = -1"), "\"src\"", "protect_keys_used_within_days", "between 0"),
            (entry("min_kept_share = -0.1", kind: "dtvg-blocklist"), "\"src\"", "min_kept_share", "between 0 and 1"),
            (entry("period = 600", "stale_after = 599"), "\"src\"", "stale_after", "at least the period (600 s)"),
            (entry("stale_after = 3600"), "\"src\"", "stale_after", "at least the period (86400 s)"),
            // TLS.
            (entry("tls_ca = \"\""), "\"src\"", "tls_ca", "must be the path of a PEM file"),
            (entry("tls_spki = []"), "\"src\"", "tls_spki", "must list at least one pin"),
            (entry("tls_spki = [\"abc\"]"), "\"src\"", "tls_spki", "\"abc\" is not a base64 SHA-256"),
            (
                entry("tls_ca = \"/ca.pem\"", "tls_spki = [\"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\"]"),
                "\"src\"", "tls_spki", "give tls_ca (a publisher's private CA) or tls_spki (pinned keys), not both"
            ),
            // Types: named, never coerced.
            (
                entry("period = \"3600\""), "\"src\"", "period",
                "must be a whole number (an integer, without quotes) (got the string \"3600\")"
            ),
            (entry("jitter = \"0.1\""), "\"src\"", "jitter", "must be a number (got the string \"0.1\")"),
            (entry("allow_plain_http = \"yes\""), "\"src\"", "allow_plain_http", "must be true or false"),
            (entry("max_bytes = 1e6"), "\"src\"", "max_bytes", "must be a whole number"),
            (entry("tls_spki = \"47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\""), "\"src\"", "tls_spki", "list of"),
            ("[[trust.source]]\nname = 5", "#1", "name", "must be a string (in quotes) (got an integer)"),
            ("trust = 1", nil, "trust", "must be a table"),
            ("[trust]\nsource = 1", nil, "trust.source", "must be an array of tables ([[trust.source]])"),
        ] as [(String, String?, String, String)])
    func refusals(text: String, place: String?, key: String, reason: String) throws {
        let error = try #require(Self.refusal(of: text))
        #expect(error.file == "server.toml")
        #expect(error.source == place)
        #expect(error.key == key)
        let location = place.map { "[[trust.source]] \($0): " } ?? ""
        #expect(error.message.hasPrefix("server.toml: \(location)\(key): "), "\(error.message)")
        #expect(error.message.contains(reason), "\(error.message)")
    }

    @Test("each code says what kind of refusal it is")
    func codes() throws {
        #expect(Self.refusal(of: entry("perod = 60"))?.code == .unknownKey)
        #expect(Self.refusal(of: entry("period = \"60\""))?.code == .wrongType)
        #expect(Self.refusal(of: entry("period = 5"))?.code == .invalidValue)
        #expect(Self.refusal(of: entry("ldap_base = \"o=x\""))?.code == .notForKind)
        #expect(Self.refusal(of: entry("tls_ca = \"a\"", "tls_spki = [\"b\"]"))?.code == .conflict)
        #expect(Self.refusal(of: "[[trust.source]]\nname = \"a\"")?.code == .missingKey)
    }

    @Test("two sources of one name are refused, naming both places")
    func duplicateNames() throws {
        let text = entry(name: "uic") + entry(name: "other") + entry(name: "uic")
        let error = try #require(Self.refusal(of: text))
        #expect(error.code == .duplicateName)
        #expect(error.source == "\"uic\"")
        #expect(
            error.message
                == "server.toml: [[trust.source]] \"uic\": name: is the name of [[trust.source]] #1 too (this is #3): "
                + "each source needs a name of its own, as status and `trust fetch SOURCE` name it")
    }

    @Test("a misspelt key is named even when a required key is missing, and the source by its place")
    func unknownKeyFirst() throws {
        let error = try #require(
            Self.refusal(of: "[[trust.source]]\nname = \"a\"\nkind = \"uic-keylist\"\nurll = \"x\""))
        #expect(error.key == "urll")
        #expect(error.source == "\"a\"")
        let second = try #require(Self.refusal(of: entry() + "[[trust.source]]\nnme = \"b\""))
        #expect(second.source == "#2")
        #expect(second.key == "nme")
    }

    @Test("a syntax error names the file and the line")
    func syntax() throws {
        let error = try #require(Self.refusal(of: "[[trust.source]]\nname = \"a\"\nkind = uic-keylist\n"))
        #expect(error.code == .syntax)
        #expect(error.line == 3)
        #expect(error.message.hasPrefix("server.toml: line 3: expected a value"), "\(error.message)")
    }

    @Test("a missing file is named, with where to start from")
    func missingFile() throws {
        let path = NSTemporaryDirectory() + "/farecheck-no-such-\(UUID().uuidString).toml"
        let error = #expect(throws: TrustConfigurationError.self) { try TrustFollowingConfiguration.load(path: path) }
        #expect(error?.code == .unreadable)
        #expect(error?.message == "\(path): no such file (create it from Config/farecheck-server.toml)")
    }

    static let shippedPath = repositoryRoot + "/Config/farecheck-server.toml"

    @Test("the shipped Config/farecheck-server.toml follows nothing; its examples, uncommented, are one of each kind")
    func shippedExample() throws {
        #expect(try TrustFollowingConfiguration.load(path: Self.shippedPath).sources.isEmpty)

        // The example lines are those that read as TOML once `# ` is taken off: a [[trust.source]] header or a
        // `key = value`; the explanations never start so.
        let text = try String(contentsOfFile: Self.shippedPath, encoding: .utf8)
        let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            guard line.hasPrefix("# ") else { return String(line) }
            let rest = line.dropFirst(2)
            let isExample =
                rest == "[[trust.source]]" || rest.range(of: "^[a-z_]+ = ", options: .regularExpression) != nil
            return isExample ? String(rest) : String(line)
        }
        let configuration = try TrustFollowingConfiguration.parse(
            uncommented.joined(separator: "\n"), file: "farecheck-server.toml (uncommented)")
        #expect(configuration.sources.count == 5)
        #expect(Set(configuration.sources.map(\.kind)) == Set(TrustSourceKind.allCases))
        #expect(configuration.source(named: "uic")?.url == "https://railpublickey.uic.org/download.php")
        let directory = try #require(configuration.source(named: "vdv-directory"))
        #expect(directory.url == "ldaps://ldap-vdv-ion.telesec.de:636")
        #expect(directory.ldapBase == TrustSourceConfiguration.vdvProductionBase)
        #expect(
            configuration.source(named: "rsp6")?.trust
                == .pinnedCA(path: "/run/credentials/farecheck-server.service/rsp6-ca.pem"))
    }
}

/// A `[[trust.source]]` entry of `kind` named `name` at `url`, with `lines` added (each `key = value`).
private func entry(
    _ lines: String..., name: String = "src", kind: String = "uic-keylist",
    url: String = "https://publisher.example.org/list"
) -> String {
    "[[trust.source]]\nname = \"\(name)\"\nkind = \"\(kind)\"\nurl = \"\(url)\"\n" + lines.joined(separator: "\n")
        + "\n"
}
