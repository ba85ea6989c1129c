import Foundation
import RSATestKeys
import TestSupport
import Testing

/// `farecheck keys import --rsp6` with the key list the open decoders share, made with the tests' own RSA keys, and
/// `verify` judging what it stored: the real store, the real OpenSSL.
@Suite("farecheck with the published UK RSP6 key list")
struct RSP6KeyListCLITests {
    let bench = Workbench()
    let live = RSP6TestIssuer(issuerID: "ZZ")
    let test = RSP6TestIssuer(issuerID: "ZZ")
    let unlisted = RSP6TestIssuer(issuerID: "ZZ")
    let small = RSP6TestIssuer(issuerID: "ZZ", bits: 512)
    let other = RSP6TestIssuer(issuerID: "YY")

    /// ZZ: the live key (2025 and 2026) twice, once with its PEM in upper case; a test key; a private entry; a
    /// 512-bit key. YY: a key with no dates.
    var list: String {
        """
        {"ZZ": [
          \(live.listEntry(validFrom: "2025-01-01 00:00:00", validUntil: "2026-12-31 23:59:59")),
          \(live.listEntry(validFrom: "2025-01-01", validUntil: "2026-12-31", x509: true, uppercase: true)),
          \(test.listEntry(isTest: true)),
          \(unlisted.listEntry(isPrivate: true)),
          \(small.listEntry())
        ],
        "YY": [\(other.listEntry(validFrom: nil, validUntil: nil))]}
        """
    }

    func verdict(_ text: [UInt8], at time: String, _ extra: [String] = []) throws -> [String: Any] {
        let payload = bench.path("ticket-\(UUID().uuidString).txt")
        try Data(text).write(to: URL(fileURLWithPath: payload))
        let run = try bench.farecheck(["verify", "--payload-file", payload, "--at", time, "--json"] + extra)
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("the list imported as published: per-issuer counts, refusals by name, the same key once, test keys apart")
    func importAndVerify() throws {
        let file = bench.path("rsp6-keys.json")
        try Data(list.utf8).write(to: URL(fileURLWithPath: file))
        let imported = try bench.farecheck(["keys", "import", "--rsp6", file])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.text.contains("YY: 1 added, 0 kept, 0 refused (1 entry)"), "\(imported.text)")
        #expect(
            imported.text.contains("ZZ: 2 added, 0 kept, 2 refused (5 entries, 1 repeating a key, 1 test key)"),
            "\(imported.text)")
        #expect(imported.text.contains("3 added, 0 kept, 2 refused; 1 test key"), "\(imported.text)")
        #expect(imported.stderr.contains("refused ZZ entry 4: marked is_private"), "\(imported.stderr)")
        #expect(imported.stderr.contains("refused ZZ entry 5: an RSA key of 512 bits"), "\(imported.stderr)")

        // Again: nothing new, the same refusals.
        let again = try bench.farecheck(["keys", "import", "--rsp6", file])
        #expect(again.text.contains("ZZ: 0 added, 2 kept, 2 refused"), "\(again.text)")

        let listed = try bench.farecheck(["keys", "list", "--json"]).jsonLines
        #expect(listed.count == 3, "\(listed)")
        let zz = listed.filter { $0["issuer"] as? String == "ZZ" }
        #expect(zz.map { $0["purpose"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["test-tickets", "tickets"])
        #expect(zz.contains { $0["purpose"] as? String == "tickets" && $0["notAfter"] != nil })

        // Travel 2025-10-24 for three days, bought 2025-10-22.
        let ticket = RSP6TicketWriter.full(days: 10_523, daysOfValidity: 3)
        let valid = try verdict(live.text(ticket), at: "2025-10-25T09:00:00Z")
        #expect(valid["verdict"] as? String == "valid", "\(valid)")
        #expect(try verdict(other.text(ticket), at: "2025-10-25T09:00:00Z")["verdict"] as? String == "valid")

        // A test key's ticket: not valid in service; valid on a bench that asks for test keys, with a warning.
        let inService = try verdict(test.text(ticket), at: "2025-10-25T09:00:00Z")
        #expect(inService["verdict"] as? String == "wrong-issuer", "\(inService)")
        #expect((inService["reason"] as? String)?.contains("test key") == true, "\(inService)")
        let onBench = try verdict(test.text(ticket), at: "2025-10-25T09:00:00Z", ["--test-keys"])
        #expect(onBench["verdict"] as? String == "valid", "\(onBench)")
        #expect((onBench["warnings"] as? [String])?.contains("test-key") == true, "\(onBench)")

        // Bought 2027-01-01, after the key's end: key-expired, as for a UIC key.
        let late = try verdict(
            live.text(RSP6TicketWriter.full(days: 10_959, daysOfValidity: 1)), at: "2027-01-03T10:00:00Z")
        #expect(late["verdict"] as? String == "key-expired", "\(late)")

        // The refused entries' keys were not stored.
        #expect(
            try verdict(unlisted.text(ticket), at: "2025-10-25T09:00:00Z")["verdict"] as? String == "invalid-signature")
    }

    @Test("a list with no usable key fails naming each entry; broken JSON names its line and column")
    func nothingUsable() throws {
        let file = bench.path("bad.json")
        try Data(#"{"ZZ": [\#(unlisted.listEntry(isPrivate: true)), \#(small.listEntry())]}"#.utf8)
            .write(to: URL(fileURLWithPath: file))
        let refused = try bench.farecheck(["keys", "import", "--rsp6", file])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("ZZ entry 1: marked is_private"), "\(refused.stderr)")
        #expect(refused.stderr.contains("ZZ entry 2: an RSA key of 512 bits"), "\(refused.stderr)")
        #expect(refused.stderr.contains("no key of the file can be used (2 entries refused)"), "\(refused.stderr)")
        // No key line: nothing was stored (a store the refused import did not make is an error document).
        #expect(try bench.farecheck(["keys", "list", "--json"]).jsonLines.allSatisfy { $0["error"] != nil })

        try Data("{\"ZZ\": [\n  \(live.listEntry())\n  \(other.listEntry())\n]}".utf8).write(
            to: URL(fileURLWithPath: file))
        let broken = try bench.farecheck(["keys", "import", "--rsp6", file])
        #expect(broken.status != 0)
        #expect(broken.stderr.contains("not JSON") && broken.stderr.contains("line 3, column"), "\(broken.stderr)")
    }
}
