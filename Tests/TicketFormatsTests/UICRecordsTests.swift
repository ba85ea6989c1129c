import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// A line of text with each piece starting at its column, the way a layout grid places fields.
private func row(_ pieces: [(column: Int, text: String)]) -> String {
    var line: [Character] = []
    for piece in pieces {
        if line.count < piece.column { line += Array(repeating: " ", count: piece.column - line.count) }
        line += Array(piece.text)
    }
    return String(line)
}

@Suite("UIC 918.3 records")
struct UICRecordsTests {
    @Test("U_HEAD of the City-Mobil sample: issuer, ticket key without its NULs, issuing time in Berlin")
    func head() throws {
        let container = try UICFixture.container(UICFixture.cityMobilV1)
        let head = try UICHead(record: try #require(container.record("U_HEAD")))
        #expect(head.issuerCode == "0080")
        #expect(head.ticketKey == "RPEX4F-4")
        #expect(head.ticketKeyBytes == Array("RPEX4F-4".utf8))
        #expect(head.issuedAtText == "271020201318")
        // 27 October 2020 is after the switch back to CET (25 October): UTC+1.
        #expect(head.issuedAt == utc(2020, 10, 27, 12, 18))
        #expect(head.flags == "0")
        #expect(head.language == "DE")
        #expect(head.additionalLanguage == "DE")
        #expect(head.record().encoded() == container.record("U_HEAD")!.encoded())
    }

    @Test("0080BL of the City-Mobil sample: one validity block, 16 labelled S fields")
    func dbRecord() throws {
        let container = try UICFixture.container(UICFixture.cityMobilV1)
        let bl = try UIC0080BL(record: try #require(container.record("0080BL")))
        #expect(bl.version == "03")
        #expect(bl.code == "03")
        #expect(bl.serialWidth == 10)
        #expect(bl.validityBlocks.count == 1)
        #expect(bl.validityBlocks[0].firstDay.description == "11.01.2021")
        #expect(bl.validityBlocks[0].lastDay.description == "11.01.2021")
        #expect(bl.validityBlocks[0].serial == "548741714")
        #expect(
            bl.fields.map(\.tagName) == [
                "S001", "S002", "S003", "S009", "S012", "S014", "S015", "S016", "S021", "S023", "S026", "S028",
                "S031", "S032", "S035", "S036",
            ])
        #expect(bl.value(1) == "Super Sparpreis")
        #expect(bl.value(15) == "Mainz")
        #expect(bl.value(16) == "Kassel")
        #expect(bl.value(21) == "NV*F-Flugh 14:09 ICE1196")
        #expect(bl.value(28) == "Last#Schrift")
        #expect(bl.value(31) == "11.01.2021")
        #expect(bl.value(32) == "11.01.2021")
        #expect(bl.validFromDay == UICDay(year: 2021, month: 1, day: 11))
        #expect(bl.fields.first { $0.tag == 1 }?.label == "product (Tarifbezeichnung)")
        #expect(bl.fields.first { $0.tag == 14 }?.label == "class")
        #expect(UIC0080BL.Field(tag: 77, value: "x").label == "S077")
        let group = try #require(bl.passengersAndBahnCard)
        #expect(group.adults == 1 && group.bahnCards == 1 && group.bahnCardType == 49)
        #expect(bl.childCount == 0)
    }

    @Test("0080BL serial numbers: 8 characters in version 02, and the other width when the data says so")
    func serialWidths() throws {
        let fields = Array("02S0010004TestS0140002S2".utf8)
        let eight = Array("031".utf8) + Array("0101202431012024".utf8) + Array("12345678".utf8) + fields
        let v02 = try UIC0080BL(record: UICRecord(id: "0080BL", version: "02", body: eight))
        #expect(v02.serialWidth == 8)
        #expect(v02.validityBlocks.map(\.serial) == ["12345678"])
        #expect(v02.value(1) == "Test")
        #expect(v02.value(14) == "S2")

        // A version 03 record that carries 8-character serials, and a version 02 one with 10.
        let v03 = try UIC0080BL(record: UICRecord(id: "0080BL", version: "03", body: eight))
        #expect(v03.serialWidth == 8)
        #expect(v03.fields.count == 2)
        let ten = Array("032".utf8) + Array("0101202431012024ABCDEFGHIJ0102202428022024KLMNOPQRST".utf8) + fields
        let wide = try UIC0080BL(record: UICRecord(id: "0080BL", version: "02", body: ten))
        #expect(wide.serialWidth == 10)
        #expect(wide.validityBlocks.map(\.serial) == ["ABCDEFGHIJ", "KLMNOPQRST"])
        #expect(wide.validityBlocks[1].lastDay == UICDay(year: 2024, month: 2, day: 28))

        // Neither width fits: the message names where the fields should have started.
        let broken = Array("031".utf8) + Array("0101202431012024".utf8) + Array("123456789012XXXX".utf8)
        let error = #expect(throws: FormatError.self) {
            try UIC0080BL(record: UICRecord(id: "0080BL", version: "03", body: broken, offset: 100))
        }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("byte 141") == true)
    }

    @Test("U_TLAY of the Deutschland-Ticket: field texts, byte lengths of UTF-8 text, positions")
    func layout() throws {
        let container = try UICFixture.container(UICFixture.deutschlandTicket)
        let record = try #require(container.record("U_TLAY"))
        let layout = try UICLayout(record: record)
        #expect(layout.standard == "RCT2")
        #expect(
            layout.texts == [
                "Fahrkarte", "Musterman", "Max", "Deutschland-Ticket", "1", "Person(en)", "2025", "01.02", "00:00",
                "01.03", "03:00", "2", "Gültig vom 01.02.2025 bis 01.03.2025",
            ])
        let validity = try #require(layout.fields.last)
        #expect(validity.line == 12 && validity.column == 1 && validity.height == 2 && validity.width == 50)
        #expect(validity.formatting == 2)
        #expect(layout.fields[3].formatting == 1)
        // The text length counts bytes: "Gültig …" is 36 characters in 37 bytes.
        #expect(Array(validity.text.utf8).count == 37)
        #expect(layout.record().encoded() == record.encoded())
    }

    @Test("the rendered RCT2 grid puts every text at its line and column")
    func renderedLayout() throws {
        let container = try UICFixture.container(UICFixture.deutschlandTicket)
        let lines = try UICLayout(record: try #require(container.record("U_TLAY"))).renderedLines()
        #expect(lines.count == 13)
        #expect(lines[0] == row([(18, "Fahrkarte"), (52, "Musterman"), (62, "Max")]))
        #expect(lines[1] == row([(18, "Deutschland-Ticket"), (52, "1"), (55, "Person(en)")]))
        #expect(lines[2] == "")
        #expect(lines[3] == " 2025")
        #expect(lines[6] == row([(1, "01.02"), (7, "00:00"), (52, "01.03"), (58, "03:00"), (66, "2")]))
        #expect(lines[12] == " Gültig vom 01.02.2025 bis 01.03.2025")
        #expect(lines[0] == "                  Fahrkarte                         Musterman Max")
    }

    @Test("layout text wraps at word boundaries within its box and is cut where the box ends")
    func layoutWrapping() {
        let layout = UICLayout(
            standard: "PLAI",
            fields: [
                .init(line: 0, column: 2, height: 2, width: 10, text: "Gültig vom 01.02.2025 bis 01.03.2025"),
                .init(line: 3, column: 0, height: 1, width: 4, text: "ABCDEFGH"),
                .init(line: 4, column: 0, height: 2, width: 3, text: "  x"),
            ])
        #expect(layout.renderedLines() == ["  Gültig vom", "  01.02.2025", "", "ABCD", "  x"])
        let empty = UICLayout(standard: "RCT2", fields: [])
        #expect(empty.renderedLines().isEmpty)
    }

    @Test("the Europe/Berlin rules agree with the host's time zone database, every hour for 45 years")
    func berlinTime() throws {
        let zone = try #require(TimeZone(identifier: "Europe/Berlin"))
        var instant = utc(1990, 1, 1)
        let end = utc(2035, 1, 1)
        while instant < end {
            #expect(UICTime.berlinOffset(at: instant) == zone.secondsFromGMT(for: instant), "at \(instant)")
            instant += 3_600
        }
        // Local wall-clock times map back to instants, summer and winter.
        let summer = try #require(UICDay(year: 2024, month: 7, day: 1))
        #expect(UICTime.date(summer, hour: 12, minute: 0) == utc(2024, 7, 1, 10))
        let winter = try #require(UICDay(year: 2024, month: 12, day: 24))
        #expect(UICTime.date(winter, hour: 0, minute: 30) == utc(2024, 12, 23, 23, 30))
        // The doubled hour in October reads as its first, summer-time occurrence.
        let back = try #require(UICDay(year: 2024, month: 10, day: 27))
        #expect(UICTime.date(back, hour: 2, minute: 30) == utc(2024, 10, 27, 0, 30))
        #expect(UICDay(year: 2023, month: 2, day: 29) == nil)
        #expect(UICDay(year: 2024, month: 2, day: 29) != nil)
    }

    @Test("the City-Mobil sample maps onto a Ticket: validity, product, holder, passengers, details")
    func cityMobilTicket() throws {
        let ticket = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.cityMobilV1))
        #expect(ticket.format == .uic9183)
        #expect(ticket.issuer == "0080")
        #expect(ticket.ticketID.bytes == Array("RPEX4F-4".utf8))
        #expect(ticket.issuedAt == utc(2020, 10, 27, 12, 18))
        // 11.01.2021, whole day, CET.
        #expect(ticket.validFrom == utc(2021, 1, 10, 23))
        #expect(ticket.validUntil == utc(2021, 1, 11, 22, 59, 59))
        #expect(ticket.product == "Super Sparpreis")
        #expect(ticket.holder == "Schrift Last")
        #expect(ticket.passengers == 1)
        #expect(ticket.category == "adult")
        let details = Dictionary(ticket.details.map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(details["header version"] == "01")
        #expect(details["issuer code"] == "0080")
        #expect(details["key id"] == "00007")
        #expect(details["from"] == "Mainz")
        #expect(details["to"] == "Kassel")
        #expect(details["valid from"] == "11.01.2021")
        #expect(details["class"] == "S2")
        #expect(details["validity block 1"] == "11.01.2021 – 11.01.2021, serial 548741714")
        #expect(details["issued"] == "27.10.2020 13:18 (Europe/Berlin)")
        #expect(details["records"] == "U_HEAD 01 53, 0080BL 03 285, 0080VU 01 53")
        #expect(ticket.details.first?.label == "header version")
        #expect(ticket.details.last?.label == "records")
    }

    @Test("a ticket with only U_FLEX maps from its FCB content: validity, product, holder, PNR as id")
    func flexOnlyTicket() throws {
        let ticket = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.superSparpreisV2))
        #expect(ticket.issuer == "1080")
        // No U_HEAD: the FCB booking code (issuerPNR) is the ticket id. The product id in words (ICE Fahrkarte) is shown
        // beside the tariff.
        #expect(ticket.ticketID.bytes == Array("NA5AMJY2".utf8))
        // validFromDay from 2022-04-19, 00:00 at offset −8 (UTC+2); until 10:00 a day later.
        #expect(ticket.validFrom == utc(2022, 4, 21, 22) && ticket.validUntil == utc(2022, 4, 23, 8))
        #expect(ticket.issuedAt == utc(2022, 4, 19, 11, 16))
        #expect(ticket.product == "Super Sparpreis" && ticket.holder == "Thea Test" && ticket.passengers == 1)
        #expect(
            ticket.details.contains {
                $0.label == "document"
                    && $0.value == "openTicket: Super Sparpreis, ICE Fahrkarte, 2nd class, 1 adult, "
                        + "Mannheim (8014008) – Reutlingen (8029309)"
            })
        #expect(ticket.details.last?.value == "U_FLEX 13 185")
        #expect(
            ticket.details.contains {
                $0.label == "signature field" && $0.value == "raw r‖s, 64 bytes in a 64-byte field"
            })
    }

    @Test("the Deutschland-Ticket maps with its U_HEAD and lists its layout text")
    func deutschlandTicketMapping() throws {
        let ticket = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.deutschlandTicket))
        #expect(ticket.issuer == "1080")
        #expect(ticket.ticketID.bytes == Array("QWXY3BTA".utf8))
        #expect(ticket.issuedAt == utc(2025, 2, 27, 9, 14))
        // From U_FLEX: issued 27.02 and valid from then (10:14 at UTC+1), not from the 01.02 the layout prints.
        #expect(ticket.validFrom == utc(2025, 2, 27, 9, 14))
        #expect(ticket.validUntil == utc(2025, 3, 1, 2))
        let layoutText = ticket.details.first { $0.label == "layout text" }?.value
        #expect(layoutText?.contains("Deutschland-Ticket") == true)
        #expect(layoutText?.contains("Gültig vom 01.02.2025 bis 01.03.2025") == true)
        #expect(ticket.details.last?.value == "U_HEAD 01 53, U_TLAY 01 301, U_FLEX 03 153")
    }

    @Test("a ticket built with chosen dates maps back to them; S028 stands in for a missing S023")
    func builtTicket() throws {
        let issued = utc(2025, 6, 30, 21, 45)
        let first = try #require(UICDay(year: 2025, month: 7, day: 1))
        let last = try #require(UICDay(year: 2025, month: 7, day: 31))
        let records = [
            UICHead(issuerCode: "1080", ticketKey: "TEST-0001", issuedAt: issued).record(),
            UIC0080BL(
                validityBlocks: [.init(firstDay: first, lastDay: last, serial: "1234567890")],
                fields: [
                    .init(tag: 1, value: "Monatskarte"), .init(tag: 9, value: "0-0-0"), .init(tag: 12, value: "2"),
                    .init(tag: 27, value: "4711"), .init(tag: 28, value: "Muster#Erika"), .init(tag: 99, value: "?"),
                ]
            ).record(),
            UICLayout(standard: "RCT2", fields: [.init(line: 0, column: 0, width: 20, text: "Monatskarte")]).record(),
            // A U_FLEX version farecheck does not know is listed, and leaves the 0080BL validity in force.
            UICRecord(id: "U_FLEX", version: "99", body: [0x00, 0x01]),
        ]
        let bytes = UIC918_3.encode(records: records, issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        let ticket = try UIC918_3.ticket(from: UICContainer(parsing: bytes))
        #expect(ticket.issuedAt == issued)
        #expect(ticket.ticketID.bytes == Array("TEST-0001".utf8))
        // No S031/S032: the validity block gives the days, in summer time.
        #expect(ticket.validFrom == utc(2025, 6, 30, 22))
        #expect(ticket.validUntil == utc(2025, 7, 31, 21, 59, 59))
        #expect(ticket.product == "Monatskarte")
        #expect(ticket.holder == "Erika Muster, ID 4711")
        #expect(ticket.passengers == 2)
        #expect(ticket.category == "child")
        #expect(ticket.details.contains { $0.label == "S099" && $0.value == "?" })
        #expect(ticket.details.contains { $0.label == "U_FLEX" && $0.value == "version 99 not decoded" })
        #expect(ticket.details.last?.value == "U_HEAD 01 53, 0080BL 03 125, U_TLAY 01 44, U_FLEX 99 14")
    }

    @Test("a known record in a version farecheck does not decode is listed, not an error")
    func unsupportedRecordVersion() throws {
        let records = [UICRecord(id: "U_HEAD", version: "02", body: Array("whatever".utf8))]
        let bytes = UIC918_3.encode(records: records, issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        let ticket = try UIC918_3.ticket(from: UICContainer(parsing: bytes))
        #expect(ticket.issuedAt == nil)
        #expect(ticket.details.contains { $0.label == "U_HEAD" && $0.value == "version 02 not decoded" })
    }
}
