import Foundation
import Glibc

/// A real OpenLDAP server (Debian's `/usr/sbin/slapd`, package `slapd`) run by a test on 127.0.0.1: a configuration
/// of its own generated in a temporary directory, an `mdb` database under ``suffix`` loaded with `slapadd`, and, when
/// asked, `ldaps://` with a certificate of a throwaway CA (``LoopbackLDAPPKI``). It never reads /etc/ldap and never
/// talks to the system's slapd; it is stopped (SIGTERM, then SIGKILL) and its directory removed by ``stop()`` or at
/// deinit.
///
/// The schema is the harness's own, not OpenLDAP's core.schema: core defines `cACertificate` with X.509's syntax and
/// refuses anything else, while the VDV-KA directory publishes VDV `7F21` certificates in it. Here it is an octet
/// string (`1.3.6.1.4.1.1466.115.121.1.40`), with the few names and classes the entries need.
public final class LoopbackSLAPD: @unchecked Sendable {
    /// Where the VDV test PKI's directory keeps its certificates (as on `vdv.test.telesec.de`).
    public static let suffix = "o=VDV KA KG,c=de"
    /// The unit under ``suffix`` that holds the certificate entries: the base a client searches from.
    public static let base = "ou=VDV Sicherheitsmanagement,\(suffix)"

    /// The server's URL: `ldap://127.0.0.1:port` or, with TLS, `ldaps://127.0.0.1:port`.
    public let url: String
    /// Its port on 127.0.0.1.
    public let port: Int
    /// The temporary directory with its configuration, schema, database and log.
    public let directory: String

    private let process: Process
    private var stopped = false

    /// Starts a slapd holding ``suffix``, ``base`` and `entries`, over TLS with `tls` (a certificate and its key) when
    /// given. Returns once it accepts connections; throws with its standard error when it does not within a few
    /// seconds.
    public init(entries: [DirectoryTestEntry], tls: (certificate: String, key: String)? = nil) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-slapd-\(UUID().uuidString)").path
        let database = directory + "/db"
        try FileManager.default.createDirectory(atPath: database, withIntermediateDirectories: true)
        do {
            try Self.schema.write(toFile: directory + "/schema", atomically: true, encoding: .utf8)
            var configuration = """
                include \(directory)/schema
                modulepath /usr/lib/ldap
                moduleload back_mdb
                pidfile \(directory)/slapd.pid
                argsfile \(directory)/slapd.args

                """
            if let tls {
                configuration += "TLSCertificateFile \(tls.certificate)\nTLSCertificateKeyFile \(tls.key)\n"
            }
            configuration += """
                database mdb
                suffix "\(Self.suffix)"
                directory \(database)
                maxsize 16777216
                access to * by * read

                """
            let configurationFile = directory + "/slapd.conf"
            try configuration.write(toFile: configurationFile, atomically: true, encoding: .utf8)
            let ldif = directory + "/entries.ldif"
            let all = [DirectoryTestEntry.organization, DirectoryTestEntry.unit] + entries
            try all.map(\.ldif).joined(separator: "\n").write(toFile: ldif, atomically: true, encoding: .utf8)
            let loaded = try Workbench(directory: directory).run(
                "/usr/sbin/slapadd", ["-f", configurationFile, "-l", ldif])
            guard loaded.status == 0 else {
                throw DaemonProcess.Failure(message: "slapadd refused the test entries: \(loaded.stderr)")
            }

            port = try LoopbackPort.unused()
            url = "\(tls == nil ? "ldap" : "ldaps")://127.0.0.1:\(port)"
            process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/sbin/slapd")
            // -d 0: in the foreground (a child the test can stop), errors on standard error, no debug output.
            process.arguments = ["-f", configurationFile, "-h", url + "/", "-d", "0"]
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            let log = directory + "/slapd.log"
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            let logHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardError = logHandle
            process.standardOutput = logHandle
            process.standardInput = FileHandle.nullDevice
            try startUnblocked(process)
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
        try waitUntilListening()
    }

    deinit { stop() }

    /// Stops the server (SIGTERM, SIGKILL after two seconds) and removes its directory.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(2)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// What slapd wrote on standard error so far.
    public var log: String { (try? String(contentsOfFile: directory + "/slapd.log", encoding: .utf8)) ?? "" }

    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            guard process.isRunning else {
                let said = log
                stop()
                throw DaemonProcess.Failure(message: "slapd ended before it listened on \(url): \(said)")
            }
            if (try? RawTCPConnection(port: port)) != nil { return }
            usleep(20_000)
        }
        let said = log
        stop()
        throw DaemonProcess.Failure(message: "slapd did not listen on \(url) within 5 s: \(said)")
    }

    /// The names and classes the test entries use. `name`, `cn` and `objectClass` are slapd's own (built in).
    private static let schema = """
        attributetype ( 2.5.4.10 NAME ( 'o' 'organizationName' ) SUP name )
        attributetype ( 2.5.4.11 NAME ( 'ou' 'organizationalUnitName' ) SUP name )
        attributetype ( 2.5.4.6 NAME ( 'c' 'countryName' ) SUP name SINGLE-VALUE )
        attributetype ( 2.5.4.37 NAME 'cACertificate' DESC 'a certificate as published: bytes, any format'
            EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 )
        objectclass ( 2.5.6.4 NAME 'organization' SUP top STRUCTURAL MUST o MAY ou )
        objectclass ( 2.5.6.5 NAME 'organizationalUnit' SUP top STRUCTURAL MUST ou )
        objectclass ( 2.5.6.11 NAME 'applicationProcess' SUP top STRUCTURAL MUST cn MAY ou )
        objectclass ( 1.3.6.1.4.1.4203.666.11.900 NAME 'farecheckCertificateHolder'
            DESC 'an entry that may hold certificates (the tests own, in OpenLDAP experimental arc)'
            SUP top AUXILIARY MAY cACertificate )

        """
}

/// An entry to load into a ``LoopbackSLAPD``: its DN and its attributes' values, in order.
public struct DirectoryTestEntry: Sendable {
    /// The entry's distinguished name.
    public var dn: String
    /// Its attributes: a name and one value each (a name given twice has two values).
    public var attributes: [(name: String, value: [UInt8])]

    /// An entry of `dn` with `attributes`.
    public init(dn: String, attributes: [(name: String, value: [UInt8])]) {
        self.dn = dn
        self.attributes = attributes
    }

    /// A certificate entry under ``LoopbackSLAPD/base``, as the VDV-KA directory publishes one: named by `cn` (the
    /// first of `names`), holding `certificates` in `cACertificate`.
    public static func certificate(names: [String], certificates: [[UInt8]]) -> DirectoryTestEntry {
        DirectoryTestEntry(
            dn: "cn=\(names[0]),\(LoopbackSLAPD.base)",
            attributes: [
                ("objectClass", Array("applicationProcess".utf8)),
                ("objectClass", Array("farecheckCertificateHolder".utf8)),
            ] + names.map { ("cn", Array($0.utf8)) } + certificates.map { ("cACertificate", $0) })
    }

    /// A certificate entry named `name`, holding `certificate`.
    public static func certificate(_ name: String, _ certificate: [UInt8]) -> DirectoryTestEntry {
        .certificate(names: [name], certificates: [certificate])
    }

    static let organization = DirectoryTestEntry(
        dn: LoopbackSLAPD.suffix,
        attributes: [("objectClass", Array("organization".utf8)), ("o", Array("VDV KA KG".utf8))])
    static let unit = DirectoryTestEntry(
        dn: LoopbackSLAPD.base,
        attributes: [
            ("objectClass", Array("organizationalUnit".utf8)), ("ou", Array("VDV Sicherheitsmanagement".utf8)),
        ])

    /// The entry in LDIF, every value in base64 (binary certificates and text alike).
    var ldif: String {
        (["dn:: " + Data(dn.utf8).base64EncodedString()]
            + attributes.map { "\($0.name):: " + Data($0.value).base64EncodedString() })
            .joined(separator: "\n") + "\n"
    }
}

/// A throwaway PKI for ``LoopbackSLAPD``'s TLS, made with the `openssl` command line: a CA and a server certificate
/// for 127.0.0.1 under it, and a server certificate for 127.0.0.1 under another CA that nothing trusts.
public struct LoopbackLDAPPKI: Sendable {
    /// The directory that holds the files.
    public let directory: String

    /// The CA a client pins.
    public var caCertificate: String { directory + "/ca.pem" }
    /// The server's certificate and key, from ``caCertificate``.
    public var server: (certificate: String, key: String) { (directory + "/server.pem", directory + "/server.key") }
    /// A server certificate and key for the same address from another CA.
    public var strangerServer: (certificate: String, key: String) {
        (directory + "/stranger.pem", directory + "/stranger.key")
    }

    private static let script = #"""
        set -e
        ca() {
          openssl req -x509 -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.pem \
            -days 2 -subj "/CN=farecheck test $1" \
            -addext 'basicConstraints=critical,CA:TRUE' -addext 'keyUsage=critical,keyCertSign,cRLSign'
        }
        leaf() {
          openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout $1.key -out $1.csr \
            -subj "/CN=127.0.0.1"
          printf 'basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' > $1.ext
          openssl x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -set_serial 0x$(openssl rand -hex 8) -days 2 \
            -out $1.pem -extfile $1.ext
        }
        ca ca
        ca other-ca
        leaf server ca
        leaf stranger other-ca
        """#

    /// Makes the CAs and the certificates in a new directory under `parent`.
    public init(in parent: String) throws {
        directory = parent + "/ldap-pki"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let made = try Workbench(directory: directory).shell(Self.script)
        guard made.status == 0 else { throw DaemonProcess.Failure(message: "openssl: \(made.stderr)") }
    }
}
