import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

@Suite("UIC public key list")
struct UICKeyListTests {
    static func snapshot() throws -> [UInt8] {
        try UICFixture.bytes("uic-publickeys-snapshot.xml")
    }

    @Test("the snapshot: 60 keys, every good one kept, the one with broken base64 reported by issuer and id")
    func snapshotImport() throws {
        let list = try UICKeyList.parse(xml: Self.snapshot())
        #expect(list.entries.count + list.problems.count == 60)
        #expect(list.entries.count == 59)
        #expect(list.problems.map { "\($0.issuerCode)/\($0.keyID)" } == ["1182/2"])
        #expect(list.problems.first?.message.contains("base64") == true)
        #expect(list.entries.allSatisfy { $0.certificateDER.first == 0x30 && $0.certificateDER.count > 300 })
        // Certificates with a tab after the base64 still decode.
        #expect(list.entries(issuerCode: "1088", keyID: "21").count == 1)
    }

    @Test("an entry's fields, with dates as UTC days and entities decoded")
    func entryFields() throws {
        let list = try UICKeyList.parse(xml: Self.snapshot())
        let db = try #require(list.entries(issuerCode: "1080", keyID: "00007").first)
        #expect(db.issuerName == "Deutsche Bahn AG")
        #expect(db.issuerCode == "1080")
        #expect(db.keyID == "7")
        #expect(db.versionType == "FCB")
        #expect(db.barcodeVersion == "1")
        #expect(db.signatureAlgorithm == .dsa(hashes: [.sha1]))
        let start = UICTime.daysFromCivil(year: 2024, month: 10, day: 15) * 86_400
        let end = UICTime.daysFromCivil(year: 2026, month: 10, day: 15) * 86_400 + 86_399
        #expect(db.validFrom == Date(timeIntervalSince1970: TimeInterval(start)))
        #expect(db.validUntil == Date(timeIntervalSince1970: TimeInterval(end)))
        #expect(list.entries.contains { $0.issuerName == "Région Grand Est" })
        #expect(list.entries.contains { $0.keyID == "DTX01" })
    }

    @Test("codes match numerically after trimming, and alphanumeric ids stay text")
    func normalization() throws {
        #expect(UICKeyList.normalizedCode("0080") == "80")
        #expect(UICKeyList.normalizedCode("80") == "80")
        #expect(UICKeyList.normalizedCode("00007") == "7")
        #expect(UICKeyList.normalizedCode(" 7\t") == "7")
        #expect(UICKeyList.normalizedCode("0") == "0")
        #expect(UICKeyList.normalizedCode("00000") == "0")
        #expect(UICKeyList.normalizedCode("TT005") == "TT005")
        #expect(UICKeyList.normalizedCode(" DTX03 ") == "DTX03")
        #expect(UICKeyList.normalizedCode("") == "")

        let list = try UICKeyList.parse(xml: Self.snapshot())
        // The list writes DB Netz AG as `80` with id `8`; a header writes `0080` and `00008`.
        #expect(list.entries(issuerCode: "0080", keyID: "00008").map(\.issuerName) == ["DB Netz AG"])
        #expect(list.entries(issuerCode: "3634", keyID: "DTX01").count == 1)
        #expect(list.entries(issuerCode: "3634", keyID: "dtx01").isEmpty)
    }

    @Test("every algorithm spelling in the snapshot is understood")
    func algorithms() throws {
        let expected: [String: UICSignatureAlgorithm] = [
            "SHA1withDSA(1024,160)": .dsa(hashes: [.sha1]),
            "SHA1withDSA": .dsa(hashes: [.sha1]),
            "SHA1-DSA (1024)": .dsa(hashes: [.sha1]),
            "SHA1-DSA (1024,160)": .dsa(hashes: [.sha1]),
            "DSA_SHA1 (1024)": .dsa(hashes: [.sha1]),
            "DSA1024": .dsa(hashes: []),
            "SHA224withDSA": .dsa(hashes: [.sha224]),
            "SHA256withDSA(2048,256)": .dsa(hashes: [.sha256]),
            "SHA256withDSA": .dsa(hashes: [.sha256]),
            "SHA256withECDSA": .ecdsa(hashes: [.sha256]),
        ]
        for (text, algorithm) in expected {
            #expect(UICSignatureAlgorithm(text: text) == algorithm, "\(text)")
        }
        let list = try UICKeyList.parse(xml: Self.snapshot())
        let spellings = Set(list.entries.map(\.signatureAlgorithmText))
        #expect(spellings.isSubset(of: Set(expected.keys)))
        #expect(spellings.count == expected.count)
        #expect(list.entries.allSatisfy { $0.signatureAlgorithm == expected[$0.signatureAlgorithmText] })
        #expect(UICSignatureAlgorithm(text: "SHA256withRSA") == .unknown)
        #expect(UICSignatureAlgorithm(text: "") == .unknown)
    }

    @Test("bad entries become problems without stopping the import")
    func problems() throws {
        let certificate = "MAMCAQE="  // 30 03 02 01 01: a DER SEQUENCE, enough for this check
        let xml = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a hand-made list -->
            <ns:keys xmlns:ns="urn:x">
            <key><issuerCode>1080</issuerCode><id>9</id><publicKey>\(certificate)</publicKey>
              <signatureAlgorithm>SHA256withECDSA</signatureAlgorithm><startDate/><endDate></endDate></key>
            <key><id>1</id><publicKey>\(certificate)</publicKey></key>
            <key><issuerCode>1080</issuerCode><publicKey>\(certificate)</publicKey></key>
            <key><issuerCode>1181</issuerCode><id>2</id><publicKey>MAMCAQ</publicKey></key>
            <key><issuerCode>1181</issuerCode><id>3</id><publicKey>MAMCAQE</publicKey></key>
            <key><issuerCode>1181</issuerCode><id>4</id><publicKey>MAQCAQE=</publicKey></key>
            <key><issuerCode>1181</issuerCode><id>5</id><publicKey>\(certificate)</publicKey>
              <startDate>2024-13-01</startDate></key>
            <key><issuerCode>1181</issuerCode><id>6</id><publicKey>!!!!</publicKey></key>
            <key><issuerCode><![CDATA[1187]]></issuerCode><id a="1">7</id><publicKey>
              MAMC
              AQE=
            </publicKey><issuerName>A &amp; B &#x2192; C</issuerName></key>
            </ns:keys>
            """
        let list = try UICKeyList.parse(xml: Array(xml.utf8))
        #expect(list.entries.map { "\($0.issuerCode)/\($0.keyID)" } == ["1080/9", "1181/3", "1187/7"])
        #expect(list.entries[0].validFrom == nil && list.entries[0].validUntil == nil)
        #expect(list.entries[0].certificateDER == [0x30, 0x03, 0x02, 0x01, 0x01])
        // Base64 without its padding still decodes.
        #expect(list.entries[1].certificateDER == [0x30, 0x03, 0x02, 0x01, 0x01])
        #expect(list.entries[2].issuerName == "A & B → C")
        #expect(list.entries[2].certificateDER == [0x30, 0x03, 0x02, 0x01, 0x01])
        #expect(
            list.problems.map { "\($0.issuerCode)/\($0.keyID)" } == [
                "/1", "1080/", "1181/2", "1181/4", "1181/5", "1181/6",
            ]
        )
        #expect(list.problems[0].message.contains("no issuerCode"))
        #expect(list.problems[1].message.contains("no id"))
        // "MAMCAQ" is 30 03 02 01: one byte short of what its DER header states.
        #expect(list.problems[2].message.contains("not one DER structure"))
        #expect(list.problems[3].message.contains("not one DER structure"))
        #expect(list.problems[4].message.contains("2024-13-01"))
        #expect(list.problems[5].message.contains("base64"))
    }

    @Test("a document that is not a readable key list fails with the offset")
    func unreadableDocuments() throws {
        let truncated = Array(try Self.snapshot().prefix(5_000))
        let error = #expect(throws: FormatError.self) { try UICKeyList.parse(xml: truncated) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("byte") == true)

        let other = #expect(throws: FormatError.self) { try UICKeyList.parse(xml: Array("<html><key/></html>".utf8)) }
        #expect(other?.message.contains("<html>") == true)
        let empty = #expect(throws: FormatError.self) { try UICKeyList.parse(xml: []) }
        #expect(empty?.message.contains("no root element") == true)
        let open = #expect(throws: FormatError.self) { try UICKeyList.parse(xml: Array("<keys><key".utf8)) }
        #expect(open?.message.contains("byte 6") == true)
        #expect(try UICKeyList.parse(xml: Array("<keys/>".utf8)).entries.isEmpty)
    }

    @Test("mutated and truncated key lists are read or refused as malformed with a reason, never a crash")
    func fuzz() throws {
        let snapshot = try Self.snapshot()
        var random = SeededRandomNumberGenerator(seed: 0x4B45_5953)
        var refused = 0
        for _ in 0..<150 {
            var mutated = snapshot
            for _ in 0..<Int.random(in: 1...20, using: &random) {
                let index = Int.random(in: 0..<mutated.count, using: &random)
                mutated[index] = [
                    UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "&"), UInt8(ascii: "/"), 0xC3, 0x00,
                ]
                .randomElement(using: &random)!
            }
            if Bool.random(using: &random) { mutated.removeLast(Int.random(in: 0..<mutated.count, using: &random)) }
            // What `farecheck keys import` reports: the keys it could read, or why the file is not a key list.
            do {
                _ = try UICKeyList.parse(xml: mutated)
            } catch {
                refused += 1
                #expect(error.code == .malformed || error.code == .unsupported, "\(error)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(refused > 0)
    }
}
