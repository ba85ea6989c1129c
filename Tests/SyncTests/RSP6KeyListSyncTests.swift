import FareCore
import Foundation
import RSATestKeys
import TestSupport
import Testing

/// The key list the open decoders share, added on the reference server (`keys add --format rsp6`) and carried in
/// its signed key bundle to a validator: live keys with their validity, test keys never.
@Suite("The published UK RSP6 key list through sync", .serialized, .timeLimit(.minutes(5)))
struct RSP6KeyListSyncTests {
    func verdict(_ bench: SyncBench, _ text: [UInt8], at time: String) throws -> [String: Any] {
        let payload = bench.validator.path("ticket-\(UUID().uuidString).txt")
        try Data(text).write(to: URL(fileURLWithPath: payload))
        let run = try bench.validator.farecheck([
            "verify", "--payload-file", payload, "--at", time, "--json", "--db", bench.validator.db,
        ])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("keys add --format rsp6 takes the list: live keys into the bundle with their validity, test keys refused")
    func publishedList() throws {
        let live = RSP6TestIssuer(issuerID: "ZZ")
        let test = RSP6TestIssuer(issuerID: "ZZ")
        let unlisted = RSP6TestIssuer(issuerID: "ZZ")
        let small = RSP6TestIssuer(issuerID: "ZZ", bits: 512)
        let bench = try SyncBench()

        // An older file of the {"n", "e"} form made the test key a live one on this server.
        let old = bench.validator.path("ZZ.json")
        try Data(test.keyFileJSON).write(to: URL(fileURLWithPath: old))
        try bench.server.admin(["keys", "add", "--format", "rsp6", old])

        let file = bench.validator.path("rsp6-keys.json")
        try Data(
            """
            {"ZZ": [
              \(live.listEntry(validFrom: "2025-01-01 00:00:00", validUntil: "2026-12-31 23:59:59")),
              \(live.listEntry(validFrom: "2025-01-01 00:00:00", validUntil: "2026-12-31 23:59:59", x509: true)),
              \(test.listEntry(isTest: true)),
              \(unlisted.listEntry(isPrivate: true)),
              \(small.listEntry())
            ]}
            """.utf8
        ).write(to: URL(fileURLWithPath: file))
        let added = try bench.server.adminRun(["keys", "add", "--format", "rsp6", file])
        #expect(added.status == 0, "\(added.stderr)")
        #expect(
            added.text.contains("ZZ: 1 added, 0 kept, 3 refused (5 entries, 1 repeating a key)"), "\(added.text)")
        #expect(added.stderr.contains("refused ZZ entry 3: a test key (is_test)"), "\(added.stderr)")
        #expect(added.stderr.contains("refused ZZ entry 4: marked is_private"), "\(added.stderr)")
        #expect(added.stderr.contains("refused ZZ entry 5: an RSA key of 512 bits"), "\(added.stderr)")
        // The test key the older file added is named, with the command that withdraws it.
        let testKeyLine = try #require(
            added.stderr.split(separator: "\n").first { $0.contains("is a test key, but this server publishes it") },
            "\(added.stderr)")
        let again = try bench.server.adminRun(["keys", "add", "--format", "rsp6", file])
        #expect(again.text.contains("ZZ: 0 added, 1 kept, 3 refused"), "\(again.text)")

        let kid = try #require(testKeyLine.firstMatch(of: #/--kid ([0-9a-f]{12})/#)?.output.1).description
        try bench.server.admin(["keys", "remove", "--format", "rsp6", "--issuer", "ZZ", "--kid", kid])
        let listed = try bench.server.admin(["keys", "list"]).split(separator: "\n").filter {
            $0.hasPrefix("rsp6\tZZ\t")
        }
        #expect(listed.count == 1, "\(listed)")
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let sync = try bench.syncCommand()
        #expect(sync.status == 0, "\(sync.stderr)")

        // The validator holds the live key with the list's validity, as a ticket key; no test key.
        let keys = try bench.validator.farecheck(["keys", "list", "--json", "--db", bench.validator.db]).jsonLines
            .filter { $0["format"] as? String == "uk-rsp6" }
        #expect(keys.count == 1, "\(keys)")
        #expect(keys.first?["purpose"] as? String == "tickets")
        #expect(keys.first?["notBefore"] != nil && keys.first?["notAfter"] != nil, "\(keys)")

        let ticket = RSP6TicketWriter.full(days: 10_523, daysOfValidity: 3)
        let valid = try verdict(bench, live.text(ticket), at: "2025-10-25T09:00:00Z")
        #expect(valid["verdict"] as? String == "valid", "\(valid)")
        // The test key's ticket: no key of ZZ the validator holds opens it.
        let signedByTest = try verdict(bench, test.text(ticket), at: "2025-10-25T09:00:00Z")
        #expect(signedByTest["verdict"] as? String == "invalid-signature", "\(signedByTest)")
        // The validity came with the bundle: bought after the key's end, key-expired.
        let late = try verdict(
            bench, live.text(RSP6TicketWriter.full(days: 10_959, daysOfValidity: 1)), at: "2027-01-03T10:00:00Z")
        #expect(late["verdict"] as? String == "key-expired", "\(late)")
    }
}
