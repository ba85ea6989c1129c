import DaemonConfig
import Foundation
import Sync
import TestSupport
import Testing

/// A throwaway PKI made with the `openssl` command line: the agency's CA, the server's certificate (for
/// 127.0.0.1), a validator's client certificate, and a client certificate of another CA.
struct TestPKI {
    let directory: String

    var caCertificate: String { directory + "/ca.pem" }
    var serverCertificate: String { directory + "/server.pem" }
    var serverKey: String { directory + "/server.key" }
    var clientCertificate: String { directory + "/client.pem" }
    var clientKey: String { directory + "/client.key" }
    var strangerCertificate: String { directory + "/stranger.pem" }
    var strangerKey: String { directory + "/stranger.key" }

    private static let script = #"""
        set -e
        ca() {
          {
            echo '[req]'; echo 'distinguished_name=dn'; echo 'x509_extensions=ext'; echo 'prompt=no'
            echo '[dn]'; echo "CN=farecheck test $1"
            echo '[ext]'; echo 'basicConstraints=critical,CA:TRUE'; echo 'keyUsage=critical,keyCertSign,cRLSign'
            echo 'subjectKeyIdentifier=hash'
          } > $1.cnf
          openssl req -x509 -new -config $1.cnf -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
            -keyout $1.key -out $1.pem -days 2
        }
        leaf() {
          openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.csr -subj "/CN=$3"
          printf "$4" > $1.ext
          openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -set_serial 0x$(openssl rand -hex 8) -days 2 \
            -out $1.pem -extfile $1.ext
        }
        ca ca
        ca other-ca
        leaf server ca 127.0.0.1 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n'
        leaf client ca validator-1 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
        leaf stranger other-ca validator-1 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n'
        """#

    /// Makes the CA and the certificates in `directory`.
    init(in directory: String) throws {
        self.directory = directory + "/pki"
        try FileManager.default.createDirectory(atPath: self.directory, withIntermediateDirectories: true)
        let made = try Workbench(directory: self.directory).shell(Self.script)
        guard made.status == 0 else { throw DaemonProcess.Failure(message: "openssl: \(made.stderr)") }
    }

    /// `farecheck-server serve` arguments: HTTPS, and with `mutual`, client certificates of the CA required.
    func serverArguments(mutual: Bool) -> [String] {
        ["--tls-cert", serverCertificate, "--tls-key", serverKey] + (mutual ? ["--client-ca", caCertificate] : [])
    }

    /// `farecheck sync` arguments: trust the CA and present the validator's client certificate.
    var clientArguments: [String] {
        ["--ca-file", caCertificate, "--client-cert", clientCertificate, "--client-key", clientKey]
    }
}

@Suite("Sync over HTTPS and mutual TLS", .serialized, .timeLimit(.minutes(5)))
struct TLSTests {
    @Test(
        "over mutual TLS, a validator trusting the agency's CA with its client certificate syncs: a key becomes usable")
    func mutualTLSSyncs() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        try await bench.server.start(arguments: pki.serverArguments(mutual: true))
        #expect(bench.server.baseURL.hasPrefix("https://127.0.0.1:"), "\(bench.server.baseURL)")
        let ticket = try bench.ticket("c1")
        #expect(try bench.verdict(ticket) == "unknown-key")

        let synced = try bench.syncCommand(extra: pki.clientArguments)
        #expect(synced.status == 0, "\(synced.stderr)")
        #expect(synced.text.contains("bundle 1 applied: 1 added"), "\(synced.text)")
        #expect(try bench.verdict(ticket) == "valid")

        // The bearer token is still required on top of the certificate.
        try "not-a-token".write(toFile: bench.tokenFile, atomically: true, encoding: .utf8)
        let wrongToken = try bench.syncCommand(extra: pki.clientArguments)
        #expect(wrongToken.status == 2)
        #expect(wrongToken.stderr.contains("[unauthorized]"), "\(wrongToken.stderr)")
    }

    @Test(
        "without a client certificate, or with one of another CA, the handshake fails: a TLS error, store unchanged"
    )
    func clientCertificateRequired() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        try await bench.server.start(arguments: pki.serverArguments(mutual: true))
        let before = try bench.trustState()

        let anonymous = try bench.syncCommand(extra: ["--ca-file", pki.caCertificate])
        #expect(anonymous.status == 2)
        #expect(anonymous.stderr.contains("TLS handshake"), "\(anonymous.stderr)")
        #expect(anonymous.stderr.contains("requires a client certificate"), "\(anonymous.stderr)")
        #expect(anonymous.stderr.contains("[tls]"), "\(anonymous.stderr)")
        #expect(try bench.trustState() == before)

        let stranger = try bench.syncCommand(extra: [
            "--ca-file", pki.caCertificate, "--client-cert", pki.strangerCertificate, "--client-key", pki.strangerKey,
        ])
        #expect(stranger.status == 2)
        #expect(stranger.stderr.contains("TLS handshake"), "\(stranger.stderr)")
        #expect(stranger.stderr.contains("did not accept the client certificate"), "\(stranger.stderr)")
        #expect(stranger.stderr.contains("[tls]"), "\(stranger.stderr)")
        #expect(try bench.trustState() == before)
    }

    @Test("a server certificate the validator does not trust is refused with a certificate error, store unchanged")
    func untrustedServer() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        try await bench.server.start(arguments: pki.serverArguments(mutual: false))
        let before = try bench.trustState()

        // The system trust store does not know the test CA.
        let untrusted = try bench.syncCommand()
        #expect(untrusted.status == 2)
        #expect(untrusted.stderr.contains("certificate is not trusted"), "\(untrusted.stderr)")
        #expect(untrusted.stderr.contains("[tls]"), "\(untrusted.stderr)")
        #expect(try bench.trustState() == before)

        // Trusting the CA, HTTPS without client certificates syncs with the token alone.
        let trusted = try bench.syncCommand(extra: ["--ca-file", pki.caCertificate])
        #expect(trusted.status == 0, "\(trusted.stderr)")
        #expect(trusted.text.contains("bundle 1 applied: 1 added"), "\(trusted.text)")
    }

    @Test("TLS options are checked before anything is sent: missing halves, unreadable files, http:// URLs")
    func strictOptions() async throws {
        let bench = try SyncBench()
        let pki = try TestPKI(in: bench.server.directory)

        let onlyCertificate = try bench.syncCommand(extra: ["--client-cert", pki.clientCertificate])
        #expect(onlyCertificate.status != 0)
        #expect(
            onlyCertificate.stderr.contains("--client-cert and --client-key go together"), "\(onlyCertificate.stderr)")

        let overHTTP = try bench.syncCommand(extra: pki.clientArguments)
        #expect(overHTTP.status == 2)
        #expect(overHTTP.stderr.contains("only used over HTTPS"), "\(overHTTP.stderr)")

        let https = bench.server.baseURL.replacingOccurrences(of: "http://", with: "https://")
        let missing = try bench.syncCommand(url: https, extra: ["--ca-file", bench.server.directory + "/none.pem"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("Cannot read the CA file"), "\(missing.stderr)")

        let wrongKey = try bench.syncCommand(
            url: https,
            extra: ["--client-cert", pki.clientCertificate, "--client-key", pki.strangerKey])
        #expect(wrongKey.status == 2)
        #expect(wrongKey.stderr.contains("client key belong"), "\(wrongKey.stderr)")

        // The daemon's [sync] table says the same, naming the key.
        let table = """
            [[scanner]]
            device = "/dev/ttyACM0"
            [sync]
            url = "\(bench.server.baseURL)"
            token = "t"
            anchors = ["demo"]
            allow_demo_anchor = true
            client_cert = "\(pki.clientCertificate)"
            client_key = "\(pki.clientKey)"
            """
        #expect(throws: ConfigurationError.self) { try DaemonConfiguration.parse(table) }
        do {
            _ = try DaemonConfiguration.parse(table)
        } catch {
            #expect(error.key == "sync.client_cert" && error.message.contains("https://"), "\(error)")
        }
        let halfTable = table.replacingOccurrences(of: "http://", with: "https://")
            .replacingOccurrences(of: "client_key = \"\(pki.clientKey)\"", with: "")
        do {
            _ = try DaemonConfiguration.parse(halfTable)
            Issue.record("a client_cert without client_key parsed")
        } catch {
            #expect(error.key == "sync.client_key", "\(error)")
        }
    }

    @Test("the server refuses a key that does not belong to its certificate, and unreadable files, with exit 2")
    func serverRefusesBadFiles() async throws {
        let server = try ReferenceServer()
        let pki = try TestPKI(in: server.directory)
        let mismatched = try server.adminRun([
            "serve", "--listen", "127.0.0.1:0", "--tls-cert", pki.serverCertificate, "--tls-key", pki.clientKey,
        ])
        #expect(mismatched.status == 2)
        #expect(mismatched.stderr.contains("does not belong to the certificate"), "\(mismatched.stderr)")
        let unreadable = try server.adminRun([
            "serve", "--listen", "127.0.0.1:0", "--tls-cert", server.directory + "/none.pem", "--tls-key",
            pki.serverKey,
        ])
        #expect(unreadable.status == 2)
        #expect(unreadable.stderr.contains("--tls-cert"), "\(unreadable.stderr)")
        let half = try server.adminRun(["serve", "--listen", "127.0.0.1:0", "--tls-cert", pki.serverCertificate])
        #expect(half.status == 2)
        #expect(half.stderr.contains("go together"), "\(half.stderr)")
    }
}
