import FareCore
import Foundation
import TestSupport
import Testing

/// `farecheck-server trust …` and `serve --config`, the built binary against a publisher on loopback.
@Suite("farecheck-server trust", .serialized, .timeLimit(.minutes(3)))
struct TrustCommandTests {
    /// A configuration following the publisher's UIC key list (its CA pinned) and its DTVG blocklist, written in
    /// `directory` (a server's, or a gate's: `farecheck` reads the same entries).
    static func configuration(_ publisher: LoopbackPublisher, in directory: String) throws -> String {
        let path = directory + "/server.toml"
        try """
        [[trust.source]]
        name = "uic"
        kind = "uic-keylist"
        url = "\(publisher.url("/keys.xml"))"
        tls_ca = "\(publisher.pki.caCertificate)"

        [[trust.source]]
        name = "dtvg"
        kind = "dtvg-blocklist"
        url = "\(publisher.url("/blacklistuic.zip"))"
        version_url = "\(publisher.url("/versionuic.txt"))"
        tls_ca = "\(publisher.pki.caCertificate)"
        period = 60
        stale_after = 600
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("fetch, dry-run, status, pending, approve and reject, as an operator runs them")
    func operatorCommands() async throws {
        let server = try ReferenceServer()
        let publisher = try await LoopbackPublisher.start()
        let config = try Self.configuration(publisher, in: server.directory)
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        publisher.fail("/versionuic.txt", .status(503))

        // Never fetched: not stale yet.
        let before = try server.adminRun(["trust", "status", "--config", config])
        #expect(
            before.status == 0 && before.text.contains("uic (uic-keylist): current; never fetched"), "\(before.text)")

        let dry = try server.adminRun(["trust", "fetch", "--config", config, "--dry-run", "uic"])
        #expect(dry.status == 0 && dry.text.contains("uic would-apply:"), "\(dry.text) \(dry.stderr)")
        #expect(try server.admin(["keys", "list", "--json"]).jsonRecords.isEmpty)

        // Both sources: the key list applies and is signed; the blocklist's publisher fails, so exit status 1.
        let fetched = try server.adminRun([
            "trust", "fetch", "--config", config, "--anchor-key", ReferenceServer.demoAnchorKey,
        ])
        #expect(fetched.status == 1, "\(fetched.text) \(fetched.stderr)")
        #expect(
            fetched.text.contains("uic applied:") && fetched.text.contains("key bundle 1 signed"), "\(fetched.text)")
        #expect(fetched.text.contains("dtvg failed:") && fetched.text.contains("503"), "\(fetched.text)")
        #expect(try server.admin(["keys", "list", "--json"]).jsonRecords.count > 50)

        let status = try server.adminRun(["trust", "status", "--config", config, "--json"])
        #expect(status.status == 1, "a source that failed and never succeeded is stale: \(status.text)")
        let records = status.text.jsonRecords
        #expect(records.first { $0["name"] as? String == "uic" }?["stale"] as? Bool == false, "\(status.text)")
        let dtvg = try #require(records.first { $0["name"] as? String == "dtvg" })
        #expect(dtvg["stale"] as? Bool == true)
        #expect((dtvg["lastError"] as? String)?.contains("503") == true, "\(dtvg)")

        // A list dropping nearly every key is held; the operator lists it and rejects it; keys stay.
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 2), contentType: "application/xml")
        let held = try server.adminRun(["trust", "fetch", "--config", config, "uic"])
        #expect(held.status == 0 && held.text.contains("uic held:") && held.text.contains("change 1"), "\(held.text)")
        let pending = try server.admin(["trust", "pending", "--json"]).jsonRecords
        #expect(pending.count == 1 && pending.first?["id"] as? Int == 1 && pending.first?["source"] as? String == "uic")
        let rejected = try server.admin(["trust", "reject", "1"])
        #expect(rejected.contains("change 1 rejected"), "\(rejected)")
        #expect(try server.admin(["trust", "pending"]).contains("No change is held."))
        #expect(try server.admin(["keys", "list", "--json"]).jsonRecords.count > 50)
        let again = try server.adminRun(["trust", "reject", "1"])
        #expect(again.status != 0 && again.stderr.contains("rejected already"), "\(again.stderr)")

        // Another drop, approved: applied and signed.
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 3), contentType: "application/xml")
        let second = try server.adminRun(["trust", "fetch", "--config", config, "uic"])
        #expect(second.text.contains("change 2"), "\(second.text)")
        let approved = try server.admin([
            "trust", "approve", "--config", config, "--anchor-key", ReferenceServer.demoAnchorKey, "2",
        ])
        #expect(approved.contains("uic applied:") && approved.contains("key bundle 2 signed"), "\(approved)")
        #expect(try server.admin(["keys", "list", "--json"]).jsonRecords.count <= 3)

        // A configuration that does not read is refused with its reason, and nothing runs.
        let broken = server.directory + "/broken.toml"
        try "[[trust.source]]\nname = \"x\"\nkind = \"uic-keys\"\nurl = \"https://example.org/\"\n"
            .write(toFile: broken, atomically: true, encoding: .utf8)
        let refused = try server.adminRun(["trust", "fetch", "--config", broken])
        #expect(refused.status == 2 && refused.stderr.contains("uic-keys"), "\(refused.stderr)")
    }

    @Test("serve --config follows its sources unattended; /v1/health and the operator report show each one's age")
    func serveFollows() async throws {
        let server = try ReferenceServer()
        let publisher = try await LoopbackPublisher.start()
        var config = try Self.configuration(publisher, in: server.directory)
        // A third source whose publisher is down: never current, so stale as soon as it was tried.
        try
            (String(contentsOfFile: config, encoding: .utf8) + """

                [[trust.source]]
                name = "rsp6"
                kind = "rsp6-keylist"
                url = "\(publisher.url("/rsp6.json"))"
                tls_ca = "\(publisher.pki.caCertificate)"
                """).write(toFile: config, atomically: true, encoding: .utf8)
        config = server.directory + "/server.toml"
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes("blocklists/dtvg-blocklist.zip"), contentType: "application/zip")
        publisher.serve("/versionuic.txt", try Fixtures.bytes("blocklists/dtvg-version.txt"), contentType: "text/plain")
        publisher.fail("/rsp6.json", .status(500))
        let operatorToken = try server.admin(["operators", "add", "auditor"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        try await server.start(arguments: ["--config", config])
        let port = try #require(Int(server.baseURL.split(separator: ":").last ?? ""))

        // The first rounds come a few seconds after the start.
        var health: [String: Any] = [:]
        for _ in 0..<80 {
            let reply = try await LoopbackHTTP.request(port: port, "GET", "/v1/health")
            health = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] ?? [:]
            let sources = health["trustSources"] as? [[String: Any]] ?? []
            if sources.filter({ $0["lastSuccess"] != nil }).count == 2,
                sources.contains(where: { $0["stale"] as? Bool == true })
            {
                break
            }
            try await Task.sleep(for: .milliseconds(250))
        }
        let sources = try #require(health["trustSources"] as? [[String: Any]], "\(health)")
        #expect(health["status"] as? String == "degraded", "one source is stale: \(health)")
        #expect(sources.map { $0["name"] as? String } == ["dtvg", "rsp6", "uic"], "\(health)")
        let byName = Dictionary(uniqueKeysWithValues: sources.map { ($0["name"] as? String ?? "", $0) })
        #expect(byName["dtvg"]?["stale"] as? Bool == false && byName["dtvg"]?["version"] as? String == "42")
        #expect(byName["uic"]?["stale"] as? Bool == false && byName["uic"]?["lastSuccess"] != nil)
        #expect(byName["rsp6"]?["stale"] as? Bool == true && byName["rsp6"]?["lastSuccess"] == nil)
        #expect(
            !String(decoding: try JSONSerialization.data(withJSONObject: health), as: UTF8.self).contains("rsp6.json"),
            "why a fetch failed is for operators, not the open health endpoint")
        #expect(health["keyBundleSequence"] as? Int == 1, "the keys were signed unattended: \(health)")
        let status = try server.adminRun(["trust", "status", "--config", config])
        #expect(status.status == 1 && status.text.contains("dtvg (dtvg-blocklist): current"), "\(status.text)")
        #expect(status.text.contains("rsp6 (rsp6-keylist): STALE; never succeeded"), "\(status.text)")

        // Prometheus reads the same: the stale source, the others' ages and versions, no reason for the failure.
        let metrics = try await LoopbackHTTP.request(port: port, "GET", "/metrics")
        #expect(metrics.status == 200 && metrics.headers["content-type"]?.hasPrefix("text/plain") == true)
        #expect(metrics.text.contains("farecheck_trust_source_stale{source=\"rsp6\"} 1"), "\(metrics.text)")
        #expect(metrics.text.contains("farecheck_trust_source_stale{source=\"dtvg\"} 0"), "\(metrics.text)")
        #expect(metrics.text.contains("farecheck_trust_source_failures{source=\"rsp6\"} "), "\(metrics.text)")
        #expect(
            metrics.text.contains(
                "farecheck_trust_source_info{source=\"dtvg\",kind=\"dtvg-blocklist\",version=\"42\"} 1"),
            "\(metrics.text)")
        #expect(metrics.text.contains("farecheck_trust_changes_pending 0"), "\(metrics.text)")
        #expect(!metrics.text.contains("rsp6.json"), "the failure's reason names the URL: not here")

        // The operator report: a row per source, the stale one said in words, with why its last attempt failed.
        let body = "token=" + (operatorToken.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
        let login = try await LoopbackHTTP.request(
            port: port, "POST", "/report/login", headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(body.utf8))
        let cookie = try #require(login.cookie, "\(login.status) \(login.text)")
        let page = try await LoopbackHTTP.request(port: port, "GET", "/report", headers: ["Cookie": cookie]).text
        #expect(page.contains("<h2 id=\"trust-title\">Trust sources</h2>"), "\(page)")
        #expect(page.contains("<th scope=\"row\">dtvg</th><td>dtvg-blocklist</td><td>42</td>"), "\(page)")
        #expect(page.contains("<th scope=\"row\">rsp6</th>"))
        #expect(page.contains("<td class=\"stale\"><strong>stale:</strong> never"), "\(page)")
        #expect(page.contains("500"), "\(page)")
    }
}
