import Daemon
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
}
