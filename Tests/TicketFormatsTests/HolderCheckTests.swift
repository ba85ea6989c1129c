import FareCore
import Foundation
import RSATestKeys
import TestSupport
import Testing

@testable import TicketFormats

/// The holder check as fields (`Ticket.holderCheck`), read by the real decoders from the real fixtures: what an
/// inspector compares with the passenger's ID.
@Suite("The holder check as fields")
struct HolderCheckTests {
    /// The DB samples' FCB travelers as ticket-decoder reads them (`uic-918-9-db/expected.json`).
    @Test("U_FLEX: each DB sample's traveler gives the given and family names that ticket-decoder reads")
    func dbSamples() throws {
        let json = try JSONSerialization.jsonObject(with: Data(try FCBFixture.bytes("uic-918-9-db/expected.json")))
        let samples = try #require(json as? [String: [String: Any]])
        var checked = 0
        for (name, fields) in samples.sorted(by: { $0.key < $1.key }) {
            guard let first = fields["U_FLEX.travelerDetail.traveler.0.firstName"] as? String,
                let last = fields["U_FLEX.travelerDetail.traveler.0.lastName"] as? String
            else { continue }
            let ticket = try UIC918_3.ticket(from: UICContainer(parsing: try FCBFixture.bytes("uic-918-9-db/\(name)")))
            let holder = try #require(ticket.holderCheck, "\(name)")
            #expect(holder.givenName == first, "\(name)")
            #expect(holder.familyName == last, "\(name)")
            #expect(holder.name == "\(first) \(last)", "\(name)")
            // ticket-decoder reads no year of birth from them: none is made up.
            #expect(fields["U_FLEX.travelerDetail.traveler.0.yearOfBirth"] == nil)
            #expect(holder.dateOfBirth == nil, "\(name)")
            #expect(holder.idDocuments.isEmpty, "\(name)")
            checked += 1
        }
        #expect(checked == 2)
    }

    @Test("U_FLEX: the 2025 Deutschland-Ticket's holder with the whole date of birth, as its holder line says")
    func deutschlandTicket() throws {
        let ticket = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.deutschlandTicket))
        #expect(ticket.holder == "Max Mustermann, born 2001-01-01")
        #expect(
            ticket.holderCheck
                == TicketHolder(
                    name: "Max Mustermann", givenName: "Max", familyName: "Mustermann",
                    dateOfBirth: HolderDate(year: 2001, month: 1, day: 1)))
    }

    @Test("a year of birth alone stays a year: no month or day is made up, on screen or in JSON")
    func partialDateOfBirth() throws {
        var traveler = try #require(try UICFlex.ticket(record: try FCBFixture.deutschlandTicketFlex()).holder)
        traveler.monthOfBirth = nil
        traveler.dayOfBirth = nil
        let holder = try #require(traveler.holderCheck)
        #expect(holder.dateOfBirth == HolderDate(year: 2001))
        #expect(holder.dateOfBirth?.description == "2001")
        #expect(traveler.dateOfBirth == "2001")
        let json = String(decoding: try JSONEncoder().encode(holder.dateOfBirth), as: UTF8.self)
        #expect(json == #""2001""#)
        #expect(try JSONDecoder().decode(HolderDate.self, from: Data(json.utf8)) == HolderDate(year: 2001))

        traveler.monthOfBirth = 5
        #expect(traveler.holderCheck?.dateOfBirth?.description == "2001-05")
        // A day its month does not have is dropped, not the year and month with it.
        traveler.dayOfBirth = 31
        traveler.monthOfBirth = 2
        #expect(traveler.holderCheck?.dateOfBirth?.description == "2001-02")
        #expect(HolderDate(year: 2001, month: nil, day: 3) == nil)
        #expect(HolderDate("1986-05-17") == HolderDate(year: 1986, month: 5, day: 17))
        #expect(HolderDate("1986-5") == nil)
    }

    @Test("DOSIPAS: the SNCF TER ticket's traveler, as the reference reads it (THEOPHILE HELLEBOID, 1989-12-19)")
    func dosipas() throws {
        let ter = try DOSIPAS.ticket(from: try DOSIPASTests.barcode("sncf-ter-ticket.bin"), at: utc(2026, 2, 13))
        let holder = try #require(ter.holderCheck)
        #expect(holder.name == "THEOPHILE HELLEBOID")
        #expect(holder.givenName == "THEOPHILE")
        #expect(holder.familyName == "HELLEBOID")
        #expect(holder.dateOfBirth?.description == "1989-12-19")
        #expect(ter.holder == "THEOPHILE HELLEBOID, born 1989-12-19")

        // The bus tickets name the traveler's customer number (FCB `customerIdNum`): a customer card to ask for.
        let bus = try DOSIPAS.ticket(from: try DOSIPASTests.barcode("bus-ain-ticket.bin"), at: utc(2026, 2, 13))
        #expect(bus.holderCheck?.name == "Théophile Helleboid")
        #expect(bus.holderCheck?.idDocuments.map(\.kind) == [.customerCard])
        #expect(bus.holderCheck?.dateOfBirth == nil)
    }

    @Test("VDV-KA: the VRR Deutschland-Ticket's holder, as expected.json names it, with the date of birth it carries")
    func vdvTicket() throws {
        let barcode = try VDVBarcode(parsing: try VDVFixtures.ticket())
        let subCA = try VDVFixtures.certificate("4445564456110216")
        guard case .recoverable(let signature, let remainder) = barcode.certificate else {
            Issue.record("the issuer certificate is not recoverable")
            return
        }
        let issuer = try VDVCertificate(parsing: try recover(signature, remainder, with: subCA))
        let entitlement = try VDVEntitlement(parsing: try recover(barcode.signature, barcode.remainder, with: issuer))
        let ticket = try entitlement.ticket()
        #expect(
            ticket.holderCheck
                == TicketHolder(
                    name: "Max Mustermann", givenName: "Max", familyName: "Mustermann",
                    dateOfBirth: HolderDate(year: 1984, month: 12, day: 31)))
        // The line keeps its own (German) form of the same date.
        #expect(ticket.holder == "Max Mustermann, born 31.12.1984")
    }

    @Test("VDV-KA: the recovered payloads' holders as expected.json names them; none where it names none")
    func vdvPayloads() throws {
        let cases = try VDVFixtures.recoveredPayloads()
        for (index, sample) in cases.enumerated() {
            let bytes = try #require([UInt8](hex: sample["hex"] as? String ?? ""))
            let ticket = try VDVEntitlement(parsing: bytes).ticket()
            guard let expected = sample["holder"] as? [String: String] else {
                #expect(ticket.holderCheck == nil, "case \(index)")
                continue
            }
            #expect(ticket.holderCheck?.givenName == expected["givenName"], "case \(index)")
            #expect(ticket.holderCheck?.familyName == expected["familyName"], "case \(index)")
        }
        let katie = try VDVEntitlement(parsing: try #require([UInt8](hex: cases[1]["hex"] as? String ?? ""))).ticket()
        #expect(katie.holderCheck?.name == "Katie Dragon")
        #expect(katie.holderCheck?.dateOfBirth?.description == "1996-10-14")
        // A shortened name keeps its stars in the name; only the first letters are known for sure.
        let short = try VDVEntitlement(parsing: try #require([UInt8](hex: cases[2]["hex"] as? String ?? ""))).ticket()
        #expect(short.holderCheck?.name == "K***e D****n")

        // A bare `#` names no one: the date of birth is all there is to check.
        var nameless = try #require([UInt8](hex: cases[1]["hex"] as? String ?? ""))
        let katieStart = try #require(nameless.indices.first { nameless[$0...].starts(with: Array("Katie".utf8)) })
        nameless.replaceSubrange(katieStart..<(katieStart + 12), with: [0x23] + [UInt8](repeating: 0, count: 11))
        let bare = try VDVEntitlement(parsing: nameless).ticket()
        #expect(bare.holderCheck == TicketHolder(dateOfBirth: HolderDate(year: 1996, month: 10, day: 14)))
        #expect(bare.holder == "born 14.10.1996")
    }

    @Test("VDV-KA: an identification medium is a document of its kind, its number shortened as in the holder line")
    func vdvMedium() throws {
        let hex = try #require(try VDVFixtures.recoveredPayloads()[1]["hex"] as? String)
        let data = try #require([UInt8](hex: hex))
        // The same ticket with an identification medium (D7: `P`, an ID card, and its number) after the traveller.
        let traveller = try #require(data.indices.dropLast().first { data[$0] == 0xDB && data[$0 + 1] == 0x15 })
        let medium: [UInt8] = [0xD7, 0x0A] + Array("PL01X00T47".utf8)
        var withMedium = data
        withMedium.insert(contentsOf: medium, at: traveller + 2 + 0x15)
        // The product data (tag 85, one length byte) grows by the element.
        let product = try #require(withMedium.firstIndex(of: 0x85))
        withMedium[product + 1] += UInt8(medium.count)
        let ticket = try VDVEntitlement(parsing: withMedium).ticket()
        #expect(ticket.holderCheck?.idDocuments == [IDDocument(kind: .idCard, number: "****0T47")])
        #expect(ticket.holder == "Katie Dragon, born 14.10.1996, ID card ****0T47")
    }

    @Test("UIC 0080BL: the City-Mobil sample's holder is a name; S028 gives the parts, S027 a number of no stated kind")
    func blHolder() throws {
        let cityMobil = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.cityMobilV1))
        #expect(cityMobil.holderCheck?.name == cityMobil.holder)
        #expect(cityMobil.holderCheck?.dateOfBirth == nil)

        let first = try #require(UICDay(year: 2025, month: 7, day: 1))
        let records = [
            UIC0080BL(
                validityBlocks: [.init(firstDay: first, lastDay: first, serial: "1234567890")],
                fields: [.init(tag: 27, value: "4711"), .init(tag: 28, value: "Muster#Erika")]
            ).record()
        ]
        let bytes = UIC918_3.encode(records: records, issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        let ticket = try UIC918_3.ticket(from: UICContainer(parsing: bytes))
        #expect(ticket.holder == "Erika Muster, ID 4711")
        #expect(
            ticket.holderCheck
                == TicketHolder(
                    name: "Erika Muster", givenName: "Erika", familyName: "Muster",
                    idDocuments: [IDDocument(kind: .unstated, number: "4711")]))
    }

    @Test("FC1: h is the note as the issuer wrote it, never split into a name or a document")
    func fc1() throws {
        let ticket = try FC1.ticket(fromClaims: FC1Tests.claims.encoded())
        #expect(ticket.holderCheck == TicketHolder(note: "ID ****1234"))
        var claims = FC1Tests.claims
        claims.holder = nil
        #expect(try FC1.ticket(fromClaims: claims.encoded()).holderCheck == nil)
    }

    @Test("RSP6: the passenger's name as printed; the real TT ticket carries none, so it has no holder check")
    func rsp6() throws {
        let text = try String(
            contentsOf: RSP6Tests.resources.appendingPathComponent("tt-dnql4xhvk.txt"), encoding: .utf8)
        let barcode = try RSP6Barcode(parsing: Array(text.utf8))
        let key = try RSP6Tests.ttKeys()[1]
        let recovered = try key.publicOperation(try #require(barcode.rsaInput(byteCount: key.modulusByteCount)))
        let (inside, _) = try #require(RSP6Padding.unpad(recovered))
        let real = RSP6.ticket(from: try RSP6Ticket(decoding: inside), barcode: barcode)
        #expect(real.holder == nil && real.holderCheck == nil)

        let named = RSP6.ticket(from: try RSP6Ticket(decoding: RSP6TicketWriter.full()[...]), barcode: barcode)
        #expect(named.holderCheck == TicketHolder(name: "MS A SMITH"))
    }

    @Test("the JSON form: only the fields there, the date as precise as stated, kinds in kebab case")
    func json() throws {
        let holder = TicketHolder(
            name: "Erika Muster", dateOfBirth: HolderDate(year: 1986, month: 5),
            idDocuments: [IDDocument(kind: .idCard, number: "L01X00T47")])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(holder), as: UTF8.self)
        #expect(
            json
                == #"{"dateOfBirth":"1986-05","idDocuments":[{"kind":"id-card","number":"L01X00T47"}],"name":"Erika Muster"}"#
        )
        #expect(try JSONDecoder().decode(TicketHolder.self, from: Data(json.utf8)) == holder)
        #expect(TicketHolder().nonEmpty == nil)
        #expect(Ticket(format: .fc1, issuer: "x", ticketID: [], holderCheck: TicketHolder()).holderCheck == nil)
    }
}
