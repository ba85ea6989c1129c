import FareCore
import Foundation
import Testing
import ValidationAPI
import ValidationServer

/// The store itself, on each database: where SQLite and PostgreSQL used to answer differently, both now answer
/// the same (one test per divergence found).
@Suite("One server store, the same on SQLite and PostgreSQL", .timeLimit(.minutes(5)))
struct StoreBackendTests {
    let revokedAt = Date(timeIntervalSince1970: 1_800_000_000)

    @Test(
        "a bulk revocation naming a ticket twice logs one change for it, with its last reason (SQLite logged two)",
        arguments: Backend.available)
    func bulkRevocationFoldsDuplicates(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            try await store.revokeTicket(
                RevokedTicket(issuer: "demo", ticketID: [0x01], reason: nil, revokedAt: revokedAt))
            try await store.revokeTickets([
                RevokedTicket(issuer: "demo", ticketID: [0x0a], reason: "first", revokedAt: revokedAt),
                RevokedTicket(issuer: "demo", ticketID: [0x0b], reason: nil, revokedAt: revokedAt),
                RevokedTicket(issuer: "demo", ticketID: [0x0a], reason: "second", revokedAt: revokedAt),
            ])
            let delta = try await store.revocationDelta(since: 1)
            #expect(delta.full == false)
            #expect(delta.next == 3)
            #expect(delta.addedTickets.map(\.ticketID) == [[0x0b], [0x0a]])
            #expect(delta.addedTickets.last?.reason == "second")
            let stored = try await store.ticketRevocation(TicketReference(issuer: "demo", ticketID: [0x0a]))
            #expect(stored?.reason == "second")
        }
    }

    @Test(
        "devices and issuer keys are listed in byte order whatever the database's collation",
        arguments: Backend.available)
    func byteOrder(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            let names = ["beta", "Alpha", "alpha", "_under", "Zulu", "a-b", "a_b", "éclair"]
            for name in names {
                try await store.addDevice(id: name, tokenHash: Array(name.utf8), role: .gate, at: revokedAt)
                try await store.putIssuerKey(
                    BundleKey(format: "fc1", issuer: IssuerID(name), keyID: "01", algorithm: "ES256", spki: [0x30]),
                    at: revokedAt)
            }
            let byteSorted = names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(try await store.devices().map(\.id) == byteSorted)
            #expect(try await store.issuerKeys().map(\.issuer.rawValue) == byteSorted)
        }
    }

    @Test(
        "an issuer key keeps its UIC versionType, VDV certificate and root flag, and replacing it replaces them",
        arguments: Backend.available)
    func keyFieldsRoundTrip(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            let uic = BundleKey(
                format: "uic", issuer: "1080", keyID: "7", algorithm: nil, spki: [0x30], versionType: "DOS")
            let root = BundleKey(
                format: "vdv", issuer: "4555564456100106", keyID: "4555564456100106", algorithm: nil, spki: [0x30],
                notAfter: revokedAt, certificate: [0x7F, 0x21, 0x00], root: true)
            let plain = BundleKey(format: "fc1", issuer: "demo", keyID: "01", algorithm: "ES256", spki: [0x30])
            for key in [uic, root, plain] { try await store.putIssuerKey(key, at: revokedAt) }
            #expect(try await store.issuerKeys() == [plain, uic, root])
            var subCA = root
            subCA.root = false
            subCA.certificate = [0x7F, 0x21, 0x01]
            try await store.putIssuerKey(subCA, at: revokedAt)
            #expect(try await store.issuerKeys().last == subCA)
        }
    }

    @Test(
        "one UIC issuer and key id listed for two kinds of barcode are two keys, with keyForged and product owners",
        arguments: Backend.available)
    func scopedKeys(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            let container = BundleKey(
                format: "uic", issuer: "1080", keyID: "7", algorithm: "SHA1withDSA", spki: [0x30, 0x01],
                versionType: "FCB", barcodeVersion: "1", allowedProductOwnerCodes: ["1080", "1184"])
            let dosipas = BundleKey(
                format: "uic", issuer: "1080", keyID: "7", algorithm: "SHA256withECDSA", spki: [0x30, 0x02],
                versionType: "DOS", barcodeVersion: "2", keyForged: true)
            try await store.putIssuerKey(container, at: revokedAt)
            try await store.putIssuerKey(dosipas, at: revokedAt)
            #expect(try await store.issuerKeys() == [dosipas, container])
            // The same listing again replaces only its own key.
            var renewed = container
            renewed.spki = [0x30, 0x03]
            try await store.putIssuerKey(renewed, at: revokedAt)
            #expect(try await store.issuerKeys() == [dosipas, renewed])
            #expect(try await store.removeIssuerKey(KeyReference(format: "uic", issuer: "1080", keyID: "7")))
            #expect(try await store.issuerKeys().isEmpty)
        }
    }

    @Test(
        "text holding U+0000 is refused as invalid input on both (PostgreSQL failed with a storage error)",
        arguments: Backend.available)
    func nulCharacters(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { (store: any ServerStore) async throws in
            let device = await #expect(throws: ServerError.self) {
                try await store.addDevice(id: "v\0", tokenHash: [1], role: .gate, at: revokedAt)
            }
            #expect(device?.code == .invalidInput)
            let record = InspectionRecord(
                id: "r1", inspectedAt: 0, device: "d", symbology: nil, payloadDigest: [0], format: nil, issuer: nil,
                ticketID: nil, verdict: "valid", reason: "nul\0here", signature: "valid", warnings: "", inspector: nil)
            let upload = await #expect(throws: ServerError.self) {
                try await store.storeInspections([record], deviceID: "v", receivedAt: revokedAt)
            }
            #expect(upload?.code == .invalidInput)
            #expect(try await store.inspections(limit: 10).isEmpty)
            // Nothing stored can hold it, so a lookup with it finds nothing.
            #expect(try await store.ticketRevocation(TicketReference(issuer: "x\0", ticketID: [1])) == nil)
            #expect(try await store.keyRevocation(KeyReference(format: "fc1", issuer: "x\0", keyID: "1")) == nil)
        }
    }

    @Test(
        "a negative inspection limit lists nothing (SQLite listed everything, PostgreSQL failed)",
        arguments: Backend.available)
    func negativeLimit(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            let record = InspectionRecord(
                id: "r1", inspectedAt: 0, device: "d", symbology: nil, payloadDigest: [0], format: nil, issuer: nil,
                ticketID: nil, verdict: "valid", reason: "", signature: "valid", warnings: "", inspector: nil)
            #expect(
                try await store.storeInspections([record], deviceID: "v", receivedAt: revokedAt).map(\.outcome)
                    == [.stored])
            #expect(try await store.inspections(limit: -1).isEmpty)
            #expect(try await store.inspections(limit: 5).map(\.record.id) == ["r1"])
            // A page limit below one is one: every page moves the cursor.
            try await store.revokeTicket(RevokedTicket(issuer: "i", ticketID: [1], reason: nil, revokedAt: revokedAt))
            try await store.revokeTicket(RevokedTicket(issuer: "i", ticketID: [2], reason: nil, revokedAt: revokedAt))
            let page = try await store.revocationDelta(since: 0, limit: 0)
            #expect(page.addedTickets.count == 1)
            #expect(page.more == true)
        }
    }

    @Test("a key bundle not above the newest is a conflict, and the newest stays", arguments: Backend.available)
    func bundleConflict(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            try await store.storeBundle(PublishedBundle(sequence: 2, issuedAt: revokedAt, document: Array("{}".utf8)))
            for sequence: Int64 in [1, 2] {
                let error = await #expect(throws: ServerError.self) {
                    try await store.storeBundle(
                        PublishedBundle(sequence: sequence, issuedAt: revokedAt, document: Array("[]".utf8)))
                }
                #expect(error?.code == .conflict)
            }
            #expect(try await store.latestBundle()?.document == Array("{}".utf8))
        }
    }

    @Test("devices, revocations and their lifting behave alike on both databases", arguments: Backend.available)
    func roundTrips(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        try await bench.withStore { store in
            #expect(store.backendName == (backend == .sqlite ? "sqlite" : "postgresql"))
            try await store.addDevice(id: "v1", tokenHash: [1, 2], role: .gate, at: revokedAt)
            let again = await #expect(throws: ServerError.self) {
                try await store.addDevice(id: "v1", tokenHash: [3], role: .gate, at: revokedAt)
            }
            #expect(again?.code == .conflict)
            #expect(try await store.device(tokenHash: [1, 2])?.id == "v1")
            #expect(try await store.revokeDevice(id: "v1", at: Date()) != nil)
            #expect(try await store.revokeDevice(id: "nobody", at: Date()) == nil)
            #expect(try await store.device(tokenHash: [1, 2])?.revoked == true)

            let key = RevokedKey(format: "fc1", issuer: "i", keyID: "k", reason: "leaked", revokedAt: revokedAt)
            try await store.revokeKey(key)
            #expect(try await store.keyRevocation(key.reference) == key)
            #expect(try await store.unrevokeKey(key.reference))
            #expect(try await store.unrevokeKey(key.reference) == false)
            let ticket = RevokedTicket(issuer: "i", ticketID: [0xab], reason: nil, revokedAt: revokedAt)
            try await store.revokeTicket(ticket)
            #expect(try await store.unrevokeTicket(ticket.reference))
            let delta = try await store.revocationDelta(since: 0)
            #expect(delta.full && delta.addedTickets.isEmpty && delta.addedKeys.isEmpty && delta.next == 4)
            #expect(try await store.pruneRevocationChanges(keepingLast: 1) == 3)
            #expect(try await store.revocationDelta(since: 1).full)
        }
    }
}
