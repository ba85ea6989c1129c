import Foundation
import RSATestKeys
import TestSupport
import Testing

@Suite("farecheck with UK RSP6 tickets")
struct RSP6CLITests {
    let bench = Workbench()
    var ticket: String { Fixtures.path("rsp6/tt-dnql4xhvk.txt") }

    func verdict(_ payloadFile: String, at time: String) throws -> [String: Any] {
        let run = try bench.farecheck(["verify", "--payload-file", payloadFile, "--at", time, "--json"])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("TT's published keys imported, listed, the real ticket judged with its fields, revoked by its reference")
    func importVerifyRevoke() throws {
        // Without keys of TT: unknown-key, saying what to import.
        bench.withEmptyStore()
        let before = try verdict(ticket, at: "2022-12-28T12:00:00Z")
        #expect(before["verdict"] as? String == "unknown-key")
        #expect((before["reason"] as? String)?.contains("keys import --rsp6 TT.json") == true)

        let imported = try bench.farecheck(["keys", "import", "--rsp6", Fixtures.path("rsp6/TT.json")])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.contains("TT: 2 added, 0 kept, 0 refused (2 entries)"), "\(imported.text)")
        // The same file again names the same keys.
        let again = try bench.farecheck(["keys", "import", "--rsp6", Fixtures.path("rsp6/TT.json")])
        #expect(again.text.contains("0 added, 2 kept, 0 refused"), "\(again.text)")
        let listed = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(listed.count == 2)
        #expect(listed.allSatisfy { $0["format"] as? String == "uk-rsp6" && $0["issuer"] as? String == "TT" })
        #expect(listed.allSatisfy { ($0["keyType"] as? String)?.hasPrefix("RSA") == true })

        let valid = try verdict(ticket, at: "2022-12-28T12:00:00Z")
        #expect(valid["verdict"] as? String == "valid", "\(valid)")
        #expect(valid["format"] as? String == "uk-rsp6")
        #expect(valid["issuer"] as? String == "TT")
        let details = try #require(valid["details"] as? [[String: String]])
        #expect(details.contains { $0["label"] == "origin" && $0["value"] == "NLC 3820" })
        #expect(details.contains { $0["label"] == "ticket reference" && $0["value"] == "TTDNQL4XHVK" })
        #expect(try verdict(ticket, at: "2022-12-29T12:00:00Z")["verdict"] as? String == "expired")

        // The text for a person: the verdict, the keys when explained.
        let explained = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2022-12-28T12:00:00Z", "--explain",
        ])
        #expect(explained.text.contains("VALID"), "\(explained.text)")
        #expect(explained.text.contains("VERIFIED: recovers a PKCS#1 v1.5 block of type 1"), "\(explained.text)")

        let revoke = try bench.farecheck([
            "revoke", "--issuer", "TT", "--ticket-key", "TTDNQL4XHVK", "--reason", "refunded",
        ])
        #expect(revoke.status == 0, "\(revoke.stderr)")
        let revoked = try verdict(ticket, at: "2022-12-28T12:00:00Z")
        #expect(revoked["verdict"] as? String == "revoked")
    }

    @Test("an issuer's own key file with --issuer, a file keyed by issuer, and files that are refused")
    func keyFiles() throws {
        let issuer = RSP6TestIssuer(issuerID: "ZZ")
        let keyFile = bench.path("zz-keys.json")
        try Data(issuer.keyFileJSON).write(to: URL(fileURLWithPath: keyFile))
        // The file's name names no issuer: --issuer is needed.
        let unnamed = try bench.farecheck(["keys", "import", "--rsp6", keyFile])
        #expect(unnamed.status != 0)
        #expect(unnamed.stderr.contains("name the issuer"), "\(unnamed.stderr)")
        #expect(try bench.farecheck(["keys", "import", "--rsp6", keyFile, "--issuer", "zz"]).status == 0)

        let text = issuer.text(RSP6TicketWriter.full(days: 10_523, daysOfValidity: 3))
        let payload = bench.path("zz.txt")
        try Data(text).write(to: URL(fileURLWithPath: payload))
        let valid = try verdict(payload, at: "2025-10-25T09:00:00Z")
        #expect(valid["verdict"] as? String == "valid", "\(valid)")
        #expect(valid["holder"] as? String == "MS A SMITH")
        let warnings = try #require(valid["warnings"] as? [String])
        #expect(warnings == ["booked-departure"])

        // One character changed: refused as forged.
        var altered = text
        altered[40] = altered[40] == UInt8(ascii: "A") ? UInt8(ascii: "C") : UInt8(ascii: "A")
        try Data(altered).write(to: URL(fileURLWithPath: payload))
        #expect(try verdict(payload, at: "2025-10-25T09:00:00Z")["verdict"] as? String == "invalid-signature")

        // A combined file: every issuer's keys, or only the one named.
        let tt = String(decoding: try Fixtures.bytes("rsp6/TT.json"), as: UTF8.self)
        let combined = bench.path("all.json")
        try Data(#"{"TT": \#(tt), "ZZ": \#(String(decoding: issuer.keyFileJSON, as: UTF8.self))}"#.utf8)
            .write(to: URL(fileURLWithPath: combined))
        let some = try bench.farecheck(["keys", "import", "--rsp6", combined, "--issuer", "TT"])
        #expect(some.text.contains("TT: 2 added, 0 kept, 0 refused (2 entries)"), "\(some.text)")
        let all = try bench.farecheck(["keys", "import", "--rsp6", combined])
        #expect(
            all.text.contains("TT: 0 added, 2 kept, 0 refused") && all.text.contains("ZZ: 0 added, 1 kept"),
            "\(all.text)")

        // Not JSON, a key that is no RSA key, an option that does not go with --rsp6: clear refusals.
        let broken = bench.path("XX.json")
        try Data("[{\"n\": \"AAAA\", \"e\": \"AQAB\"}]".utf8).write(to: URL(fileURLWithPath: broken))
        let notRSA = try bench.farecheck(["keys", "import", "--rsp6", broken])
        #expect(notRSA.status != 0)
        #expect(notRSA.stderr.contains("refused XX entry 1: not an RSA public key"), "\(notRSA.stderr)")
        #expect(notRSA.stderr.contains("no key of the file can be used"), "\(notRSA.stderr)")
        try Data("{not json".utf8).write(to: URL(fileURLWithPath: broken))
        #expect(try bench.farecheck(["keys", "import", "--rsp6", broken]).stderr.contains("not JSON"))
        let mixed = try bench.farecheck(["keys", "import", "--rsp6", keyFile, "--kid", "1"])
        #expect(mixed.status != 0)
        #expect(mixed.stderr.contains("--rsp6 FILE takes the keys"), "\(mixed.stderr)")
    }
}
