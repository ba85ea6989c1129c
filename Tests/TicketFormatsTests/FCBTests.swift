import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// The FCB samples of the fixture tree (uic-918-9-db and dosipas, copied from shared/fixtures/formats).
enum FCBFixture {
    static func url(_ path: String) throws -> URL { Fixtures.url(path) }

    static func bytes(_ path: String) throws -> [UInt8] { try Fixtures.bytes(path) }

    /// The DB samples of uic-918-9-db, by file name.
    static func dbSamples() throws -> [String] { try Fixtures.names(in: "uic-918-9-db", endingWith: ".bin") }

    /// The U_FLEX record of a DB sample, if it has one.
    static func flexRecord(_ name: String) throws -> UICRecord? {
        try UICContainer(parsing: try bytes("uic-918-9-db/\(name)")).record("U_FLEX")
    }

    /// The U_FLEX record of the 2025 Deutschland-Ticket (FCB v3).
    static func deutschlandTicketFlex() throws -> UICRecord {
        try #require(try UICFixture.container(UICFixture.deutschlandTicket).record("U_FLEX"))
    }

    /// The DOSIPAS header up to its data sequence (uicBarcodeHeader v1.0.0 and v2.0.1): enough to find the
    /// FCB bytes. Declared here as data, the way the FCB schemas are.
    static func level2DataType(format: String) -> PERType {
        var level1: [PERComponent] = [
            PERComponent("securityProviderNum", .integer(1, 32000), .optional),
            PERComponent("securityProviderIA5", .ia5String(nil), .optional),
            PERComponent("keyId", .integer(0, 99999), .optional),
            PERComponent("dataSequence", .sequenceOf(dataType, nil)),
            PERComponent("level1KeyAlg", .objectIdentifier, .optional),
            PERComponent("level2KeyAlg", .objectIdentifier, .optional),
            PERComponent("level1SigningAlg", .objectIdentifier, .optional),
            PERComponent("level2SigningAlg", .objectIdentifier, .optional),
            PERComponent("level2PublicKey", .octetString(nil), .optional),
        ]
        if format == "U2" {
            level1 += [
                PERComponent("endOfValidityYear", .integer(2016, 2269), .optional),
                PERComponent("endOfValidityDay", .integer(1, 366), .optional),
                PERComponent("endOfValidityTime", .integer(0, 1439), .optional),
                PERComponent("validityDuration", .integer(1, 3600), .optional),
            ]
        }
        return .sequence(
            PERSequence(
                "Level2DataType", extensible: false,
                [
                    PERComponent("level1Data", .sequence(PERSequence("Level1DataType", extensible: false, level1))),
                    PERComponent("level1Signature", .octetString(nil), .optional),
                    PERComponent("level2Data", dataType, .optional),
                ]))
    }

    static let dataType = PERType.sequence(
        PERSequence(
            "DataType", extensible: false,
            [PERComponent("dataFormat", .ia5String(nil)), PERComponent("data", .octetString(nil))]))

    /// The first FCB entry of a DOSIPAS barcode: its version (from dataFormat) and bytes.
    static func dosipasFCB(_ name: String) throws -> (version: FCBVersion, bytes: [UInt8], level1: PERRecord) {
        var reader = PERBitReader(try bytes("dosipas/\(name)"))
        _ = try reader.decode(.boolean)  // the header's presence bit for level2Signature
        let format = try #require(try reader.decode(.ia5String(nil)).text)
        let level2 = try #require(try reader.decode(level2DataType(format: format)).record)
        let level1 = try #require(level2["level1Data"]?.record)
        for entry in level1["dataSequence"]?.items ?? [] {
            guard let record = entry.record, let name = record["dataFormat"]?.text,
                let version = FCBVersion(dosipasDataFormat: name), let data = record["data"]?.octets
            else { continue }
            return (version, data, level1)
        }
        Issue.record("\(name) has no FCB entry")
        throw FormatError.malformed("no FCB")
    }
}

@Suite("FCB (U_FLEX) decoding")
struct FCBTests {
    // MARK: - The DB samples against expected.json

    /// `HH:MM:SS` from minutes after midnight, as ticket-decoder prints times.
    private static func clock(_ minute: Int, _ second: Int = 0) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(two(minute / 60)):\(two(minute % 60)):\(two(second))"
    }

    /// ticket-decoder's rendering of a UTC offset: the raw quarter hours × 15 min with FCB's sign.
    private static func offset(_ quarters: Int) -> String {
        let minutes = quarters * 15
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(minutes < 0 ? "-" : "+")\(two(abs(minutes) / 60)):\(two(abs(minutes) % 60))"
    }

    /// The value at a ticket-decoder path (`issuingDetail.issuerPNR`, `transportDocuments.0.openTicket.…`) in
    /// our decoding, rendered the way ticket-decoder renders it (booleans and enumerations as numbers).
    private static func value(at path: [String], in ticket: FCBTicket) -> String? {
        // Values that ticket-decoder computes from several fields: take them from the typed model.
        if path == ["issuingDetail", "issuingDate"] { return "\(ticket.issuing.issuingDay)" }
        if path == ["issuingDetail", "issuingTime"] { return ticket.issuing.issuingMinute.map { clock($0) } }
        var current: PERValue = .sequence(ticket.data.root)
        var index = 0
        var document: FCBDocument?
        while index < path.count {
            let name = path[index]
            if name == "transportDocuments", index + 2 < path.count, let item = Int(path[index + 1]) {
                let documents = ticket.data.root["transportDocument"]?.items ?? []
                guard item < documents.count, case .choice(_, let inner)? = documents[item].record?["ticket"]
                else { return nil }
                document = ticket.documents[item]
                #expect(document?.kind.description == path[index + 2])
                current = inner
                index += 3
                continue
            }
            if let document, index == path.count - 1 {
                switch name {
                case "validFromDate": return document.validFrom.map { "\($0.day)" }
                case "validFromTime": return document.validFrom.map { clock($0.minute) }
                case "validFromUTCOffset": return document.validFrom?.utcOffset.map(offset)
                case "validUntilDate": return document.validUntil.map { "\($0.day)" }
                case "validUntilTime": return document.validUntil.map { clock($0.minute, $0.second) }
                case "validUntilUTCOffset": return document.validUntil?.utcOffset.map(offset)
                default: break
                }
            }
            if let item = Int(name) {
                let items = current.items
                guard item < items.count else { return nil }
                current = items[item]
            } else {
                guard let record = current.record else { return nil }
                // ticket-decoder drops the Num/IA5/UTF8 suffixes of the schema's names.
                guard let next = record[name] ?? record[name + "IA5"] ?? record[name + "Num"] ?? record[name + "UTF8"]
                else { return nil }
                current = next
            }
            index += 1
        }
        switch current {
        case .boolean(let flag): return flag ? "1" : "0"
        case .integer(let number): return String(number)
        case .enumerated(let index): return String(index)
        case .text(let text): return text
        default: return nil
        }
    }

    @Test("every U_FLEX value listed in uic-918-9-db/expected.json decodes to the same value")
    func expectedValues() throws {
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: try FCBFixture.url("uic-918-9-db/expected.json")))
        let files = try #require(json as? [String: [String: Any]])
        var checked = 0
        for (file, fields) in files.sorted(by: { $0.key < $1.key }) {
            let flexFields = fields.filter { $0.key.contains("U_FLEX") }
            guard !flexFields.isEmpty else { continue }
            let record = try #require(try FCBFixture.flexRecord(file), "\(file) has no U_FLEX record")
            let ticket = try UICFlex.ticket(record: record)
            for (key, expected) in flexFields {
                let expectedText = (expected as? String) ?? (expected as? NSNumber).map { "\($0.intValue)" } ?? "?"
                let actual: String?
                switch key {
                case "field:U_FLEX.recordId": actual = record.id
                case "field:U_FLEX.recordVersion": actual = record.version
                case "field:U_FLEX.recordLength": actual = String(record.length)
                default:
                    let path = key.split(separator: ".").dropFirst().map(String.init)
                    actual = Self.value(at: path, in: ticket)
                }
                #expect(actual == expectedText, "\(file) \(key)")
                checked += 1
            }
        }
        // Sachsen-Anhalt and Super Sparpreis list 67 U_FLEX values between them.
        #expect(checked == 67)
    }

    @Test("the 0080BL-only samples of uic-918-9-db map as before: validity days from 0080BL, no FCB documents")
    func blOnlySamples() throws {
        let json = try JSONSerialization.jsonObject(
            with: Data(contentsOf: try FCBFixture.url("uic-918-9-db/expected.json")))
        let files = try #require(json as? [String: [String: Any]])
        var checked = 0
        for (file, fields) in files.sorted(by: { $0.key < $1.key }) {
            guard let from = fields["0080BL.trips.0.validFrom"] as? String,
                let to = fields["0080BL.trips.0.validTo"] as? String
            else { continue }
            let container = try UICContainer(parsing: try FCBFixture.bytes("uic-918-9-db/\(file)"))
            #expect(container.record("U_FLEX") == nil)
            let ticket = try UIC918_3.ticket(from: container)
            let first = try #require(ticket.validFrom.map { UICTime.localFields(of: $0).day })
            let last = try #require(ticket.validUntil.map { UICTime.localFields(of: $0).day })
            func iso(_ day: UICDay) -> String {
                let text = day.description  // DD.MM.YYYY
                let parts = text.split(separator: ".")
                return "\(parts[2])-\(parts[1])-\(parts[0])"
            }
            #expect(iso(first) == from, "\(file)")
            #expect(iso(last) == to, "\(file)")
            #expect(ticket.documents.isEmpty && ticket.disagreements.isEmpty)
            checked += 1
        }
        #expect(checked == 4)
    }

    @Test("every DB sample with U_FLEX decodes, and the validity of the Sachsen-Anhalt ticket resolves to UTC")
    func allDBSamples() throws {
        var decoded = 0
        for name in try FCBFixture.dbSamples() {
            guard let record = try FCBFixture.flexRecord(name) else { continue }
            let ticket = try UICFlex.ticket(record: record)
            #expect(ticket.version == .v1_3)
            #expect(ticket.issuing.issuerName == "DB AG")
            #expect(ticket.documents.count == 1)
            #expect(ticket.documents.first?.kind == .openTicket)
            #expect(ticket.documents.first?.validFrom != nil && ticket.documents.first?.validUntil != nil)
            decoded += 1
        }
        #expect(decoded == 9)

        // Reference section 2.6: from 2020-11-18 00:00 at offset −4 (UTC+1) = 2020-11-17T23:00Z, until
        // 2020-11-19 03:00 with the from-offset reused = 02:00Z.
        let record = try #require(try FCBFixture.flexRecord("Muster-918-9-Laenderticket-Sachsen-Anhalt.bin"))
        let ticket = try UICFlex.ticket(record: record)
        let document = try #require(ticket.documents.first)
        #expect(document.validFrom?.date == utc(2020, 11, 17, 23, 0))
        #expect(document.validUntil?.date == utc(2020, 11, 19, 2, 0))
        #expect(document.validUntil?.utcOffset == -4)
        #expect(ticket.issuing.issuedAt == utc(2020, 11, 9, 15, 17))
        #expect(document.productName == "Sachsen-Anhalt-Ticket")
        #expect(document.travelClass == .second)
        #expect(ticket.holder?.name == "Karsten Will")
    }

    @Test("the 2025 Deutschland-Ticket: FCB v3 validity, holder, product and the VDV add-on")
    func deutschlandTicket() throws {
        let ticket = try UICFlex.ticket(record: try FCBFixture.deutschlandTicketFlex())
        #expect(ticket.version == .v3)
        #expect(ticket.issuing.issuedAt == utc(2025, 2, 27, 9, 14))
        #expect(ticket.issuing.issuerPNR == "QWXY3BTA")
        #expect(ticket.issuing.issuer == .number(1080))
        let document = try #require(ticket.documents.first)
        #expect(document.kind == .openTicket)
        // Issued 2025-02-27 (day 58); validFromDay 0, 10:14 local at −4 (UTC+1) = 09:14Z; validUntilDay 2 →
        // 2025-03-01 03:00 local = 02:00Z. The layout prints the month (01.02.–01.03.), FCB states this.
        #expect(document.validFrom?.date == utc(2025, 2, 27, 9, 14))
        #expect(document.validUntil?.date == utc(2025, 3, 1, 2, 0))
        #expect(document.productName == "Deutschland-Ticket")
        #expect(document.productID == .number(9999))
        #expect(document.passengerCount == 1)
        #expect(document.tariffs.first?.passengerType == .adult)
        #expect(ticket.holder?.name == "Max Mustermann")
        #expect(ticket.holder?.dateOfBirth == "2001-01-01")
        let addOn = try #require(document.record?["includedAddOns"]?.items.first?.record)
        #expect(addOn["productOwnerIA5"]?.text == "VDV6263")
        #expect(addOn["productIdNum"]?.integer == 9999)
        let zones = try #require(addOn["validRegion"]?.items.first)
        guard case .choice(_, let zone) = zones else {
            Issue.record("validRegion is not a choice")
            return
        }
        #expect(zone.record?["carrierIA5"]?.text == "VDV5000")
        #expect(zone.record?["zoneId"]?.items.first?.integer == 1)

        let json = ticket.data.json
        #expect(json.contains("\"tariffDesc\":\"Deutschland-Ticket\""))
        #expect(json.contains("\"classCode\":\"second\""))
        #expect(json.contains("\"includedAddOns\":[{\"productOwnerIA5\":\"VDV6263\""))
        #expect((try JSONSerialization.jsonObject(with: Data(json.utf8))) is [String: Any])
    }

    @Test("the Deutschland-Ticket maps onto Ticket with its FCB validity, holder, product and document")
    func deutschlandTicketMapping() throws {
        let ticket = try UIC918_3.ticket(from: try UICFixture.container(UICFixture.deutschlandTicket))
        #expect(ticket.validFrom == utc(2025, 2, 27, 9, 14))
        #expect(ticket.validUntil == utc(2025, 3, 1, 2, 0))
        #expect(ticket.product == "Deutschland-Ticket")
        #expect(ticket.holder == "Max Mustermann, born 2001-01-01")
        #expect(ticket.passengers == 1)
        #expect(ticket.category == "adult")
        #expect(ticket.documents.count == 1)
        #expect(ticket.documents.first?.kind == "openTicket")
        // The printed layout says "Gültig vom 01.02.2025 bis 01.03.2025": FCB decides, the difference is kept.
        #expect(
            ticket.disagreements.map(\.description) == [
                "validity: 27.02.2025 – 01.03.2025 (U_FLEX), not 01.02.2025 – 01.03.2025 (U_TLAY)"
            ])
        let labels = ticket.details.map(\.label)
        #expect(labels.contains("FCB version") && labels.contains("PNR") && labels.contains("document valid from"))
        #expect(ticket.details.first { $0.label == "FCB issuer" }?.value == "DB AG, RICS 1080")
    }

    @Test("FCB v3 blocks of the DOSIPAS samples decode")
    func dosipasV3() throws {
        let cts = try FCBFixture.dosipasFCB("cts-ticket.bin")
        #expect(cts.version == .v3)
        #expect(cts.level1["securityProviderNum"]?.integer == 3703)
        #expect(cts.level1["keyId"]?.integer == 7)
        let ctsTicket = try FCBTicket(decoding: cts.bytes, version: cts.version)
        #expect(ctsTicket.issuing.isSpecimen == false)
        #expect(ctsTicket.issuing.issuedAt > utc(2026, 1, 1))
        let extensionID = ctsTicket.data.root["issuingDetail"]?.record?["extension"]?.record?["extensionId"]?.text
        #expect(extensionID == "+FRII1")
        #expect(!ctsTicket.documents.isEmpty)

        let ter = try FCBFixture.dosipasFCB("sncf-ter-ticket.bin")
        #expect(ter.version == .v3)
        let terTicket = try FCBTicket(decoding: ter.bytes, version: ter.version)
        let traveler = try #require(terTicket.travelers.first)
        #expect(traveler.lastName?.uppercased() == "HELLEBOID")
        #expect(traveler.firstName?.uppercased() == "THEOPHILE" || traveler.firstName?.uppercased() == "THÉOPHILE")
        #expect(traveler.dateOfBirth == "1989-12-19")

        let grandEst = try FCBFixture.dosipasFCB("grand-est-u1-fcb3.bin")
        #expect(grandEst.version == .v3)
        let grandEstTicket = try FCBTicket(decoding: grandEst.bytes, version: grandEst.version)
        let grandEstExtension = grandEstTicket.data.root["issuingDetail"]?.record?["extension"]?.record
        #expect(grandEstExtension?["extensionId"]?.text == "_3703II1")
    }

    @Test("the FCB v2 block of the synthetic DOSIPAS sample decodes")
    func dosipasV2() throws {
        let sample = try FCBFixture.dosipasFCB("sample-ticket.bin")
        #expect(sample.version == .v2)
        let ticket = try FCBTicket(decoding: sample.bytes, version: sample.version)
        #expect(ticket.issuing.issuingDay == FCBDay(year: 2020, dayOfYear: 121))
        #expect(ticket.issuing.issuingMinute == 995)
        #expect(ticket.issuing.isSpecimen == false)
        #expect(ticket.issuing.isActivated == true)
        #expect(ticket.issuing.currency == "EUR")
        #expect(ticket.issuing.currencyFraction == 2)
        #expect(ticket.documents.map(\.kind) == [.openTicket])
        let extensionID = ticket.data.root["issuingDetail"]?.record?["extension"]?.record?["extensionId"]?.text
        #expect(extensionID == "_3703II1")
    }

    @Test("a U_FLEX record in an unknown version is unsupported; one that is cut is malformed with a bit offset")
    func versions() throws {
        var record = try FCBFixture.deutschlandTicketFlex()
        record.version = "04"
        #expect(throws: FormatError.self) { try UICFlex.ticket(record: record) }
        do {
            _ = try UICFlex.ticket(record: record)
        } catch {
            #expect(error.code == .unsupported)
        }
        var cut = try FCBFixture.deutschlandTicketFlex()
        cut.body = Array(cut.body.prefix(100))
        do {
            _ = try UICFlex.ticket(record: cut)
            Issue.record("a cut record decoded")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.contains("at bit "), "\(error.message)")
            #expect(error.message.contains("transportDocument[0].ticket.openTicket."), "\(error.message)")
        }
    }

    @Test("a broken U_FLEX record makes the container's ticket malformed; FCB overrules 0080BL and says so")
    func mappingDecisions() throws {
        let flex = try FCBFixture.deutschlandTicketFlex()
        var broken = flex
        broken.body = Array(flex.body.prefix(60))
        let brokenBytes = UIC918_3.encode(
            records: [broken], issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        do {
            _ = try UIC918_3.ticket(from: try UICContainer(parsing: brokenBytes))
            Issue.record("a broken U_FLEX record mapped to a ticket")
        } catch {
            #expect(error.code == .malformed)
            #expect(error.message.contains("U_FLEX record (FCB 3) at byte 0"), "\(error.message)")
            #expect(error.message.contains("breaks at bit "), "\(error.message)")
        }

        // 0080BL says July 2025 and "Monatskarte"; U_FLEX says 27.02.–01.03.2025 and "Deutschland-Ticket".
        let july = try #require(UICDay(year: 2025, month: 7, day: 1))
        let julyEnd = try #require(UICDay(year: 2025, month: 7, day: 31))
        let bl = UIC0080BL(
            validityBlocks: [.init(firstDay: july, lastDay: julyEnd, serial: "1")],
            fields: [.init(tag: 1, value: "Monatskarte")]
        ).record()
        let both = UIC918_3.encode(
            records: [bl, flex], issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        let ticket = try UIC918_3.ticket(from: try UICContainer(parsing: both))
        #expect(ticket.validFrom == utc(2025, 2, 27, 9, 14))
        #expect(ticket.product == "Deutschland-Ticket")
        #expect(
            ticket.disagreements.map(\.description) == [
                "validity: 27.02.2025 – 01.03.2025 (U_FLEX), not 01.07.2025 – 31.07.2025 (0080BL)",
                "product: Deutschland-Ticket (U_FLEX), not Monatskarte (0080BL)",
            ])

        // A U_FLEX version farecheck does not know, and no 0080BL: no validity, so the verifier warns.
        var future = flex
        future.version = "07"
        let unknown = UIC918_3.encode(
            records: [future], issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
        let unread = try UIC918_3.ticket(from: try UICContainer(parsing: unknown))
        #expect(unread.validFrom == nil && unread.validUntil == nil && unread.documents.isEmpty)
        #expect(unread.details.contains { $0.label == "U_FLEX" && $0.value == "version 07 not decoded" })
    }

    @Test("every prefix and every one-bit change of a real U_FLEX record decodes or is malformed with a bit offset")
    func truncationsAndBitFlips() throws {
        let sachsenAnhalt = try #require(try FCBFixture.flexRecord("Muster-918-9-Laenderticket-Sachsen-Anhalt.bin"))
        let records = [(try FCBFixture.deutschlandTicketFlex().body, FCBVersion.v3), (sachsenAnhalt.body, .v1_3)]
        for (body, version) in records {
            func check(_ bytes: [UInt8], _ what: String) {
                do {
                    let ticket = try FCBTicket(decoding: bytes, version: version)
                    _ = ticket.data.json
                    _ = ticket.detailLines
                } catch {
                    #expect(error.code == .malformed, "\(version) \(what)")
                    #expect(error.message.contains(" at bit "), "\(version) \(what): \(error.message)")
                }
            }
            for length in 0..<body.count {
                check(Array(body.prefix(length)), "prefix of \(length) bytes")
            }
            for bit in 0..<(body.count * 8) {
                var changed = body
                changed[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                check(changed, "bit \(bit) flipped")
            }
        }
    }

    @Test("one DB U_FLEX record decodes the same, to its value tree and its documents, every time")
    func decodeTime() throws {
        // The decode time itself is `farecheck-bench uic`'s figure, never asserted here.
        let body = try FCBFixture.deutschlandTicketFlex().body
        let rounds = 2_000
        var documents = 0
        var slots = 0
        for _ in 0..<rounds {
            slots += try FCBData(decoding: body, version: .v3).root.values.count
            documents += try FCBTicket(decoding: body, version: .v3).documents.count
        }
        #expect(documents == rounds && slots == rounds * 5)
    }
}
