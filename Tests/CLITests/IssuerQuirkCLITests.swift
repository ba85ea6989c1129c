import Foundation
import QuirkyTickets
import TestSupport
import Testing
import TicketFormats

/// The DOSIPAS fixtures, as copied into the verification tests' resources.
let dosipasFixtures = Fixtures.path("dosipas")

@Suite("farecheck with genuine tickets as issuers write them")
struct IssuerQuirkCLITests {
    let bench = Workbench()
    let issuer = try! QuirkyIssuer.ecdsa()
    let from = UICDay(year: 2026, month: 3, day: 1)!
    let until = UICDay(year: 2026, month: 3, day: 31)!

    /// Trusts the issuer's key the way an operator would: its public key file, issuer code and key id.
    func trustIssuer() throws {
        let pem = bench.path("issuer-1186.pem")
        try issuer.publicKey.pem.write(toFile: pem, atomically: true, encoding: .utf8)
        let imported = try bench.farecheck(["keys", "import", pem, "--issuer", "1186", "--kid", "00001"])
        #expect(imported.status == 0, "\(imported.stderr)")
    }

    /// Writes a ticket with `quirks` to a payload file and returns its path.
    func payloadFile(_ quirks: Set<TicketQuirk>, name: String) throws -> String {
        let path = bench.path(name)
        try Data(try issuer.ticket(quirks, from: from, until: until)).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test("a quirky genuine ticket: valid, exit 0, the quirk named in the JSON and the text, the layout drawn")
    func quirkyTicketIsValid() throws {
        try trustIssuer()
        let file = try payloadFile(
            [.paddedDataLength, .paddedRecordLengths, .layoutLengthsInCharacters], name: "dsb-like.bin")
        let json = try bench.farecheck([
            "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--json", "--show-layout",
        ])
        #expect(json.status == 0, "\(json.text) \(json.stderr)")
        let verdict = try #require(json.jsonLines.first)
        #expect(verdict["verdict"] as? String == "valid")
        #expect(verdict["signature"] as? String == "valid")
        #expect(verdict["warnings"] as? [String] == ["issuer-quirk", "issuer-quirk"])
        let messages = try #require(verdict["warningMessages"] as? [String])
        #expect(messages[0].contains("the data length of the #UT header at byte 78 of the barcode"), "\(messages)")
        #expect(messages[0].contains("the length of record U_HEAD at byte 8 of the inflated data"))
        #expect(messages[1].contains("field 2's text length of record U_TLAY"))
        #expect(verdict["unreadableRecords"] == nil)
        let layout = try #require(verdict["layout"] as? [String])
        #expect(layout.contains { $0.contains("København H") })

        let text = try bench.farecheck([
            "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--show-layout",
        ])
        #expect(text.status == 0)
        #expect(text.text.hasPrefix("VALID"))
        #expect(text.text.contains("warning    issuer-quirk: The issuer wrote numbers padded with spaces"))
        #expect(text.text.contains("|Ordinaer billet"), "\(text.text)")
        #expect(text.text.contains("Malmö C"))
    }

    @Test("each tolerated quirk, DSA and ECDSA: verify --json is valid with exit 0 and issuer-quirk naming it")
    func everyQuirk() throws {
        let dsa = try QuirkyIssuer.dsa()
        for issuer in [issuer, dsa] {
            let pem = bench.path("issuer-\(issuer.headerVersion).pem")
            try issuer.publicKey.pem.write(toFile: pem, atomically: true, encoding: .utf8)
            let store = "store-\(issuer.headerVersion).sqlite"
            let imported = try bench.farecheck([
                "keys", "import", pem, "--issuer", "1186", "--kid", "00001", "--db", bench.path(store),
            ])
            #expect(imported.status == 0, "\(imported.stderr)")
            for quirk in TicketQuirk.tolerated where quirk != .version1LayoutInVersion2 || issuer.headerVersion == 1 {
                let file = bench.path("\(quirk.rawValue)-\(issuer.headerVersion).bin")
                try Data(try issuer.ticket([quirk], from: from, until: until)).write(to: URL(fileURLWithPath: file))
                let run = try bench.farecheck([
                    "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--json", "--db",
                    bench.path(store),
                ])
                #expect(run.status == 0, "\(quirk): \(run.text) \(run.stderr)")
                let verdict = try #require(run.jsonLines.first)
                #expect(verdict["verdict"] as? String == "valid", "\(quirk)")
                #expect(verdict["warnings"] as? [String] == ["issuer-quirk"], "\(quirk)")
                let message = (verdict["warningMessages"] as? [String])?.first ?? ""
                #expect(message.contains("record") || message.contains("#UT header"), "\(quirk): \(message)")
                #expect(message.contains(" at byte "), "\(quirk): \(message)")
                #expect(message.contains("(\(quirk.warningName ?? "?")): "), "\(quirk): \(message)")
            }
        }
    }

    @Test("a layout no tolerance reads: valid, listed as unreadable in the JSON, --show-layout and the text")
    func unreadableLayoutIsListed() throws {
        try trustIssuer()
        let file = try payloadFile([.brokenLayout], name: "broken-layout.bin")
        let json = try bench.farecheck([
            "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--json", "--show-layout",
        ])
        #expect(json.status == 0, "\(json.text)")
        let verdict = try #require(json.jsonLines.first)
        #expect(verdict["verdict"] as? String == "valid")
        #expect(verdict["warnings"] as? [String] == ["unreadable-record"])
        #expect(verdict["layout"] == nil)
        let unreadable = try #require(verdict["unreadableRecords"] as? [[String: Any]])
        #expect(unreadable.count == 1)
        #expect(unreadable.first?["tag"] as? String == "U_TLAY")
        #expect(unreadable.first?["version"] as? String == "01")
        #expect(unreadable.first?["place"] as? String == "inflated-data")
        let offset = try #require(unreadable.first?["offset"] as? Int)
        #expect((unreadable.first?["reason"] as? String)?.contains("field 3's text") == true)

        let text = try bench.farecheck([
            "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--show-layout",
        ])
        #expect(text.status == 0)
        #expect(!text.text.contains("no U_TLAY layout"), "\(text.text)")
        #expect(text.text.contains("(the U_TLAY 01 at byte \(offset) of the inflated data cannot be read: "))
        #expect(text.text.contains("unreadable U_TLAY 01 at byte \(offset) of the inflated data: "))

        // Without the key the ticket is unknown-key, and the record is still listed, read from the payload.
        let unknown = try Workbench().withEmptyStore().farecheck(["verify", "--payload-file", file, "--json"])
        #expect(unknown.status == 1)
        let unknownVerdict = try #require(unknown.jsonLines.first)
        #expect(unknownVerdict["verdict"] as? String == "unknown-key")
        #expect((unknownVerdict["unreadableRecords"] as? [[String: Any]])?.first?["tag"] as? String == "U_TLAY")
    }

    @Test("a DOSIPAS ticket's FCB in --show-fcb and the JSON, as a U_FLEX record's")
    func dosipasFCB() throws {
        #expect(
            try bench.farecheck(["keys", "import", "--uic-xml", Fixtures.path("uic/uic-publickeys-snapshot.xml")])
                .status == 0)
        let ticket = "\(dosipasFixtures)/cts-ticket.bin"
        let json = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2026-02-12T18:47:00Z", "--json", "--show-fcb",
        ])
        #expect(json.status == 0, "\(json.text)")
        let verdict = try #require(json.jsonLines.first)
        #expect(verdict["verdict"] as? String == "valid")
        let fcb = try #require(verdict["fcb"] as? [String: Any], "\(json.text)")
        let issuing = try #require(fcb["issuingDetail"] as? [String: Any])
        #expect(issuing["issuingYear"] as? Int == 2026)
        #expect(fcb["transportDocument"] as? [[String: Any]] != nil)

        let text = try bench.farecheck([
            "verify", "--payload-file", ticket, "--at", "2026-02-12T18:47:00Z", "--show-fcb",
        ])
        #expect(text.status == 0)
        #expect(!text.text.contains("no FCB content"), "\(text.text)")
        #expect(text.text.contains("\"issuingDetail\":{"))
    }

    /// A ticket of U_HEAD, 0080BL (valid in March) and a U_FLEX of `version` with `body`, signed by the issuer.
    func ticketWithFlex(version: String, body: [UInt8], name: String) throws -> String {
        let head = UICHead(issuerCode: "1186", ticketKey: "FLEX-\(version)", issuedAt: from.start).record()
        let bl = UIC0080BL(
            validityBlocks: [.init(firstDay: from, lastDay: until, serial: "0000000042")],
            fields: [.init(tag: 1, value: "Ordinaer billet")]
        ).record()
        let flex = UICRecord(id: "U_FLEX", version: version, body: body)
        let payload = try UIC918_3.encode(
            records: [head, bl, flex], version: issuer.headerVersion, issuerCode: "1186", keyID: "00001"
        ) {
            try issuer.privateKey.signature(for: $0, scheme: issuer.scheme)
        }
        let path = bench.path(name)
        try Data(payload).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test(
        "a U_FLEX that cannot be read: --show-fcb and the JSON name it; broken: malformed; a later version: unsupported"
    )
    func unreadableFlexIsNamed() throws {
        try trustIssuer()
        // Version 13 whose bits end before its first field: broken, and it decides, so the ticket is malformed.
        let broken = try ticketWithFlex(version: "13", body: [0xFF], name: "broken-flex.bin")
        // Version 07, which farecheck does not decode: what it says of the validity is unknown.
        let later = try ticketWithFlex(version: "07", body: Array(repeating: 0x5A, count: 16), name: "flex-07.bin")
        for (file, kind) in [(broken, "malformed"), (later, "unsupported")] {
            let json = try bench.farecheck([
                "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--json", "--show-fcb",
            ])
            #expect(json.status == 1, "\(kind): \(json.text) \(json.stderr)")
            let verdict = try #require(json.jsonLines.first)
            #expect(verdict["verdict"] as? String == kind, "\(json.text)")
            #expect(verdict["signature"] as? String == "valid")
            #expect((verdict["reason"] as? String)?.contains("U_FLEX") == true, "\(json.text)")
            #expect(verdict["fcb"] is NSNull, "\(json.text)")
            let unreadable = try #require(verdict["unreadableRecords"] as? [[String: Any]], "\(json.text)")
            #expect(unreadable.map { $0["tag"] as? String } == ["U_FLEX"])
            let offset = try #require(unreadable.first?["offset"] as? Int)
            let version = try #require(unreadable.first?["version"] as? String)

            let text = try bench.farecheck([
                "verify", "--payload-file", file, "--at", "2026-03-15T12:00:00Z", "--show-fcb",
            ])
            #expect(text.status == 1)
            #expect(text.text.hasPrefix(kind.uppercased()), "\(text.text)")
            #expect(!text.text.contains("no FCB content"), "\(text.text)")
            #expect(
                text.text.contains("(the U_FLEX \(version) at byte \(offset) of the inflated data cannot be read: "),
                "\(text.text)")
        }
        // Never valid on the other records' word, and never expired either: the deciding record is unknown.
        let after = try bench.farecheck(["verify", "--payload-file", later, "--at", "2026-05-01T12:00:00Z", "--json"])
        #expect(after.jsonLines.first?["verdict"] as? String == "unsupported", "\(after.text)")
    }
}
