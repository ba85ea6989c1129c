import FareCore
import Foundation
import GRDB
import Signatures
import Testing
import TicketFormats
import Verification

@testable import TrustStore

/// The store keeps what the UIC key list says each key is for, and several keys for one issuer and key id.
@Suite("Trust store: UIC key scope")
struct KeyScopeStoreTests {
    let directory = TemporaryDirectory()
    static let tlbKey = try! PrivateKey.generate(.dsa(bits: 1024, qBits: 160))
    static let dosKey = try! PrivateKey.generate(.ecP256)

    /// A key list entry as the UIC writes one (a bare SubjectPublicKeyInfo in `publicKey`, as a few issuers do).
    static func entry(
        _ key: PrivateKey, issuer: String = "1080", id: String = "42", versionType: String, barcodeVersion: String,
        algorithm: String, forged: String = "", owners: [String] = []
    ) -> String {
        let ownerList = owners.map {
            "<productOwnerCode>\($0)</productOwnerCode><productOwnerName>X</productOwnerName>"
        }
        return """
            <key><issuerName>Test Rail</issuerName><issuerCode>\(issuer)</issuerCode><versionType>\(versionType)</versionType>\
            <signatureAlgorithm>\(algorithm)</signatureAlgorithm><id>\(id)</id>\
            <publicKey>\(Data(key.publicKey.spkiDER).base64EncodedString())</publicKey>\
            <barcodeVersion>\(barcodeVersion)</barcodeVersion><startDate>2024-10-15</startDate><endDate>2028-10-15</endDate>\
            <allowedProductOwnerCodes>\(ownerList.joined())</allowedProductOwnerCodes><keyForged>\(forged)</keyForged></key>
            """
    }

    static func list(_ entries: String...) throws -> UICKeyList {
        try UICKeyList.parse(xml: Array(("<keys>" + entries.joined() + "</keys>").utf8))
    }

    @Test("one issuer and key id listed for #UT and for DOSIPAS are two keys, each with its scope, both looked up")
    func collidingEntriesKept() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        let report = try store.importUICKeyList(
            try Self.list(
                Self.entry(Self.tlbKey, versionType: "TLB", barcodeVersion: "1", algorithm: "SHA1withDSA(1024,160)"),
                Self.entry(Self.dosKey, versionType: "DOS", barcodeVersion: "2", algorithm: "SHA256withECDSA"),
                // The same entry again: kept once, reported.
                Self.entry(Self.dosKey, versionType: "DOS", barcodeVersion: "2", algorithm: "SHA256withECDSA")))
        #expect(report.added == 2)
        #expect(report.problems.count == 1)
        #expect(report.problems.first?.message.contains("listed twice for the same versionType") == true)
        let keys = try StoreTrust(store: store).keys(family: .uic, issuer: "1080", keyID: "42")
        #expect(Set(keys.compactMap(\.listing?.versionType)) == ["TLB", "DOS"])
        #expect(Set(keys.map { "\($0.publicKey.kind)" }) == ["DSA 1024/160", "ECDSA P-256"])
        let tlb = try #require(keys.first { $0.listing?.versionType == "TLB" })
        #expect(UICKeyScope.summary(for: tlb).hasPrefix("in scope for #UT01"))
        // A re-import updates both in place; with --replace, an entry the list no longer has goes.
        let again = try store.importUICKeyList(
            try Self.list(
                Self.entry(Self.tlbKey, versionType: "TLB", barcodeVersion: "1", algorithm: "SHA1withDSA(1024,160)")),
            replace: true)
        #expect(again.updated == 1)
        #expect(again.removed == 1)
        #expect(try store.keys().map(\.versionType) == ["TLB"])
    }

    @Test("keyForged and allowedProductOwnerCodes survive the store and reach the verifier")
    func forgedAndOwnersKept() throws {
        let path = directory.path + "/s.sqlite"
        do {
            let store = try TrustStore(path: path)
            _ = try store.importUICKeyList(
                try Self.list(
                    Self.entry(
                        Self.tlbKey, versionType: "TLB", barcodeVersion: "1", algorithm: "SHA1withDSA",
                        forged: "true", owners: ["1080", "0080"])))
        }
        let store = try TrustStore(path: path)
        let record = try #require(try store.keys().first)
        #expect(record.forged)
        #expect(record.allowedProductOwners == ["1080", "80"])
        #expect(record.barcodeVersion == "1")
        let key = try #require(try StoreTrust(store: store).keys(family: .uic, issuer: "1080", keyID: "42").first)
        #expect(key.listing?.forged == true)
        let snapshot = try store.snapshot().trust
        #expect(snapshot.keys(family: .uic, issuer: "1080", keyID: "42").first?.listing?.forged == true)
    }

    @Test("a store from before key scope keeps its keys: list keys with their versionType, hand-added keys unlisted")
    func upgradeFromVersion10() throws {
        let path = directory.path + "/old.sqlite"
        do {
            let queue = try DatabaseQueue(path: path)
            try TrustStore.migrator.migrate(queue, upTo: "v10-vdv-authorities")
            try queue.write { db in
                for (id, versionType) in [("7", "FCB" as String?), ("8", nil)] {
                    try db.execute(
                        sql: """
                            INSERT INTO key (format, issuer, key_id, algorithm, spki, source, added_at, version_type)
                            VALUES ('uic-918-3', '1080', ?, 'SHA1withDSA', ?, 'test', 0, ?)
                            """, arguments: [id, Data(Self.tlbKey.publicKey.spkiDER), versionType])
                }
            }
        }
        let store = try TrustStore(path: path)
        let keys = try store.keys()
        #expect(keys.count == 2)
        let listed = try #require(keys.first { $0.keyID == "7" })
        #expect(listed.isListed)
        #expect(listed.versionType == "FCB")
        // The old schema never kept barcodeVersion: empty, so the key is tried but its failures prove nothing
        // until the list is imported again.
        #expect(listed.barcodeVersion == "")
        let trusted = listed.trustedKey(Self.tlbKey.publicKey)
        #expect(UICKeyScope.summary(for: trusted).hasPrefix("tried, a failure not counted as forgery, on #UT01"))
        let byHand = try #require(keys.first { $0.keyID == "8" })
        #expect(!byHand.isListed)
        #expect(byHand.listing == nil)
    }
}

@Suite("Trust store: a new store reads its keys at once")
struct FreshStoreReadTests {
    let directory = TemporaryDirectory()

    @Test("keys saved into a store just created are read back whole by the same store (no reader with the old schema)")
    func readBackInSameProcess() throws {
        // The opening checks read the schema between migrations; a reader kept from then would read the rebuilt
        // key table's columns in their old order (and crash on a NULL where it expects text).
        let store = try TrustStore(path: directory.path + "/new.sqlite")
        let key = try PrivateKey.generate(.ed25519)
        try store.saveKey(
            KeyRecord(
                family: .fc1, issuer: "demo-transit", keyID: "0a", algorithm: "EdDSA", spki: key.publicKey.spkiDER,
                source: "demo"))
        let keys = try store.keys()
        #expect(keys.map(\.source) == ["demo"])
        #expect(try store.snapshot().trust.keyCount == 1)
    }
}
