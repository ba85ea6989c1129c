import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

@Suite("DOSIPAS decoding")
struct DOSIPASTests {
    static let samples = [
        "cts-ticket.bin", "solea-ticket.bin", "sncf-ter-ticket.bin", "bus-ain-ticket.bin", "bus-ardeche-ticket.bin",
        "drome-bus-ticket.bin", "grand-est-u1-fcb3.bin", "sample-ticket.bin",
    ]

    static func barcode(_ name: String) throws -> DOSIPASBarcode {
        try DOSIPASBarcode(decoding: try FCBFixture.bytes("dosipas/\(name)"))
    }

    /// expected.json, as the fields the tests compare.
    struct Expected: Decodable {
        var header: String
        var securityProvider: Int
        var keyId: Int
        var data: [String]
        var level2Data: String?
    }

    @Test("every sample's header, provider, key id, data formats and level-2 data format are as expected.json says")
    func headers() throws {
        let json = try FCBFixture.bytes("dosipas/expected.json")
        let expected = try JSONDecoder().decode([String: Expected].self, from: Data(json))
        #expect(Set(expected.keys) == Set(Self.samples))
        for name in Self.samples {
            let bytes = try FCBFixture.bytes("dosipas/\(name)")
            #expect(DOSIPASBarcode.isBarcode(bytes), "\(name)")
            let barcode = try DOSIPASBarcode(decoding: bytes)
            let want = try #require(expected[name])
            #expect(barcode.headerVersion.rawValue == want.header, "\(name)")
            #expect(barcode.level1.securityProvider == .number(want.securityProvider), "\(name)")
            #expect(barcode.level1.keyID ?? 0 == want.keyId, "\(name)")
            #expect(barcode.level1.dataSequence.map(\.formatText) == want.data, "\(name)")
            // expected.json describes Intercode data after the format name.
            let level2Format = want.level2Data.map { String($0.split(separator: " ").first ?? "") }
            #expect(barcode.level2Data?.formatText == level2Format, "\(name)")
            #expect(barcode.level1Signature != nil, "\(name)")
            // The signed ranges start where section 3.4 says for a 2-character format.
            #expect(barcode.level1SignedBits.lowerBound == 25)
            #expect(barcode.level2SignedBits.lowerBound == 23)
            #expect(barcode.level2SignedBits.upperBound >= barcode.level1SignedBits.upperBound)
            #expect(bytes.count * 8 - barcode.bitCount < 8, "\(name): only padding follows the fields")
            // Signed bytes: the range realigned, zero-padded.
            #expect(barcode.level1SignedBytes.count == (barcode.level1SignedBits.count + 7) / 8)
            let tail = barcode.level2SignedBits.count % 8
            if tail != 0, let last = barcode.level2SignedBytes.last {
                #expect(last & (0xFF >> tail) == 0, "\(name): the padding bits are zero")
            }
        }
    }

    @Test("the signed bytes are the barcode's own bits: level 1 of cts starts with its 12-bit bitmap 101111111111")
    func signedBytes() throws {
        let barcode = try Self.barcode("cts-ticket.bin")
        // Bits 25… of `81 55 65 DF F8 E7 60`: 1011 1111 1111 …, then securityProviderNum 3702 in 15 bits.
        #expect(Array(barcode.level1SignedBytes.prefix(3)) == [0xBF, 0xF1, 0xCE])
        // Level 2 starts two bits earlier, with the Level2DataType bitmap 11.
        #expect(barcode.level2SignedBytes.first == 0xEF)
        #expect(barcode.level1.level1SigningAlgorithm == .ecdsa(.sha256))
        #expect(barcode.level1.level2SigningAlgorithm == .ecdsa(.sha256))
        #expect(barcode.level1.level1KeyAlgorithm == .ecP256)
        #expect(barcode.level1.level2KeyAlgorithm == .ecP256)
        #expect(barcode.level1.level2PublicKey?.count == 33)
        let grandEst = try Self.barcode("grand-est-u1-fcb3.bin")
        #expect(grandEst.level1.level2PublicKey?.count == 91)
        #expect(grandEst.level1.level2PublicKey?.first == 0x30)
        // The SNCF TER frame names no algorithm: the key list decides.
        let ter = try Self.barcode("sncf-ter-ticket.bin")
        #expect(ter.level1.level1SigningAlgorithm == nil)
        #expect(ter.level1Signature?.count == 46)
        #expect(ter.level2Signature == nil)
        #expect(ter.level1.namesLevel2Key == false)
    }

    @Test("algorithms named from decoded arcs are the ones their dotted identifiers name, and read the same")
    func algorithmsFromArcs() throws {
        let signing = [
            "1.2.840.10045.4.3.2", "1.2.840.10045.4.3.3", "1.2.840.10045.4.3.4", "2.16.840.1.101.3.4.3.1",
            "2.16.840.1.101.3.4.3.2", "1.2.840.10040.4.3", "1.3.101.112", "1.2.840.113549.1.1.11",
            "1.2.840.10045.4.3", "1.2.840.10045.4.3.2.1", "2.999.7",
        ]
        let keys = [
            "1.2.840.10045.3.1.7", "1.3.132.0.34", "1.3.132.0.35", "1.2.840.10045.2.1", "1.2.840.10040.4.1",
            "1.2.840.113549.1.1.1", "1.3.101.112", "1.3.132.0.10", "0.39.1",
        ]
        // Each identifier as the barcode carries it (BER contents in an OBJECT IDENTIFIER), decoded to arcs.
        func arcs(_ dotted: String) throws -> [Int] {
            let numbers = dotted.split(separator: ".").compactMap { Int($0) }
            var contents: [UInt8] = []
            for arc in [numbers[0] * 40 + numbers[1]] + numbers.dropFirst(2) {
                var groups = [UInt8(arc & 0x7F)]
                var rest = arc >> 7
                while rest > 0 {
                    groups.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                    rest >>= 7
                }
                contents += groups
            }
            let value = try PERDecoder.decode([UInt8(contents.count)] + contents, as: .objectIdentifier)
            guard case .objectIdentifier(let arcs) = value else { throw FormatError.malformed("not an identifier") }
            #expect(value.objectIdentifier == dotted)
            return arcs
        }
        for oid in signing {
            let fromArcs = DOSIPASSigningAlgorithm(arcs: try arcs(oid))
            #expect(fromArcs == DOSIPASSigningAlgorithm(oid: oid), "\(oid)")
            #expect(fromArcs.description == DOSIPASSigningAlgorithm(oid: oid).description)
        }
        for oid in keys {
            #expect(DOSIPASKeyAlgorithm(arcs: try arcs(oid)) == DOSIPASKeyAlgorithm(oid: oid), "\(oid)")
        }
        let names = DOSIPASHash.allCases.flatMap { hash in
            [DOSIPASSigningAlgorithm.ecdsa(hash), .dsa(hash), .rsaPKCS1(hash)].map(\.description)
        }
        #expect(
            names == [
                "ECDSA with SHA-1", "DSA with SHA-1", "RSA PKCS#1 with SHA-1",
                "ECDSA with SHA-224", "DSA with SHA-224", "RSA PKCS#1 with SHA-224",
                "ECDSA with SHA-256", "DSA with SHA-256", "RSA PKCS#1 with SHA-256",
                "ECDSA with SHA-384", "DSA with SHA-384", "RSA PKCS#1 with SHA-384",
                "ECDSA with SHA-512", "DSA with SHA-512", "RSA PKCS#1 with SHA-512",
            ])
        #expect(DOSIPASSigningAlgorithm(oid: "2.999.7").description == "algorithm 2.999.7")
    }

    @Test("FDC1 time stamps, durations and ends of validity of the U2 samples")
    func fdc1() throws {
        let cts = try Self.barcode("cts-ticket.bin")
        let ctsFresh = try #require(try cts.freshness(notAfter: utc(2026, 2, 12, 19), issuingDay: nil))
        #expect(ctsFresh.generatedAt == utc(2026, 2, 12, 18, 45, 28))
        #expect(ctsFresh.duration == 300)
        #expect(ctsFresh.endOfValidity == utc(2026, 2, 12, 19, 18))
        guard case .fdc1(let content)? = try cts.dynamicContent() else {
            Issue.record("cts has no FDC1 content")
            return
        }
        #expect(content.mobileAppID == "fr.cts.strasbourg.ugo")
        #expect(content.timeStamp == DOSIPASTimeStamp(dayOfYear: 43, secondOfDay: 67_528))

        let ain = try Self.barcode("bus-ain-ticket.bin")
        let ainFresh = try #require(try ain.freshness(notAfter: utc(2026, 2, 15, 11), issuingDay: nil))
        #expect(ainFresh.generatedAt == utc(2026, 2, 15, 10, 49, 29))
        #expect(ainFresh.duration == 120)
        #expect(ainFresh.endOfValidity == utc(2026, 2, 16, 10, 49))
    }

    @Test("an FDC1 time stamp is the latest such day and time not after now plus the tolerance: New Year")
    func timeStampYearAroundNewYear() {
        let skew: TimeInterval = 120
        func read(_ day: Int, _ second: Int, inspected: Date) -> Date {
            DOSIPASTimeStamp(dayOfYear: day, secondOfDay: second).date(notAfter: inspected.addingTimeInterval(skew))
        }
        // Inspected on 1 January for a barcode generated on 31 December (day 365 of 2025): last year's.
        #expect(read(365, 86_000, inspected: utc(2026, 1, 1, 0, 5)) == utc(2025, 12, 31, 23, 53, 20))
        // Day 366 on 1 January after a leap year: 31 December of that year.
        #expect(read(366, 86_390, inspected: utc(2025, 1, 1, 0, 0, 30)) == utc(2024, 12, 31, 23, 59, 50))
        // Inspected on 31 December for day 1 stamped one minute after midnight: this year's only within the
        // tolerance (a phone clock a minute ahead), never next year's.
        #expect(read(1, 60, inspected: utc(2025, 12, 31, 23, 59)) == utc(2026, 1, 1, 0, 1))
        #expect(read(1, 300, inspected: utc(2025, 12, 31, 23, 59)) == utc(2025, 1, 1, 0, 5))
        // Inspected on 31 December at noon for day 1: the 1 January of the same year, a year old.
        #expect(read(1, 10, inspected: utc(2025, 12, 31, 12)) == utc(2025, 1, 1, 0, 0, 10))
        // Exactly at the limit counts; a second after it is last year's.
        #expect(read(1, 120, inspected: utc(2026, 1, 1)) == utc(2026, 1, 1, 0, 2))
        #expect(read(1, 121, inspected: utc(2026, 1, 1)) == utc(2025, 1, 1, 0, 2, 1))
    }

    @Test("an FDC1 time stamp is never in the future: a February day read in November is this February's")
    func timeStampNeverInTheFuture() {
        let february = DOSIPASTimeStamp(dayOfYear: 43, secondOfDay: 67_528)
        // The nearest-year rule read this as 2027-02-12, after the ticket's own end of validity.
        #expect(february.date(notAfter: utc(2026, 11, 20, 10)) == utc(2026, 2, 12, 18, 45, 28))
        // Stamped 15 minutes ahead of the inspection (a barcode made in advance): last year's, so stale.
        #expect(february.date(notAfter: utc(2026, 2, 12, 18, 32)) == utc(2025, 2, 12, 18, 45, 28))
        for hour in 0..<24 {
            let limit = utc(2026, 6, 1, hour)
            for day in [1, 59, 60, 152, 153, 365, 366] {
                #expect(DOSIPASTimeStamp(dayOfYear: day, secondOfDay: 86_399).date(notAfter: limit) <= limit)
            }
        }
    }

    @Test("leap days: day 60 is 29 February in a leap year and 1 March otherwise; day 366 only in leap years")
    func timeStampLeapDays() {
        func read(_ day: Int, _ second: Int, notAfter limit: Date) -> Date {
            DOSIPASTimeStamp(dayOfYear: day, secondOfDay: second).date(notAfter: limit)
        }
        #expect(read(60, 39_600, notAfter: utc(2024, 2, 29, 12)) == utc(2024, 2, 29, 11))
        #expect(read(60, 60, notAfter: utc(2025, 3, 1, 0, 2, 30)) == utc(2025, 3, 1, 0, 1))
        // Across midnight into 1 March: in a leap year the day before is day 60, in other years day 59.
        #expect(read(60, 86_390, notAfter: utc(2024, 3, 1, 0, 2, 30)) == utc(2024, 2, 29, 23, 59, 50))
        #expect(read(59, 86_390, notAfter: utc(2025, 3, 1, 0, 2, 30)) == utc(2025, 2, 28, 23, 59, 50))
        // Day 60 seen on 29 February before the stamp's time: the 1 March of the year before (2023 had no leap day).
        #expect(read(60, 43_200, notAfter: utc(2024, 2, 29, 6)) == utc(2023, 3, 1, 12))
        // Day 366 in a year without one: the 31 December of the latest leap year, 2100 not being one.
        #expect(read(366, 0, notAfter: utc(2026, 6, 1)) == utc(2024, 12, 31))
        #expect(read(366, 3_600, notAfter: utc(2024, 12, 31, 12)) == utc(2024, 12, 31, 1))
        #expect(read(366, 0, notAfter: utc(2104, 1, 1)) == utc(2096, 12, 31))
    }

    @Test("the synthetic sample's Intercode dynamic data: day 0, 59710 s local, offset -8, 600 s")
    func intercodeDynamic() throws {
        let sample = try Self.barcode("sample-ticket.bin")
        guard case .intercode(let data)? = try sample.dynamicContent() else {
            Issue.record("the sample has no Intercode dynamic data")
            return
        }
        #expect(data == IntercodeDynamicData.testValue(day: 0, second: 59_710, offset: -8, duration: 600))
        let fresh = try #require(
            try sample.freshness(notAfter: utc(2020, 4, 30), issuingDay: FCBDay(year: 2020, dayOfYear: 121)))
        #expect(fresh.generatedAt == utc(2020, 4, 30, 14, 35, 10))
        #expect(fresh.duration == 600)
    }

    @Test("each sample maps onto a uic-918-9 ticket with its FCB content and Intercode issuing data")
    func tickets() throws {
        let cts = try DOSIPAS.content(of: try Self.barcode("cts-ticket.bin"), at: utc(2026, 2, 12, 18, 46))
        #expect(cts.ticket.format == .uic9189)
        #expect(cts.ticket.issuer == "3703")
        #expect(cts.ticket.ticketID.bytes == Array("7752008".utf8))
        #expect(cts.ticket.validFrom == utc(2026, 2, 12, 18, 18))
        #expect(cts.ticket.validUntil == utc(2026, 2, 12, 19, 18))
        #expect(cts.ticket.documents.map(\.kind) == ["openTicket"])
        #expect(cts.railTicket?.version == .v3)
        let intercode = try #require(cts.railTicket?.intercodeIssuing)
        #expect(intercode.networkID == "250915")
        #expect(intercode.retailerID == 1024)
        #expect(intercode.retailTraceability?.hasPrefix("V0.9_976e9a25-") == true)
        let labels = cts.ticket.details.map(\.label)
        for label in [
            "header", "security provider", "key id", "level 1 signature", "level 2 key", "level 2 signature",
            "barcode generated", "barcode valid for", "barcode end of validity", "Intercode", "FCB version",
        ] {
            #expect(labels.contains(label), "\(label)")
        }
        #expect(
            cts.ticket.details.first { $0.label == "barcode generated" }?.value.hasSuffix("2026-02-12T18:45:28Z")
                == true)

        let ter = try DOSIPAS.ticket(from: try Self.barcode("sncf-ter-ticket.bin"), at: utc(2026, 2, 13))
        #expect(ter.issuer == "1187")
        #expect(ter.holder == "THEOPHILE HELLEBOID, born 1989-12-19")
        #expect(ter.passengers == 1)
        #expect(ter.category == "adult")
        #expect(ter.validFrom == utc(2026, 2, 12, 23))

        let sample = try DOSIPAS.content(of: try Self.barcode("sample-ticket.bin"), at: utc(2020, 4, 30))
        #expect(sample.railTicket?.version == .v2)
        #expect(sample.railTicket?.issuing.issuingMinute == 995)
        #expect(sample.railTicket?.intercodeIssuing?.retailChannel == "mobileApplication")
        #expect(sample.railTicket?.intercodeIssuing?.version == 1)
        #expect(sample.railTicket?.intercodeIssuing?.instanciation == 1)
    }

    @Test("the detector takes DOSIPAS barcodes as uic-918-9 and leaves FC1 and #UT payloads alone")
    func detection() throws {
        let bytes = try FCBFixture.bytes("dosipas/cts-ticket.bin")
        let recognised = try PayloadDetector().recognise(bytes)
        #expect(recognised.format == .uic9189)
        guard case .dosipas(let barcode) = recognised else {
            Issue.record("not recognised as DOSIPAS")
            return
        }
        #expect(barcode.level1.keyID == 7)
        #expect(!DOSIPASBarcode.isBarcode(Array("#UT01".utf8)))
        #expect(!DOSIPASBarcode.isBarcode(Array("FC1:ABC".utf8)))
        #expect(!DOSIPASBarcode.isBarcode([0xD2, 0x84, 0x43]))
        #expect(!DOSIPASBarcode.isBarcode([0x78, 0x9C, 0x01]))
        #expect(!DOSIPASBarcode.isBarcode([0x81, 0x55]))
    }

    @Test("a U3 header is unsupported; trailing octets and cut barcodes are malformed with a bit offset")
    func refusals() throws {
        var u3 = try FCBFixture.bytes("dosipas/cts-ticket.bin")
        // "U2" → "U3": the digit's last bit is bit 22, the second-last of byte 2.
        u3[2] ^= 0b0000_0010
        #expect(DOSIPASBarcode.isBarcode(u3))
        do {
            _ = try DOSIPASBarcode(decoding: u3)
            Issue.record("U3 decoded")
        } catch {
            #expect(error.code == .unsupported)
            #expect(error.message.contains("U3"))
        }
        let cts = try FCBFixture.bytes("dosipas/cts-ticket.bin")
        do {
            _ = try DOSIPASBarcode(decoding: cts + [0, 0])
            Issue.record("trailing octets accepted")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.contains("2 more octets"))
        }
        do {
            _ = try DOSIPASBarcode(decoding: Array(cts.prefix(100)))
            Issue.record("a cut barcode decoded")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.contains("bit"))
        }
    }

    @Test("every truncation and many bit flips of every sample decode or fail with a FormatError, never trap")
    func robustness() throws {
        // What the inspector sees for each: a ticket (whose signatures then decide), or a malformed or unsupported
        // verdict with a sentence saying why.
        var refusals = 0
        var unexplained: [String] = []
        func inspect(_ bytes: [UInt8], _ what: String) {
            do {
                _ = try DOSIPAS.ticket(from: try DOSIPASBarcode(decoding: bytes), at: utc(2026, 2, 12))
            } catch {
                refusals += 1
                if !(error.code == .malformed || error.code == .unsupported) || error.message.isEmpty {
                    unexplained.append("\(what): \(error)")
                }
            }
        }
        for name in Self.samples {
            let bytes = try FCBFixture.bytes("dosipas/\(name)")
            for length in 0..<bytes.count {
                inspect(Array(bytes.prefix(length)), "\(name) cut to \(length) bytes")
            }
            for bit in stride(from: 0, to: bytes.count * 8, by: 3) {
                var flipped = bytes
                flipped[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                inspect(flipped, "\(name) with bit \(bit) flipped")
            }
        }
        #expect(refusals > 0)
        #expect(unexplained.isEmpty, "refusals without a malformed or unsupported reason: \(unexplained.prefix(3))")
    }
}

extension IntercodeDynamicData {
    /// A value to compare with.
    static func testValue(day: Int, second: Int?, offset: Int?, duration: Int?) -> IntercodeDynamicData {
        var value = try! IntercodeDynamicData(decoding: [0x00])
        value.day = day
        value.secondOfDay = second
        value.utcOffset = offset
        value.duration = duration
        return value
    }
}

@Suite("Instants as text")
struct InstantTextTests {
    @Test("dates are written as Foundation's ISO 8601 format writes them")
    func iso8601() {
        for seconds in [
            0, 1, 59, 86_399, 86_400, 951_782_400, 1_770_921_928, 1_740_647_640, -1, -86_401, 4_102_444_799,
        ] {
            let date = Date(timeIntervalSince1970: TimeInterval(seconds))
            #expect(FCBTicket.text(date) == date.formatted(.iso8601), "\(seconds)")
        }
        let fraction = Date(timeIntervalSince1970: 1_770_921_928.75)
        #expect(FCBTicket.text(fraction) == fraction.formatted(.iso8601))
    }
}
