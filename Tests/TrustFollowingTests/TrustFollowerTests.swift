import FareCore
import Foundation
import RSATestKeys
import Signatures
import TestSupport
import Testing
import TicketFormats
import TrustFollowing
import TrustSources
import ValidationAPI
import ValidationServer

/// A reference server's store (a real SQLite file) following a publisher on loopback (real HTTPS, the test CA
/// pinned), as the worker and `farecheck-server trust fetch` run a round.
struct FollowerBench {
    let directory: Workbench
    let store: SQLServerStore
    let publisher: LoopbackPublisher
    let follower: TrustFollower

    init() async throws {
        directory = Workbench()
        store = try SQLiteServerStore.open(path: directory.path("server.sqlite"), create: true)
        publisher = try await LoopbackPublisher.start()
        let anchor = try PrivateKey(pem: String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
        follower = TrustFollower(store: store, anchorKey: anchor)
    }

    func source(
        _ kind: TrustSourceKind, name: String = "publisher", path: String, versionPath: String? = nil,
        maximumBytes: Int = 16 << 20, timeout: Duration = .seconds(5)
    ) -> TrustSourceConfiguration {
        TrustSourceConfiguration(
            name: name, kind: kind, url: publisher.url(path), versionURL: versionPath.map(publisher.url),
            trust: .pinnedCA(path: publisher.pki.caCertificate), maximumBytes: maximumBytes, headTimeout: timeout,
            bodyTimeout: timeout)
    }

    /// Serves the whole UIC key list at `/keys.xml` and follows it once: the server then holds its keys.
    func followingKeyList(timeout: Duration = .seconds(5)) async throws -> TrustSourceConfiguration {
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        let source = self.source(.uicKeyList, path: "/keys.xml", timeout: timeout)
        let first = await follower.run(source)
        #expect(first.kind == .applied, "\(first.line)")
        return source
    }

    func state(_ name: String = "publisher") async throws -> TrustSourceState? {
        try await store.trustSourceStates().first { $0.name == name }
    }

    func audit() async throws -> [TrustAuditEntry] { try await store.trustAudit(source: nil, limit: 50) }
}

extension LoopbackPublisher {
    /// The UIC key list at `/keys.xml` (source `uic`) and the DTVG blocklist at `/blacklistuic.zip` with its
    /// version at `/versionuic.txt` (source `dtvg`), this publisher's CA pinned.
    func uicAndDTVGSources() -> (keyList: TrustSourceConfiguration, blocklist: TrustSourceConfiguration) {
        let pinned = PublisherTrust.pinnedCA(path: pki.caCertificate)
        return (
            TrustSourceConfiguration(name: "uic", kind: .uicKeyList, url: url("/keys.xml"), trust: pinned),
            TrustSourceConfiguration(
                name: "dtvg", kind: .dtvgBlocklist, url: url("/blacklistuic.zip"),
                versionURL: url("/versionuic.txt"), trust: pinned)
        )
    }
}

/// The UIC key list as published, or changed as a publisher might change it.
enum UICKeyListFixture {
    /// The list's text before its first key, its keys (each `<key>…</key>`), and its text after the last.
    static func parts() throws -> (head: String, keys: [String], tail: String) {
        let text = String(decoding: try Fixtures.bytes("uic/uic-publickeys-snapshot.xml"), as: UTF8.self)
        let pieces = text.components(separatedBy: "</key>")
        let head = String(pieces[0][..<pieces[0].range(of: "<key>")!.lowerBound])
        let keys = pieces.dropLast().map { piece in String(piece[piece.range(of: "<key>")!.lowerBound...]) + "</key>" }
        return (head, keys, pieces.last!)
    }

    /// The list without the keys of `issuer` (keys the publisher has not listed yet, or has withdrawn).
    static func bytes(excludingIssuer issuer: String) throws -> [UInt8] {
        let list = try parts()
        let kept = list.keys.filter { !$0.contains("<issuerCode>\(issuer)</issuerCode>") }
        return Array((list.head + kept.joined() + list.tail).utf8)
    }

    /// The list whole, or with only its first `count` keys (a list a publisher broke).
    static func bytes(keeping count: Int? = nil) throws -> [UInt8] {
        let list = try parts()
        return Array((list.head + list.keys.prefix(count ?? list.keys.count).joined() + list.tail).utf8)
    }
}

@Suite("the server following its trust publishers", .serialized, .timeLimit(.minutes(3)))
struct TrustFollowerTests {
    @Test("a new UIC key list is checked, applied and signed into a bundle; the same list again changes nothing")
    func keyListApplied() async throws {
        let bench = try await FollowerBench()
        bench.publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        let source = bench.source(.uicKeyList, path: "/keys.xml")

        let first = await bench.follower.run(source)
        #expect(first.kind == .applied, "\(first.line)")
        let keys = try await bench.store.issuerKeys(fromSource: "publisher")
        #expect(keys.count > 50, "\(first.line)")
        #expect(keys.allSatisfy { $0.format == "uic" })
        let bundle = try #require(try await bench.store.latestBundle())
        #expect(bundle.sequence == 1)
        #expect(first.detail.contains("key bundle 1 signed"), "\(first.line)")
        let audit = try await bench.audit()
        #expect(audit.first?.action == .applied)
        #expect(audit.first?.detail.contains("\(keys.count) keys added or changed") == true, "\(audit)")

        // The second round asks conditionally and the publisher answers 304: nothing changes, the source is fresh.
        let second = await bench.follower.run(source)
        #expect(second.kind == .unchanged, "\(second.line)")
        #expect(
            bench.publisher.requests("/keys.xml").last?.headers["if-none-match"] == bench.publisher.etag("/keys.xml"))
        #expect(try await bench.store.latestBundle()?.sequence == 1)
        let state = try #require(try await bench.state())
        #expect(state.lastError == nil && state.lastSuccess != nil && state.failures == 0)
    }

    @Test("a key list that would drop most keys is held for an operator; approved, it applies; rejected, never again")
    func dropHeldThenApproved() async throws {
        let bench = try await FollowerBench()
        let source = try await bench.followingKeyList()
        let before = try await bench.store.issuerKeys(fromSource: "publisher")

        bench.publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 3), contentType: "application/xml")
        let held = await bench.follower.run(source)
        #expect(held.kind == .held, "\(held.line)")
        #expect(held.detail.contains("it would remove"), "\(held.line)")
        #expect(try await bench.store.issuerKeys(fromSource: "publisher") == before)
        #expect(try await bench.store.latestBundle()?.sequence == 1)
        let pending = try await bench.store.trustChanges(pendingOnly: true)
        #expect(pending.count == 1)
        let id = try #require(held.pendingID)

        // Fetched again (a 304: the held change's validators are kept), it waits for its operator: not held twice.
        let again = await bench.follower.run(source)
        #expect(again.kind == .unchanged, "\(again.line)")
        #expect(try await bench.store.trustChanges(pendingOnly: true).count == 1)

        let sources = TrustFollowingConfiguration(sources: [source])
        let approved = try await bench.follower.approve(id, sources: sources)
        #expect(approved.kind == .applied, "\(approved.line)")
        #expect(try await bench.store.issuerKeys(fromSource: "publisher").count <= 3)
        #expect(try await bench.store.latestBundle()?.sequence == 2)
        #expect(try await bench.audit().map(\.action).prefix(2) == [.applied, .approved])
        await #expect(throws: ServerError.self) { try await bench.follower.approve(id, sources: sources) }

        // A list that drops everything again, rejected: the trust stays, and the same content is not held again.
        bench.publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 1), contentType: "application/xml")
        let second = await bench.follower.run(source)
        #expect(second.kind == .applied || second.kind == .held, "\(second.line)")
        if let secondID = second.pendingID {
            _ = try await bench.follower.reject(secondID)
            let kept = try await bench.store.issuerKeys(fromSource: "publisher")
            let after = await bench.follower.run(source)
            #expect(after.kind == .unchanged, "\(after.line)")
            #expect(try await bench.store.trustChanges(pendingOnly: true).isEmpty)
            #expect(try await bench.store.issuerKeys(fromSource: "publisher") == kept)
        }
    }

    @Test("a key list dropping a key a ticket verified with in the last 30 days is held, however few keys it drops")
    func keyInUseHeld() async throws {
        let bench = try await FollowerBench()
        let source = try await bench.followingKeyList()
        let keys = try await bench.store.issuerKeys(fromSource: "publisher")
        let used = try #require(keys.first { $0.issuer == "1080" })

        // A gate verified a DB ticket with that key yesterday, and uploaded the inspection.
        try await bench.store.addDevice(
            id: "gate-1", tokenHash: [UInt8](repeating: 1, count: 32), role: .gate, at: Date())
        let record = InspectionRecord(
            id: "i-1", inspectedAt: Int64(Date().addingTimeInterval(-86_400).timeIntervalSince1970 * 1000),
            source: "front-door", symbology: nil, payloadDigest: [1, 2], format: Recorded(.uic9183),
            issuer: used.issuer, ticketID: [0x41], keyID: used.keyID, verdict: Recorded(.valid), reason: "Valid.",
            signature: Recorded(.valid), warnings: [], inspector: nil)
        _ = try await bench.store.storeInspections([record], deviceID: "gate-1", receivedAt: Date())

        // DB's keys leave the list: a small share of the keys, but one of them is in use.
        bench.publisher.serve(
            "/keys.xml", try UICKeyListFixture.bytes(excludingIssuer: "1080"), contentType: "application/xml")
        let held = await bench.follower.run(source)
        #expect(held.kind == .held, "\(held.line)")
        #expect(held.detail.contains("tickets verified with in the last 30 days"), "\(held.line)")
        #expect(held.detail.contains("uic 1080/\(used.keyID)"), "\(held.line)")
        #expect(try await bench.store.issuerKeys(fromSource: "publisher") == keys)
    }

    @Test(
        "every way a publisher fails leaves the trust as it was, the source stale with its reason, and an audit line",
        arguments: [
            ("HTTP 500", PublisherFailure.status(500), "500"),
            ("truncated body", PublisherFailure.truncate(after: 2_000), "incomplete"),
            ("oversized body", PublisherFailure.oversized(bytes: 40 << 20, announced: false), "more than"),
            ("a head that never comes", PublisherFailure.holdHead(.seconds(10)), "did not answer"),
            ("a body that stalls", PublisherFailure.stallBody(after: 1_000, for: .seconds(10)), "body"),
            ("a redirect to another host", PublisherFailure.redirect(to: "https://127.0.0.2:1/keys.xml"), "127.0.0.2"),
        ])
    func failingPublisher(_ name: String, _ failure: PublisherFailure, _ said: String) async throws {
        let bench = try await FollowerBench()
        let source = try await bench.followingKeyList(timeout: .milliseconds(800))
        let keys = try await bench.store.issuerKeys()

        bench.publisher.serve("/keys.xml", try UICKeyListFixture.bytes(keeping: 2), contentType: "application/xml")
        bench.publisher.fail("/keys.xml", failure)
        let outcome = await bench.follower.run(source)
        #expect(outcome.kind == .failed, "\(name): \(outcome.line)")
        #expect(outcome.detail.lowercased().contains(said.lowercased()), "\(name): \(outcome.line)")
        #expect(try await bench.store.issuerKeys() == keys, "\(name)")
        #expect(try await bench.store.latestBundle()?.sequence == 1, "\(name)")
        let state = try #require(try await bench.state())
        #expect(state.lastError != nil && state.failures == 1, "\(name)")
        let audit = try await bench.audit()
        #expect(audit.first?.action == .failed && audit.first?.detail.contains("the trust is as it was") == true)
    }

    @Test("a file that does not parse changes nothing, and says why")
    func unparsable() async throws {
        let bench = try await FollowerBench()
        bench.publisher.serve("/keys.xml", Array("<keys><key><issuerCode>".utf8), contentType: "application/xml")
        let outcome = await bench.follower.run(bench.source(.uicKeyList, path: "/keys.xml"))
        #expect(outcome.kind == .failed, "\(outcome.line)")
        #expect(try await bench.store.issuerKeys().isEmpty)
        #expect(try await bench.store.latestBundle() == nil)
    }

    @Test("--dry-run says what would change and changes nothing")
    func dryRun() async throws {
        let bench = try await FollowerBench()
        bench.publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        let outcome = await bench.follower.run(bench.source(.uicKeyList, path: "/keys.xml"), dryRun: true)
        #expect(outcome.kind == .wouldApply, "\(outcome.line)")
        #expect(outcome.detail.contains("keys added or changed"), "\(outcome.line)")
        #expect(try await bench.store.issuerKeys().isEmpty)
        #expect(try await bench.state() == nil)
        #expect(try await bench.audit().isEmpty)
    }

    @Test(
        "the DTVG blocklist follows its version file: a new version applies, the same is not fetched, one going back is held"
    )
    func blocklistVersions() async throws {
        let bench = try await FollowerBench()
        let files = "blocklists/"
        bench.publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes(files + "dtvg-blocklist.zip"), contentType: "application/zip")
        bench.publisher.serve(
            "/versionuic.txt", try Fixtures.bytes(files + "dtvg-version.txt"), contentType: "text/plain")
        let source = bench.source(.dtvgBlocklist, path: "/blacklistuic.zip", versionPath: "/versionuic.txt")

        let first = await bench.follower.run(source)
        #expect(first.kind == .applied, "\(first.line)")
        #expect(try await bench.store.blocklists() == [PublishedBlocklist(list: .dtvgUIC, version: "42")])
        #expect(try await bench.store.blocklistEntryCount(.dtvgUIC) == 24)

        // The same version: the list itself is not fetched again.
        let same = await bench.follower.run(source)
        #expect(same.kind == .unchanged, "\(same.line)")
        #expect(bench.publisher.requests("/blacklistuic.zip").count == 1)

        bench.publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes(files + "dtvg-blocklist-v2.zip"), contentType: "application/zip")
        bench.publisher.serve(
            "/versionuic.txt", try Fixtures.bytes(files + "dtvg-version-v2.txt"), contentType: "text/plain")
        let second = await bench.follower.run(source)
        #expect(second.kind == .applied, "\(second.line)")
        #expect(try await bench.store.blocklists() == [PublishedBlocklist(list: .dtvgUIC, version: "43")])

        // The publisher goes back to version 42: held, version 43 stays.
        bench.publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes(files + "dtvg-blocklist.zip"), contentType: "application/zip")
        bench.publisher.serve(
            "/versionuic.txt", try Fixtures.bytes(files + "dtvg-version.txt"), contentType: "text/plain")
        let back = await bench.follower.run(source)
        #expect(back.kind == .held, "\(back.line)")
        #expect(back.detail.contains("older than version 43"), "\(back.line)")
        #expect(try await bench.store.blocklists() == [PublishedBlocklist(list: .dtvgUIC, version: "43")])
        #expect(try await bench.state()?.version == "43", "the status names the version validators get")
        // Fetched again, the held version waits for its operator: not held twice.
        let again = await bench.follower.run(source)
        #expect(again.kind == .unchanged, "\(again.line)")
        #expect(try await bench.store.trustChanges(pendingOnly: true).count == 1)
    }
}

/// The verdict a validator gives `payload` at `at` after one sync with `server` (the round the daemon's worker runs),
/// its token in `device.token`.
func syncedVerdict(_ validator: Workbench, from server: ReferenceServer, payload: String, at: String) throws -> String {
    let synced = try validator.farecheck([
        "sync", "--url", server.baseURL, "--token-file", validator.path("device.token"), "--demo-anchor", "--db",
        validator.db,
    ])
    #expect(synced.status == 0, "\(synced.stderr)")
    let run = try validator.farecheck([
        "verify", "--payload-file", payload, "--at", at, "--json", "--db", validator.db,
    ])
    return run.jsonLines.first?["verdict"] as? String ?? "no verdict: \(run.stderr)"
}

/// From the publisher's file to a validator's verdict, with nobody in between: the server's follower fetches and
/// signs, a validator registered with the running reference server syncs (the round the daemon's worker runs), and
/// its verdict on a real ticket changes.
@Suite("trust from its publisher to a validator's verdict", .serialized, .timeLimit(.minutes(3)))
struct TrustToVerdictTests {
    @Test("a new UIC key makes unknown-key valid; a new DTVG blocklist version makes valid revoked")
    func publisherToVerdict() async throws {
        let server = try ReferenceServer()
        let token = try server.addDevice("gate-1")
        let validator = Workbench()
        try token.write(toFile: validator.path("device.token"), atomically: true, encoding: .utf8)
        let publisher = try await LoopbackPublisher.start()
        let store = try SQLiteServerStore.open(path: server.database, create: false)
        let anchor = try PrivateKey(pem: String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
        let follower = TrustFollower(store: store, anchorKey: anchor)
        let (keyList, blocklist) = publisher.uicAndDTVGSources()
        try server.start()

        func verdict() throws -> String {
            try syncedVerdict(
                validator, from: server, payload: Fixtures.path("uic/db-deutschland-ticket-2025.bin"),
                at: "2025-02-28T12:00:00Z")
        }

        // The publisher does not list DB's key yet.
        publisher.serve(
            "/keys.xml", try UICKeyListFixture.bytes(excludingIssuer: "1080"), contentType: "application/xml")
        #expect(await follower.run(keyList).kind == .applied)
        #expect(try verdict() == "unknown-key")

        // It lists it: one round of the server, one sync of the validator.
        publisher.serve("/keys.xml", try UICKeyListFixture.bytes(), contentType: "application/xml")
        let added = await follower.run(keyList)
        #expect(added.kind == .applied && added.detail.contains("uic 1080/"), "\(added.line)")
        #expect(try verdict() == "valid")

        // The DTVG publishes a blocklist naming the ticket.
        publisher.serve(
            "/blacklistuic.zip", try Fixtures.bytes("blocklists/dtvg-blocklist.zip"), contentType: "application/zip")
        publisher.serve("/versionuic.txt", try Fixtures.bytes("blocklists/dtvg-version.txt"), contentType: "text/plain")
        #expect(await follower.run(blocklist).kind == .applied)
        #expect(try verdict() == "revoked")
    }
}

/// The VDV-KA certificate directory, a real slapd on loopback holding certificates of the tests' own VDV PKI.
@Suite("the server following the VDV certificate directory", .serialized, .timeLimit(.minutes(2)))
struct VDVDirectoryFollowingTests {
    @Test("the directory's sub-CAs chaining to the pinned root reach a validator, whose VDV ticket goes valid")
    func directoryFollowed() async throws {
        let pki = VDVTestPKI.shared
        let server = try ReferenceServer()
        let token = try server.addDevice("gate-1")
        let validator = Workbench()
        try token.write(toFile: validator.path("device.token"), atomically: true, encoding: .utf8)
        let stranger = TestRSAKey(bits: 1536)
        let slapd = try LoopbackSLAPD(entries: [
            .certificate(pki.subCAReference.hex, pki.subCAFile(pki.subCAReference, key: pki.subCA)),
            .certificate(pki.otherSubCAReference.hex, pki.subCAFile(pki.otherSubCAReference, key: pki.otherSubCA)),
            // Signed by a root this server does not pin, and a bare body: the directory's word is not trust.
            .certificate(
                "4445564456119921",
                pki.subCAFile(VDVCAReference(hex: "4445564456119921")!, key: stranger, signer: pki.otherRoot)),
            .certificate(
                "4445564456119821",
                VDVWriter.clearCertificate(
                    pki.subCABody(VDVCAReference(hex: "4445564456119821")!, key: stranger, expiry: (2032, 12, 1)))),
        ])
        defer { slapd.stop() }
        let store = try SQLiteServerStore.open(path: server.database, create: false)
        let anchor = try PrivateKey(pem: String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
        let follower = TrustFollower(store: store, anchorKey: anchor)
        let source = TrustSourceConfiguration(
            name: "vdv", kind: .vdvLDAP, url: slapd.url, ldapBase: LoopbackSLAPD.base, allowPlainHTTP: true)
        try server.start()
        let ticket = validator.path("vdv-ticket.bin")
        try Data(pki.barcode()).write(to: URL(fileURLWithPath: ticket))
        func verdict() throws -> String {
            try syncedVerdict(validator, from: server, payload: ticket, at: "2030-06-15T12:00:00Z")
        }

        // No root pinned: the directory's answer alone is not trust.
        let unpinned = await follower.run(source)
        #expect(unpinned.kind == .failed && unpinned.detail.contains("No VDV root is pinned"), "\(unpinned.line)")
        #expect(try await store.issuerKeys().isEmpty)

        let rootFile = server.directory + "/root.vdv-cert"
        try Data(pki.rootFile()).write(to: URL(fileURLWithPath: rootFile))
        try server.admin(["keys", "add", "--format", "vdv", "--root", rootFile])
        try server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        #expect(try verdict() == "unknown-key")

        let outcome = await follower.run(source)
        #expect(outcome.kind == .applied, "\(outcome.line)")
        let keys = try await store.issuerKeys(fromSource: "vdv")
        #expect(
            Set(keys.map(\.keyID.rawValue)) == [
                pki.subCAReference.hex.lowercased(), pki.otherSubCAReference.hex.lowercased(),
            ], "\(outcome.line)")
        #expect(keys.allSatisfy { $0.format == "vdv" && !$0.root && $0.certificate != nil })
        #expect(outcome.detail.contains("2 entries refused"), "\(outcome.line)")
        #expect(
            outcome.detail.contains("4445564456119921") && outcome.detail.contains("4445564456119821"),
            "\(outcome.line)")
        #expect(try verdict() == "valid")

        // The same directory again: nothing changes.
        let again = await follower.run(source)
        #expect(again.kind == .unchanged, "\(again.line)")
        #expect(try await store.latestBundle()?.sequence == 2)
    }
}
