import DaemonConfig
import Foundation
import Signatures
import TestSupport
import Testing
import ValidationAPI

/// The files a configuration is read from and names: the file itself, the device token, the pinned anchors, the TLS
/// files and the PIN secret, and the warnings about who can read them.
@Suite("Configuration files")
struct ConfigurationFilesTests {
    let bench = Workbench()

    /// A configuration with `[sync]` lines after a scanner.
    static func sync(_ lines: String) throws -> DaemonConfiguration.Sync {
        let configuration = try DaemonConfiguration.parse(
            "[[scanner]]\ndevice = \"auto\"\n[sync]\nurl = \"https://validation.example.org\"\n" + lines)
        return try #require(configuration.sync)
    }

    /// Writes `text` to a file of the bench with the permission bits `mode`, and gives its path.
    func file(_ name: String, _ text: String, mode: Int = 0o600) throws -> String {
        let path = bench.path(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        return path
    }

    @Test("a missing configuration file is named, with what to do; an error inside one names the file")
    func loading() throws {
        let missing = bench.path("none.toml")
        let error = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: missing) }
        #expect(
            error?.description
                == "\(missing): no such file (give --config PATH, or create it from Config/farecheck.toml)")
        let broken = try file("broken.toml", "[[scanner]]\ndevice = \"auto\"\nbaud = \"fast\"\n")
        let refused = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(path: broken) }
        #expect(refused?.description == "\(broken): scanner[1].baud: must be a number")
        let good = try file("good.toml", "[[scanner]]\ndevice = \"/dev/ttyACM0\"\n")
        #expect(try DaemonConfiguration.load(path: good).scanners.map(\.device) == ["/dev/ttyACM0"])
    }

    @Test("the device token is read from token_file without its surrounding white space; an empty one is refused")
    func tokenFile() throws {
        let token = try file("token", "  s3cret-device-token\n")
        let resolved = try Self.sync("token_file = \"\(token)\"\nanchors = [\"demo\"]\nallow_demo_anchor = true")
            .resolve(file: "farecheck.toml")
        #expect(resolved.token == "s3cret-device-token")
        #expect(resolved.anchors == [.demo])

        let empty = try file("empty-token", "\n \n")
        let cases: [(String, String, String)] = [
            (
                "token_file = \"\(bench.path("no-token"))\"", "sync.token_file",
                "cannot read \(bench.path("no-token")) (missing, or not readable by this user)"
            ),
            ("token_file = \"\(empty)\"", "sync.token", "the device token is empty"),
            ("token = \"\"", "sync.token", "the device token is empty"),
        ]
        for (line, key, message) in cases {
            let sync = try Self.sync(line + "\nanchors = [\"demo\"]\nallow_demo_anchor = true")
            let error = #expect(throws: ConfigurationError.self) { try sync.resolve(file: "farecheck.toml") }
            #expect(error?.key == key && error?.message == message, "\(String(describing: error))")
        }
    }

    @Test("pinned anchors are read from their PEM files; a missing file or a key that cannot anchor is named")
    func anchorFiles() throws {
        let agency = try PrivateKey.generate(.ecP256).publicKey
        let anchor = try file("agency.pem", agency.pem)
        let resolved = try Self.sync("token = \"t\"\nanchors = [\"\(anchor)\"]").resolve(file: "farecheck.toml")
        #expect(resolved.anchors.map(\.id) == [TrustAnchor.id(of: agency)])

        let edwards = try file("ed25519.pem", try PrivateKey.generate(.ed25519).publicKey.pem)
        let notPEM = try file("notes.txt", "the agency's anchor, to be filled in\n")
        let cases: [(String, String)] = [
            (bench.path("absent.pem"), "cannot read \(bench.path("absent.pem"))"),
            (edwards, "\(edwards): A trust anchor signs with ES256 and must be an ECDSA P-256 key, not Ed25519."),
            (notPEM, "\(notPEM): The trust anchor is not a PEM public key"),
        ]
        for (path, message) in cases {
            let sync = try Self.sync("token = \"t\"\nanchors = [\"\(anchor)\", \"\(path)\"]")
            let error = #expect(throws: ConfigurationError.self) { try sync.resolve(file: "farecheck.toml") }
            #expect(error?.key == "sync.anchors")
            #expect(error?.message.hasPrefix(message) == true, "\(String(describing: error))")
        }
    }

    @Test("a CA file, client certificate or client key that cannot be read is named with its key")
    func tlsFiles() throws {
        let anchor = try file("agency.pem", try PrivateKey.generate(.ecP256).publicKey.pem)
        let certificate = try file("client.pem", "certificate")
        let key = try file("client.key", "key")
        let absent = bench.path("absent.pem")
        let cases: [(String, String)] = [
            ("ca_file = \"\(absent)\"", "sync.ca_file"),
            ("client_cert = \"\(absent)\"\nclient_key = \"\(key)\"", "sync.client_cert"),
            ("client_cert = \"\(certificate)\"\nclient_key = \"\(absent)\"", "sync.client_key"),
        ]
        for (lines, expectedKey) in cases {
            let sync = try Self.sync("token = \"t\"\nanchors = [\"\(anchor)\"]\n" + lines)
            let error = #expect(throws: ConfigurationError.self) { try sync.resolve(file: "farecheck.toml") }
            #expect(error?.key == expectedKey, "\(String(describing: error))")
            #expect(error?.message == "cannot read \(absent) (missing, or not readable by this user)")
        }
        let readable = try Self.sync(
            "token = \"t\"\nanchors = [\"\(anchor)\"]\nclient_cert = \"\(certificate)\"\nclient_key = \"\(key)\"")
        #expect(try readable.resolve(file: "farecheck.toml").token == "t")
    }

    @Test("secrets every user can read are warned about, each named; files only their owner reads are not")
    func readableSecrets() throws {
        let token = try file("token", "t", mode: 0o644)
        let clientKey = try file("client.key", "key", mode: 0o640)
        let secret = try file("pin.secret", "pepper", mode: 0o604)
        let configurationFile = try file(
            "farecheck.toml",
            """
            mode = "inspector"
            [[scanner]]
            device = "auto"
            [inspector]
            pin_secret_file = "\(secret)"
            [sync]
            url = "https://validation.example.org"
            token_file = "\(token)"
            anchors = ["demo"]
            client_cert = "\(bench.path("client.pem"))"
            client_key = "\(clientKey)"
            """, mode: 0o600)
        let configuration = try DaemonConfiguration.load(path: configurationFile)
        let warnings = configuration.securityWarnings(file: configurationFile, environment: [:])
        let advice =
            "can be read by every user of this machine: make it readable by the daemon only (chmod 600, or 640 for its "
            + "group)"
        #expect(warnings.contains("[sync] token_file \(token) \(advice)"), "\(warnings)")
        #expect(warnings.contains("the PIN secret \(secret) \(advice)"), "\(warnings)")
        #expect(warnings.count == 2, "the configuration file and the client key are not for everyone: \(warnings)")

        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: configurationFile)
        let open = configuration.securityWarnings(file: configurationFile, environment: [:])
        #expect(open.contains("the configuration file \(configurationFile) \(advice)"), "\(open)")
    }

    @Test("a page beyond loopback without TLS is warned about, with the advice that fits the [http] table")
    func pageInClear() throws {
        func warnings(_ http: String) throws -> [String] {
            try DaemonConfiguration.parse("[[scanner]]\ndevice = \"auto\"\n[http]\n" + http)
                .securityWarnings(file: nil, environment: [:])
        }
        #expect(try warnings("listen = \"127.0.0.1:8080\"").isEmpty)
        #expect(try warnings("listen = \"[::1]:8080\"").isEmpty)
        let bare = try warnings("listen = \"0.0.0.0:8080\"")
        #expect(
            bare == [
                "the page listens on 0.0.0.0:8080 without TLS: PINs, session cookies and verdicts cross the network "
                    + "in clear. Serve it on loopback and give [http] tls_listen, tls_cert and tls_key for other "
                    + "clients"
            ])
        let beside = try warnings(
            "listen = \"10.0.0.17:8080\"\ntls_listen = \"10.0.0.17:8443\"\ntls_cert = \"c.pem\"\ntls_key = \"k.pem\"")
        #expect(beside.count == 1)
        #expect(
            beside.first?.hasSuffix(
                "[http] tls_listen serves TLS beside it, but this listener does not: put [http] listen on loopback")
                == true, "\(beside)")
    }

    @Test("inspector mode without a PIN secret is warned about; the systemd credential counts as one")
    func pinSecret() throws {
        let inspector = try DaemonConfiguration.parse("mode = \"inspector\"\n[[scanner]]\ndevice = \"auto\"")
        let none = inspector.securityWarnings(file: nil, environment: [:])
        #expect(
            none == [
                "no PIN secret ([inspector] pin_secret_file, or the systemd credential farecheck-pin-secret): a copy "
                    + "of the store is enough to search a PIN offline"
            ])
        // A gate has no logins: no PIN secret needed.
        let gate = try DaemonConfiguration.parse("[[scanner]]\ndevice = \"auto\"")
        #expect(gate.securityWarnings(file: nil, environment: [:]).isEmpty)

        let credentials = bench.path("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        let environment = ["CREDENTIALS_DIRECTORY": credentials]
        // The directory without the credential is no secret.
        #expect(DaemonConfiguration.pinSecretPath(explicit: nil, environment: environment) == nil)
        let credential = credentials + "/" + DaemonConfiguration.pinSecretCredential
        _ = try file("credentials/" + DaemonConfiguration.pinSecretCredential, "pepper")
        #expect(DaemonConfiguration.pinSecretPath(explicit: nil, environment: environment) == credential)
        #expect(DaemonConfiguration.pinSecretPath(explicit: "/etc/pin", environment: environment) == "/etc/pin")
        #expect(inspector.securityWarnings(file: nil, environment: environment).isEmpty)
    }
}
