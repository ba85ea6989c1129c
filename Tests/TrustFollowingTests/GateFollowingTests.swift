import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats
import TrustFollowing
import TrustSources
import TrustStore
import ValidationAPI
import ValidationServer

/// A stand-alone gate following its publishers itself, with no server: the follower's house beside the gate's store
/// (a real SQLite file), the publisher on loopback (real HTTPS), the gate's store handed what the house applied, and
/// the verdict read by the real `farecheck verify` on that store. The daemon runs these same pieces
/// (`FarecheckDaemon.trustFollowing`); `DaemonTrustFollowingTests` runs them in a real daemon.
@Suite("a stand-alone gate following its publishers itself", .serialized, .timeLimit(.minutes(3)))
struct GateFollowingTests {
    @Test(
        "its verdict changes with the publisher's list: a new key, a blocklist version, a held drop an operator approves"
    )
    func gateFollows() async throws {
        let gateBench = Workbench()
        let gate = try TrustStore(path: gateBench.db)
        // A key imported by hand: no followed list ever takes it away.
        let byHand = try PrivateKey.generate(.ecP256).publicKey
        try gate.saveKey(
            KeyRecord(
                family: .fc1, issuer: "demo-transit", keyID: "by-hand", algorithm: "ES256", spki: byHand.spkiDER,
                source: "by-hand.pem"))
        let housePath = GateTrustHandOver.housePath(store: gateBench.db)
        let house = try SQLiteServerStore.open(path: housePath, create: true)
        let follower = TrustFollower(store: house, anchorKey: nil, inUse: GateTrustHandOver.inUse(gate))
        let handOver = GateTrustHandOver(house: house, gate: gate, logger: .init(label: "test"))
        let publisher = try await LoopbackPublisher.start()
        let (keyList, blocklist) = publisher.uicAndDTVGSources()
        let settler = GateTrustSettler(handOver: handOver, sources: [keyList, blocklist])

        func verdict() throws -> String {
            let run = try gateBench.farecheck([
                "verify", "--payload-file", Fixtures.path("uic/db-deutschland-ticket-2025.bin"), "--at",
                "2025-02-28T12:00:00Z", "--json", "--db", gateBench.db,
            ])
            return run.jsonLines.first?["verdict"] as? String ?? "no verdict: \(run.stderr)"
        }
        func round(_ source: TrustSourceConfiguration) async -> TrustRoundOutcome {
            let outcome = await follower.run(source)
            await settler.settle()
            return outcome
        }

        // The publisher does not list DB's key yet; then it does: one round, and the gate's verdict changes.
        publisher.serve(
            "/keys.xml", try UICKeyListFixture.bytes(excludingIssuer: "1080"), contentType: "application/xml")
        let first = await round(keyList)
        #expect(first.kind == .applied, "\(first.line)")
        let followed = try gate.keys(fromSource: TrustStore.followedSource("uic"))
        #expect(followed.count > 50 && followed.allSatisfy { $0.family == .uic })
        #expect(try verdict() == "unknown-key")
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        let added = await round(keyList)
        #expect(added.kind == .applied && added.detail.contains("uic 1080/"), "\(added.line)")
        #expect(try verdict() == "valid")
        let listed = try gate.keys(fromSource: TrustStore.followedSource("uic")).count
        let houseListed = try await house.issuerKeys(fromSource: "uic").count
        #expect(listed > followed.count && listed == houseListed)
        // Handed over again with nothing new, the store's trust is not marked changed.
        let changedAt = try gate.trustChangedAt()
        #expect(await round(keyList).kind == .unchanged)
        #expect(try gate.trustChangedAt() == changedAt)

        // The DTVG publishes a blocklist naming the ticket.
        publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes("blocklists/dtvg-blocklist.zip"), contentType: "application/zip")
        publisher.serve("/versionuic.txt", try Fixtures.bytes("blocklists/dtvg-version.txt"), contentType: "text/plain")
        #expect(await round(blocklist).kind == .applied)
        #expect(try verdict() == "revoked")
        #expect(try gate.blocklists().contains { $0.list == .dtvgUIC && $0.origin == .local && $0.entryCount > 0 })

        // The publisher breaks its list down to 3 keys: held in the house, and the gate keeps every key.
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 3), contentType: "application/xml")
        let held = await round(keyList)
        #expect(held.kind == .held, "\(held.line)")
        #expect(try gate.keys(fromSource: TrustStore.followedSource("uic")).count == listed)
        #expect(try verdict() == "revoked")

        // An operator decides in the house with the server's own command, on the gate's configuration file; the next
        // settle (the daemon's runs every minute) hands it over.
        let config = try TrustCommandTests.configuration(publisher, in: gateBench.directory)
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_SERVER_DB"] = housePath
        let pending = try gateBench.run(ReferenceServer.binary, ["trust", "pending"], environment: environment)
        #expect(pending.status == 0 && pending.text.contains("uic held"), "\(pending.text)\(pending.stderr)")
        let id = try #require(held.pendingID)
        let approved = try gateBench.run(
            ReferenceServer.binary, ["trust", "approve", "--config", config, String(id)], environment: environment)
        #expect(approved.status == 0 && approved.text.contains("uic applied:"), "\(approved.stderr)")
        await settler.settle()
        let kept = try gate.keys(fromSource: TrustStore.followedSource("uic"))
        let houseKept = try await house.issuerKeys(fromSource: "uic").count
        #expect(kept.count < 3 && kept.count == houseKept)
        #expect(try verdict() == "unknown-key")
        // Only what the source brought went: the key imported by hand stays.
        #expect(try gate.keys(withID: "by-hand").count == 1)
    }
}
