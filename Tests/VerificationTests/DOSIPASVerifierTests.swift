import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The DOSIPAS samples (the fixture tree's `dosipas`, copied from shared/fixtures/formats).
enum DOSIPASFixtures {
    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("dosipas/\(name)") }

    static let samples = [
        "cts-ticket.bin", "solea-ticket.bin", "sncf-ter-ticket.bin", "bus-ain-ticket.bin", "bus-ardeche-ticket.bin",
        "drome-bus-ticket.bin", "grand-est-u1-fcb3.bin", "sample-ticket.bin",
    ]

    /// Both key lists (2026-02 and historic) imported as an inspector would hold them.
    static func trust() throws -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        for file in ["uic/uic-publickeys-snapshot.xml", "uic/uic-publickeys-historic.xml"] {
            try snapshot.addUICKeyList(xml: try Fixtures.bytes(file))
        }
        return snapshot
    }
}

/// The first `count` bits of `bytes`, zero-padded to whole octets.
private func prefix(_ bytes: [UInt8], bits count: Int) -> [UInt8] {
    var result = Array(bytes.prefix((count + 7) / 8))
    if count % 8 != 0, !result.isEmpty { result[result.count - 1] &= 0xFF << UInt8(8 - count % 8) }
    return result
}

/// `bytes` with `bit` flipped (bit 0 = the most significant bit of the first byte).
private func flipping(_ bytes: [UInt8], bit: Int) -> [UInt8] {
    var copy = bytes
    copy[bit / 8] ^= 0x80 >> UInt8(bit % 8)
    return copy
}

/// Bits appended one range at a time, most significant first, zero-padded: for building altered barcodes.
private struct BitWriter {
    var bytes: [UInt8] = []
    var count = 0

    mutating func append(_ source: [UInt8], _ range: Range<Int>) {
        for bit in range {
            if count % 8 == 0 { bytes.append(0) }
            if source[bit / 8] & (0x80 >> UInt8(bit % 8)) != 0 { bytes[count / 8] |= 0x80 >> UInt8(count % 8) }
            count += 1
        }
    }
}

@Suite("DOSIPAS verification")
struct DOSIPASVerifierTests {
    let trust = try! DOSIPASFixtures.trust()

    func verify(_ payload: [UInt8], at instant: Date) throws -> Verdict {
        try TicketVerifier(trust: trust, clock: FixedClock(instant)).verify(payload)
    }

    func report(_ name: String) throws -> DOSIPASSignatureReport {
        let barcode = try DOSIPASBarcode(decoding: try DOSIPASFixtures.bytes(name))
        return try TicketVerifier(trust: trust).checkDOSIPASSignatures(barcode)
    }

    /// How a level was judged, as expected.json words it.
    enum Level: Equatable {
        case valid, invalid, unknownKey, absent
    }

    static func level(_ result: DOSIPASLevelResult) -> Level? {
        switch result {
        case .valid: .valid
        case .invalid: .invalid
        case .unknownKey: .unknownKey
        case .notNamed: .absent
        case .missing, .unsupported: nil
        }
    }

    @Test("both levels of every sample are judged as expected.json says, with both UIC key lists")
    func levels() throws {
        let expected: [(String, Level, Level, String?)] = [
            ("cts-ticket.bin", .valid, .valid, "3703/7"),
            ("solea-ticket.bin", .valid, .valid, "3703/7"),
            ("sncf-ter-ticket.bin", .valid, .absent, "1187/0"),
            ("bus-ain-ticket.bin", .unknownKey, .valid, nil),
            ("bus-ardeche-ticket.bin", .unknownKey, .valid, nil),
            ("drome-bus-ticket.bin", .unknownKey, .valid, nil),
            // The only keys with their ids were not valid when these were issued: their failures prove nothing.
            ("grand-est-u1-fcb3.bin", .unknownKey, .valid, nil),
            ("sample-ticket.bin", .unknownKey, .invalid, nil),
        ]
        for (name, level1, level2, key) in expected {
            let report = try report(name)
            #expect(Self.level(report.level1) == level1, "\(name): level 1 \(report.level1)")
            #expect(Self.level(report.level2) == level2, "\(name): level 2 \(report.level2)")
            #expect(report.key.map { "\($0.issuer)/\($0.keyID)" } == key, "\(name)")
        }
        // The TER frame names no algorithm: the key list's "DSA1024 SHA224" decides.
        #expect("\(try report("sncf-ter-ticket.bin").level1)".contains("DSA with SHA-224"))
    }

    @Test("cts and solea are valid inside their window with a fresh barcode, expired after it")
    func validThenExpired() throws {
        // cts: valid 18:18–19:18Z, barcode generated 18:45:28Z for 300 s; solea: 18:11–19:11Z, 18:11:45Z.
        let cases: [(String, Date, Date, String, Int)] = [
            ("cts-ticket.bin", utc(2026, 2, 12, 18, 47), utc(2026, 2, 12, 19, 30), "7752008", 92),
            ("solea-ticket.bin", utc(2026, 2, 12, 18, 13), utc(2026, 2, 12, 19, 30), "7751775", 75),
        ]
        for (name, inside, after, reference, age) in cases {
            let payload = try DOSIPASFixtures.bytes(name)
            let valid = try verify(payload, at: inside)
            #expect(valid.kind == .valid, "\(name): \(valid.reason)")
            // The reason (the line an inspector reads first) names both levels and the barcode's age.
            #expect(
                valid.reason
                    == "The ticket is genuine and valid now: both signature levels are valid and the barcode was "
                    + "generated \(age) s ago.")
            #expect(valid.signature == .valid)
            #expect(valid.format == .uic9189)
            #expect(valid.issuer == "3703")
            #expect(valid.keyID == "7")
            #expect(valid.warnings.isEmpty)
            let ticket = try #require(valid.ticket)
            #expect(ticket.ticketID.bytes == Array(reference.utf8))
            #expect(ticket.documents.map(\.kind) == ["openTicket"])
            let details = Dictionary(
                ticket.details.map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
            #expect(details["level 1 check"]?.hasPrefix("valid (key 3703/7") == true)
            #expect(details["level 2 check"]?.hasPrefix("valid (ECDSA P-256 key in the barcode") == true)
            #expect(details["barcode generated"] != nil)

            let expired = try verify(payload, at: after)
            #expect(expired.kind == .expired, "\(name): \(expired.reason)")
            #expect(expired.signature == .valid)
        }
    }

    @Test("a barcode older than its duration is refused as a copy: barcode-expired, signatures valid")
    func staleBarcode() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        // Generated 18:45:28Z, 300 s + 120 s skew: fresh until 18:52:28Z; the ticket itself runs to 19:18Z.
        let stillFresh = try verify(payload, at: utc(2026, 2, 12, 18, 52, 20))
        #expect(stillFresh.kind == .valid, "\(stillFresh.reason)")
        let stale = try verify(payload, at: utc(2026, 2, 12, 18, 55))
        #expect(stale.kind == .barcodeExpired, "\(stale.reason)")
        #expect(stale.signature == .valid)
        #expect(stale.reason.contains("300 s"))
        #expect(stale.ticket != nil)
        // Shown before it was made (a barcode generated in advance).
        let early = try verify(payload, at: utc(2026, 2, 12, 18, 30))
        #expect(early.kind == .barcodeExpired, "\(early.reason)")
        #expect(VerdictKind.barcodeExpired.rawValue == "barcode-expired")
    }

    @Test("a dynamic barcode inspected in November whose stamp is in February was generated this February")
    func fdc1YearInNovember() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        // Stamped day 43, 18:45:28 UTC: 12 February. In November the nearest year was next February.
        let november = try verify(payload, at: utc(2026, 11, 20, 10))
        #expect(november.kind == .expired)
        let details = Dictionary(
            (november.ticket?.details ?? []).map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(details["barcode generated"]?.contains("2026-02-12") == true, "\(details["barcode generated"] ?? "")")

        // Shown 15 minutes before its stamp, beyond the 120 s tolerance: never a barcode of the future, so a year old.
        let early = try verify(payload, at: utc(2026, 2, 12, 18, 30))
        #expect(early.kind == .barcodeExpired, "\(early.reason)")
        #expect(early.reason.contains("2025-02-12T18:45:28Z, 364 days ago"), "\(early.reason)")
        // Within the tolerance it is this year's, and fresh.
        let ahead = try verify(payload, at: utc(2026, 2, 12, 18, 44))
        #expect(ahead.kind == .valid, "\(ahead.reason)")
        #expect(ahead.reason.hasSuffix("generated 0 s ago."), "\(ahead.reason)")
    }

    @Test("level 2 stripped, or its signature altered by one bit: invalid-signature")
    func level2Tampering() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        let barcode = try DOSIPASBarcode(decoding: payload)
        let inside = utc(2026, 2, 12, 18, 47)

        // Stripped: clear the presence bit and drop the level-2 signature (the bits after level2SignedData).
        var stripped = prefix(payload, bits: barcode.level2SignedBits.upperBound)
        stripped[0] &= 0x7F
        let strippedVerdict = try verify(stripped, at: inside)
        #expect(strippedVerdict.kind == .invalidSignature, "\(strippedVerdict.reason)")
        #expect(strippedVerdict.reason.contains("missing"))

        // One bit of the level-2 signature (past its 8-bit length, inside the DER integers).
        let inSignature = barcode.level2SignedBits.upperBound + 8 + 8 * 20 + 3
        let altered = try verify(flipping(payload, bit: inSignature), at: inside)
        #expect(altered.kind == .invalidSignature, "\(altered.reason)")
        #expect(altered.reason.contains("level-2"))

        // One bit of the level-2 data (the FDC1 time stamp's neighbourhood): level 1 still holds, level 2 not.
        let inLevel2Data = barcode.level2SignedBits.upperBound - 20
        let dataAltered = try verify(flipping(payload, bit: inLevel2Data), at: inside)
        #expect(dataAltered.kind == .invalidSignature, "\(dataAltered.reason)")
    }

    @Test("one verifier judges the same barcodes again alike: a kept level-2 key never keeps a verdict")
    func keptKeys() throws {
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(utc(2026, 2, 12, 18, 47)))
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        let barcode = try DOSIPASBarcode(decoding: payload)
        let altered = flipping(payload, bit: barcode.level2SignedBits.upperBound + 8 + 8 * 20 + 3)
        for _ in 0..<3 {
            #expect(try verifier.verify(payload).kind == .valid)
            #expect(try verifier.verify(altered).kind == .invalidSignature)
        }
        let keys = DOSIPASLevel2Keys(capacity: 1)
        for name in DOSIPASFixtures.samples + DOSIPASFixtures.samples {
            let sample = try DOSIPASBarcode(decoding: try DOSIPASFixtures.bytes(name))
            #expect(TicketVerifier.checkLevel2(sample, keys: keys) == TicketVerifier.checkLevel2(sample, keys: nil))
        }
    }

    @Test("a level-1 byte altered gives invalid-signature; an unsigned frame too")
    func level1Tampering() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        // Byte 40 lies inside the FCB octets of level 1 (opaque to the header's decoder).
        var altered = payload
        altered[40] ^= 0x01
        let verdict = try verify(altered, at: utc(2026, 2, 12, 18, 47))
        #expect(verdict.kind == .invalidSignature, "\(verdict.reason)")
        #expect(verdict.signature == .invalid)
        #expect(verdict.reason.contains("level-1"))

        // Unsigned: the level-1 signature's presence bit (23, the first of Level2DataType's bitmap) cleared and
        // its bits taken out.
        let barcode = try DOSIPASBarcode(decoding: payload)
        let signatureLength = try #require(barcode.level1Signature?.count)
        let signatureEnd = barcode.level1SignedBits.upperBound + 8 + 8 * signatureLength
        var writer = BitWriter()
        writer.append(payload, 0..<barcode.level1SignedBits.upperBound)
        writer.append(payload, signatureEnd..<barcode.bitCount)
        var unsigned = writer.bytes
        unsigned[2] &= 0xFE
        let unsignedVerdict = try verify(unsigned, at: utc(2026, 2, 12, 18, 47))
        #expect(unsignedVerdict.kind == .invalidSignature, "\(unsignedVerdict.reason)")
        #expect(unsignedVerdict.reason.contains("no level-1 signature"))
    }

    @Test("the level-1 key is unknown for the 5152 buses: unknown-key with the ticket shown unverified")
    func unknownKey() throws {
        for name in ["bus-ain-ticket.bin", "bus-ardeche-ticket.bin", "drome-bus-ticket.bin"] {
            let verdict = try verify(try DOSIPASFixtures.bytes(name), at: utc(2026, 2, 15, 11))
            #expect(verdict.kind == .unknownKey, "\(name): \(verdict.reason)")
            #expect(verdict.signature == .unknownKey)
            #expect(verdict.issuer == "5152")
            #expect(verdict.keyID == "3")
            let ticket = try #require(verdict.ticket, "\(name)")
            #expect(ticket.holder == "Théophile Helleboid")
            #expect(ticket.details.contains { $0.label == "level 2 check" && $0.value.hasPrefix("valid") })
        }
    }

    @Test("the TER ticket verifies with 1187/0, whose key ended in 2020: key-expired with a valid signature")
    func terKeyExpired() throws {
        let verdict = try verify(try DOSIPASFixtures.bytes("sncf-ter-ticket.bin"), at: utc(2026, 2, 13, 10))
        #expect(verdict.kind == .keyExpired, "\(verdict.reason)")
        #expect(verdict.signature == .valid)
        #expect(verdict.ticket?.holder == "THEOPHILE HELLEBOID, born 1989-12-19")
        #expect(verdict.ticket?.details.contains { $0.label == "level 2 check" && $0.value == "none" } == true)
    }

    @Test(
        "grand-est and the synthetic sample were issued before 3703/2 and 3703/1 were valid: unknown-key, never forged")
    func level1KeyNotYetValid() throws {
        for (name, instant, key, window) in [
            ("grand-est-u1-fcb3.bin", utc(2022, 3, 23, 10), "3703/2", "valid 2022-05-12 to 2023-11-12"),
            ("sample-ticket.bin", utc(2020, 4, 30, 14, 40), "3703/1", "valid 2022-05-12 to 2023-02-12"),
        ] {
            let verdict = try verify(try DOSIPASFixtures.bytes(name), at: instant)
            #expect(verdict.kind == .unknownKey, "\(name): \(verdict.reason)")
            #expect(verdict.signature == .unknownKey)
            #expect(
                verdict.reason.contains("\(key) \(window), not when the ticket says it was issued"), "\(verdict.reason)"
            )
            #expect(verdict.keys.map(\.outcome) == [.skipped])
        }
        // A key in scope and valid when the ticket was issued, that does not match: invalid-signature, as before.
        var trust = TrustSnapshot()
        trust.add(
            TrustedKey(
                family: .uic, issuer: "3703", keyID: "2", algorithm: "SHA256withECDSA",
                publicKey: try PrivateKey.generate(.ecP256).publicKey,
                listing: UICKeyListing(versionType: "DOS", barcodeVersion: "1")))
        let forged = try TicketVerifier(trust: trust, clock: FixedClock(utc(2022, 3, 23, 10))).verify(
            try DOSIPASFixtures.bytes("grand-est-u1-fcb3.bin"))
        #expect(forged.kind == .invalidSignature, "\(forged.reason)")
        #expect(forged.keys.map(\.outcome) == [.failed])
    }

    @Test("truncations and bit flips of every sample give a verdict, never valid unless only padding changed")
    func robustness() throws {
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(utc(2026, 2, 12, 18, 47)))
        let allowed: Set<VerdictKind> = [
            .malformed, .invalidSignature, .unsupported, .unknownKey, .keyExpired, .expired, .notYetValid,
            .barcodeExpired,
        ]
        for name in DOSIPASFixtures.samples {
            let payload = try DOSIPASFixtures.bytes(name)
            let barcode = try DOSIPASBarcode(decoding: payload)
            for length in 0..<payload.count {
                let verdict = try verifier.verify(Array(payload.prefix(length)))
                #expect(allowed.contains(verdict.kind), "\(name) cut to \(length): \(verdict.kind)")
            }
            for bit in stride(from: 0, to: payload.count * 8, by: 5) {
                let verdict = try verifier.verify(flipping(payload, bit: bit))
                if bit >= barcode.bitCount { continue }  // padding: covered by no signature
                #expect(allowed.contains(verdict.kind), "\(name) bit \(bit): \(verdict.kind) \(verdict.reason)")
            }
        }
    }
}
