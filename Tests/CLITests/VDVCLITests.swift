import Foundation
import TestSupport
import Testing

/// The VDV-KA fixtures, as copied into the verification tests' resources.
let vdvFixtures = Fixtures.path("vdv")

@Suite("farecheck with VDV-KA tickets")
struct VDVCLITests {
    let bench = Workbench()
    var ticket: String { "\(vdvFixtures)/vrr-deutschlandticket-2023-03.bin" }

    func verdict(at time: String) throws -> [String: Any] {
        let run = try bench.farecheck(["verify", "--payload-file", ticket, "--at", time, "--json"])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("root pinned, sub-CAs accepted only as the operator says, the VRR ticket judged, listed, revoked, removed")
    func importVerifyRevoke() throws {
        let certs = try FileManager.default.contentsOfDirectory(atPath: "\(vdvFixtures)/certs")
            .filter { $0.hasSuffix(".vdv-cert") && !$0.hasPrefix("4555") }.sorted().map { "\(vdvFixtures)/certs/\($0)" }
        // Without a pinned root and unsigned bodies, nothing is trusted: the ticket's CA is unknown.
        bench.withEmptyStore()
        #expect(try verdict(at: "2023-03-15T12:00:00Z")["verdict"] as? String == "unknown-key")

        let root = try bench.farecheck([
            "keys", "import", "--vdv-root", "\(vdvFixtures)/certs/4555564456100106.vdv-cert",
        ])
        #expect(root.status == 0, "\(root.stderr)")
        #expect(root.text.contains("pinned VDV root EUVDV 10 01 06, RSA 1984"))

        // The fixture files are bare bodies whose signatures were removed: refused unless vouched for.
        let bare = try bench.farecheck(["keys", "import", "--vdv", certs[0]])
        #expect(bare.status == 2)
        #expect(bare.stderr.contains("bare body"))
        let vouched = try bench.farecheck(["keys", "import", "--trust-unsigned", "--vdv"] + certs)
        #expect(vouched.status == 0, "\(vouched.stderr)")
        #expect(vouched.text.contains("accepted VDV certificate DEVDV 11 02 16, RSA 1536"))

        // Keyed by their own holder reference: 29 distinct sub-CAs (three files are named after another one).
        let listed = try bench.farecheck(["keys", "list", "--json"]).jsonLines.filter {
            $0["format"] as? String == "vdv-ka"
        }
        #expect(listed.count == 30)
        #expect(
            listed.contains {
                $0["keyId"] as? String == "4445564456110216" && $0["versionType"] as? String == "trusted unsigned"
            })
        #expect(
            listed.contains {
                $0["keyId"] as? String == "4555564456100106" && $0["versionType"] as? String == "pinned root"
            })

        #expect(try verdict(at: "2023-03-15T12:00:00Z")["verdict"] as? String == "valid")
        #expect(try verdict(at: "2023-04-02T12:00:00Z")["verdict"] as? String == "expired")
        #expect(try verdict(at: "2023-02-27T12:00:00Z")["verdict"] as? String == "not-yet-valid")
        let valid = try verdict(at: "2023-03-15T12:00:00Z")
        #expect(valid["format"] as? String == "vdv-ka")
        #expect(valid["product"] as? String == "Deutschland-Ticket")
        #expect((valid["holder"] as? String)?.contains("Max Mustermann") == true)
        #expect(
            valid["holderCheck"] as? [String: String] == [
                "name": "Max Mustermann", "givenName": "Max", "familyName": "Mustermann", "dateOfBirth": "1984-12-31",
            ])

        let revoke = try bench.farecheck([
            "revoke", "--vdv-org", "57", "--entitlement", "2099643", "--reason", "on the VDV blocklist",
        ])
        #expect(revoke.status == 0, "\(revoke.stderr)")
        let revoked = try verdict(at: "2023-03-15T12:00:00Z")
        #expect(revoked["verdict"] as? String == "revoked")
        #expect((revoked["reason"] as? String)?.contains("on the VDV blocklist") == true)

        #expect(try bench.farecheck(["keys", "remove", "4445564456110216"]).status == 0)
        #expect(try verdict(at: "2023-03-15T12:00:00Z")["verdict"] as? String == "unknown-key")
    }

    @Test("a sub-CA without a pinned root is refused, saying what to do")
    func noRoot() throws {
        let run = try bench.farecheck([
            "keys", "import", "--trust-unsigned", "--vdv", "\(vdvFixtures)/certs/4445564456110216.vdv-cert",
        ])
        // A bare body vouched for needs no root to chain to; a signed one would.
        #expect(run.status == 0, "\(run.stderr)")
        let root = try bench.farecheck([
            "keys", "import", "--vdv-root", "\(vdvFixtures)/certs/4445564456110216.vdv-cert",
        ])
        #expect(root.status == 2)
        #expect(
            root.stderr.contains("not a root") || root.stderr.contains("not self-signed")
                || root.stderr.contains("signed by"))
    }
}
