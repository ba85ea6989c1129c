import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// A v3 `DocumentData` holding the `alternative` with `fields` set, as the decoder would build it.
private func document(_ alternative: String, _ fields: [String: PERValue]) throws -> FCBDocument {
    guard case .sequence(let documentType) = FCBSchemaV3.documentData,
        case .choice(let ticketChoice) = FCBSchemaV3.documentDataTicket
    else { throw FormatError.malformed("schema") }
    let index = try #require(ticketChoice.alternatives.firstIndex { $0.name == alternative })
    guard case .sequence(let alternativeType) = ticketChoice.alternatives[index].type else {
        throw FormatError.malformed("schema")
    }
    var record = PERRecord(type: alternativeType)
    for (name, value) in fields { record.values[try #require(alternativeType.index(of: name), "\(name)")] = value }
    var wrapper = PERRecord(type: documentType)
    wrapper.values[try #require(documentType.index(of: "ticket"))] = .choice(index: index, .sequence(record))
    // Issued on 2025-02-27 (day 58), as the Deutschland-Ticket sample.
    return FCBDocument(wrapper, issuingDay: FCBDay(year: 2025, dayOfYear: 58))
}

@Suite("FCB validity per document kind")
struct FCBValidityTests {
    @Test("openTicket: absent times are 00:00 and through 23:59 local; the until-offset is its own when given")
    func openTicket() throws {
        let local = try document("openTicket", [:])
        // No offset: Europe/Berlin, CET in February.
        #expect(local.validFrom?.date == utc(2025, 2, 26, 23))
        #expect(local.validUntil?.date == utc(2025, 2, 27, 22, 59, 59))
        #expect(local.validFrom?.utcOffset == nil)
        let zoned = try document(
            "openTicket",
            [
                "validFromDay": .integer(1), "validFromTime": .integer(600), "validFromUTCOffset": .integer(-4),
                "validUntilDay": .integer(40), "validUntilTime": .integer(600), "validUntilUTCOffset": .integer(-8),
            ])
        #expect(zoned.validFrom?.date == utc(2025, 2, 28, 9))
        // 40 days after 2025-02-28 is 2025-04-09, 10:00 at UTC+2.
        #expect(zoned.validUntil?.date == utc(2025, 4, 9, 8))
        #expect(zoned.validUntil?.day == FCBDay(year: 2025, dayOfYear: 99))
    }

    @Test("reservation: departure to arrival, the arrival day counted from departure, its offset reused")
    func reservation() throws {
        let timed = try document(
            "reservation",
            [
                "departureDate": .integer(1), "departureTime": .integer(600), "departureUTCOffset": .integer(-4),
                "arrivalDate": .integer(1), "arrivalTime": .integer(120), "trainNum": .integer(973),
                "places": .sequence(try places()),
            ])
        #expect(timed.validFrom?.date == utc(2025, 2, 28, 9))
        #expect(timed.validUntil?.date == utc(2025, 3, 1, 1))
        #expect(timed.train == .number(973))
        #expect(timed.places == "coach 12, place 45, 46")
        let open = try document("reservation", ["departureTime": .integer(600), "departureUTCOffset": .integer(-4)])
        #expect(open.validUntil?.date == utc(2025, 2, 27, 22, 59, 59))
    }

    private func places() throws -> PERRecord {
        guard case .sequence(let type) = FCBSchemaV3.placesType else { throw FormatError.malformed("schema") }
        var record = PERRecord(type: type)
        record.values[try #require(type.index(of: "coach"))] = .text("12")
        record.values[try #require(type.index(of: "placeNum"))] = .list([.integer(45), .integer(46)])
        return record
    }

    @Test("voucher and customerCard: absolute days of the year, whole days local")
    func absoluteDays() throws {
        let voucher = try document(
            "voucher",
            [
                "validFromYear": .integer(2025), "validFromDay": .integer(60),
                "validUntilYear": .integer(2025), "validUntilDay": .integer(90),
            ])
        #expect(voucher.validFrom?.date == utc(2025, 2, 28, 23))
        // 31 March 2025 is in summer time (from 30 March).
        #expect(voucher.validUntil?.date == utc(2025, 3, 31, 21, 59, 59))
        let card = try document("customerCard", ["validFromYear": .integer(2025), "validUntilYear": .integer(1)])
        #expect(card.validFrom?.date == utc(2024, 12, 31, 23))
        #expect(card.validUntil?.date == utc(2026, 12, 31, 22, 59, 59))
    }

    @Test("parkingGround and fipTicket: whole days from the issuing day; delayConfirmation has no window")
    func wholeDays() throws {
        let parking = try document("parkingGround", ["fromParkingDate": .integer(2), "untilParkingDate": .integer(1)])
        #expect(parking.validFrom?.date == utc(2025, 2, 28, 23))
        #expect(parking.validUntil?.date == utc(2025, 3, 2, 22, 59, 59))
        let fip = try document("fipTicket", ["validFromDay": .integer(3), "validUntilDay": .integer(4)])
        #expect(fip.validFrom?.date == utc(2025, 3, 1, 23))
        #expect(fip.validUntil?.date == utc(2025, 3, 6, 22, 59, 59))
        let delay = try document("delayConfirmation", ["delay": .integer(30), "trainCancelled": .boolean(false)])
        #expect(delay.kind == .delayConfirmation)
        #expect(delay.validFrom == nil && delay.validUntil == nil)
    }
}
