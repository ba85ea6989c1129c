import FareCore
import Foundation
import Signatures
import TestSupport
import Testing

@testable import TicketFormats

/// The VDV-KA sample and certificates of the fixture tree (`vdv`, copied from shared/fixtures/formats/vdv).
enum VDVFixtures {
    static func bytes(_ path: String) throws -> [UInt8] { try Fixtures.bytes("vdv/\(path)") }

    static func ticket() throws -> [UInt8] { try bytes("vrr-deutschlandticket-2023-03.bin") }

    /// Every shipped certificate file, by file name.
    static func certificateFiles() throws -> [(name: String, bytes: [UInt8])] {
        try Fixtures.names(in: "vdv/certs", endingWith: ".vdv-cert").map { ($0, try bytes("certs/\($0)")) }
    }

    /// The recovered payloads of expected.json.
    static func recoveredPayloads() throws -> [[String: Any]] {
        let json = try JSONSerialization.jsonObject(with: Data(try bytes("expected.json"))) as? [String: Any]
        let section = try #require(json?["recovered-payloads"] as? [String: Any])
        return try #require(section["cases"] as? [[String: Any]])
    }

    static func certificate(_ name: String) throws -> VDVCertificate {
        guard case .clear(let body, _) = try VDVCertificateEnvelope(parsingFile: try bytes("certs/\(name).vdv-cert"))
        else { throw FormatError.malformed("not a clear certificate") }
        return try VDVCertificate(parsing: body)
    }
}

/// SHA-1 through OpenSSL, for ISO 9796-2.
func sha1(_ bytes: [UInt8]) -> [UInt8] { digest(.sha1, bytes) }

/// Opens a recoverable block with a certificate's key (RSA from Signatures, the rest from TicketFormats).
func recover(_ signature: [UInt8], _ remainder: [UInt8], with certificate: VDVCertificate) throws -> [UInt8] {
    let key = try RSARawPublicKey(modulus: certificate.modulus, exponent: certificate.exponent)
    return try ISO9796_2.recoverMessage(block: try key.publicOperation(signature), remainder: remainder, sha1: sha1)
}

@Suite("VDV-KA barcodes")
struct VDVTests {
    @Test("the VRR barcode's envelope: 128-byte signature, 15-byte remainder, certificate, CA DEVDV 11 02 16")
    func envelope() throws {
        let barcode = try VDVBarcode(parsing: try VDVFixtures.ticket())
        #expect(barcode.signature.count == 128)
        #expect(barcode.remainder == [UInt8](repeating: 0, count: 10) + Array("VDV".utf8) + [0x11, 0x09])
        #expect(barcode.caReference.hex == "4445564456110216")
        #expect(barcode.caReference.description == "DEVDV 11 02 16")
        #expect(barcode.caReference.year == 2016)
        #expect(barcode.certificateBytes.count == 204)
        guard case .recoverable(let signature, let remainder) = barcode.certificate else {
            Issue.record("the certificate should be in the recovery form")
            return
        }
        #expect(signature.count == 192)
        #expect(remainder == [0x81])
        guard case .vdv(let recognised) = try PayloadDetector().recognise(try VDVFixtures.ticket()) else {
            Issue.record("the detector should recognise a VDV barcode")
            return
        }
        #expect(recognised == barcode)
    }

    @Test("the chain opens: sub-CA file → issuer certificate → 121 bytes of ticket data, each SHA-1 checked")
    func recoversChain() throws {
        let barcode = try VDVBarcode(parsing: try VDVFixtures.ticket())
        let subCA = try VDVFixtures.certificate("4445564456110216")
        #expect(subCA.holderReference == barcode.caReference)
        guard case .recoverable(let signature, let remainder) = barcode.certificate else {
            Issue.record("the certificate should be in the recovery form")
            return
        }
        let issuer = try VDVCertificate(parsing: try recover(signature, remainder, with: subCA))
        #expect(issuer.body.count == 171)
        #expect(issuer.profile == 4)
        #expect(issuer.authority == barcode.caReference)
        #expect(issuer.keyBits == 1024)
        #expect(issuer.exponent == [0x40, 0x00, 0x00, 0x81])
        #expect(issuer.expiry == UICDay(year: 2023, month: 10, day: 11))
        #expect(issuer.algorithm == .iso9796WithSHA1AndRSA)
        #expect(issuer.authorization.description == "VDV_KA 0x22")
        #expect(
            issuer.holder
                == .sam(
                    VDVSAMHolder(
                        organisationID: 6060, samExpiryYear: 2023, samExpiryMonth: 10,
                        samValidFrom: UICDay(year: 2018, month: 10, day: 11), ownerOrganisationID: 6060,
                        samID: 119_041)))
        let data = try recover(barcode.signature, barcode.remainder, with: issuer)
        #expect(data.count == 121)
        let entitlement = try VDVEntitlement(parsing: data)
        // 01 D1 01 (the reference text says 118017, which would be 01 CD 01).
        #expect(entitlement.issue.samID == 119_041)

        // One flipped bit anywhere breaks the hash (or the header/trailer).
        var forged = barcode.remainder
        forged[0] ^= 1
        #expect(throws: ISO9796_2.RecoveryFailure.hashMismatch) { try recover(barcode.signature, forged, with: issuer) }
        #expect(throws: (any Error).self) { try recover(barcode.signature, barcode.remainder, with: subCA) }
    }

    @Test("the VRR Deutschland-Ticket decodes to expected.json's values")
    func vrrTicket() throws {
        let barcode = try VDVBarcode(parsing: try VDVFixtures.ticket())
        let subCA = try VDVFixtures.certificate("4445564456110216")
        guard case .recoverable(let signature, let remainder) = barcode.certificate else { return }
        let issuer = try VDVCertificate(parsing: try recover(signature, remainder, with: subCA))
        let entitlement = try VDVEntitlement(parsing: try recover(barcode.signature, barcode.remainder, with: issuer))
        #expect(entitlement.entitlementNumber == 2_099_643)
        #expect(entitlement.kvpOrganisationID == 57)
        #expect(entitlement.productNumber == 9999)
        #expect(entitlement.product == .deutschlandTicket)
        #expect(entitlement.product.isDeutschlandTicket)
        #expect(entitlement.pvOrganisationID == 70)
        #expect(entitlement.validFrom.description == "2023-03-01 00:00:00")
        #expect(entitlement.validUntil.description == "2023-03-31 23:59:58")
        #expect(entitlement.traveller?.name == .split(given: "Max", family: "Mustermann"))
        #expect(entitlement.traveller?.dateOfBirth == UICDay(year: 1984, month: 12, day: 31))
        #expect(entitlement.traveller?.gender == 0)
        #expect(entitlement.basicData?.serviceClass == .unknown)
        #expect(entitlement.area?.organisationID == 5000)
        #expect(entitlement.area?.ids == [1])
        #expect(entitlement.transaction.terminalType == 16)
        #expect(entitlement.transaction.time.description == "2023-01-23 13:13:08")
        #expect(entitlement.issue.samSequenceNumber1 == 755_649)
        #expect(entitlement.issue.samSequenceNumber2 == 1_749_231)
        #expect(entitlement.version == [0x11, 0x09])

        let ticket = try entitlement.ticket()
        #expect(ticket.format == .vdvKA)
        #expect(ticket.issuer == "57")
        #expect(ticket.ticketID == [0x00, 0x20, 0x09, 0xBB])
        #expect(ticket.product == "Deutschland-Ticket")
        #expect(ticket.holder == "Max Mustermann, born 31.12.1984")
        // Europe/Berlin: CET in March before the 26th, CEST on the 31st.
        #expect(ticket.validFrom == utc("2023-02-28T23:00:00Z"))
        #expect(ticket.validUntil == utc("2023-03-31T21:59:58Z"))
        #expect(ticket.issuedAt == utc("2023-01-23T12:13:08Z"))
        #expect(ticket.zones == ["5000/1"])
        #expect(ticket.details.first?.value == "Deutschland-Ticket (9999)")
        #expect(ticket.details.map(\.label).prefix(3) == ["product", "entitlement number", "holder"])
    }

    @Test("the three recovered payloads of expected.json decode to their values")
    func recoveredPayloads() throws {
        let cases = try VDVFixtures.recoveredPayloads()
        #expect(cases.count == 3)
        for entry in cases {
            let hex = try #require(entry["hex"] as? String)
            let entitlement = try VDVEntitlement(parsing: try #require([UInt8](hex: hex)))
            #expect(String(entitlement.entitlementNumber) == entry["ticketNumber"] as? String)
            #expect(entitlement.basicData?.serviceClass.description == entry["serviceClass"] as? String)
            if let issuer = entry["issuerId"] as? Int {
                #expect(entitlement.kvpOrganisationID == issuer)
            }
            if let begin = entry["begin"] as? String, let end = entry["end"] as? String {
                #expect(entitlement.validFrom.description == begin.replacingOccurrences(of: "T", with: " "))
                #expect(entitlement.validUntil.description == end.replacingOccurrences(of: "T", with: " "))
            }
            if let holder = entry["holder"] as? [String: String] {
                #expect(entitlement.traveller?.name?.givenName == holder["givenName"])
                #expect(entitlement.traveller?.name?.familyName == holder["familyName"])
            } else {
                #expect(entitlement.traveller?.name == nil)
            }
            _ = try entitlement.ticket()
        }
        // The details the JSON does not list: the birth date of the second, the shortened names of the third.
        let second = try VDVEntitlement(parsing: try #require([UInt8](hex: cases[1]["hex"] as? String ?? "")))
        #expect(second.traveller?.dateOfBirth == UICDay(year: 1996, month: 10, day: 14))
        #expect(second.product == .other(10_302))
        let third = try VDVEntitlement(parsing: try #require([UInt8](hex: cases[2]["hex"] as? String ?? "")))
        #expect(third.traveller?.name?.description == "K***e D****n")
        let first = try VDVEntitlement(parsing: try #require([UInt8](hex: cases[0]["hex"] as? String ?? "")))
        #expect(first.basicData?.priceCents == 2450)
        #expect(try first.ticket().holder == nil)
    }

    @Test("every shipped certificate file parses; certificates are known by their CHR, not their file name")
    func certificateFiles() throws {
        let files = try VDVFixtures.certificateFiles()
        #expect(files.count == 31)
        var mismatched: [String] = []
        for (name, bytes) in files {
            guard case .clear(let body, let signature) = try VDVCertificateEnvelope(parsingFile: bytes) else {
                Issue.record("\(name) should hold a clear body")
                continue
            }
            #expect(signature == nil)
            let certificate = try VDVCertificate(parsing: body, context: name)
            let reference = try #require(certificate.holderReference)
            if reference.hex + ".vdv-cert" != name { mismatched.append(name) }
            #expect(certificate.exponent == [0x00, 0x01, 0x00, 0x01])
        }
        #expect(
            mismatched == [
                "4445564456110416.vdv-cert", "4C55564456110921.vdv-cert", "4C55564456111021.vdv-cert",
            ])
        let root = try VDVFixtures.certificate("4555564456100106")
        #expect(root.isSelfSigned)
        #expect(root.profile == 7)
        #expect(root.keyBits == 1984)
        #expect(root.expiry == UICDay(year: 2021, month: 12, day: 1))
        #expect(root.algorithm == .sha1WithRSAEncryption)
        #expect(root.holderReference?.description == "EUVDV 10 01 06")
        let subCA = try VDVFixtures.certificate("4445564456110216")
        #expect(!subCA.isSelfSigned)
        #expect(subCA.authority == root.holderReference)
        #expect(subCA.keyBits == 1536)
        #expect(subCA.expiry == UICDay(year: 2026, month: 12, day: 1))
        #expect(try VDVFixtures.certificate("4C55564456110921").holderReference?.description == "DEVDV 11 09 21")
    }

    @Test("BER-TLV: two-byte tags, 81 and 82 lengths, and every length checked against the buffer")
    func tlv() throws {
        let bytes: [UInt8] = [0x7F, 0x21, 0x81, 0x03, 0x5F, 0x38, 0x00, 0x42, 0x82, 0x00, 0x01, 0xAA]
        let elements = try BERTLV.elements(in: bytes, context: "test")
        #expect(elements.map(\.tag) == [[0x7F, 0x21], [0x42]])
        #expect(elements[0].value == [0x5F, 0x38, 0x00])
        #expect(elements[1].value == [0xAA])
        #expect(elements[1].offset == 7)
        let inner = try BERTLV.elements(in: bytes, range: elements[0].valueOffset..<elements[0].end, context: "x")
        #expect(inner.map(\.tag) == [[0x5F, 0x38]])
        #expect(BERTLV(tag: [0x9E], value: [UInt8](repeating: 1, count: 128)).encoded.prefix(3) == [0x9E, 0x81, 0x80])

        let broken: [([UInt8], String)] = [
            ([0x9E, 0x81, 0x80, 0x00], "claims 128 bytes but only 1 follow"),
            ([0x9E, 0x05, 0x00], "at byte 0"),
            ([0x42, 0x01, 0x00, 0x7F], "ends inside the multi-byte tag at byte 3"),
            ([0x42, 0x00, 0x9A], "before its length"),
            ([0x9A, 0x82, 0x01], "ends inside the length at byte 1"),
            ([0x9A, 0x80, 0x00, 0x00], "indefinite length"),
            ([0x9A, 0x83, 0x00, 0x00, 0x01], "at byte 1"),
            ([0x7F, 0xFF, 0xFF, 0x01, 0x00], "longer than 3 bytes"),
        ]
        for (input, fragment) in broken {
            do {
                _ = try BERTLV.elements(in: input, context: "the VDV barcode")
                Issue.record("\(input.hexString) should be malformed")
            } catch {
                #expect(error.code == .malformed)
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
    }

    @Test("truncated, overrun or rearranged barcodes are malformed, never a crash")
    func brokenBarcodes() throws {
        let payload = try VDVFixtures.ticket()
        for count in 0..<payload.count {
            #expect(throws: FormatError.self) { try VDVBarcode(parsing: Array(payload.prefix(count))) }
        }
        // The 9A length raised by one: it now overruns into the certificate, and everything shifts.
        var overrun = payload
        overrun[132] = 0x7F
        #expect(throws: FormatError.self) { try VDVBarcode(parsing: overrun) }
        var wrongReference = payload
        wrongReference[353] = 0x07
        #expect(throws: FormatError.self) { try VDVBarcode(parsing: Array(wrongReference.dropLast())) }
        #expect(throws: FormatError.self) { try VDVBarcode(parsing: payload + [0x00, 0x00]) }
        do {
            _ = try PayloadDetector().recognise([0xEF, 0x03, 0x90, 0x01, 0x02])
            Issue.record("several authorisations should be unsupported")
        } catch {
            #expect(error.code == .unsupported)
        }
        do {
            _ = try PayloadDetector().recognise([0x7F, 0x70, 0x00])
            Issue.record("MOTICS should be unsupported")
        } catch {
            #expect(error.code == .unsupported)
        }
        // Every single-byte corruption of the envelope parses (its signature then decides) or is refused as
        // malformed or unsupported with a reason.
        var refused = 0
        for offset in 0..<payload.count {
            var corrupted = payload
            corrupted[offset] ^= 0xA5
            do {
                _ = try VDVBarcode(parsing: corrupted)
            } catch {
                refused += 1
                #expect(error.code == .malformed || error.code == .unsupported, "byte \(offset): \(error)")
                #expect(!error.message.isEmpty)
            }
        }
        #expect(refused > 0)
    }

    @Test("ticket data that is cut, overrun or unterminated is malformed, never a crash")
    func brokenTicketData() throws {
        let hex = try #require(try VDVFixtures.recoveredPayloads()[1]["hex"] as? String)
        let data = try #require([UInt8](hex: hex))
        for count in 0..<data.count {
            #expect(throws: FormatError.self) { try VDVEntitlement(parsing: Array(data.prefix(count))) }
        }
        var overrun = data
        overrun[19] = 0x7F  // the 85 length now runs past the trailer
        #expect(throws: FormatError.self) { try VDVEntitlement(parsing: overrun) }
        // Any flipped bits: a ticket, or a malformed or unsupported verdict with a reason.
        var refused = 0
        for offset in 0..<data.count {
            for flip: UInt8 in [0x01, 0x80, 0xFF] {
                var corrupted = data
                corrupted[offset] ^= flip
                do {
                    _ = try VDVEntitlement(parsing: corrupted).ticket()
                } catch {
                    refused += 1
                    #expect(error.code == .malformed || error.code == .unsupported, "byte \(offset): \(error)")
                    #expect(!error.message.isEmpty)
                }
            }
        }
        #expect(refused > 0)
    }

    @Test("compact date-time: fields, Europe/Berlin offsets, and the repeated October hour never lengthens validity")
    func compactDateTime() throws {
        let begin = VDVDateTime(raw: 0x4261_0000)
        #expect(begin.description == "2023-03-01 00:00:00")
        let end = VDVDateTime(raw: 0x427F_BF7D)
        #expect(end.description == "2023-03-31 23:59:58")
        #expect(end.instant(.earlier) == utc("2023-03-31T21:59:58Z"))
        #expect(VDVDateTime(year: 2023, month: 3, day: 31, hour: 23, minute: 59, second: 58) == end)
        // 02:30 on 2023-10-29 happens twice: at 00:30 UTC (CEST) and at 01:30 UTC (CET).
        let repeated = VDVDateTime(year: 2023, month: 10, day: 29, hour: 2, minute: 30, second: 0)
        #expect(repeated.instant(.earlier) == utc("2023-10-29T00:30:00Z"))
        #expect(repeated.instant(.later) == utc("2023-10-29T01:30:00Z"))
        // Hour 24 rolls into the next day; month 13, day 31 of April, minute 60 are no dates.
        #expect(
            VDVDateTime(year: 2023, month: 1, day: 31, hour: 24, minute: 0, second: 0).instant(.earlier)
                == utc("2023-01-31T23:00:00Z"))
        #expect(VDVDateTime(year: 2023, month: 13, day: 1, hour: 0, minute: 0, second: 0).instant(.earlier) == nil)
        #expect(VDVDateTime(year: 2023, month: 4, day: 31, hour: 0, minute: 0, second: 0).instant(.earlier) == nil)
        #expect(VDVDateTime(year: 2023, month: 4, day: 1, hour: 0, minute: 60, second: 0).instant(.earlier) == nil)
        #expect(VDVDateTime(raw: 0).isZero)
    }

    @Test("ISO 9796-2: a block is built and opened again; header, trailer and hash are each checked")
    func iso9796() throws {
        let message = Array((0..<121).map { UInt8($0) })
        let (block, remainder) = try #require(ISO9796_2.block(for: message, blockByteCount: 128, sha1: sha1))
        #expect(block.count == 128)
        #expect(remainder.count == 15)
        #expect(try ISO9796_2.recoverMessage(block: block, remainder: remainder, sha1: sha1) == message)
        var header = block
        header[0] = 0x4A
        #expect(throws: ISO9796_2.RecoveryFailure.header(0x4A)) {
            try ISO9796_2.recoverMessage(block: header, remainder: remainder, sha1: sha1)
        }
        var trailer = block
        trailer[127] = 0xCC
        #expect(throws: ISO9796_2.RecoveryFailure.trailer(0xCC)) {
            try ISO9796_2.recoverMessage(block: trailer, remainder: remainder, sha1: sha1)
        }
        var body = block
        body[50] ^= 0x10
        #expect(throws: ISO9796_2.RecoveryFailure.hashMismatch) {
            try ISO9796_2.recoverMessage(block: body, remainder: remainder, sha1: sha1)
        }
        #expect(throws: ISO9796_2.RecoveryFailure.blockTooShort(3)) {
            try ISO9796_2.recoverMessage(block: [0x6A, 0, 0xBC], remainder: [], sha1: sha1)
        }
        #expect(ISO9796_2.block(for: Array(message.prefix(106)), blockByteCount: 128, sha1: sha1) == nil)
    }

    @Test("the detector sends 9E payloads to VDV and nothing else: UIC and FC1 samples keep their formats")
    func detectorRouting() throws {
        let detector = PayloadDetector()
        for name in ["db-city-mobil-v1-sha1.bin", "db-deutschland-ticket-2025.bin"] {
            guard case .uic = try detector.recognise(try Fixtures.bytes("uic/\(name)")) else {
                Issue.record("\(name) should stay a UIC container")
                continue
            }
        }
        guard case .vdv = try detector.recognise(try VDVFixtures.ticket()) else {
            Issue.record("the VRR barcode should be VDV")
            return
        }
        // A byte other than 9E in front of the same barcode is not taken for VDV.
        #expect(throws: FormatError.self) { try detector.recognise([0x9F] + (try VDVFixtures.ticket()).dropFirst()) }
    }

    @Test("areas of plain tariff-point lists: 3- and 2-byte ids in both byte orders, read alike as ids and as zones")
    func plainListAreas() throws {
        let hex = try #require(try VDVFixtures.recoveredPayloads()[0]["hex"] as? String)
        let data = try #require([UInt8](hex: hex))
        let product = try BERTLV.element(in: data, at: 18, end: data.count - 5, context: "the ticket data")
        let elements = try BERTLV.elements(in: data, range: product.valueOffset..<product.end, context: "product")
        #expect(elements.contains { $0.tag == [0xDC] })
        /// The ticket data with its area (DC) replaced, organisation 6100 (0x17D4), zero-padded before the
        /// trailer to VDV's minimum size.
        func withArea(type: UInt8, ids: [UInt8]) throws -> VDVEntitlement {
            let area = BERTLV(tag: [0xDC], value: [type, 0x17, 0xD4] + ids)
            let productData = elements.map { $0.tag == [0xDC] ? area : $0 }.flatMap(\.encoded)
            var changed = Array(data[..<18]) + BERTLV(tag: [0x85], value: productData).encoded
            changed += data[product.end..<(data.count - 5)]
            changed += [UInt8](repeating: 0, count: max(0, VDVEntitlement.minimumByteCount - changed.count - 5))
            return try VDVEntitlement(parsing: changed + data.suffix(5))
        }
        // Types 0x0D–0x10 (vdv-ka.md): type mod 4 = 1 → 3-byte big-endian, 2 → 3-byte little-endian,
        // 3 → 2-byte big-endian, 0 → 2-byte little-endian.
        let cases: [(type: UInt8, ids: [UInt8], expected: [Int])] = [
            (0x0D, [0x01, 0x02, 0x03, 0x00, 0x00, 0x07], [0x010203, 7]),
            (0x0E, [0x01, 0x02, 0x03, 0x07, 0x00, 0x00], [0x030201, 7]),
            (0x0F, [0x01, 0x02, 0x00, 0x07], [0x0102, 7]),
            (0x10, [0x01, 0x02, 0x07, 0x00], [0x0201, 7]),
        ]
        for (type, ids, expected) in cases {
            let entitlement = try withArea(type: type, ids: ids)
            #expect(entitlement.area?.ids == expected, "type \(type)")
            #expect(try entitlement.ticket().zones == expected.map { "6100/\($0)" }, "type \(type)")
        }
        // Bytes that are not a whole number of ids, or another type: no ids, and no zones (the whole network).
        for (type, ids) in [(UInt8(0x0D), [UInt8](repeating: 1, count: 4)), (0x11, [0x01, 0x02])] {
            let entitlement = try withArea(type: type, ids: ids)
            #expect(entitlement.area != nil)
            #expect(entitlement.area?.ids == nil, "type \(type)")
            #expect(try entitlement.ticket().zones == nil, "type \(type)")
        }
    }

    @Test("traveller names: Latin-1 bytes, trailing zeros, a name without '#', and the identification medium")
    func travellerNames() throws {
        let hex = try #require(try VDVFixtures.recoveredPayloads()[1]["hex"] as? String)
        var data = try #require([UInt8](hex: hex))
        // "Katie#Dragon" → "Jürgen#Öz" in Latin-1 (ü = FC, Ö = D6), padded with zeros to the same 12 bytes.
        let katie = Array("Katie".utf8)
        let nameStart = try #require(data.indices.first { data[$0...].starts(with: katie) })
        let latin1: [UInt8] = [0x4A, 0xFC, 0x72, 0x67, 0x65, 0x6E, 0x23, 0xD6, 0x7A, 0x00, 0x00, 0x00]
        data.replaceSubrange(nameStart..<(nameStart + 12), with: latin1)
        let entitlement = try VDVEntitlement(parsing: data)
        #expect(entitlement.traveller?.name == .split(given: "Jürgen", family: "Öz"))
        #expect(try entitlement.ticket().holder == "Jürgen Öz, born 14.10.1996")

        #expect(VDVTravellerName("Mustermann") == .whole("Mustermann"))
        #expect(VDVTravellerName("Mustermann")?.familyName == "Mustermann")
        #expect(VDVTravellerName("") == nil)
        #expect(VDVTravellerName("A@B")?.description == "A@B")
        let element = BERTLV(tag: [0xD7], value: Array("P123456789".utf8)).encoded
        let medium = VDVIdentificationMedium(
            element, try BERTLVSpan(in: element, at: 0, end: element.count, context: "the medium"))
        #expect(medium.description == "ID card ****6789")
    }
}
