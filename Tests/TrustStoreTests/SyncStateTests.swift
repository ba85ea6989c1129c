import Foundation
import Signatures
import Testing
import Verification

@testable import TrustStore

@Suite("Applying sync data to the store")
struct SyncStateTests {
    let directory = TemporaryDirectory()

    func key(_ id: String, issuer: String = "agency") throws -> KeyRecord {
        KeyRecord(
            format: "fc1", issuer: issuer, keyID: id, algorithm: "ES256",
            spki: try PrivateKey.generate(.ecP256).publicKey.spkiDER, source: "bundle")
    }

    @Test("a key bundle replaces what the previous bundle brought, keeps local keys, and refuses a rollback")
    func keyBundles() throws {
        let store = try TrustStore(path: directory.path + "/s.sqlite")
        try store.saveKey(try key("10ca1", issuer: "local"))
        let first = try store.applyKeyBundle(sequence: 5, keys: [try key("aa"), try key("bb")])
        #expect(first.added == 2)
        let second = try store.applyKeyBundle(sequence: 6, keys: [try key("bb"), try key("cc")])
        #expect(second == (added: 1, updated: 1, removed: 1))
        #expect(try store.keys().map(\.keyID).sorted() == ["10ca1", "bb", "cc"])
        #expect(try store.syncState().keyBundleSequence == 6)
        // The verifier sees a bundle key at once, through the live lookups.
        #expect(try StoreTrust(store: store).key(format: "fc1", issuer: nil, keyID: "cc") != nil)

        let error = #expect(throws: StoreError.self) { try store.applyKeyBundle(sequence: 4, keys: [try key("ee")]) }
        #expect(error?.code == .outOfSequence)
        #expect(try store.keys().map(\.keyID).sorted() == ["10ca1", "bb", "cc"])
        #expect(try store.syncState().keyBundleSequence == 6)
    }

    @Test("revocation deltas follow the cursor; a full snapshot replaces only what sync brought")
    func revocationDeltas() throws {
        let store = try TrustStore(path: directory.path + "/r.sqlite")
        let trust = StoreTrust(store: store)
        try store.revokeTicket(TicketRevocationRecord(issuer: "agency", ticketID: [0x01], reason: "local"))
        try store.applyRevocations(
            from: 0, next: 3, full: false,
            addedTickets: [
                TicketRevocationRecord(issuer: "agency", ticketID: [0x02], reason: "stolen"),
                TicketRevocationRecord(issuer: "agency", ticketID: [0x03], reason: "refunded"),
            ], addedKeys: [], removed: [])
        #expect(try trust.revocation(ofTicket: [0x02], issuer: "agency")?.reason == "stolen")
        try store.applyRevocations(
            from: 3, next: 4, full: false, addedTickets: [], addedKeys: [],
            removed: [.ticket(issuer: "agency", ticketID: [0x03])])
        #expect(try trust.revocation(ofTicket: [0x03], issuer: "agency") == nil)
        #expect(try store.syncState().revocationCursor == 4)

        // A delta that does not start where the store stands is refused, nothing applied.
        let error = #expect(throws: StoreError.self) {
            try store.applyRevocations(
                from: 9, next: 12, full: false,
                addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0x09], reason: nil)],
                addedKeys: [], removed: [])
        }
        #expect(error?.code == .outOfSequence)
        #expect(try trust.revocation(ofTicket: [0x09], issuer: "agency") == nil)

        try store.applyRevocations(
            from: 0, next: 20, full: true,
            addedTickets: [TicketRevocationRecord(issuer: "agency", ticketID: [0x07], reason: nil)],
            addedKeys: [KeyRevocationRecord(format: "fc1", issuer: "agency", keyID: "bb", reason: "compromised")],
            removed: [])
        #expect(try trust.revocation(ofTicket: [0x02], issuer: "agency") == nil)
        #expect(try trust.revocation(ofTicket: [0x07], issuer: "agency") != nil)
        #expect(try trust.revocation(ofTicket: [0x01], issuer: "agency")?.reason == "local")
        #expect(try store.keyRevocations().map(\.keyID) == ["bb"])
        #expect(try store.syncState().revocationCursor == 20)
    }
}
