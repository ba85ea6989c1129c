import Daemon
import FareCore
import Foundation
import Signatures
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

@testable import Presentation

/// The VDV-KA fixtures (the VRR Deutschland-Ticket and the kitinerary certificate files), as copied into the
/// verification tests' resources.
let vdvSyncFixtures = Fixtures.path("vdv")

/// VDV CA certificates and UIC key list version types distributed by the reference server in key bundles, and
/// VDV-KA tickets revoked there by entitlement.
@Suite("VDV certificates and UIC version types through sync", .serialized, .timeLimit(.minutes(5)))
struct VDVSyncTests {
    static let root = "\(vdvSyncFixtures)/certs/4555564456100106.vdv-cert"
    /// `DEVDV 11 02 16`, the CA of the VRR ticket's issuer certificate (a bare body: vouched for).
    static let ticketCA = "\(vdvSyncFixtures)/certs/4445564456110216.vdv-cert"
    /// `DEVDV 11 01 11`, another sub-CA, imported locally in one test.
    static let otherCA = "\(vdvSyncFixtures)/certs/4445564456110111.vdv-cert"
    static let ticket = "\(vdvSyncFixtures)/vrr-deutschlandticket-2023-03.bin"

    /// `farecheck verify` of the VRR ticket on 15 March 2023, when it is valid.
    func verdict(_ bench: SyncBench) throws -> [String: Any] {
        let run = try bench.validator.farecheck([
            "verify", "--payload-file", Self.ticket, "--at", "2023-03-15T12:00:00Z", "--json",
            "--db", bench.validator.db,
        ])
        return try #require(run.jsonLines.first, "\(run.stderr)")
    }

    /// The validator's VDV rows of `farecheck keys list --json`, by CHR.
    func vdvRows(_ bench: SyncBench) throws -> [String: [String: Any]] {
        let run = try bench.validator.farecheck(["keys", "list", "--json", "--db", bench.validator.db])
        var rows: [String: [String: Any]] = [:]
        for row in run.jsonLines where row["format"] as? String == KeyFamily.vdv.storeName {
            if let kid = row["keyId"] as? String { rows[kid] = row }
        }
        return rows
    }

    @Test(
        "root and sub-CA added on the server: the VRR ticket verifies valid after one sync, unknown-key once withdrawn")
    func certificatesThroughSync() async throws {
        let bench = try SyncBench()
        #expect(try verdict(bench)["verdict"] as? String == "unknown-key")

        // The server checks certificates as `farecheck keys import` does.
        let noRoot = try bench.server.adminRun(["keys", "add", "--format", "vdv", Self.ticketCA])
        #expect(noRoot.status == 2 && noRoot.stderr.contains("no VDV root"), "\(noRoot.stderr)")
        let notRoot = try bench.server.adminRun(["keys", "add", "--format", "vdv", "--root", Self.ticketCA])
        #expect(notRoot.status == 2 && notRoot.stderr.contains("not a root"), "\(notRoot.stderr)")
        let rootAdded = try bench.server.admin(["keys", "add", "--format", "vdv", "--root", Self.root])
        #expect(rootAdded.contains("added VDV root 4555564456100106"), "\(rootAdded)")
        let bare = try bench.server.adminRun(["keys", "add", "--format", "vdv", Self.ticketCA])
        #expect(bare.status == 2 && bare.stderr.contains("bare body"), "\(bare.stderr)")
        let withIssuer = try bench.server.adminRun([
            "keys", "add", "--format", "vdv", "--trust-unsigned", "--issuer", "x", Self.ticketCA,
        ])
        #expect(withIssuer.status == 2 && withIssuer.stderr.contains("leave out --issuer"), "\(withIssuer.stderr)")
        let subAdded = try bench.server.admin(["keys", "add", "--format", "vdv", "--trust-unsigned", Self.ticketCA])
        #expect(subAdded.contains("added VDV sub-CA 4445564456110216 (CA 4555564456100106)"), "\(subAdded)")
        let listed = try bench.server.admin(["keys", "list", "--json"]).jsonRecords.filter {
            $0["format"] as? String == "vdv"
        }
        #expect(listed.count == 2)
        #expect(listed.contains { $0["keyId"] as? String == "4555564456100106" && $0["root"] as? Bool == true })
        #expect(listed.contains { $0["keyId"] as? String == "4445564456110216" && $0["root"] as? Bool == false })
        // Validators that predate VDV certificates parse every key's SPKI: a VDV key's is its RSA key, so they
        // still apply the bundle (and ignore the certificate).
        let bits = ["4555564456100106": 1984, "4445564456110216": 1536]
        for key in listed {
            let spki = try #require((key["spki"] as? String).flatMap { Data(base64Encoded: $0) })
            let expected = try #require(bits[key["keyId"] as? String ?? ""])
            #expect(try PublicKey(spkiDER: Array(spki)).kind == .rsa(bits: expected))
        }
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])

        // Into an empty store: the FC1 key and both certificates.
        let first = try bench.syncCommand()
        #expect(first.text.contains("bundle 2 applied: 3 added"), "\(first.text) \(first.stderr)")
        #expect(try verdict(bench)["verdict"] as? String == "valid")
        var rows = try vdvRows(bench)
        #expect(rows["4555564456100106"]?["source"] as? String == "sync")
        #expect(rows["4555564456100106"]?["versionType"] as? String == "pinned root")
        #expect(rows["4445564456110216"]?["source"] as? String == "sync")
        #expect(rows["4445564456110216"]?["issuer"] as? String == "DEVDV 11 02 16")

        // A certificate imported locally is the operator's: a bundle neither replaces nor removes it.
        let local = try bench.validator.farecheck([
            "keys", "import", "--trust-unsigned", "--vdv", Self.otherCA, "--db", bench.validator.db,
        ])
        #expect(local.status == 0, "\(local.stderr)")

        // Withdrawn on the server: gone after the next sync, and the ticket's CA is unknown again.
        let removed = try bench.server.admin(["keys", "remove", "--format", "vdv", "--kid", "4445564456110216"])
        #expect(removed.contains("removed vdv key 4445564456110216 of 4555564456100106"), "\(removed)")
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let second = try bench.syncCommand()
        #expect(second.text.contains("bundle 3 applied: 0 added, 2 updated, 1 removed"), "\(second.text)")
        #expect(try verdict(bench)["verdict"] as? String == "unknown-key")
        rows = try vdvRows(bench)
        #expect(rows["4445564456110216"] == nil)
        #expect(rows["4555564456100106"]?["source"] as? String == "sync")
        #expect(rows["4445564456110111"]?["source"] as? String == "4445564456110111.vdv-cert")
    }

    @Test("a synced sub-CA counts only under a root the validator pinned itself or the same bundle carries")
    func subCANeedsARoot() async throws {
        let bench = try SyncBench()
        // No root on the server: a bare body is taken on the agency's word, for validators that pin its root.
        try bench.server.admin(["keys", "add", "--format", "vdv", "--trust-unsigned", Self.ticketCA])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let first = try await bench.round()
        #expect(first.keyBundleApplied && first.keysAdded == 1)
        #expect(try vdvRows(bench).isEmpty)
        #expect(try verdict(bench)["verdict"] as? String == "unknown-key")

        // The validator pins the root itself: the next bundle's sub-CA chains to it.
        let pinned = try bench.validator.farecheck([
            "keys", "import", "--vdv-root", Self.root, "--db", bench.validator.db,
        ])
        #expect(pinned.status == 0, "\(pinned.stderr)")
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let second = try await bench.round()
        #expect(second.keysAdded == 1)
        #expect(try vdvRows(bench)["4445564456110216"]?["source"] as? String == "sync")
        #expect(try verdict(bench)["verdict"] as? String == "valid")
    }

    @Test("a VDV-KA ticket revoked on the server by organisation and entitlement is revoked after sync, and lifted")
    func entitlementRevocation() async throws {
        let bench = try SyncBench()
        try bench.server.admin(["keys", "add", "--format", "vdv", "--root", Self.root])
        try bench.server.admin(["keys", "add", "--format", "vdv", "--trust-unsigned", Self.ticketCA])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let both = try bench.server.adminRun([
            "revoke", "--vdv-org", "57", "--entitlement", "2099643", "--issuer", "57",
        ])
        #expect(both.status == 2 && both.stderr.contains("together and alone"), "\(both.stderr)")
        let revoke = try bench.server.admin([
            "revoke", "--vdv-org", "57", "--entitlement", "2099643", "--reason", "on the VDV blocklist",
        ])
        #expect(revoke.contains("revoked ticket 002009bb of 57"), "\(revoke)")
        _ = try await bench.round()
        let revoked = try verdict(bench)
        #expect(revoked["verdict"] as? String == "revoked")
        #expect((revoked["reason"] as? String)?.contains("on the VDV blocklist") == true)

        try bench.server.admin(["unrevoke", "--vdv-org", "57", "--entitlement", "2099643"])
        _ = try await bench.round()
        #expect(try verdict(bench)["verdict"] as? String == "valid")
    }

    @Test("a UIC key's versionType travels from keys add --version-type through the bundle into keys list")
    func versionType() async throws {
        let bench = try SyncBench()
        let refused = try bench.server.adminRun([
            "keys", "add", "--issuer", "demo-transit", "--version-type", "DOS", SyncBench.eddsaPublic,
        ])
        #expect(refused.status == 2 && refused.stderr.contains("--version-type goes with --format uic"))
        try bench.server.admin([
            "keys", "add", "--format", "uic", "--issuer", "1080", "--kid", "00007", "--version-type", "DOS",
            SyncBench.es256Public,
        ])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        let served = try bench.server.admin(["keys", "list", "--json"])
        #expect(served.contains(#""versionType":"DOS""#), "\(served)")
        _ = try await bench.round()
        let run = try bench.validator.farecheck(["keys", "list", "--json", "--db", bench.validator.db])
        let uic = try #require(run.jsonLines.first { $0["format"] as? String == KeyFamily.uic.storeName })
        #expect(uic["issuer"] as? String == "1080")
        #expect(uic["keyId"] as? String == "7")
        #expect(uic["versionType"] as? String == "DOS")
        #expect(uic["source"] as? String == "sync")
        let fc1 = try #require(run.jsonLines.first { $0["format"] as? String == KeyFamily.fc1.storeName })
        #expect(fc1["versionType"] == nil)
    }

    @Test("one UIC key id listed for #UT01 and for DOSIPAS travels as two keys, each with its scope, into keys list")
    func scopedKeys() async throws {
        let bench = try SyncBench()
        let refused = try bench.server.adminRun([
            "keys", "add", "--issuer", "demo-transit", "--barcode-version", "1", SyncBench.eddsaPublic,
        ])
        #expect(refused.status == 2 && refused.stderr.contains("--barcode-version goes with --format uic"))
        // A DSA-1024 key for #UT01 (FCB, barcode version 1) and a P-256 key for DOSIPAS, under one key id.
        let dsa = bench.validator.directory + "/dsa.pem"
        #expect(
            try bench.validator.shell(
                "openssl genpkey -genparam -algorithm DSA -pkeyopt dsa_paramgen_bits:1024 "
                    + "-pkeyopt dsa_paramgen_q_bits:160 -out dsa-params.pem && openssl genpkey -paramfile dsa-params.pem "
                    + "-out dsa.key && openssl pkey -in dsa.key -pubout -out \(dsa)"
            ).status == 0)
        for (versionType, version, file) in [("FCB", "1", dsa), ("DOS", "2", SyncBench.es256Public)] {
            try bench.server.admin([
                "keys", "add", "--format", "uic", "--issuer", "1080", "--kid", "00007", "--version-type", versionType,
                "--barcode-version", version, file,
            ])
        }
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        _ = try await bench.round()
        let run = try bench.validator.farecheck(["keys", "list", "--json", "--db", bench.validator.db])
        let uic = run.jsonLines.filter { $0["format"] as? String == KeyFamily.uic.storeName }
        #expect(uic.count == 2)
        let fcb = try #require(uic.first { $0["versionType"] as? String == "FCB" })
        #expect(fcb["barcodeVersion"] as? String == "1")
        #expect((fcb["scope"] as? String)?.hasPrefix("in scope for #UT01; tried") == true, "\(fcb)")
        let dos = try #require(uic.first { $0["versionType"] as? String == "DOS" })
        #expect(dos["barcodeVersion"] as? String == "2")
        #expect(dos["scope"] as? String == "in scope for DOSIPAS; not for #UT01, #UT02, SSB version 3", "\(dos)")
    }

    @Test("a bundle as an older server wrote it (no versionType, certificate or root; an unknown format) applies")
    func olderBundle() async throws {
        let bench = try SyncBench()
        let spki = try #require(
            try String(contentsOfFile: SyncBench.eddsaPublic, encoding: .utf8).split(separator: "\n")
                .filter { !$0.hasPrefix("-----") }.joined().nilIfEmpty)
        // Written by hand, as the first release wrote bundles; a format this validator does not know is skipped.
        let payload = """
            {"sequence":7,"issuedAt":"2026-11-23T08:00:00Z","keys":[\
            {"format":"fc1","issuer":"demo-transit","keyID":"0102030405060708","algorithm":"EdDSA","spki":"\(spki)"},\
            {"format":"mosaic","issuer":"elsewhere","keyID":"1","spki":"AAAA"}]}
            """
        let anchorKey = try PrivateKey(pem: try String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
        let document = try SignedDocument.sign(payload: Array(payload.utf8), with: anchorKey)
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        proxy.set(.replay(document.jsonBytes()), forPathsStartingWith: APIPath.keys)
        let report = try await bench.round(url: proxy.baseURL)
        #expect(report.keyBundleApplied && report.keyBundleSequence == 7 && report.keysAdded == 1)
        let key = try #require(try bench.store().keys().first)
        #expect(key.keyID == "0102030405060708" && key.source == "sync" && key.versionType == nil)

        // A key without the new fields is written exactly as before they existed.
        let written = String(
            decoding: try WireFormat.encode(
                BundleKey(format: "fc1", issuer: "demo-transit", keyID: "01", algorithm: "EdDSA", spki: [0x30])),
            as: UTF8.self)
        #expect(!written.contains("versionType") && !written.contains("certificate") && !written.contains("root"))
    }

    @Test("the daemon's verifier sees VDV certificates a sync round brought, without a restart")
    func daemonPicksUpSyncedCertificates() async throws {
        let bench = try SyncBench()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: Self.ticket)))
        let gate = try await DaemonSyncTests().startGate(bench, sync: "interval = 1\nstale_after = 3600")
        defer { gate.scanner.stop() }
        let daemon = gate.daemon
        func scan() async throws -> VerdictEvent { try await gate.scan(payload) }
        var event = try await scan()
        #expect(event.verdict == .unknownKey && event.format == .vdvKA, "\(event.reason)")

        try bench.server.admin(["keys", "add", "--format", "vdv", "--root", Self.root])
        try bench.server.admin(["keys", "add", "--format", "vdv", "--trust-unsigned", Self.ticketCA])
        try bench.server.admin(["keys", "publish", "--anchor-key", ReferenceServer.demoAnchorKey])
        for _ in 0..<30 where event.verdict == .unknownKey {
            try await Task.sleep(for: .milliseconds(500))
            event = try await scan()
        }
        // Today the ticket (March 2023) is past its dates; what matters is that its chain is now known and genuine.
        #expect(event.verdict != .unknownKey, "\(event.reason)")
        #expect(event.signature == .valid && event.issuer == "57", "\(event.reason)")
        #expect(await daemon.stop() == 0, "\(daemon.stderr.text)")
    }

    @Test("StoreVDVCertificates answers with what the store holds after each change")
    func liveSource() throws {
        let bench = Workbench()
        let store = try TrustStore(path: bench.db)
        // Read the store's counter at every lookup here; the daemon reads it at most once a second.
        let source = try StoreVDVCertificates(store: store, recheckInterval: .zero)
        let root = try VDVCertificateImport.root(Array(try Data(contentsOf: URL(fileURLWithPath: Self.root))))
        #expect(try source.authority(root.reference) == nil)
        try store.applyKeyBundle(sequence: 1, keys: [], vdvAuthorities: [root])
        #expect(try source.authority(root.reference)?.isRoot == true)
        #expect(try store.vdvAuthorities().map(\.source) == [TrustStore.syncSource])
        try store.applyKeyBundle(sequence: 2, keys: [], vdvAuthorities: [])
        #expect(try source.authority(root.reference) == nil)
        try store.saveVDVAuthority(root, source: "4555564456100106.vdv-cert")
        #expect(try source.authority(root.reference) != nil)
        // A bundle naming a locally imported certificate leaves it the operator's.
        try store.applyKeyBundle(sequence: 3, keys: [], vdvAuthorities: [root])
        try store.applyKeyBundle(sequence: 4, keys: [], vdvAuthorities: [])
        #expect(try store.vdvAuthorities().map(\.source) == ["4555564456100106.vdv-cert"])
        #expect(try source.authority(root.reference) != nil)
    }
}

extension String {
    /// The string, or nil when empty.
    fileprivate var nilIfEmpty: String? { isEmpty ? nil : self }
}
