import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// `FCBTicket` reads records at positions resolved once per schema (`FCBLayout`); these tests read the same
/// fields of the real fixtures by name from the generic tree, as the JSON output shows them, and compare.
@Suite("FCB fields read by position match the tree read by name")
struct FCBFieldPositionsTests {
    /// Every FCB rail ticket among the fixtures: the DB U_FLEX samples and the DOSIPAS samples' FCB blocks.
    static func fixtures() throws -> [(name: String, data: FCBData)] {
        var result: [(name: String, data: FCBData)] = []
        for name in try FCBFixture.dbSamples() {
            guard let record = try FCBFixture.flexRecord(name) else { continue }
            result.append((name, try UICFlex.data(record: record)))
        }
        for name in DOSIPASTests.samples {
            let barcode = try DOSIPASTests.barcode(name)
            guard let (version, block) = barcode.level1.railTicketBlock else { continue }
            result.append((name, try FCBData(decoding: block.data, version: version)))
        }
        return result
    }

    /// `<stem>Num`, else `<stem>IA5`, by name.
    static func code(_ record: PERRecord?, _ stem: String) -> String? {
        if let number = record?["\(stem)Num"]?.integer { return String(number) }
        return record?["\(stem)IA5"]?.text
    }

    @Test("issuing, travelers and documents of every fixture read the same by position as by name")
    func sameAsByName() throws {
        let fixtures = try Self.fixtures()
        // 10 DB samples with U_FLEX and 8 DOSIPAS samples, every one with FCB.
        #expect(fixtures.count >= 15)
        var documentsCompared = 0
        for (name, data) in fixtures {
            let ticket = FCBTicket(data)
            let root = data.root
            let issuing = root["issuingDetail"]?.record
            #expect(ticket.issuing.securityProvider?.description == Self.code(issuing, "securityProvider"), "\(name)")
            #expect(ticket.issuing.issuer?.description == Self.code(issuing, "issuer"), "\(name)")
            #expect(ticket.issuing.issuerName == issuing?["issuerName"]?.text, "\(name)")
            #expect(
                ticket.issuing.issuingDay
                    == FCBDay(
                        year: issuing?["issuingYear"]?.integer ?? 2016, dayOfYear: issuing?["issuingDay"]?.integer ?? 1),
                "\(name)")
            #expect(ticket.issuing.issuingMinute == issuing?["issuingTime"]?.integer, "\(name)")
            #expect(ticket.issuing.isSpecimen == issuing?["specimen"]?.boolean ?? false, "\(name)")
            #expect(ticket.issuing.isActivated == issuing?["activated"]?.boolean ?? true, "\(name)")
            #expect(ticket.issuing.currency == issuing?["currency"]?.text ?? "EUR", "\(name)")
            #expect(ticket.issuing.currencyFraction == issuing?["currencyFract"]?.integer ?? 2, "\(name)")
            #expect(ticket.issuing.issuerPNR == issuing?["issuerPNR"]?.text, "\(name)")

            let detail = root["travelerDetail"]?.record
            let travelers = (detail?["traveler"]?.items ?? []).compactMap(\.record)
            #expect(ticket.travelers.count == travelers.count, "\(name)")
            #expect(ticket.groupName == detail?["groupName"]?.text, "\(name)")
            for (traveler, record) in zip(ticket.travelers, travelers) {
                #expect(traveler.firstName == record["firstName"]?.text, "\(name)")
                #expect(traveler.lastName == record["lastName"]?.text, "\(name)")
                #expect(traveler.yearOfBirth == record["yearOfBirth"]?.integer, "\(name)")
                #expect(traveler.idCard == record["idCard"]?.text, "\(name)")
                #expect(traveler.customerID?.description == Self.code(record, "customerId"), "\(name)")
                #expect(traveler.isTicketHolder == record["ticketHolder"]?.boolean ?? false, "\(name)")
                #expect(
                    traveler.passengerType.flatMap { FCBPassengerType.allCases.firstIndex(of: $0) }
                        == record["passengerType"]?.enumeratedIndex, "\(name)")
            }

            let documents = (root["transportDocument"]?.items ?? []).compactMap(\.record)
            #expect(ticket.documents.count == documents.count, "\(name)")
            for (document, record) in zip(ticket.documents, documents) {
                guard case .choice(let index, let value)? = record["ticket"], let fields = value.record else {
                    Issue.record("\(name): a document without a ticket alternative")
                    continue
                }
                #expect(document.kind == FCBDocumentKind(index: index), "\(name)")
                #expect(document.reference?.description == Self.code(fields, "reference"), "\(name)")
                #expect(document.productOwner?.description == Self.code(fields, "productOwner"), "\(name)")
                #expect(document.productID?.description == Self.code(fields, "productId"), "\(name)")
                #expect(document.train?.description == Self.code(fields, "train"), "\(name)")
                #expect(document.infoText == fields["infoText"]?.text, "\(name)")
                #expect(document.regionDescription == fields["validRegionDesc"]?.text, "\(name)")
                #expect(
                    document.travelClass.flatMap { FCBTravelClass.allCases.firstIndex(of: $0) }
                        == fields["classCode"]?.enumeratedIndex, "\(name)")
                #expect(
                    document.origin?.code?.description
                        == (Self.code(fields, "fromStation") ?? Self.code(fields, "station")), "\(name)")
                #expect(document.destination?.code?.description == Self.code(fields, "toStation"), "\(name)")
                let tariffs =
                    (fields["tariffs"]?.items ?? []).compactMap(\.record)
                    + [fields["tariff"]?.record].compactMap { $0 }
                #expect(document.tariffs.map(\.description) == tariffs.map { $0["tariffDesc"]?.text }, "\(name)")
                #expect(
                    document.tariffs.map(\.numberOfPassengers)
                        == tariffs.map { $0["numberOfPassengers"]?.integer ?? 1 }, "\(name)")
                // Validity, from positions resolved on the spot in the record's own type.
                let fresh = FCBDocument(record, issuingDay: ticket.issuing.issuingDay)
                #expect(document.validFrom == fresh.validFrom, "\(name)")
                #expect(document.validUntil == fresh.validUntil, "\(name)")
                #expect(document.places == fresh.places, "\(name)")
                #expect(document.summary == fresh.summary, "\(name)")
                if let day = fields["validFromDay"]?.integer, document.kind == .openTicket {
                    #expect(document.validFrom?.day == ticket.issuing.issuingDay.adding(days: day), "\(name)")
                }
                documentsCompared += 1
            }
        }
        #expect(documentsCompared >= 15)
    }
}
