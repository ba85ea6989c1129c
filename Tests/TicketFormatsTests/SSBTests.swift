import FareCore
import Foundation
import SeededRandom
import TestSupport
import Testing

@testable import TicketFormats

/// The SŽ sample tickets of the fixture tree (`ssb`, copied from shared/fixtures/formats/ssb).
enum SSBFixtures {
    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("ssb/\(name)") }

    static let nrt = "sz-nrt.bin"
    static let group = "sz-group.bin"
}

/// A decoded value as expected.json writes it.
private enum Value: Equatable {
    case int(Int)
    case bool(Bool)
    case text(String)
}

@Suite("ERA SSB decoding")
struct SSBTests {
    /// The value of `field` (expected.json's name) in `ticket`, or nil when the test does not know the name.
    private func value(_ field: String, of ticket: SSBTicket) -> Value? {
        let common = ticket.common
        let stations = ticket.stations
        var returnJourney: Bool?
        var firstDay: Int?
        var lastDay: Int?
        var infoCode: Int?
        var text: String?
        var groupName: String?
        var counterMark: Int?
        switch ticket.payload {
        case .nonReservation(_, let body):
            (returnJourney, firstDay, lastDay, infoCode, text) =
                (body.returnJourney, body.firstDayOfValidity, body.lastDayOfValidity, body.infoCode, body.text)
        case .group(_, let body):
            (returnJourney, firstDay, lastDay, infoCode, text) =
                (body.returnJourney, body.firstDayOfValidity, body.lastDayOfValidity, body.infoCode, body.text)
            (groupName, counterMark) = (body.groupName, body.counterMarkNumber)
        default:
            break
        }
        var table: String?
        if case .numeric(let codeTable, _, _)? = stations { table = codeTable.description }
        switch field {
        case "version": return .int(ticket.version)
        case "issuer": return .int(ticket.issuerCode)
        case "keyId": return ticket.keyID.map(Value.int)
        case "ticketType": return ticket.ticketType.map { .text($0.description) }
        case "numberOfAdults": return common.map { .int($0.adults) }
        case "numberOfChildren": return common.map { .int($0.children) }
        case "specimen": return common.map { .bool($0.specimen) }
        case "class": return common.map { .text($0.travelClass.description) }
        case "ticketNumber": return common.map { .text($0.ticketNumber) }
        case "issuingYearInDecade": return common.map { .int($0.issuingYearInDecade) }
        case "issuingDayOfYear": return common.map { .int($0.issuingDayOfYear) }
        case "returnJourney": return returnJourney.map(Value.bool)
        case "firstDayOfValidity": return firstDay.map(Value.int)
        case "lastDayOfValidity": return lastDay.map(Value.int)
        case "stationsAlphanumeric": return stations.map { .bool($0.isAlphanumeric) }
        case "stationCodeTable": return table.map(Value.text)
        case "departureStation": return stations.map { .text($0.departure) }
        case "arrivalStation": return stations.map { .text($0.arrival) }
        case "infoCode": return infoCode.map(Value.int)
        case "text": return text.map(Value.text)
        case "groupName": return groupName.map(Value.text)
        case "counterMarkNumber": return counterMark.map(Value.int)
        default: return nil
        }
    }

    @Test("both SŽ samples decode to every value of expected.json", arguments: [SSBFixtures.nrt, SSBFixtures.group])
    func expectedValues(_ name: String) throws {
        let json = try JSONSerialization.jsonObject(with: Data(try SSBFixtures.bytes("expected.json")))
        let expected = try #require((json as? [String: Any])?[name] as? [String: Any])
        let ticket = try SSBTicket(decoding: try SSBFixtures.bytes(name))
        var checked = 0
        for (field, raw) in expected {
            // The signature's value is the verifier's to check (VerificationTests).
            if field == "signature" { continue }
            let actual = try #require(value(field, of: ticket), "no decoded value for \(field)")
            let wanted: Value? =
                switch actual {
                case .int: (raw as? Int).map(Value.int)
                case .bool: (raw as? Bool).map(Value.bool)
                case .text: (raw as? String).map(Value.text)
                }
            #expect(actual == wanted, "\(name): \(field)")
            checked += 1
        }
        #expect(checked == expected.count - 1)
    }

    @Test("the SŽ NRT sample maps onto a ticket valid on 2022-07-01 (Central European summer time)")
    func nrtTicket() throws {
        let frame = try SSBFrame(parsing: try SSBFixtures.bytes(SSBFixtures.nrt))
        #expect(frame.signatureForm == .raw28)
        #expect(frame.signedData.count == 58)
        #expect(frame.signature?.count == 56)
        let ticket = try ERASSB.ticket(
            from: try SSBTicket(frame: frame), signatureForm: frame.signatureForm,
            inspectedAt: utc("2026-11-23T10:00:00Z"))
        #expect(ticket.format == .eraSSB)
        #expect(ticket.issuer == "1179")
        #expect(ticket.ticketID.bytes == Array("6140001343".utf8))
        #expect(ticket.issuedAt == utc("2022-06-30T22:00:00Z"))
        #expect(ticket.validFrom == utc("2022-06-30T22:00:00Z"))
        #expect(ticket.validUntil == utc("2022-07-01T21:59:59Z"))
        #expect(ticket.product == "non-reservation ticket")
        #expect(ticket.passengers == 1)
        #expect(ticket.category == "adult")
        let details = Dictionary(ticket.details.map { ($0.label, $0.value) }, uniquingKeysWith: { first, _ in first })
        #expect(details["class"] == "second")
        #expect(details["stations"] == "7943100 → 8103171 (NRT code table)")
        #expect(details["issued"] == "01.07.2022 (year digit 2, day 182)")
        #expect(details["signature"] == "raw r‖s (28 + 28 bytes)")
        #expect(ticket.details.first?.label == "SSB version")
    }

    @Test("the SŽ group sample maps onto a ticket valid 2024-04-21 to 2024-05-05 for 12 people")
    func groupTicket() throws {
        let ssb = try SSBTicket(decoding: try SSBFixtures.bytes(SSBFixtures.group))
        let ticket = try ERASSB.ticket(from: ssb, inspectedAt: utc("2026-11-23T10:00:00Z"))
        #expect(ticket.issuedAt == utc("2024-04-04T22:00:00Z"))
        #expect(ticket.validFrom == utc("2024-04-20T22:00:00Z"))
        #expect(ticket.validUntil == utc("2024-05-05T21:59:59Z"))
        #expect(ticket.product == "group ticket")
        #expect(ticket.passengers == 12)
        #expect(ticket.category == nil)
        #expect(ticket.ticketID.bytes == Array("5030020964".utf8))
    }

    @Test("the issuing year is the latest with the year digit whose issuing day is not in the future")
    func issuingYear() {
        // Day 60 is 1 March in 2025 (not a leap year) and 29 February in 2016.
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 5, dayOfYear: 60, inspectedAt: utc("2025-03-05T12:00:00Z"))
                == UICDay(year: 2025, month: 3, day: 1))
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 5, dayOfYear: 60, inspectedAt: utc("2025-02-01T12:00:00Z"))
                == UICDay(year: 2015, month: 3, day: 1))
        // A ticket issued in December and inspected in January of the next year stays in the past.
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 5, dayOfYear: 365, inspectedAt: utc("2026-01-03T12:00:00Z"))
                == UICDay(year: 2025, month: 12, day: 31))
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 6, dayOfYear: 366, inspectedAt: utc("2026-11-23T12:00:00Z"))
                == UICDay(year: 2016, month: 12, day: 31))
        // No year ending in 3 is a leap year; day 0 is no day.
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 3, dayOfYear: 366, inspectedAt: utc("2026-11-23T12:00:00Z"))
                == nil)
        #expect(
            SSBCalendar.issuingDay(yearInDecade: 3, dayOfYear: 0, inspectedAt: utc("2026-11-23T12:00:00Z"))
                == nil)
    }

    @Test("an issuing day that no year with the digit has is malformed")
    func impossibleIssuingDay() throws {
        var frame = try SSBFixtures.bytes(SSBFixtures.nrt)
        var writer = SSBBitWriter(byteCount: frame.count)
        writer.bytes = frame
        writer.put(3, at: 132, width: 4)
        writer.put(366, at: 136, width: 9)
        frame = writer.bytes
        let ssb = try SSBTicket(decoding: frame)
        #expect(
            throws: FormatError.malformed(
                "the issuing day 366 (bits 136–144) with year digit 3 (bits 132–135) is no day of such a year")
        ) {
            try ERASSB.ticket(from: ssb, inspectedAt: utc("2026-11-23T10:00:00Z"))
        }
    }

    // MARK: - Detection

    @Test("the detector takes the SŽ samples for SSB, and the UIC and FC1 payloads for what they are")
    func detection() throws {
        let detector = PayloadDetector()
        for name in [SSBFixtures.nrt, SSBFixtures.group] {
            guard case .ssb(let frame) = try detector.recognise(try SSBFixtures.bytes(name)) else {
                Issue.record("\(name) is not recognised as SSB")
                continue
            }
            #expect(frame.issuerCode == 1179 && frame.keyID == 1 && frame.version == 3)
        }
        for name in ["db-city-mobil-v1-sha1.bin", "db-supersparpreis-v2-sha256.bin", "db-deutschland-ticket-2025.bin"] {
            guard case .uic = try detector.recognise(try Fixtures.bytes("uic/\(name)")) else {
                Issue.record("\(name) is not recognised as UIC 918.3")
                continue
            }
        }
        for transport: FC1.Transport in [.text(prefix: "FC1:"), .zlib, .plain] {
            guard case .fc1 = try detector.recognise(FC1.encode(cose: FC1Tests.message(), transport: transport)) else {
                Issue.record("FC1 \(transport) is not recognised as FC1")
                continue
            }
        }
    }

    @Test("only binary payloads of the frame sizes with a matching version nibble count as SSB")
    func detectionRule() throws {
        let nrt = try SSBFixtures.bytes(SSBFixtures.nrt)
        #expect(ERASSB.isFrame(nrt))
        #expect(!ERASSB.isFrame(Array(nrt.dropLast())))
        #expect(!ERASSB.isFrame(nrt + [0]))
        var version4 = nrt
        version4[0] = 0x41
        #expect(!ERASSB.isFrame(version4))
        var version2 = nrt
        version2[0] = 0x21
        #expect(ERASSB.isFrame(version2))
        var version1 = Array(nrt.prefix(107))
        #expect(!ERASSB.isFrame(version1))
        version1[0] = 0x11
        #expect(ERASSB.isFrame(version1))
        // 114 bytes of text that starts like a version 3 frame ("3…"): text, handled by the prefix rule.
        let text = Array(("3A:" + String(repeating: "X", count: 111)).utf8)
        #expect(!ERASSB.isFrame(text))
        #expect(throws: FormatError.self) { try PayloadDetector().recognise(text) }
        #expect(!ERASSB.isFrame(Array("#UT01".utf8) + [UInt8](repeating: 0x30, count: 109)))
    }

    @Test("every single-bit flip and 20,000 seeded random frames decode and map, or throw FormatError")
    func arbitraryFrames() throws {
        let times = ["2000-01-01T00:00:00Z", "2026-11-23T10:00:00Z", "2099-12-31T23:59:59Z"].map { utc($0) }
        var frames: [[UInt8]] = []
        for name in [SSBFixtures.nrt, SSBFixtures.group] {
            let payload = try SSBFixtures.bytes(name)
            for bit in 0..<(payload.count * 8) {
                var altered = payload
                altered[bit / 8] ^= 0x80 >> UInt8(bit % 8)
                frames.append(altered)
            }
        }
        var random = SeededRandomNumberGenerator(seed: 0x55B)
        for index in 0..<20_000 {
            // Versions 1, 2 and 3 at their sizes, and now and then a version farecheck does not know.
            let version = [1, 2, 3, 3, 3, 7][index % 6]
            var frame = (0..<(version == 1 ? 107 : 114)).map { _ in UInt8.random(in: 0...255, using: &random) }
            frame[0] = frame[0] & 0x0F | UInt8(version << 4)
            frames.append(frame)
        }
        var decoded = 0
        for frame in frames {
            guard let ticket = try? SSBTicket(decoding: frame) else { continue }
            for time in times {
                do {
                    let mapped = try ERASSB.ticket(from: ticket, inspectedAt: time)
                    #expect(mapped.format == .eraSSB)
                    decoded += 1
                } catch {
                    #expect(error.code == .malformed)
                }
            }
        }
        #expect(decoded > 10_000)
    }

    @Test("base64 text of a frame (Eurostar's transport) is recognised as that frame")
    func base64Transport() throws {
        let nrt = try SSBFixtures.bytes(SSBFixtures.nrt)
        let text = Array(Data(nrt).base64EncodedString().utf8)
        #expect(text.count == 152)
        guard case .ssb(let frame) = try PayloadDetector().recognise(text) else {
            Issue.record("base64 text not recognised as SSB")
            return
        }
        #expect(frame.bytes == nrt)
        guard case .ssb(let withLineBreak) = try PayloadDetector().recognise(text + [0x0D, 0x0A]) else {
            Issue.record("base64 text with a line break not recognised as SSB")
            return
        }
        #expect(withLineBreak.bytes == nrt)
        // Not base64, the wrong length, or base64 of something else: not SSB.
        #expect(ERASSB.base64Frame(Array(text.dropLast(4))) == nil)
        var broken = text
        broken[40] = UInt8(ascii: "*")
        #expect(ERASSB.base64Frame(broken) == nil)
        let other = Array(Data([UInt8](repeating: 0x41, count: 114)).base64EncodedString().utf8)
        #expect(ERASSB.base64Frame(other) == nil)
        #expect(throws: FormatError.self) { try PayloadDetector().recognise(other) }
    }

    // MARK: - Signature layouts

    @Test("the signature part is read as DER, as 20 + 20 bytes, or as 28 + 28 bytes")
    func signatureForms() throws {
        let data = Array(try SSBFixtures.bytes(SSBFixtures.nrt).prefix(58))
        let r = [UInt8](repeating: 0x91, count: 20)
        let s = [UInt8](repeating: 0x12, count: 20)
        let der: [UInt8] = [0x30, 0x2D, 0x02, 0x15, 0x00] + r + [0x02, 0x14] + s
        let derFrame = try SSBFrame(parsing: data + der + [UInt8](repeating: 0, count: 56 - der.count))
        #expect(derFrame.signatureForm == .der)
        #expect(derFrame.signature == der)

        let shortFrame = try SSBFrame(parsing: data + r + s + [UInt8](repeating: 0, count: 16))
        #expect(shortFrame.signatureForm == .raw20)
        #expect(shortFrame.signature == r + s)

        // Raw bytes that begin like DER but whose lengths do not add up stay raw.
        var raw = [UInt8](repeating: 0x5A, count: 56)
        raw[0] = 0x30
        raw[1] = 0x2D
        raw[2] = 0x02
        let rawFrame = try SSBFrame(parsing: data + raw)
        #expect(rawFrame.signatureForm == .raw28)
        #expect(rawFrame.signature == raw)
    }

    @Test("frames of the wrong size for their version are malformed, unknown versions unsupported")
    func frameSizes() throws {
        let nrt = try SSBFixtures.bytes(SSBFixtures.nrt)
        #expect(throws: FormatError.malformed("an SSB version 3 frame has 114 bytes, this one 113")) {
            try SSBFrame(parsing: Array(nrt.dropLast()))
        }
        #expect(throws: FormatError.malformed("the SSB payload is empty")) { try SSBFrame(parsing: []) }
        var version5 = nrt
        version5[0] = 0x51
        #expect(throws: FormatError.self) { try SSBFrame(parsing: version5) }
        #expect((try? SSBFrame(parsing: version5)) == nil)
    }
}
