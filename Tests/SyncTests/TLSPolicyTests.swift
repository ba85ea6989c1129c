import Foundation
import TestSupport
import Testing

/// TLS 1.2 with ECDHE and AEAD suites only, on both ends (`TransportSecurity`), checked with OpenSSL's own
/// client and server as the other end; and the server's TLS handshake deadline.
@Suite("The API's TLS: AEAD suites only, and a deadline for the handshake", .serialized, .timeLimit(.minutes(5)))
struct TLSPolicyTests {
    /// `openssl s_client` against `port`, TLS 1.2 with only `cipher` offered.
    static func offer(_ cipher: String, port: Int, pki: TestPKI, in bench: Workbench) throws -> Run {
        try bench.shell(
            "timeout 10 openssl s_client -connect 127.0.0.1:\(port) -servername 127.0.0.1 -tls1_2 -cipher \(cipher) "
                + "-CAfile \(pki.caCertificate) < /dev/null 2>&1")
    }

    @Test("the server refuses TLS 1.2 CBC-SHA1 and CBC-SHA384 suites and takes the AEAD ones, and TLS 1.3")
    func serverSuites() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        try await bench.server.start(arguments: pki.serverArguments(mutual: false))
        let port = try #require(Int(bench.server.baseURL.split(separator: ":").last ?? ""))
        for cipher in ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES256-SHA384"] {
            let refused = try Self.offer(cipher, port: port, pki: pki, in: bench.validator)
            #expect(refused.status != 0, "\(cipher) was accepted: \(refused.text)")
            #expect(refused.text.contains("handshake failure") || refused.text.contains("alert"), "\(refused.text)")
        }
        for cipher in [
            "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305",
        ] {
            let taken = try Self.offer(cipher, port: port, pki: pki, in: bench.validator)
            #expect(taken.status == 0, "\(cipher) was refused: \(taken.text)")
            #expect(taken.text.contains("Cipher is \(cipher)"), "\(taken.text)")
        }
        let modern = try bench.validator.shell(
            "timeout 10 openssl s_client -connect 127.0.0.1:\(port) -tls1_3 -CAfile \(pki.caCertificate) "
                + "< /dev/null 2>&1")
        #expect(modern.status == 0 && modern.text.contains("TLSv1.3"), "\(modern.text)")
    }

    @Test("the sync client does not talk to a server that offers only a CBC suite, and does to one with an AEAD suite")
    func clientSuites() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        for (cipher, accepted) in [("ECDHE-ECDSA-AES128-SHA", false), ("ECDHE-ECDSA-AES128-GCM-SHA256", true)] {
            let server = try OpenSSLServer(pki: pki, cipher: cipher, directory: bench.validator.directory)
            defer { server.stop() }
            let synced = try bench.syncCommand(
                url: "https://127.0.0.1:\(server.port)", extra: ["--ca-file", pki.caCertificate])
            #expect(synced.status != 0)
            if accepted {
                // Through TLS to OpenSSL's test page, which is not the API.
                #expect(synced.stderr.contains("not application/json"), "\(synced.stderr)")
            } else {
                #expect(synced.stderr.contains("TLS handshake"), "\(synced.stderr)")
            }
        }
    }

    @Test("an HTTPS client that never completes its TLS handshake is disconnected at the handshake timeout")
    func handshakeDeadline() async throws {
        let bench = try SyncBench(starts: false)
        let pki = try TestPKI(in: bench.server.directory)
        try await bench.server.start(
            arguments: pki.serverArguments(mutual: false) + [
                "--tls-handshake-timeout", "1", "--header-timeout", "60", "--idle-timeout", "60",
            ])
        let port = try #require(Int(bench.server.baseURL.split(separator: ":").last ?? ""))
        let connection = try RawTCPConnection(port: port)
        // The first bytes of a TLS record header (a handshake record), and then nothing.
        try connection.send([0x16, 0x03, 0x01, 0x00])
        let (_, closed) = await connection.readUntilClosed(within: 15)
        #expect(closed, "the stalled handshake is still open after 15 s; only the handshake timeout (1 s) closes it")

        // A client that completes its handshake is served as before.
        let served = try bench.validator.shell(
            "timeout 10 openssl s_client -connect 127.0.0.1:\(port) -CAfile \(pki.caCertificate) < /dev/null 2>&1")
        #expect(served.status == 0, "\(served.text)")
    }
}

/// `openssl s_server` on a free loopback port, TLS 1.2 only with one cipher suite, answering with its test page.
final class OpenSSLServer {
    private let process = Process()
    let port: Int

    init(pki: TestPKI, cipher: String, directory: String) throws {
        let output = directory + "/s_server-\(UUID().uuidString).out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "s_server", "-accept", "127.0.0.1:0", "-cert", pki.serverCertificate, "-key", pki.serverKey,
            "-tls1_2", "-cipher", cipher, "-www",
        ]
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try startUnblocked(process)
        var found: Int?
        for _ in 0..<200 where found == nil && process.isRunning {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "ACCEPT 127.0.0.1:") {
                found = Int(text[range.upperBound...].prefix { $0.isNumber })
            } else {
                usleep(50_000)
            }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            throw DaemonProcess.Failure(message: "openssl s_server did not start")
        }
        port = found
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}
