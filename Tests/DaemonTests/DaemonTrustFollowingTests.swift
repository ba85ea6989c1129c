import Foundation
import RSATestKeys
import ScannerSimulation
import TestSupport
import Testing
import TrustStore

@testable import Presentation

/// A stand-alone gate following its publisher itself: a real `farecheck daemon` with a `[[trust.source]]` in its
/// configuration, the publisher on loopback (real HTTPS, its CA pinned), and no server anywhere.
@Suite("farecheck daemon following its trust publisher itself", .serialized, .timeLimit(.minutes(3)))
struct DaemonTrustFollowingTests {
    @Test("with no key imported, the daemon fetches the RSP6 key list, hands it to its store, and the ticket is valid")
    func daemonFollowsItsPublisher() async throws {
        let setup = try DaemonBench()
        let issuer = RSP6TestIssuer(issuerID: "ZZ")
        let publisher = try await LoopbackPublisher.start()
        publisher.serve(
            "/rsp6-keys.json", Array(#"{"ZZ": \#(String(decoding: issuer.keyFileJSON, as: UTF8.self))}"#.utf8),
            contentType: "application/json")
        let scanner = try SimulatedSSIScanner()
        defer { scanner.stop() }
        let config = try setup.config(
            scanner: scanner.devicePath,
            extra: """

                [[trust.source]]
                name = "rsp6"
                kind = "rsp6-keylist"
                url = "\(publisher.url("/rsp6-keys.json"))"
                tls_ca = "\(publisher.pki.caCertificate)"

                [[trust.source]]
                name = "gone"
                kind = "rsp6-keylist"
                url = "\(publisher.url("/withdrawn.json"))"
                tls_ca = "\(publisher.pki.caCertificate)"
                """)

        // --check reads the sources with the server's reader, and says where the house is.
        let checked = try setup.bench.farecheck(["daemon", "--check", "--config", config])
        #expect(checked.status == 0, "\(checked.stderr)")
        let house = setup.bench.path("trust-sources.sqlite")
        #expect(checked.text.contains("following 2 trust source(s) itself: rsp6 (rsp6-keylist"), "\(checked.text)")
        #expect(checked.text.contains(house), "\(checked.text)")

        let daemon = try await DaemonProcess.start(config: config)
        let socket = try await daemon.connectSocket(path: setup.socket)
        #expect(await daemon.waitForSocketClients())
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isEnabled })
        // The first round runs a few seconds after the start; the key reaches the store when it is handed over.
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !daemon.stderr.text.contains("handed over") {
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(daemon.stderr.text.contains("trust source rsp6: handed over"), "\(daemon.stderr.text)")
        scanner.scan(RSP6DaemonTests.validNow(issuer))
        let event = try setup.event(await socket.readLine())
        #expect(event.verdict == .valid, "\(event.reason)")

        // /healthz says each source's state: the one that answers current, the withdrawn one stale (tried, never
        // fetched). The status stays ok, as after a failed sync: the gate works on the trust it holds.
        var sources: [[String: Any]] = []
        var health: [String: Any] = [:]
        while Date() < deadline {
            health =
                (await daemon.get("/healthz")).flatMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                } ?? [:]
            sources = health["trustSources"] as? [[String: Any]] ?? []
            if sources.contains(where: { $0["name"] as? String == "gone" && $0["stale"] as? Bool == true }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        let byName = Dictionary(sources.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { $1 })
        #expect(byName["rsp6"]?["stale"] as? Bool == false && byName["rsp6"]?["lastSuccess"] != nil, "\(sources)")
        #expect(byName["gone"]?["stale"] as? Bool == true, "\(sources)")
        #expect(health["status"] as? String == "ok", "\(health)")

        // The operator sees the source with the server's own command, on the house and the gate's file.
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_SERVER_DB"] = house
        let status = try setup.bench.run(
            ReferenceServer.binary, ["trust", "status", "--config", config], environment: environment)
        #expect(status.text.contains("rsp6 (rsp6-keylist): current"), "\(status.text)")
        #expect(status.text.contains("gone (rsp6-keylist): STALE"), "\(status.text)")
        #expect(status.status == 1, "a stale source: exit status 1")
        #expect(await daemon.stop() == 0)
        let followed = try TrustStore(path: setup.bench.db).keys(fromSource: TrustStore.followedSource("rsp6"))
        #expect(followed.map(\.issuer) == ["ZZ"])
    }

    @Test("a [[trust.source]] the reader refuses stops --check and the daemon, naming the source and the key")
    func badSourceRefused() throws {
        let setup = try DaemonBench()
        let config = try setup.config(
            scanner: "/dev/null",
            extra: """

                [[trust.source]]
                name = "uic"
                kind = "uic-keylist"
                url = "https://example.invalid/keys.xml"
                period = "often"
                """)
        for arguments in [["daemon", "--check", "--config", config], ["daemon", "--config", config]] {
            let run = try setup.bench.farecheck(arguments)
            #expect(run.status != 0)
            #expect(run.stderr.contains("bad configuration") && run.stderr.contains("period"), "\(run.stderr)")
        }
    }
}
