import FareCore
import Foundation
import TestSupport
import Testing

/// UK RSP6 issuer keys added on the reference server, carried in its signed key bundle to a validator.
@Suite("UK RSP6 keys through sync", .serialized, .timeLimit(.minutes(5)))
struct RSP6SyncTests {
    static let ticket = Fixtures.path("rsp6/tt-dnql4xhvk.txt")

    func verdict(_ bench: SyncBench) throws -> [String: Any] {
        let run = try bench.validator.farecheck([
            "verify", "--payload-file", Self.ticket, "--at", "2022-12-28T12:00:00Z", "--json", "--db",
            bench.validator.db,
        ])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    @Test("TT's key file added on the server: the real TT ticket verifies after one sync, unknown-key once removed")
    func keysThroughSync() throws {
        let bench = try SyncBench()
        #expect(try verdict(bench)["verdict"] as? String == "unknown-key")

        // Options that a key file decides for itself are refused; the file's name gives the issuer.
        let withKid = try bench.server.adminRun([
            "keys", "add", "--format", "rsp6", "--kid", "1", Fixtures.path("rsp6/TT.json"),
        ])
        #expect(withKid.status == 2 && withKid.stderr.contains("An RSP6 key file names its keys"), "\(withKid.stderr)")
        let added = try bench.server.admin(["keys", "add", "--format", "rsp6", Fixtures.path("rsp6/TT.json")])
        #expect(added.components(separatedBy: "added rsp6 key").count == 3, "\(added)")
        let listed = try bench.server.admin(["keys", "list"]).split(separator: "\n").filter {
            $0.hasPrefix("rsp6\tTT\t")
        }
        #expect(listed.count == 2)
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let sync = try bench.syncCommand()
        #expect(sync.status == 0, "\(sync.stderr)")
        let valid = try verdict(bench)
        #expect(valid["verdict"] as? String == "valid", "\(valid)")
        #expect(valid["format"] as? String == "uk-rsp6")

        // Withdrawn on the server: gone from the validator with the next bundle.
        let kid = try #require(listed.first.map { $0.split(separator: "\t")[2] }).description
        let kid2 = try #require(listed.last.map { $0.split(separator: "\t")[2] }).description
        try bench.server.admin(["keys", "remove", "--format", "rsp6", "--issuer", "TT", "--kid", kid])
        try bench.server.admin(["keys", "remove", "--format", "rsp6", "--issuer", "TT", "--kid", kid2])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        #expect(try bench.syncCommand().status == 0)
        #expect(try verdict(bench)["verdict"] as? String == "unknown-key")
    }
}
