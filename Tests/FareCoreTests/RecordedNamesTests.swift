import FareCore
import Foundation
import Testing

/// What a journal, an upload or a report written by another farecheck version says is read as it was written: names
/// this version does not know are kept, and fields an older version wrote under another name still read.
@Suite("Names and fields another version wrote")
struct RecordedNamesTests {
    /// `value` as JSON text, keys sorted.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    static func decode<Value: Decodable>(_ type: Value.Type, _ json: String) throws -> Value {
        try JSONDecoder().decode(type, from: Data(json.utf8))
    }

    @Test("a verdict, format, symbology or decider this version does not know is read, kept and written back as is")
    func unknownNamesRoundTrip() throws {
        let verdict = try Self.decode([Recorded<VerdictKind>].self, #"["valid","seat-reserved-elsewhere"]"#)
        #expect(verdict.map(\.known) == [.valid, nil])
        #expect(verdict[1].text == "seat-reserved-elsewhere" && verdict[1].description == "seat-reserved-elsewhere")
        #expect(try Self.json(verdict) == #"["valid","seat-reserved-elsewhere"]"#)

        let format = try Self.decode(Recorded<TicketFormat>.self, #""uic-918-10""#)
        #expect(format.known == nil && !(format == .uic9183))
        #expect(try Self.json(format) == #""uic-918-10""#)
        let symbology = try Self.decode(Recorded<Symbology>.self, #""han-xin""#)
        #expect(symbology.known == nil && symbology.text == "han-xin")
        let decider = try Self.decode(Recorded<Decider>.self, #""fleet""#)
        #expect(decider.known == nil && decider != Recorded(Decider.online))
    }

    @Test("a known name is written as its case's raw value and compares equal to the case")
    func knownNames() throws {
        for kind in VerdictKind.allCases {
            let name = Recorded(kind)
            #expect(try Self.json(name) == "\"\(kind.rawValue)\"")
            #expect(name == kind && name.known == kind)
            #expect(try Self.decode(Recorded<VerdictKind>.self, "\"\(kind.rawValue)\"") == name)
        }
        // Names are compared as written: another case, or the same word in capitals, is not the case.
        #expect(!(Recorded<VerdictKind>(text: "VALID") == .valid))
        #expect(!(Recorded(VerdictKind.expired) == .valid))
    }

    @Test("a warning stored before explanations were kept reads its message as the sentence, and is written with both")
    func warningsWithoutExplanation() throws {
        let old = try Self.decode(
            VerdictWarning.self, #"{"code":"seen-before","message":"Seen at 08:12 on the front door."}"#)
        #expect(old.code == VerdictWarning.seenBeforeCode)
        #expect(old.message == "Seen at 08:12 on the front door.")
        #expect(old.explanation.isVerbatim)

        let warning = VerdictWarning(code: "stale-trust-data", message: "Keys last updated \(3) days ago.")
        let written = try Self.json(warning)
        let fields = try #require(try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [String: Any])
        #expect(Set(fields.keys) == ["code", "message", "explanation"])
        #expect(fields["message"] as? String == "Keys last updated 3 days ago.")
        let read = try Self.decode(VerdictWarning.self, written)
        #expect(read == warning && read.explanation.template == "Keys last updated {0} days ago.")
    }

    @Test("a key looked at is written with keyId, and read from keyId or, as versions before issue 52 wrote, keyID")
    func keyIDSpelling() throws {
        let key = KeyConsideration(
            issuer: "1080", keyID: "00007", listing: "TLB, barcode version 1", outcome: .notMatching,
            reason: "not for this barcode")
        let written = try Self.json(key)
        #expect(written.contains(#""keyId":"00007""#) && !written.contains("keyID"))
        #expect(try Self.decode(KeyConsideration.self, written) == key)
        let older = written.replacingOccurrences(of: #""keyId""#, with: #""keyID""#)
        #expect(try Self.decode(KeyConsideration.self, older) == key)
        let neither = written.replacingOccurrences(of: #""keyId":"00007","#, with: "")
        #expect(throws: DecodingError.self) { try Self.decode(KeyConsideration.self, neither) }
        #expect(key.summary == "1080/00007 (TLB, barcode version 1): not-matching — not for this barcode")
    }
}
