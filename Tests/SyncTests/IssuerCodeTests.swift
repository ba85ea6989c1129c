import FareCore
import Foundation
import Signatures
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

/// A UIC ticket names its railway by a RICS code that may come with leading zeros (`0080` and `80` are the
/// same company); verification matches the code without them. Whatever form the server sends, what sync
/// stores must be found by the verifier's lookups.
@Suite("UIC issuer codes through sync", .timeLimit(.minutes(5)))
struct IssuerCodeTests {
    let bench = Workbench()
    let revokedAt = Date(timeIntervalSince1970: 1_795_336_200)

    @Test("tickets and keys revoked as 0080 are found as verification asks (80), and lifted as 080")
    func revocations() throws {
        let store = try TrustStore(path: bench.db)
        let trust = StoreTrust(store: store)
        let key = try PrivateKey.generate(.ecP256)
        let bundleKey = BundleKey(
            format: KeyFamily.uic.wireName, issuer: "0080", keyID: "00001", algorithm: "ES256",
            spki: key.publicKey.spkiDER)
        try store.applyKeyBundle(sequence: 1, keys: [try #require(SyncRound.storeRecord(of: bundleKey))])
        let trusted = try #require(try trust.key(family: .uic, issuer: "80", keyID: "1"))

        try SyncRound.apply(
            RevocationDelta(
                from: 0, next: 3, full: true,
                addedTickets: [
                    RevokedTicket(issuer: "0080", ticketID: [0x01], reason: "refunded", revokedAt: revokedAt),
                    RevokedTicket(issuer: "1184", ticketID: [0x02], reason: nil, revokedAt: revokedAt),
                    RevokedTicket(issuer: "demo-transit", ticketID: [0x03], reason: nil, revokedAt: revokedAt),
                    RevokedTicket(issuer: "00012345", ticketID: [0x04], reason: nil, revokedAt: revokedAt),
                ],
                addedKeys: [
                    RevokedKey(
                        format: KeyFamily.uic.wireName, issuer: "0080", keyID: "0001", reason: "leaked",
                        revokedAt: revokedAt)
                ]),
            to: store)
        #expect(try trust.revocation(ofTicket: [0x01], issuer: "80")?.reason == "refunded")
        #expect(try trust.revocation(ofTicket: [0x02], issuer: "1184") != nil)
        #expect(try trust.revocation(ofTicket: [0x03], issuer: "demo-transit") != nil)
        // Longer than a RICS code: another format's issuer, kept as it is.
        #expect(try trust.revocation(ofTicket: [0x04], issuer: "00012345") != nil)
        #expect(try trust.revocation(ofKey: trusted)?.reason == "leaked")

        try SyncRound.apply(
            RevocationDelta(
                from: 3, next: 5, full: false, removedTickets: [TicketReference(issuer: "080", ticketID: [0x01])],
                removedKeys: [KeyReference(format: KeyFamily.uic.wireName, issuer: "80", keyID: "00001")]),
            to: store)
        #expect(try trust.revocation(ofTicket: [0x01], issuer: "80") == nil)
        #expect(try trust.revocation(ofKey: trusted) == nil)
    }
}
