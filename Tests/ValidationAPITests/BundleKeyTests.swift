import FareCore
import Foundation
import Testing
import ValidationAPI

/// Key bundle entries across versions: what a server of any version writes, a validator of any version reads.
@Suite("Key bundle entries across versions")
struct BundleKeyTests {
    static func read(_ json: String) throws -> BundleKey {
        try WireFormat.decode(BundleKey.self, from: Array(json.utf8))
    }

    static func text(_ key: BundleKey) throws -> String {
        String(decoding: try WireFormat.encode(key), as: UTF8.self)
    }

    @Test("an entry as the first release wrote it reads, with the later fields at their defaults")
    func firstReleaseEntry() throws {
        let key = try Self.read(
            #"{"format":"fc1","issuer":"demo-transit","keyID":"a6615e0f615889bb","algorithm":"ES256","spki":"MFkw"}"#)
        #expect(key.family == .fc1)
        #expect(key.spki == [0x30, 0x59, 0x30])
        #expect(key.notBefore == nil && key.notAfter == nil)
        #expect(key.versionType == nil && key.barcodeVersion == nil && key.certificate == nil)
        #expect(!key.keyForged && !key.root && key.allowedProductOwnerCodes.isEmpty)
        // With no algorithm, and a family this version does not know: read, the family left to the caller.
        let unknown = try Self.read(#"{"format":"mosaic","issuer":"elsewhere","keyID":"1","spki":"AAAA"}"#)
        #expect(unknown.algorithm == nil && unknown.family == nil && unknown.spki == [0, 0, 0])
    }

    @Test("an entry without the later fields is written exactly as before they existed")
    func writtenAsBefore() throws {
        let key = BundleKey(
            format: "fc1", issuer: "demo-transit", keyID: "a6615e0f615889bb", algorithm: "ES256", spki: [0x30, 0x59])
        #expect(
            try Self.text(key)
                == #"{"algorithm":"ES256","format":"fc1","issuer":"demo-transit","keyID":"a6615e0f615889bb","spki":"MFk="}"#
        )
    }

    @Test("a UIC and a VDV entry with every later field go there and back whole")
    func everyField() throws {
        let uic = BundleKey(
            format: "uic", issuer: "1080", keyID: "00007", algorithm: "SHA256withDSA(2048,256)", spki: [0x30, 1],
            notBefore: Date(timeIntervalSince1970: 1_700_000_000), notAfter: Date(timeIntervalSince1970: 1_900_000_000),
            versionType: "FCB", barcodeVersion: "2", keyForged: true, allowedProductOwnerCodes: ["1080", "1181"])
        let vdv = BundleKey(
            format: "vdv", issuer: "4445564452000014", keyID: "4445564441000014", algorithm: nil, spki: [0x30, 2],
            certificate: [0x7F, 0x21, 0x00], root: true)
        for key in [uic, vdv] {
            let text = try Self.text(key)
            #expect(try Self.read(text) == key, "\(text)")
        }
        let text = try Self.text(uic)
        #expect(text.contains(#""keyForged":true"#) && text.contains(#""notAfter":"2030-03-17T17:46:40Z""#))
        #expect(!text.contains("root") && !text.contains("certificate"))
        #expect(try Self.text(vdv).contains(#""certificate":"fyEA","#))
    }

    @Test("an entry whose key is not base64, or that lacks a required field, is refused")
    func refused() {
        for json in [
            #"{"format":"fc1","issuer":"x","keyID":"01","spki":"not base64!"}"#,
            #"{"format":"fc1","issuer":"x","keyID":"01","spki":"MFkw","certificate":"%%"}"#,
            #"{"format":"fc1","issuer":"x","spki":"MFkw"}"#,
            #"{"format":"fc1","issuer":"x","keyID":"01","spki":"MFkw","notAfter":"next year"}"#,
            #"{"format":"fc1","issuer":"x","keyID":"01","spki":"MFkw","keyForged":"no"}"#,
        ] {
            #expect(throws: DecodingError.self, "\(json)") { try Self.read(json) }
        }
    }
}
