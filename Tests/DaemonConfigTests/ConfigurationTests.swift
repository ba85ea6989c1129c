import DaemonConfig
import FareCore
import Foundation
import TestSupport
import Testing

@Suite("Daemon configuration")
struct ConfigurationTests {
    @Test("the documented example configuration is accepted as it ships, with the defaults it describes")
    func exampleConfiguration() throws {
        let configuration = try DaemonConfiguration.load(path: repositoryRoot + "/Config/farecheck.toml")
        #expect(configuration.mode == .gate)
        #expect(configuration.store == "/var/lib/farecheck/farecheck.sqlite")
        #expect(configuration.formats == Set(TicketFormat.allCases))
        #expect(configuration.clockSkew == 120 && configuration.replayWindow == 3600)
        #expect(configuration.scanners.map(\.device) == ["auto"])
        #expect(configuration.scanners.first?.protocolName == .ssi)
        #expect(configuration.socket == "/run/farecheck/verdicts.sock")
        #expect(configuration.httpListen == "127.0.0.1:8080")
        #expect(configuration.gateHook == nil)
        #expect(!configuration.acceptTestKeys)
    }

    @Test("[verification] accept_test_keys: off by default; on, the daemon warns that test keys' tickets can be valid")
    func acceptTestKeys() throws {
        let scanner = "[scanner]\ndevice = \"/dev/ttyACM0\"\n"
        #expect(try !DaemonConfiguration.parse(scanner).acceptTestKeys)
        let bench = try DaemonConfiguration.parse(
            """
            [verification]
            accept_test_keys = true
            \(scanner)
            """)
        #expect(bench.acceptTestKeys)
        #expect(bench.securityWarnings(file: nil).contains { $0.contains("accept_test_keys is on") })
        #expect(throws: (any Error).self) {
            try DaemonConfiguration.parse(
                """
                [verification]
                accept_test_keys = "yes"
                \(scanner)
                """)
        }
    }

    @Test("a single [scanner] table counts as a list of one; an [http] listen of \"\" serves no HTTP")
    func shorthands() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            [scanner]
            device = "/dev/ttyACM0"
            [http]
            listen = ""
            """)
        #expect(configuration.scanners.map(\.name) == ["scanner1"])
        #expect(configuration.httpListen == nil)
    }

    @Test("the security keys: [http] hosts, TLS listener, holder data, limits; [inspector] PINs and lockout; [log]")
    func securityKeys() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            mode = "inspector"
            [scanner]
            device = "/dev/ttyACM0"
            [http]
            listen = "127.0.0.1:8080"
            hosts = ["handheld-17.example", "10.0.0.17"]
            tls_listen = "0.0.0.0:8443"
            tls_cert = "/etc/farecheck/page.pem"
            tls_key = "/etc/farecheck/page.key"
            gate_holder_data = true
            language = "de-at"
            languages_dir = "/srv/farecheck/languages"
            time_zone = "Europe/Paris"
            max_connections = 16
            request_timeout = 5
            idle_timeout = 30
            handshake_timeout = 4
            [inspector]
            pin_secret_file = "/etc/farecheck/pin.secret"
            min_pin_length = 8
            lockout_failures = 3
            lockout_seconds = 120
            [log]
            holder_data = true
            """)
        #expect(configuration.http.hosts == ["handheld-17.example", "10.0.0.17"])
        #expect(configuration.http.tlsAddress?.port == 8443)
        #expect(configuration.http.tlsKey == "/etc/farecheck/page.key")
        #expect(configuration.http.gateHolderData)
        // A language tag in its usual case; the agency's catalogs where the file says.
        #expect(configuration.http.language?.rawValue == "de-AT" && configuration.http.timeZone == "Europe/Paris")
        #expect(configuration.http.language?.languageOnly.rawValue == "de")
        #expect(configuration.http.languagesDirectory == "/srv/farecheck/languages")
        #expect(configuration.http.languagesDirectoryConfigured)
        #expect(configuration.http.maxConnections == 16 && configuration.http.requestTimeout == 5)
        #expect(configuration.http.idleTimeout == 30 && configuration.http.handshakeTimeout == 4)
        #expect(configuration.pinSecretFile == "/etc/farecheck/pin.secret")
        #expect(configuration.minimumPINLength == 8)
        #expect(configuration.lockoutFailures == 3 && configuration.lockoutSeconds == 120)
        #expect(configuration.logHolderData)

        // The defaults: no holder data anywhere it is not needed, a 6-character PIN, 5 failures, 60 s.
        let defaults = try DaemonConfiguration.parse("[scanner]\ndevice = \"auto\"")
        #expect(!defaults.http.gateHolderData && !defaults.logHolderData)
        #expect(defaults.minimumPINLength == 6 && defaults.lockoutFailures == 5 && defaults.lockoutSeconds == 60)
        #expect(defaults.http.hosts == nil && defaults.http.tlsListen == nil)
        // No language: the browser's; no time zone: the validator's own.
        #expect(defaults.http.language == nil && defaults.http.timeZone == nil)
        #expect(defaults.http.languagesDirectory == "/etc/farecheck/languages")
        #expect(!defaults.http.languagesDirectoryConfigured)

        let refused: [(String, String)] = [
            ("[http]\ntls_listen = \"0.0.0.0:8443\"", "http.tls_cert: is required with tls_listen"),
            ("[http]\ntls_cert = \"a.pem\"\ntls_key = \"a.key\"", "http.tls_listen: is required"),
            ("[http]\nhosts = []", "http.hosts: must list host names"),
            ("[http]\nlanguage = \"italian\"", "http.language: must be a language tag such as \"da\" or \"de-AT\""),
            ("[http]\nlanguage = \"de_AT\"", "(got \"de_AT\")"),
            ("[http]\nlanguages_dir = \"\"", "http.languages_dir: must be a directory path"),
            ("[http]\ntime_zone = \"Europe/Atlantis\"", "http.time_zone: must be a time zone name such as"),
            ("[inspector]\nmin_pin_length = 3", "inspector.min_pin_length: must be between 4 and 64"),
            ("[log]\nholder = true", "log.holder: unknown key"),
            (
                "[sync]\nurl = \"http://validation.example.org\"\ntoken = \"t\"\nanchors = [\"demo\"]",
                "sync.url: must be https:// (plain http:// only for a server on loopback)"
            ),
        ]
        for (text, expected) in refused {
            do {
                _ = try DaemonConfiguration.parse("[scanner]\ndevice = \"auto\"\n" + text)
                Issue.record("accepted: \(text)")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
            }
        }
        for loopback in ["http://127.0.0.1:8080", "http://localhost:8080", "http://[::1]:8080", "http://127.3.4.5"] {
            let parsed = try DaemonConfiguration.parse(
                "[scanner]\ndevice = \"auto\"\n[sync]\nurl = \"\(loopback)\"\ntoken = \"t\"\nanchors = [\"demo\"]")
            #expect(parsed.sync?.url == loopback)
        }
    }

    @Test("[sync] journal_keep_days: 90 by default, 0 keeps every inspection; shorter than replay_window is refused")
    func journalKeepDays() throws {
        func parse(_ extra: String, replayWindow: Int = 3600) throws(ConfigurationError) -> DaemonConfiguration {
            try DaemonConfiguration.parse(
                """
                [scanner]
                device = "auto"
                [verification]
                replay_window = \(replayWindow)
                [sync]
                url = "https://validation.example.org"
                token = "t"
                anchors = ["/etc/farecheck/anchor.pem"]
                \(extra)
                """)
        }
        #expect(try parse("").sync?.journalKeepDays == 90)
        #expect(try parse("journal_keep_days = 0").sync?.journalKeepDays == 0)
        #expect(try parse("journal_keep_days = 30", replayWindow: 30 * 86400).sync?.journalKeepDays == 30)
        let refused: [(String, Int, String)] = [
            ("journal_keep_days = 7", 30 * 86400, "sync.journal_keep_days: must cover [verification] replay_window"),
            ("journal_keep_days = 1.5", 3600, "sync.journal_keep_days: must be a whole number of days"),
            ("journal_keep_days = -1", 3600, "sync.journal_keep_days: must be between 0 and 3650"),
        ]
        for (text, window, expected) in refused {
            do {
                let accepted = try parse(text, replayWindow: window)
                Issue.record("accepted: \(text): \(String(describing: accepted.sync?.journalKeepDays))")
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
            }
        }
    }

    @Test("wrong types and out-of-range values name the key")
    func wrongTypes() {
        let cases: [(String, String)] = [
            ("[[scanner]]\ndevice = 5", "scanner[1].device: must be a string"),
            ("[[scanner]]\ndevice = \"auto\"\nbaud = 12", "scanner[1].baud: must be between 300 and 921600"),
            ("[[scanner]]\ndevice = \"auto\"\n[output]\nstdout = \"yes\"", "output.stdout: must be true or false"),
            ("[[scanner]]\ndevice = \"auto\"\n[http]\nlisten = \"localhost\"", "http.listen: must be HOST:PORT"),
            (
                "[[scanner]]\ndevice = \"a\"\nname = \"x\"\n[[scanner]]\ndevice = \"b\"\nname = \"x\"",
                "is used by another"
            ),
        ]
        for (text, expected) in cases {
            #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(text) }
            do {
                _ = try DaemonConfiguration.parse(text)
            } catch {
                #expect(error.description.contains(expected), "\(error.description)")
            }
        }
    }

    @Test(
        "[gate] verdicts names verdict kinds (or \"*\" for every one); an unknown name is refused with the valid ones")
    func gateVerdictNames() throws {
        func gate(_ verdicts: String) throws(ConfigurationError) -> DaemonConfiguration.GateHook? {
            try DaemonConfiguration.parse(
                "[[scanner]]\ndevice = \"auto\"\n[gate]\ncommand = [\"/bin/true\"]\n\(verdicts)"
            ).gateHook
        }
        #expect(try gate("")?.verdicts == .only([.valid]))
        #expect(try gate("verdicts = [\"valid\", \"clock-untrusted\"]")?.verdicts == .only([.valid, .clockUntrusted]))
        #expect(try gate("verdicts = []")?.verdicts == .only([]))
        let every = try gate("verdicts = [\"*\"]")?.verdicts
        #expect(every == .every)
        #expect(VerdictKind.allCases.allSatisfy { every?.contains($0) == true })
        #expect(try gate("verdicts = [\"valid\"]")?.verdicts.contains(.expired) == false)

        // A typo used to leave the gate shut without a word: now the daemon does not start.
        for name in ["vaild", "Valid", "revoke", ""] {
            let refused = refusal(
                of: "[[scanner]]\ndevice = \"auto\"\n[gate]\ncommand = [\"/bin/true\"]\n"
                    + "verdicts = [\"valid\", \"\(name)\"]")
            #expect(refused?.key == "gate.verdicts")
            #expect(refused?.message.contains("unknown verdict \"\(name)\"") == true, "\(String(describing: refused))")
            // The valid names, every one, and the wildcard.
            for kind in VerdictKind.allCases {
                #expect(refused?.message.contains(kind.rawValue) == true)
            }
            #expect(refused?.message.contains("\"*\" for every verdict") == true)
        }
    }

    @Test("[verification] formats names formats; an unknown name is refused with the valid ones")
    func formatNames() throws {
        let accepted = try DaemonConfiguration.parse(
            "[[scanner]]\ndevice = \"auto\"\n[verification]\nformats = [\"fc1\", \"uic-918-3\"]")
        #expect(accepted.formats == [.fc1, .uic9183])
        let refused = refusal(of: "[[scanner]]\ndevice = \"auto\"\n[verification]\nformats = [\"fc1\", \"uic-918-4\"]")
        #expect(refused?.key == "verification.formats")
        #expect(refused?.message.contains("unknown format \"uic-918-4\"") == true)
        for format in TicketFormat.allCases {
            #expect(refused?.message.contains(format.name) == true)
        }
    }

    @Test("pinning the DEMO anchor (by name or by its PEM file) is refused at start unless allow_demo_anchor is set")
    func demoAnchorNeedsOptIn() throws {
        func sync(_ anchors: String, allow: Bool?) throws(ConfigurationError) -> DaemonConfiguration.Sync? {
            try DaemonConfiguration.parse(
                """
                [[scanner]]
                device = "auto"
                [sync]
                url = "http://127.0.0.1:8443"
                token = "secret"
                anchors = \(anchors)
                \(allow.map { "allow_demo_anchor = \($0)" } ?? "")
                """
            ).sync
        }
        for anchors in [#"["demo"]"#, #"["\#(repositoryRoot)/Keys/demo-anchor.pub.pem"]"#] {
            for allow in [nil, false] {
                let refused = try #require(try sync(anchors, allow: allow))
                do {
                    _ = try refused.resolve(file: "farecheck.toml")
                    Issue.record("\(anchors) without the opt-in was accepted")
                } catch {
                    #expect(error.key == "sync.anchors")
                    #expect(error.description.contains("DEMO trust anchor"))
                    #expect(error.description.contains("allow_demo_anchor = true"))
                }
            }
            let allowed = try #require(try sync(anchors, allow: true))
            #expect(try allowed.resolve(file: "farecheck.toml").anchors.count == 1)
        }
    }

    @Test("inputs that aborted the TOML reader (TOMLKit's toml++ assertions) are refused with their line")
    func inputsFoundByFuzzing() throws {
        // Found by the fuzz-config target; the daemon must name the line, not abort or run undefined behaviour.
        let headers: [(String, String)] = [
            ("[[scanner]]\ndevice = \"auto\"\n[é]\n", "found 'é' (line 3)"),
            ("[!]", "found '!' (line 1)"),
            ("[.sync]", "found '.' (line 1)"),
            ("[[=]]", "found '=' (line 1)"),
            ("[ #]", "found '#' (line 1)"),
            ("[[[scanner]]]", "found '[' (line 1)"),
            ("[\n]", "found U+000A (line 1)"),
            ("\u{FEFF}# comment\n\n  [!]", "found '!' (line 3)"),
        ]
        for (text, expected) in headers {
            let error = refusal(of: text)
            #expect(error?.key == nil)
            #expect(error?.message.hasPrefix("expected a key") == true, "\(String(describing: error))")
            #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        }
        let regressions = Fixtures.url("fuzz-regressions/config")
        for (name, expected) in [
            ("config-unnamed-table-header", "expected a key"),
            ("config-broken-date", "1979-05-27Toutput07:32:00Z is not a date or time (line 2)"),
        ] {
            let input = try Data(contentsOf: regressions.appendingPathComponent(name))
            let error = refusal(of: String(decoding: input, as: UTF8.self))
            #expect(error?.message.contains(expected) == true, "\(name): \(String(describing: error))")
        }
    }

    @Test("the TOML reader reads every form the format has: strings, numbers, arrays, inline and dotted tables")
    func tomlForms() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            \u{FEFF}validator = \'\'\'
            [!] door "2"\'\'\'  # a "[" that starts a line inside a string is no header
            store = "/tmp/caf\\u00E9\\t.sqlite"
            output.stdout = false
            [verification]
            clock_skew = 1_0e1
            prefixes = [
                'FC1:', # [!] a comment
                \"\"\"
            HC1:\\
                \"\"\",
            ]
            replay_window = 0x1F
            [[scanner]]
            device = "auto"
            baud = +115_200
            "name" = 'front'
            [[scanner]]
            device = "/dev/ttyACM1"
            [http]
            listen = "[::1]:8080"
            [sync]
            url = "https://validation.example.org"
            token = "t"
            anchors = ["demo"]
            stale_after = 1.5e3
            """)
        #expect(configuration.validator == "[!] door \"2\"")
        #expect(configuration.store == "/tmp/café\t.sqlite")
        #expect(configuration.clockSkew == 100 && configuration.stdout == false)
        #expect(configuration.prefixes == ["FC1:", "HC1:"])
        #expect(configuration.replayWindow == 31)
        #expect(configuration.scanners.map(\.name) == ["front", "scanner2"])
        #expect(configuration.scanners.first?.baud == 115_200)
        #expect(configuration.httpAddress?.host == "::1")
        #expect(configuration.sync?.staleAfter == 1500)

        let refused: [(String, String)] = [
            ("a = 1\na = 2", "a is defined twice (line 2)"),
            ("[http]\n[http]", "http is defined twice (line 2)"),
            ("a = \"open\nb = 1", "the string is not closed with \" on its line (line 1)"),
            ("a = 0123", "expected a value, found 0123"),
            ("a = 99999999999999999999", "does not fit in 64 bits"),
            ("a = [1, 2", "the array is not closed with ]"),
            ("a = {b = 1,\nc = 2}", "an inline table must fit on one line (line 1)"),
            ("a = 1 b = 2", "expected the end of the line, found 'b'"),
            ("a = \"\\q\"", "\\q is no escape"),
            ("a = \"\\uD800\"", "names no Unicode character"),
            (String(repeating: "a = [", count: 1) + String(repeating: "[", count: 100), "nested more than 64 deep"),
            ("validator = 1979-05-27 07:32:00", "validator: must be a string"),
        ]
        for (text, expected) in refused {
            let error = refusal(of: text)
            #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
        }
    }
}
