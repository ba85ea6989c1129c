import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The real DB sample tickets and keys of the fixture tree (`uic`, copied from shared/fixtures/uic).
enum UICFixtures {
    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("uic/\(name)") }

    static let cityMobil = "db-city-mobil-v1-sha1.bin"
    static let superSparpreis = "db-supersparpreis-v2-sha256.bin"
    static let deutschlandTicket = "db-deutschland-ticket-2025.bin"

    /// Trust as an inspector would hold it: the snapshot of the UIC key list plus the two certificates.
    static func trust() throws -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        try snapshot.addUICKeyList(xml: try bytes("uic-publickeys-snapshot.xml"))
        for (file, issuer, keyID) in [("0080-00007.pem", "80", "7"), ("1080-00002.pem", "1080", "2")] {
            let certificate = try X509Certificate(pem: String(decoding: try bytes(file), as: UTF8.self))
            snapshot.add(
                TrustedKey(
                    family: .uic, issuer: IssuerID(issuer), keyID: KeyID(keyID), algorithm: nil,
                    publicKey: certificate.publicKey,
                    notBefore: certificate.notBefore, notAfter: certificate.notAfter
                ))
        }
        return snapshot
    }
}

@Suite("UIC 918.3 verification")
struct UICVerifierTests {
    let trust = try! UICFixtures.trust()

    func verify(_ payload: [UInt8], at instant: Date) throws -> Verdict {
        try TicketVerifier(trust: trust, clock: FixedClock(instant)).verify(payload)
    }

    @Test(
        "the DB samples verify inside their windows; today they are expired (signature valid): the keys were valid when they were issued"
    )
    func samples() throws {
        let cases: [(String, Date, String, String)] = [
            (UICFixtures.cityMobil, utc("2021-01-11T12:00:00Z"), "80", "7"),
            // Inside both the key's and the ticket's window: since U_FLEX is read, the ticket's own dates count.
            (UICFixtures.superSparpreis, utc("2022-04-22T12:00:00Z"), "1080", "2"),
            (UICFixtures.deutschlandTicket, utc("2025-02-28T12:00:00Z"), "1080", "7"),
        ]
        for (file, inside, issuer, keyID) in cases {
            let payload = try UICFixtures.bytes(file)
            let then = try verify(payload, at: inside)
            #expect(then.kind == .valid, "\(file): \(then.reason)")
            #expect(then.signature == .valid)
            #expect(then.format == .uic9183)
            #expect(then.issuer?.rawValue == issuer)
            #expect(then.keyID?.rawValue == keyID)
            let today = try TicketVerifier(trust: trust).verify(payload)
            #expect(today.kind == .expired, "\(file): \(today.reason)")
            #expect(today.signature == .valid)
        }
    }

    @Test("the city ticket's 0080BL validity is checked at the inspection time")
    func stateValidity() throws {
        let payload = try UICFixtures.bytes(UICFixtures.cityMobil)
        let valid = try verify(payload, at: utc("2021-01-11T21:00:00Z"))
        #expect(valid.kind == .valid)
        #expect(valid.ticket?.product == "Super Sparpreis")
        #expect(valid.ticket?.ticketID.bytes == Array("RPEX4F-4".utf8))
        #expect(try verify(payload, at: utc("2021-01-13T12:00:00Z")).kind == .expired)
        #expect(try verify(payload, at: utc("2021-01-09T12:00:00Z")).kind == .notYetValid)
    }

    @Test("tickets whose validity sits in U_FLEX are checked against it: expired after, valid inside, no warning")
    func flexOnly() throws {
        let payload = try UICFixtures.bytes(UICFixtures.superSparpreis)
        // Valid 2022-04-22 00:00 – 2022-04-23 10:00 (UTC+2) by its FCB content; the key still lives in 2023.
        let later = try verify(payload, at: utc("2023-06-01T12:00:00Z"))
        #expect(later.kind == .expired, "\(later.reason)")
        #expect(later.reason.contains("2022-04-23T08:00:00Z"))
        let inside = try verify(payload, at: utc("2022-04-22T12:00:00Z"))
        #expect(inside.kind == .valid)
        #expect(inside.warnings.isEmpty)
        #expect(inside.ticket?.product == "Super Sparpreis")
    }

    @Test("the 2025 Deutschland-Ticket (key 1080/7) follows its FCB window: valid in it, expired after")
    func deutschlandTicketValidity() throws {
        let payload = try UICFixtures.bytes(UICFixtures.deutschlandTicket)
        let expired = try verify(payload, at: utc("2025-06-01T12:00:00Z"))
        #expect(expired.kind == .expired, "\(expired.reason)")
        #expect(expired.signature == .valid)
        let valid = try verify(payload, at: utc("2025-02-28T12:00:00Z"))
        #expect(valid.kind == .valid, "\(valid.reason)")
        // The printed layout's days differ from FCB's: the inspector is told which decided.
        #expect(valid.warnings.map(\.code) == ["records-disagree"])
        #expect(valid.warnings.first?.message.contains("01.02.2025 – 01.03.2025 (U_TLAY)") == true)
        #expect(valid.ticket?.holder == "Max Mustermann, born 2001-01-01")
        #expect(valid.ticket?.product == "Deutschland-Ticket")
        // The layout prints "Gültig vom 01.02.2025", but FCB states validity from the issuing time, 27.02 10:14
        // local, and FCB decides.
        let before = try verify(payload, at: utc("2025-02-15T12:00:00Z"))
        #expect(before.kind == .notYetValid, "\(before.reason)")
        #expect(before.reason.contains("2025-02-27T09:14:00Z"))
    }

    @Test("a ticket with several documents is judged by the one valid now, else the nearest")
    func severalDocuments() throws {
        let day: TimeInterval = 86_400
        let start = utc("2025-03-01T00:00:00Z")
        var ticket = Ticket(format: .uic9183, issuer: "1080", ticketID: [1])
        ticket.documents = [
            TicketDocument(kind: "openTicket", validFrom: start, validUntil: start + day, summary: "outward"),
            TicketDocument(kind: "reservation", summary: "no window"),
            TicketDocument(
                kind: "openTicket", validFrom: start + 5 * day, validUntil: start + 6 * day, summary: "return"),
        ]
        ticket.validFrom = start
        ticket.validUntil = start + 6 * day
        let key = TestIssuer.es256.trustedKey()
        let policy = ValidityWindowPolicy()
        func outcome(_ instant: Date) -> String {
            switch policy.evaluate(PolicyContext(ticket: ticket, key: key, now: instant)) {
            case .meets: "valid"
            case .fails(let kind, let reason): "\(kind.rawValue) \(reason)"
            case .revokedByBlocklist(let revocation): "revoked \(revocation.reason)"
            }
        }
        #expect(ticket.governingDocument(at: start + 0.5 * day) == 0)
        #expect(ticket.governingDocument(at: start + 5.5 * day) == 2)
        #expect(outcome(start + 0.5 * day) == "valid")
        #expect(outcome(start + 5.5 * day) == "valid")
        // Between the two: day 2 is nearer the end of the first, day 4 nearer the start of the second.
        #expect(ticket.governingDocument(at: start + 2 * day) == 0)
        #expect(outcome(start + 2 * day).hasPrefix("expired"))
        #expect(outcome(start + 2 * day).contains("document 1 of 3"))
        #expect(ticket.governingDocument(at: start + 4 * day) == 2)
        #expect(outcome(start + 4 * day).hasPrefix("not-yet-valid"))
        #expect(outcome(start + 4 * day).contains("document 3 of 3"))
        #expect(outcome(start + 7 * day).hasPrefix("expired"))
    }

    @Test("any changed byte of the compressed data, the key id or the signature changes the verdict")
    func tampering() throws {
        for file in [UICFixtures.cityMobil, UICFixtures.superSparpreis, UICFixtures.deutschlandTicket] {
            let payload = try UICFixtures.bytes(file)
            let container = try UICContainer(parsing: payload)
            let dataStart = payload.count - container.signedData.count
            let inside = file == UICFixtures.cityMobil ? utc("2021-01-11T12:00:00Z") : utc("2023-06-01T12:00:00Z")
            let signatureRange = 14..<(14 + container.signatureFieldLength)
            for index in Array(dataStart..<payload.count) + Array(9..<14) + Array(signatureRange) {
                var bytes = payload
                bytes[index] ^= 0x01
                let verdict = try verify(bytes, at: inside)
                #expect(verdict.kind != .valid, "\(file) byte \(index)")
                if index >= dataStart {
                    #expect(
                        verdict.kind == .invalidSignature || verdict.kind == .malformed,
                        "\(file) byte \(index): \(verdict.kind)")
                }
            }
        }
    }

    @Test("unknown issuer or key id is unknown-key")
    func unknownKey() throws {
        var payload = try UICFixtures.bytes(UICFixtures.cityMobil)
        payload.replaceSubrange(9..<14, with: Array("00099".utf8))
        let verdict = try verify(payload, at: utc("2021-01-11T12:00:00Z"))
        #expect(verdict.kind == .unknownKey)
        #expect(verdict.signature == .unknownKey)
    }

    @Test("broken containers are malformed with the offset, never a crash")
    func malformed() throws {
        let payload = try UICFixtures.bytes(UICFixtures.cityMobil)
        for cut in [3, 10, 40, 66, 70, 200] {
            let verdict = try verify(Array(payload.prefix(cut)), at: utc("2021-01-11T12:00:00Z"))
            #expect(verdict.kind == .malformed, "cut at \(cut): \(verdict.reason)")
            #expect(verdict.reason.contains("byte") || verdict.reason.contains("offset"), "\(verdict.reason)")
        }
        var letters = payload
        letters.replaceSubrange(64..<68, with: Array("02x5".utf8))
        #expect(try verify(letters, at: .now).kind == .malformed)
        let bomb = UIC918_3.encode(
            inflated: [UInt8](repeating: 0x30, count: 200_000), issuerCode: "0080", keyID: "00007"
        ) { _ in
            [0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]
        }
        let verdict = try verify(bomb, at: .now)
        #expect(verdict.kind == .malformed)
        #expect(verdict.reason.contains("64 KiB"))
    }
}

/// A rail issuer with its own key, making UIC tickets the way the real ones are made.
struct UICTestIssuer {
    let privateKey: PrivateKey
    let scheme: SignatureScheme
    let algorithmText: String?
    var issuerCode = "1080"
    var keyID = "00042"

    func trustedKey(notBefore: Date? = nil, notAfter: Date? = nil, listing: UICKeyListing? = nil) -> TrustedKey {
        TrustedKey(
            family: .uic, issuer: UICKeyList.normalizedCode(IssuerID(issuerCode)),
            keyID: KeyID(UICKeyList.normalizedCode(keyID)),
            algorithm: algorithmText, publicKey: privateKey.publicKey, notBefore: notBefore, notAfter: notAfter,
            listing: listing
        )
    }

    /// A ticket valid `from` … `until`, issued at `issuedAt` (U_HEAD), signed with this issuer's key.
    func ticket(
        version: Int, from: UICDay, until: UICDay, form: UICSignatureForm? = nil, fieldLength: Int? = nil,
        issuedAt: Date = utc("2026-01-01T08:00:00Z")
    ) throws -> [UInt8] {
        let head = UICHead(issuerCode: issuerCode, ticketKey: "TEST-\(version)", issuedAt: issuedAt)
        let bl = UIC0080BL(
            validityBlocks: [.init(firstDay: from, lastDay: until, serial: "0000000001")],
            fields: [
                .init(tag: 1, value: "Flexpreis"), .init(tag: 15, value: "Mainz"), .init(tag: 16, value: "Kassel"),
                .init(tag: 31, value: from.description), .init(tag: 32, value: until.description),
            ]
        )
        return try UIC918_3.encode(
            records: [head.record(), bl.record()], version: version, issuerCode: issuerCode, keyID: keyID,
            signatureForm: form, signatureFieldLength: fieldLength
        ) { compressed in try privateKey.signature(for: compressed, scheme: scheme) }
    }
}

@Suite("UIC 918.3 tickets made by the tests")
struct UICGeneratedTicketTests {
    static let issuers: [(String, UICTestIssuer)] = [
        (
            "DSA-1024/SHA1",
            UICTestIssuer(
                privateKey: try! .generate(.dsa(bits: 1024, qBits: 160)), scheme: .dsa(.sha1, .der),
                algorithmText: "SHA1withDSA(1024,160)")
        ),
        (
            "DSA-2048/SHA256",
            UICTestIssuer(
                privateKey: try! .generate(.dsa(bits: 2048, qBits: 256)), scheme: .dsa(.sha256, .der),
                algorithmText: "SHA256withDSA(2048,256)")
        ),
        (
            "DSA-2048/SHA224",
            UICTestIssuer(
                privateKey: try! .generate(.dsa(bits: 2048, qBits: 224)), scheme: .dsa(.sha224, .der),
                algorithmText: "SHA224withDSA")
        ),
        (
            "ECDSA P-256",
            UICTestIssuer(
                privateKey: try! .generate(.ecP256), scheme: .ecdsa(.sha256, .der), algorithmText: "SHA256withECDSA")
        ),
        (
            "DSA-2048/SHA256, no algorithm text",
            UICTestIssuer(
                privateKey: try! .generate(.dsa(bits: 2048, qBits: 256)), scheme: .dsa(.sha256, .der),
                algorithmText: "DSA2048")
        ),
    ]

    let from = UICDay(year: 2026, month: 3, day: 1)!
    let until = UICDay(year: 2026, month: 3, day: 31)!
    let inside = utc("2026-03-15T12:00:00Z")

    @Test("every key type in the header versions it fits, and DER in a version 2 ticket, verifies valid")
    func everyPath() throws {
        for (name, issuer) in Self.issuers {
            var trust = TrustSnapshot()
            trust.add(issuer.trustedKey())
            let verifier = TicketVerifier(trust: trust, clock: FixedClock(inside))
            var variants: [(String, [UInt8])] = [("v2 raw", try issuer.ticket(version: 2, from: from, until: until))]
            // A DER signature only fits the 50-byte field of version 1 with a 160-bit q (DSA-1024).
            if case .dsa(_, 160) = issuer.privateKey.kind {
                variants.append(("v1", try issuer.ticket(version: 1, from: from, until: until)))
                variants.append(("v2 DER in 64", try issuer.ticket(version: 2, from: from, until: until, form: .der)))
            }
            for (variant, payload) in variants {
                let verdict = try verifier.verify(payload)
                #expect(verdict.kind == .valid, "\(name) \(variant): \(verdict.reason)")
                #expect(verdict.ticket?.product == "Flexpreis")
                var forged = payload
                forged[forged.count - 3] ^= 0x40
                #expect(try verifier.verify(forged).kind != .valid, "\(name) \(variant) forged")
            }
        }
    }

    @Test("a ticket issued after its key's end date gives key-expired with the signature valid, not invalid-signature")
    func keyExpired() throws {
        let issuer = Self.issuers[0].1
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey(notAfter: utc("2025-12-01T23:59:59Z")))
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(inside)).verify(
            try issuer.ticket(version: 1, from: from, until: until))
        #expect(verdict.kind == .keyExpired)
        #expect(verdict.signature == .valid)
        #expect(verdict.reason.contains("before the ticket was issued (2026-01-01T08:00:00Z)"), "\(verdict.reason)")
    }

    @Test("a key that ended after the ticket was issued still vouches for it: a season ticket outlives its key")
    func keyEndedAfterIssuing() throws {
        let issuer = Self.issuers[0].1
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey(notAfter: utc("2026-02-01T23:59:59Z")))
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(inside)).verify(
            try issuer.ticket(version: 1, from: from, until: until))
        #expect(verdict.kind == .valid, "\(verdict.reason)")
    }

    @Test("a key of another issuer with the same key id does not verify the ticket")
    func otherIssuer() throws {
        let issuer = Self.issuers[0].1
        var other = issuer
        other.issuerCode = "1181"
        var trust = TrustSnapshot()
        trust.add(other.trustedKey())
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(inside)).verify(
            try issuer.ticket(version: 1, from: from, until: until))
        #expect(verdict.kind == .unknownKey)
    }

    @Test("a revoked UIC ticket is revoked")
    func revoked() throws {
        let issuer = Self.issuers[3].1
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey())
        trust.revokeTicket(TicketID(Array("TEST-2".utf8)), issuer: "1080", Revocation(reason: "refunded"))
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(inside)).verify(
            try issuer.ticket(version: 2, from: from, until: until))
        #expect(verdict.kind == .revoked)
        #expect(verdict.reason.contains("refunded"))
    }
}
