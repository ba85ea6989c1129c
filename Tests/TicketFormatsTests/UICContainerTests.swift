import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// The real Deutsche Bahn sample tickets in the fixture tree's `uic` (copied from the shared fixtures).
enum UICFixture {
    static let cityMobilV1 = "db-city-mobil-v1-sha1.bin"
    static let superSparpreisV2 = "db-supersparpreis-v2-sha256.bin"
    static let deutschlandTicket = "db-deutschland-ticket-2025.bin"
    static let all = [cityMobilV1, superSparpreisV2, deutschlandTicket]

    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("uic/\(name)") }

    static func container(_ name: String) throws -> UICContainer {
        try UICContainer(parsing: bytes(name))
    }

    /// A signer for structure tests: a DER signature with fixed 20-byte integers (the shape of DSA-160).
    static func derSigner(_ data: [UInt8]) -> [UInt8] {
        UICSignatureField.der(r: [UInt8](repeating: 0x5A, count: 20)[...], s: [UInt8](repeating: 0x3C, count: 20)[...])
    }

    /// A signer that returns 64 raw bytes, the shape of a version 2 signature.
    static func rawSigner(_ data: [UInt8]) -> [UInt8] {
        (0..<64).map { UInt8($0) | 0x80 }
    }
}

@Suite("UIC 918.3 container")
struct UICContainerTests {
    @Test("the v1 City-Mobil sample: header, DER signature cut to its own length, records")
    func cityMobil() throws {
        let bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        let container = try UICContainer(parsing: bytes)
        #expect(container.version == 1)
        #expect(container.issuerCode == "0080")
        #expect(container.keyID == "00007")
        #expect(container.signatureForm == .der)
        #expect(container.signatureFieldLength == 50)
        // 0x30 0x2C: the DER header states 44 content bytes; the 4 zero bytes of padding are dropped.
        #expect(container.signature.count == 46)
        #expect(container.signature.prefix(2) == [0x30, 0x2C])
        #expect(container.signature == Array(bytes[14..<60]))
        #expect(container.signedData == Array(bytes[68...]))
        #expect(container.signedData.count == 285)
        #expect(container.records.map(\.summary) == ["U_HEAD 01 53", "0080BL 03 285", "0080VU 01 53"])
        #expect(container.records.map(\.offset) == [0, 53, 338])
    }

    @Test("the v2 Super Sparpreis sample: 64 raw signature bytes and a U_FLEX record")
    func superSparpreis() throws {
        let bytes = try UICFixture.bytes(UICFixture.superSparpreisV2)
        let container = try UICContainer(parsing: bytes)
        #expect(container.version == 2)
        #expect(container.issuerCode == "1080")
        #expect(container.keyID == "00002")
        #expect(container.signatureForm == .raw)
        #expect(container.signatureFieldLength == 64)
        #expect(container.signature == Array(bytes[14..<78]))
        #expect(container.signedData == Array(bytes[82...]))
        #expect(container.records.map(\.summary) == ["U_FLEX 13 185"])
    }

    @Test("the Deutschland-Ticket sample: v1 with U_HEAD, U_TLAY and U_FLEX 03")
    func deutschlandTicket() throws {
        let container = try UICFixture.container(UICFixture.deutschlandTicket)
        #expect(container.version == 1)
        #expect(container.issuerCode == "1080")
        #expect(container.keyID == "00007")
        #expect(container.signatureForm == .der)
        #expect(container.signature.count == 48)
        #expect(container.records.map(\.summary) == ["U_HEAD 01 53", "U_TLAY 01 301", "U_FLEX 03 153"])
        #expect(container.record("U_FLEX")?.body.count == 141)
    }

    @Test("a built container parses back, and the signer signs exactly the carried compressed bytes")
    func builderRoundTrip() throws {
        let records = [
            UICHead(issuerCode: "1080", ticketKey: "ABCDEFGH", issuedAt: Date(timeIntervalSince1970: 1_740_826_800))
                .record(),
            UICRecord(id: "9999XX", version: "07", body: [0xFF, 0x00, 0x42]),
        ]
        var signed: [UInt8] = []
        let v1 = UIC918_3.encode(records: records, issuerCode: "1080", keyID: "TT005") { data in
            signed = data
            return UICFixture.derSigner(data)
        }
        let container = try UICContainer(parsing: v1)
        #expect(container.signedData == signed)
        #expect(container.keyID == "TT005")
        #expect(container.signature == UICFixture.derSigner([]))
        #expect(container.records.map(\.id) == ["U_HEAD", "9999XX"])
        #expect(container.records[1].body == [0xFF, 0x00, 0x42])
        #expect(container.records[1].offset == 53)

        let v2 = UIC918_3.encode(
            records: records, version: 2, issuerCode: "1080", keyID: "00002", signer: UICFixture.rawSigner)
        let second = try UICContainer(parsing: v2)
        #expect(second.version == 2)
        #expect(second.signatureForm == .raw)
        #expect(second.signature == UICFixture.rawSigner([]))
        #expect(second.records == container.records)
    }

    @Test("a version 2 builder turns a DER signature into 64 raw bytes")
    func builderConvertsDER() throws {
        let v2 = UIC918_3.encode(
            inflated: [], version: 2, issuerCode: "1080", keyID: "00002", signer: UICFixture.derSigner)
        let container = try UICContainer(parsing: v2)
        #expect(container.signatureForm == .raw)
        let expected =
            [UInt8](repeating: 0, count: 12) + [UInt8](repeating: 0x5A, count: 20)
            + [UInt8](repeating: 0, count: 12) + [UInt8](repeating: 0x3C, count: 20)
        #expect(container.signature == expected)
        #expect(container.records.isEmpty)
    }

    @Test("version 2 tickets with DER inside: in the 64-byte field, and laid out like version 1")
    func version2WithDER() throws {
        let inflated = UICRecord(id: "U_FLEX", version: "13", body: [1, 2, 3]).encoded()
        let padded = UIC918_3.encode(
            inflated: inflated, version: 2, issuerCode: "1080", keyID: "00002", signatureForm: .der,
            signer: UICFixture.derSigner
        )
        let first = try UICContainer(parsing: padded)
        #expect(first.signatureForm == .der)
        #expect(first.signatureFieldLength == 64)
        #expect(first.signature == UICFixture.derSigner([]))
        #expect(first.records.map(\.summary) == ["U_FLEX 13 15"])

        let short = UIC918_3.encode(
            inflated: inflated, version: 2, issuerCode: "1080", keyID: "00002", signatureForm: .der,
            signatureFieldLength: 50, signer: UICFixture.derSigner
        )
        #expect(short.count == padded.count - 14)
        let second = try UICContainer(parsing: short)
        #expect(second.version == 2)
        #expect(second.signatureForm == .der)
        #expect(second.signatureFieldLength == 50)
        #expect(second.signature == UICFixture.derSigner([]))
        #expect(second.signedData == first.signedData)
        #expect(second.records == first.records)
        // Read as meant, and named: the header's version and the layout disagree.
        #expect(first.quirks.isEmpty)
        #expect(second.quirks.map(\.kind) == [.version1LayoutUnderVersion2])
        #expect(second.quirks.first?.offset == 3)
        #expect(
            IssuerQuirk.warnings(second.quirks).first?.message.contains(
                "the #UT header says version 02 at byte 3 of the barcode, but its signature field is 50 bytes of DER")
                == true)
    }

    @Test("zero bytes after the compressed data are tolerated as padding, anything else is not")
    func trailingBytes() throws {
        let bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        let padded = try UICContainer(parsing: bytes + [0, 0, 0, 0])
        #expect(padded.signedData.count == 285)
        #expect(padded.records.count == 3)

        let error = #expect(throws: FormatError.self) { try UICContainer(parsing: bytes + [0, 0x41]) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("byte 354") == true)
    }

    @Test("a payload that is not #UT, or a version other than 01 and 02")
    func notAContainer() throws {
        let other = #expect(throws: FormatError.self) { try UICContainer(parsing: Array("FC1:ABCDEF".utf8)) }
        #expect(other?.code == .malformed)
        #expect(other?.message.contains("byte 0") == true)

        var bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        bytes[4] = UInt8(ascii: "3")
        let version = #expect(throws: FormatError.self) { try UICContainer(parsing: bytes) }
        #expect(version?.code == .unsupported)
        #expect(version?.message.contains("version 3 at byte 3") == true)
        #expect(UIC918_3.isContainer(bytes))
        #expect(!UIC918_3.isContainer(Array("#U".utf8)))
    }
}
