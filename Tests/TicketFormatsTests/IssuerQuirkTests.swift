import FareCore
import Foundation
import Testing

@testable import TicketFormats

/// A U_TLAY field as written: line, column, height, width, formatting and length as given (any text), then the
/// text's bytes.
private func field(_ numbers: String, _ length: String, _ text: String) -> [UInt8] {
    Array((numbers + length).utf8) + Array(text.utf8)
}

/// A U_TLAY record at `offset` with `body`.
private func layout(_ body: [UInt8], offset: Int = 100) -> UICRecord {
    UICRecord(id: "U_TLAY", version: "01", body: body, offset: offset)
}

/// A record written byte for byte, its length field as given.
private func rawRecord(_ id: String, _ version: String, length: String, _ body: [UInt8]) -> [UInt8] {
    Array((id + version + length).utf8) + body
}

@Suite("issuer quirks: read only where the reading is unambiguous")
struct IssuerQuirkTests {
    @Test("a number padded with spaces has one run of digits with spaces before or after it")
    func spacePaddedNumbers() {
        let read: [(String, Int?)] = [
            (" 107", 107), ("  53", 53), ("13  ", 13), (" 5", 5), ("5 ", 5), (" 42 ", 42),
            // Not a quirk: standard digits, no digit at all, spaces between digits, other padding.
            ("0107", nil), ("    ", nil), ("1 07", nil), ("\t107", nil), ("+107", nil), ("-  1", nil), ("", nil),
        ]
        for (text, expected) in read {
            #expect(UICFieldCursor.spacePaddedNumber(Array(text.utf8)) == expected, "\"\(text)\"")
        }
    }

    @Test("data and record lengths padded with spaces: read, and named with their bytes")
    func paddedLengths() throws {
        let head = UICHead(issuerCode: "8999", ticketKey: "DEF933", issuedAt: Date(timeIntervalSince1970: 0)).record()
        let inflated =
            rawRecord("U_HEAD", "01", length: "  53", head.body)
            + rawRecord("000IVU", "01", length: "  15", [1, 2, 3])
        var bytes = UIC918_3.encode(
            inflated: inflated, issuerCode: "8999", keyID: "00000", signer: UICFixture.derSigner)
        let digits = String(decoding: bytes[64..<68], as: UTF8.self)
        #expect(digits.hasPrefix("0"))
        bytes.replaceSubrange(64..<68, with: Array((" " + digits.dropFirst()).utf8))

        let container = try UICContainer(parsing: bytes)
        #expect(container.records.map(\.summary) == ["U_HEAD 01 53", "000IVU 01 15"])
        #expect(container.signedData == Array(bytes[68...]))
        #expect(container.quirks.map(\.kind.name) == Array(repeating: "space-padded-number", count: 3))
        #expect(container.quirks.map(\.record) == ["#UT", "U_HEAD", "000IVU"])
        #expect(container.quirks.map(\.offset) == [64, 8, 61])
        #expect(
            container.quirks[0].description
                == "the data length of the #UT header at byte 64 of the barcode, written \" \(digits.dropFirst())\"")
        #expect(
            container.quirks[1].description
                == "the length of record U_HEAD at byte 8 of the inflated data, written \"  53\"")
        let content = try UIC918_3.content(of: container)
        #expect(content.ticket.ticketID.bytes == Array("DEF933".utf8))
        let warnings = IssuerQuirk.warnings(content.quirks)
        #expect(warnings.map(\.code) == ["issuer-quirk"])
        #expect(warnings[0].message.contains("numbers padded with spaces instead of zeros"))
        #expect(warnings[0].message.contains("record 000IVU at byte 61 of the inflated data"))

        // Spaces between digits, or a length of spaces only, stay malformed.
        for length in ["0 53", "    ", "5 3 "] {
            let broken = UIC918_3.encode(
                inflated: rawRecord("U_HEAD", "01", length: length, head.body), issuerCode: "8999", keyID: "00000",
                signer: UICFixture.derSigner)
            #expect(throws: FormatError.self, "\"\(length)\"") { try UICContainer(parsing: broken) }
        }
    }

    @Test("a U_TLAY field count with trailing spaces and numbers with leading ones: every field kept, one quirk")
    func paddedLayoutNumbers() throws {
        let body =
            Array("RCT23   ".utf8) + field(" 0 0 1200", "  18", "Deutschland-Ticket")
            + field(" 052 1140", "  14", "Lehner Florian") + field("0152010100001", "", "1")
        let read = try UICLayout(record: layout(body))
        #expect(read.texts == ["Deutschland-Ticket", "Lehner Florian", "1"])
        #expect(read.fields[1].column == 52 && read.fields[1].width == 14)
        #expect(read.quirks.count == 1)
        let quirk = try #require(read.quirks.first)
        #expect(quirk.kind == .spacePaddedNumber(written: "3   "))
        #expect(quirk.offset == 116)
        #expect(quirk.field == "number of fields")
        // The count, then line, column, height, width and length of the first two fields (formatting has 1 digit).
        #expect(quirk.count == 8)
        #expect(quirk.description.contains("and 7 more numbers of the record"))
    }

    @Test("U_TLAY lengths in characters: taken only when the byte reading fails and the record is consumed exactly")
    func lengthsInCharacters() throws {
        // DSB writes the length of "København H" as 11 (characters); it takes 12 bytes.
        let counted =
            Array("RCT20003".utf8) + field("000001200", "0015", "Ordinaer billet")
            + field("010001200", "0011", "København H") + field("020001200", "0007", "Malmö C")
        let read = try UICLayout(record: layout(counted))
        #expect(read.texts == ["Ordinaer billet", "København H", "Malmö C"])
        #expect(read.quirks.map(\.kind) == [.lengthInCharacters(characters: 11, bytes: 12)])
        #expect(read.quirks.first?.count == 2)
        #expect(read.quirks.first?.offset == 100 + 12 + 8 + 28 + 9)
        #expect(read.quirks.first?.field == "field 2's text length")

        // Standard byte lengths of the same texts: no quirk.
        let standard =
            Array("RCT20002".utf8) + field("000001200", "0012", "København H")
            + field("010001200", "0008", "Malmö C")
        #expect(try UICLayout(record: layout(standard)).quirks.isEmpty)

        // A character reading that leaves a byte over, or runs out, is not taken: the byte reading's error stands.
        let leftOver = counted + [0x41]
        let error = #expect(throws: FormatError.self) { try UICLayout(record: layout(leftOver)) }
        #expect(error?.message.contains("field 3") == true, "\(String(describing: error))")
        #expect(throws: FormatError.self) { try UICLayout(record: layout(Array(counted.dropLast()))) }
        // A character of four bytes is counted as one by some and two by others: never read as characters.
        let emoji =
            Array("RCT20002".utf8) + field("000001200", "0001", "🚆") + field("010001200", "0011", "København H")
        #expect(throws: FormatError.self) { try UICLayout(record: layout(emoji)) }
        // All ASCII but a wrong length: characters change nothing, so the record stays unreadable.
        let wrong = Array("RCT20001".utf8) + field("000001200", "0009", "Kobenhavn H")
        #expect(throws: FormatError.self) { try UICLayout(record: layout(wrong)) }
    }

    @Test("a U_TLAY announcing more fields than it holds keeps those it holds, only when it ends at a field's end")
    func fewerFields() throws {
        let two = field("0019011900006", "", "EURAIL") + field("0039010400004", "", "NAME")
        let read = try UICLayout(record: layout(Array("RCT20038".utf8) + two))
        #expect(read.texts == ["EURAIL", "NAME"])
        #expect(read.quirks.map(\.kind) == [.fewerFieldsThanAnnounced(announced: 38, held: 2)])
        #expect(read.quirks.first?.offset == 116)
        #expect(read.quirks.first?.description.contains("the 36 missing are not shown") == true)
        // Zero padding after the last field is a clean end too.
        #expect(try UICLayout(record: layout(Array("RCT20038".utf8) + two + [0, 0, 0])).fields.count == 2)
        // Ending inside a field header, or inside a text, is not a clean end.
        #expect(throws: FormatError.self) {
            try UICLayout(record: layout(Array("RCT20038".utf8) + two + Array("01190".utf8)))
        }
        #expect(throws: FormatError.self) {
            try UICLayout(record: layout(Array("RCT20038".utf8) + two.dropLast(2)))
        }
    }

    @Test("a U_TLAY no tolerance reads is listed as unreadable; the ticket maps, judged on its deciding records")
    func unreadableLayout() throws {
        let from = try #require(UICDay(year: 2026, month: 3, day: 1))
        let until = try #require(UICDay(year: 2026, month: 3, day: 31))
        let head = UICHead(issuerCode: "1186", ticketKey: "K1", issuedAt: from.start).record()
        let bl = UIC0080BL(
            validityBlocks: [.init(firstDay: from, lastDay: until, serial: "1")],
            fields: [.init(tag: 1, value: "Ordinaer billet")]
        ).record()
        let broken = UICRecord(
            id: "U_TLAY", version: "01", body: Array("RCT20001".utf8) + field("000001200", "0099", "Kort"))
        let bytes = UIC918_3.encode(
            records: [head, bl, broken], issuerCode: "1186", keyID: "00001", signer: UICFixture.derSigner)
        let ticket = try UIC918_3.ticket(from: try UICContainer(parsing: bytes))
        #expect(ticket.validFrom == from.start)
        #expect(ticket.product == "Ordinaer billet")
        let unread = try #require(ticket.unreadableRecords.first)
        #expect(ticket.unreadableRecords.count == 1)
        #expect(unread.tag == "U_TLAY" && unread.version == "01" && unread.place == .inflatedData)
        #expect(unread.offset == 53 + bl.length)
        #expect(unread.reason.contains("field 1's text"), "\(unread.reason)")
        #expect(unread.location == "U_TLAY 01 at byte \(53 + bl.length) of the inflated data")
        #expect(ticket.details.contains { $0.label == "U_TLAY" && $0.value == "cannot be read" })
        #expect(UIC918_3.unreadableRecords(ofPayload: bytes) == ticket.unreadableRecords)
        #expect(UIC918_3.layout(of: bytes) == .unreadable(unread))
        #expect(UIC918_3.printedLayout(of: bytes) == nil)

        // A broken record that decides (U_HEAD) still breaks the ticket, and is listed all the same.
        var badHead = head
        badHead.body.replaceSubrange(24..<36, with: Array("320120261200".utf8))
        let refused = UIC918_3.encode(
            records: [badHead, bl, broken], issuerCode: "1186", keyID: "00001", signer: UICFixture.derSigner)
        #expect(throws: FormatError.self) { try UIC918_3.ticket(from: try UICContainer(parsing: refused)) }
        #expect(UIC918_3.unreadableRecords(ofPayload: refused).map(\.tag) == ["U_HEAD", "U_TLAY"])
    }

    @Test("the printed layout of a payload, or why there is none")
    func printedLayoutStates() throws {
        #expect(UIC918_3.layout(of: Array("FC1:XYZ".utf8)) == .absent)
        let noLayout = UIC918_3.encode(
            records: [UICRecord(id: "0080VU", version: "01", body: [1])], issuerCode: "1080", keyID: "00007",
            signer: UICFixture.derSigner)
        #expect(UIC918_3.layout(of: noLayout) == .absent)
        guard case .containerUnreadable(let reason) = UIC918_3.layout(of: Array(noLayout.prefix(70))) else {
            Issue.record("a cut container has no reason")
            return
        }
        #expect(reason.contains("byte 64"), "\(reason)")
        let ticket = try UICFixture.bytes(UICFixture.deutschlandTicket)
        #expect(UIC918_3.layout(of: ticket).lines?.contains { $0.contains("Deutschland-Ticket") } == true)
        #expect(FCBContent(payload: Array(noLayout.prefix(70))) == .payloadUnreadable(reason))
        #expect(FCBContent(payload: noLayout) == .absent)
        // IVU's empty layout: no standard, count "   0".
        let empty = UIC918_3.encode(
            records: [UICRecord(id: "U_TLAY", version: "01", body: [0, 0, 0, 0] + Array("   0".utf8))],
            issuerCode: "8999", keyID: "00000", signer: UICFixture.derSigner)
        #expect(UIC918_3.layout(of: empty) == .drawn([]))
    }

    @Test("0080BL: fields that break after S031 and S032 are listed; a break before them decides")
    func brokenDisplayFields() throws {
        let from = try #require(UICDay(year: 2026, month: 3, day: 1))
        let until = try #require(UICDay(year: 2026, month: 3, day: 31))
        func bl(_ fields: [UIC0080BL.Field]) -> UICRecord {
            var record = UIC0080BL(validityBlocks: [.init(firstDay: from, lastDay: until, serial: "1")], fields: fields)
                .record()
            record.offset = 53
            let marker = record.body.lastIndex(of: UInt8(ascii: "S"))!
            record.body[marker] = UInt8(ascii: "X")
            return record
        }
        let after = bl([
            .init(tag: 1, value: "Flexpreis"), .init(tag: 31, value: "01.03.2026"), .init(tag: 32, value: "31.03.2026"),
            .init(tag: 40, value: "12,00"),
        ])
        let read = try UIC0080BL(record: after)
        #expect(read.fields.map(\.tag) == [1, 31, 32])
        #expect(read.validFromDay == from && read.validUntilDay == until)
        #expect(read.unreadableFields?.message.contains("starts with \"X\", not S") == true)
        let listed = try #require(
            UIC918_3.unreadableRecords(
                in: try UICContainer(
                    parsing: UIC918_3.encode(
                        records: [after], issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner))
            ).first)
        #expect(listed.tag == "0080BL")
        #expect(listed.reason.hasPrefix("Its fields after S032 cannot be read (its validity can)"), "\(listed.reason)")

        let before = bl([.init(tag: 31, value: "01.03.2026"), .init(tag: 1, value: "Flexpreis")])
        #expect(throws: FormatError.self) { try UIC0080BL(record: before) }
    }

    @Test("a DOSIPAS barcode's FCB as JSON, as a U_FLEX record's; an FCB block that breaks is listed with its place")
    func dosipasFCB() throws {
        let payload = try FCBFixture.bytes("dosipas/cts-ticket.bin")
        guard case .decoded(let json) = FCBContent(payload: payload) else {
            Issue.record("the cts ticket's FCB is not shown")
            return
        }
        #expect(json.hasPrefix("{\"issuingDetail\":{"), "\(json.prefix(80))")
        var barcode = try DOSIPASBarcode(decoding: payload)
        #expect(DOSIPAS.unreadableBlocks(of: barcode).isEmpty)
        barcode.level1.dataSequence[0].data = Array(barcode.level1.dataSequence[0].data.prefix(20))
        let unread = try #require(DOSIPAS.unreadableBlocks(of: barcode).first)
        #expect(unread.tag == "FCB3" && unread.place == .level1Data && unread.offset == 0)
        #expect(unread.location == "FCB3, block 1 of the level-1 data")
        #expect(unread.reason.hasPrefix("The FCB3 rail ticket data breaks at bit "), "\(unread.reason)")
        #expect(DOSIPAS.railTicketJSON(of: barcode) == .unreadable(unread))
        #expect(throws: FormatError.self) { try DOSIPAS.ticket(from: barcode, at: Date()) }
    }

    @Test("the warnings name each kind once, with every record and byte")
    func warnings() {
        let quirks = [
            IssuerQuirk(.spacePaddedNumber(written: " 107"), record: "#UT", offset: 64, field: "data length"),
            IssuerQuirk(
                .fewerFieldsThanAnnounced(announced: 38, held: 31), record: "U_TLAY", offset: 65,
                field: "number of fields"),
            IssuerQuirk(.spacePaddedNumber(written: "  53"), record: "U_HEAD", offset: 8, field: "length"),
        ]
        let warnings = IssuerQuirk.warnings(quirks)
        #expect(warnings.map(\.code) == ["issuer-quirk", "issuer-quirk"])
        #expect(
            warnings[0].message
                == "The issuer wrote numbers padded with spaces instead of zeros (space-padded-number): the data "
                + "length of the #UT header at byte 64 of the barcode, written \" 107\"; the length of record U_HEAD "
                + "at byte 8 of the inflated data, written \"  53\". Read as meant; the signature was checked over "
                + "the bytes as scanned.")
        #expect(warnings[1].message.contains("record U_TLAY announces 38 fields at byte 65 of the inflated data"))
        #expect(IssuerQuirk.warnings([]).isEmpty)
    }
}
