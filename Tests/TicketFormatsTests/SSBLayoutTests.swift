import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// Frames composed bit by bit with the offsets of era-ssb.md, decoded back to the values written.
@Suite("ERA SSB layouts")
struct SSBLayoutTests {
    /// A version 3 frame with the common part written and a signature part of 0x5A bytes (read as raw 28/28).
    private func version3(type: Int, issuer: Int = 1080, keyID: Int = 5) -> SSBBitWriter {
        var writer = SSBBitWriter(byteCount: 114)
        for index in 58..<114 { writer.bytes[index] = 0x5A }
        writer.header(version: 3, issuer: issuer, keyID: keyID, type: type)
        writer.common(
            adults: 2, children: 1, specimen: true, travelClass: 1, ticketNumber: "AB12-CD34/XY", yearDigit: 5,
            dayOfYear: 60)
        return writer
    }

    private let expectedCommon = SSBCommonPart(
        adults: 2, children: 1, specimen: true, travelClass: .first, ticketNumber: "AB12-CD34/XY",
        issuingYearInDecade: 5, issuingDayOfYear: 60)

    /// 2025-03-05, a few days after day 60 of 2025 (1 March).
    private let inspection = utc("2025-03-05T12:00:00Z")

    @Test("type 1 (IRT/RES/BOA): every field, alphanumeric stations, departure day as validity")
    func reservation() throws {
        var writer = version3(type: 1)
        writer.put(2, at: 145, width: 2)
        writer.alphanumericStations(at: 147, departure: "BERLN", arrival: "MUC")
        writer.put(3, at: 208, width: 9)
        writer.put(754, at: 217, width: 11)
        writer.put(text: "ICE12", at: 228, count: 5, .ascii)
        writer.put(12, at: 258, width: 10)
        writer.put(text: "45A", at: 268, count: 3, .ascii)
        writer.put(true, at: 286)
        writer.put(9_998, at: 287, width: 14)
        writer.put(text: "WINDOW SEAT, QUIET ZONE", at: 301, count: 27, .ascii)
        writer.put(1, at: 463, width: 1)
        let ticket = try SSBTicket(decoding: writer.bytes)
        #expect(ticket.version == 3 && ticket.issuerCode == 1080 && ticket.keyID == 5)
        #expect(ticket.ticketType == .reservation)
        guard case .reservation(let common, let body) = ticket.payload else {
            Issue.record("not a reservation: \(ticket.payload)")
            return
        }
        #expect(common == expectedCommon)
        #expect(body.subType == 2)
        guard case .alphanumeric(let departure, let arrival, let departureNumber, _) = body.stations else {
            Issue.record("stations not alphanumeric")
            return
        }
        #expect(departure == "BERLN" && arrival == "MUC")
        // "BERLN" as five 6-bit values: B=34, E=37, R=50, L=44, N=46.
        #expect(departureNumber == ((((34 << 6 | 37) << 6 | 50) << 6 | 44) << 6 | 46))
        #expect(body.departureDay == 3 && body.departureTime == 754)
        #expect(body.trainNumber == "ICE12" && body.coach == 12 && body.seat == "45A")
        #expect(body.overbooking && body.infoCode == 9_998)
        #expect(body.text == "WINDOW SEAT, QUIET ZONE")

        let mapped = try ERASSB.ticket(from: ticket, inspectedAt: inspection)
        // Departure on day 3 after 1 March 2025: 4 March, Central European winter time.
        #expect(mapped.validFrom == utc("2025-03-03T23:00:00Z"))
        #expect(mapped.validUntil == utc("2025-03-04T22:59:59Z"))
        #expect(mapped.passengers == 3 && mapped.category == nil)
        let details = Dictionary(mapped.details.map { ($0.label, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(details["departure"] == "04.03.2025 12:34 (day 3 after issue)")
        #expect(details["stations as numbers"] != nil)
        #expect(details["specimen"] == "yes (test ticket)")
    }

    @Test("type 2 (NRT): every field, numeric stations of the reservation table, days after the issuing day")
    func nonReservation() throws {
        var writer = version3(type: 2, issuer: 1179, keyID: 15)
        writer.put(true, at: 145)
        writer.put(1, at: 146, width: 9)
        writer.put(3, at: 155, width: 9)
        writer.numericStations(at: 164, table: 2, departure: 9_999_999, arrival: 1)
        writer.put(4_321, at: 225, width: 14)
        writer.put(text: String(repeating: "Z", count: 37), at: 239, count: 37, .ascii)
        let ticket = try SSBTicket(decoding: writer.bytes)
        #expect(ticket.keyID == 15)
        guard case .nonReservation(let common, let body) = ticket.payload else {
            Issue.record("not an NRT")
            return
        }
        #expect(common == expectedCommon)
        #expect(
            body
                == SSBNonReservation(
                    returnJourney: true, firstDayOfValidity: 1, lastDayOfValidity: 3,
                    stations: .numeric(table: .reservation, departure: 9_999_999, arrival: 1), infoCode: 4_321,
                    text: String(repeating: "Z", count: 37)))
        let mapped = try ERASSB.ticket(from: ticket, inspectedAt: inspection)
        #expect(mapped.validFrom == utc("2025-03-01T23:00:00Z"))
        #expect(mapped.validUntil == utc("2025-03-04T22:59:59Z"))
        #expect(mapped.issuedAt == utc("2025-02-28T23:00:00Z"))
        #expect(mapped.ticketID.bytes == Array("AB12-CD34/XY".utf8))
    }

    @Test("type 3 (GRP): every field, with the 9-bit countermark")
    func group() throws {
        var writer = version3(type: 3)
        writer.put(false, at: 145)
        writer.put(10, at: 146, width: 9)
        writer.put(366, at: 155, width: 9)
        writer.numericStations(at: 164, table: 1, departure: 8_000_105, arrival: 8_000_261)
        writer.put(text: "MUELLER HANS", at: 225, count: 12, .ascii)
        writer.put(300, at: 297, width: 9)
        writer.put(12, at: 306, width: 14)
        writer.put(text: "SCHOOL TRIP 4B", at: 320, count: 24, .ascii)
        let ticket = try SSBTicket(decoding: writer.bytes)
        guard case .group(let common, let body) = ticket.payload else {
            Issue.record("not a group ticket")
            return
        }
        #expect(common == expectedCommon)
        #expect(
            body
                == SSBGroup(
                    returnJourney: false, firstDayOfValidity: 10, lastDayOfValidity: 366,
                    stations: .numeric(table: .nrt, departure: 8_000_105, arrival: 8_000_261),
                    groupName: "MUELLER HANS", counterMarkNumber: 300, infoCode: 12, text: "SCHOOL TRIP 4B"))
        #expect(try ERASSB.ticket(from: ticket, inspectedAt: inspection).product == "group ticket")
    }

    @Test("type 4 (RPT): every field, five country codes, open date from the issuing day")
    func pass() throws {
        var writer = version3(type: 4)
        writer.put(2, at: 145, width: 2)
        writer.put(0, at: 147, width: 9)
        writer.put(277, at: 156, width: 9)
        writer.put(15, at: 165, width: 7)
        for (index, country) in [80, 81, 87, 88, 107].enumerated() {
            writer.put(country, at: 172 + 7 * index, width: 7)
        }
        writer.put(true, at: 207)
        writer.put(7, at: 208, width: 14)
        writer.put(text: String(repeating: "P", count: 40), at: 222, count: 40, .ascii)
        writer.put(3, at: 462, width: 2)
        let ticket = try SSBTicket(decoding: writer.bytes)
        guard case .pass(let common, let body) = ticket.payload else {
            Issue.record("not a pass")
            return
        }
        #expect(common == expectedCommon)
        #expect(
            body
                == SSBPass(
                    kind: .eurailEurope, firstDayOfValidity: 0, lastDayOfValidity: 277, travelDays: 15,
                    countries: [80, 81, 87, 88, 107], secondPage: true, infoCode: 7,
                    text: String(repeating: "P", count: 40)))
        let mapped = try ERASSB.ticket(from: ticket, inspectedAt: inspection)
        #expect(mapped.product == "Eurail Europe pass")
        #expect(mapped.validFrom == utc("2025-02-28T23:00:00Z"))
        // Day 277 after 1 March 2025 is 3 December 2025.
        #expect(mapped.validUntil == utc("2025-12-03T22:59:59Z"))
    }

    @Test("types 21–31 keep bits 27–463 as they are; types 0 and 5–20 are unsupported")
    func otherTypes() throws {
        var writer = SSBBitWriter(byteCount: 114)
        writer.header(version: 3, issuer: 1184, keyID: 3, type: 21)
        writer.put(1, at: 27, width: 1)
        writer.put(0b101, at: 461, width: 3)
        let ticket = try SSBTicket(decoding: writer.bytes)
        #expect(ticket.ticketType == .nonUIC(21))
        guard case .nonUIC(let body) = ticket.payload else {
            Issue.record("not issuer-defined")
            return
        }
        #expect(body.type == 21)
        #expect(body.data.count == 55)
        #expect(body.data[0] == 0x80)
        // Bits 461–463 are data bits 434–436: the 3rd to 5th bits of byte 54.
        #expect(body.data[54] == 0b0010_1000)
        let mapped = try ERASSB.ticket(from: ticket, inspectedAt: inspection)
        #expect(mapped.validFrom == nil && mapped.validUntil == nil)
        #expect(mapped.issuer == "1184")

        for type in [0, 5, 20] {
            var undefined = SSBBitWriter(byteCount: 114)
            undefined.header(version: 3, issuer: 1184, keyID: 3, type: type)
            #expect(throws: FormatError.self) { try SSBTicket(decoding: undefined.bytes) }
            let error = #expect(throws: FormatError.self) { try SSBTicket(decoding: undefined.bytes) }
            #expect(error?.code == .unsupported)
        }
    }

    /// Writes the fields shared by versions 1 and 2; `shift` is 4 in version 2 up to the train number.
    private func legacy(version: Int) -> SSBBitWriter {
        let v2 = version == 2
        let count = v2 ? 114 : 107
        var writer = SSBBitWriter(byteCount: count)
        if v2 { for index in 58..<114 { writer.bytes[index] = 0xA5 } }
        writer.put(version, at: 0, width: 4)
        writer.put(1_154, at: 4, width: 14)
        let shift = v2 ? 4 : 0
        let late = v2 ? 12 : 0
        if v2 { writer.put(9, at: 18, width: 4) }
        writer.put(true, at: 18 + shift)
        writer.put(3, at: 19 + shift, width: 6)
        writer.put(4, at: 25 + shift, width: 7)
        writer.put(0, at: 32 + shift, width: 7)
        writer.put(350, at: 39 + shift, width: 9)
        writer.put(20, at: 48 + shift, width: 9)
        writer.put(true, at: 57 + shift)
        writer.put(123_456_789_012, at: 58 + shift, width: 47)
        writer.put(true, at: 105 + shift)
        writer.put(5_400_014, at: 106 + shift, width: 30)
        writer.put(false, at: 136 + shift)
        writer.put(text: "WIEN", at: 137 + shift, count: 5, .legacy)
        writer.put(17, at: 167 + shift, width: 6)
        writer.put(v2 ? 20_000_000 : 100_000, at: 173 + shift, width: v2 ? 25 : 17)
        writer.put(987_654_321_0, at: 190 + late, width: 40)
        writer.put(text: "C", at: 230 + late, count: 1, .legacy)
        writer.put(256, at: 236 + late, width: 10)
        writer.put(99, at: 246 + late, width: 7)
        writer.put(text: "U", at: 253 + late, count: 1, .legacy)
        writer.put(false, at: 259 + late)
        writer.put(text: "PNR7ABC", at: 260 + late, count: 7, .legacy)
        writer.put(6, at: 302 + late, width: 4)
        writer.put(true, at: 306 + late)
        writer.put(text: "BRNO", at: 307 + late, count: 5, .legacy)
        if v2 {
            writer.put(1_154, at: 349, width: 14)
            writer.put(text: "REF12345", at: 363, count: 8, .legacy)
        }
        return writer
    }

    @Test(
        "versions 1 and 2: every field, with the key id and the wider train number of version 2",
        arguments: [1, 2])
    func legacyVersions(_ version: Int) throws {
        let writer = legacy(version: version)
        #expect(ERASSB.isFrame(writer.bytes))
        let frame = try SSBFrame(parsing: writer.bytes)
        let ticket = try SSBTicket(frame: frame)
        #expect(ticket.version == version && ticket.issuerCode == 1_154)
        #expect(ticket.keyID == (version == 2 ? 9 : nil))
        #expect(ticket.ticketType == nil)
        #expect(frame.signature == (version == 2 ? [UInt8](repeating: 0xA5, count: 56) : nil))
        guard case .legacy(let body) = ticket.payload else {
            Issue.record("not a legacy ticket")
            return
        }
        #expect(
            body
                == SSBLegacyTicket(
                    rct2Type: true, numberOfTickets: 3, adults: 4, children: 0, firstDayOfValidity: 350,
                    lastDayOfValidity: 20, customerNumberType: true, customerNumber: 123_456_789_012,
                    departureStation: .number(5_400_014), arrivalStation: .name("WIEN"), departureTimeSlot: 17,
                    trainNumber: version == 2 ? 20_000_000 : 100_000, reservationReference: 9_876_543_210,
                    travelClass: "C", coach: 256, seat: 99, berth: "U", overbooking: false, pnr: "PNR7ABC",
                    ticketType: 6, specimenBit: true, via: "BRNO",
                    carrierCode: version == 2 ? 1_154 : nil, reference: version == 2 ? "REF12345" : nil))

        // Day 350 (15 December in the leap year 2024) to day 20 (20 January 2025), inspected on 5 January 2025.
        let mapped = try ERASSB.ticket(from: ticket, inspectedAt: utc("2025-01-05T12:00:00Z"))
        #expect(mapped.validFrom == utc("2024-12-14T23:00:00Z"))
        #expect(mapped.validUntil == utc("2025-01-20T22:59:59Z"))
        #expect(mapped.ticketID.bytes == Array("PNR7ABC".utf8))
        #expect(mapped.passengers == 4 && mapped.category == "adult")
        let details = Dictionary(mapped.details.map { ($0.label, $0.value) }, uniquingKeysWith: { a, _ in a })
        #expect(details["departure time"] == "08:00")
        #expect(details["stations"] == "5400014 → WIEN")
    }

    @Test("the 6-bit tables: version 3 is ASCII − 32, versions 1 and 2 digits then letters")
    func characterSets() {
        #expect(SSBCharacterSet.ascii.value(of: UInt8(ascii: "6")) == 22)
        #expect(SSBCharacterSet.ascii.value(of: UInt8(ascii: "a")) == 33)
        #expect(SSBCharacterSet.ascii.character(0) == 0x20)
        #expect(SSBCharacterSet.ascii.character(63) == UInt8(ascii: "_"))
        #expect(SSBCharacterSet.legacy.character(9) == UInt8(ascii: "9"))
        #expect(SSBCharacterSet.legacy.character(35) == UInt8(ascii: "Z"))
        #expect(SSBCharacterSet.legacy.character(36) == 0x20)
        #expect(SSBCharacterSet.legacy.character(50) == UInt8(ascii: "?"))
    }
}
