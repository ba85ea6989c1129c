import FareCore

/// The ticket type of a version 3 frame (bits 22–26).
public enum SSBTicketType: Sendable, Hashable, CustomStringConvertible {
    /// 1: IRT, RES, BOA (integrated reservation, reservation, boarding pass).
    case reservation
    /// 2: NRT, non-reservation ticket.
    case nonReservation
    /// 3: GRP, group ticket.
    case group
    /// 4: RPT, rail pass.
    case pass
    /// 21–31: laid out by bilateral agreement of the issuer.
    case nonUIC(Int)
    /// 0 and 5–20: not defined by B.12.
    case undefined(Int)

    /// The type for a 5-bit code.
    public init(code: Int) {
        switch code {
        case 1: self = .reservation
        case 2: self = .nonReservation
        case 3: self = .group
        case 4: self = .pass
        case 21...31: self = .nonUIC(code)
        default: self = .undefined(code)
        }
    }

    /// The 5-bit code.
    public var code: Int {
        switch self {
        case .reservation: 1
        case .nonReservation: 2
        case .group: 3
        case .pass: 4
        case .nonUIC(let code), .undefined(let code): code
        }
    }

    /// The type as the UIC names it, e.g. `UIC_2_NRT (non-reservation ticket)`.
    public var description: String {
        switch self {
        case .reservation: "UIC_1_IRT_RES_BOA (reservation)"
        case .nonReservation: "UIC_2_NRT (non-reservation ticket)"
        case .group: "UIC_3_GRP (group ticket)"
        case .pass: "UIC_4_RPT (rail pass)"
        case .nonUIC(let code): "NONUIC_\(code) (issuer-defined)"
        case .undefined(let code): "undefined type \(code)"
        }
    }
}

/// The class of travel (6 bits).
public enum SSBClass: Sendable, Hashable, CustomStringConvertible {
    /// 0: no class.
    case none
    /// 1.
    case first
    /// 2.
    case second
    /// 3–9 and 10–35: classes written `3`…`9` and `A`…`Z`.
    case named(Character)
    /// 36–63: other codes of the UIC's list, kept as numbers.
    case other(Int)

    /// The class for a 6-bit code.
    public init(code: Int) {
        switch code {
        case 0: self = .none
        case 1: self = .first
        case 2: self = .second
        case 3...9: self = .named(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: 0x30 + code))))
        case 10...35: self = .named(Character(Unicode.Scalar(UInt8(truncatingIfNeeded: 0x41 + code - 10))))
        default: self = .other(code)
        }
    }

    /// `none`, `first`, `second`, `class 3`, `class A`, `code 40`.
    public var description: String {
        switch self {
        case .none: "none"
        case .first: "first"
        case .second: "second"
        case .named(let name): "class \(name)"
        case .other(let code): "code \(code)"
        }
    }
}

/// Which station code list numeric stations come from (4 bits).
public enum SSBStationCodeTable: Sendable, Hashable, CustomStringConvertible {
    /// 1: the NRT code list (UIC station numbers).
    case nrt
    /// 2: the reservation code list.
    case reservation
    /// Any other value, unassigned.
    case other(Int)

    /// The table for a 4-bit code.
    public init(code: Int) {
        switch code {
        case 1: self = .nrt
        case 2: self = .reservation
        default: self = .other(code)
        }
    }

    /// `NRT`, `RESERVATION`, `table 7`.
    public var description: String {
        switch self {
        case .nrt: "NRT"
        case .reservation: "RESERVATION"
        case .other(let code): "table \(code)"
        }
    }
}

/// The 61-bit station block of types 1, 2 and 3.
public enum SSBStations: Sendable, Hashable {
    /// Flag 0: two numbers (28 bits each) from a code table.
    case numeric(table: SSBStationCodeTable, departure: Int, arrival: Int)
    /// Flag 1: two 5-character codes. DB (1080) and SNCB (1088) put a number into these 30 bits instead; it is
    /// kept too (`departureNumber`, `arrivalNumber`), and shown modulo 10,000,000 as a UIC station code.
    case alphanumeric(departure: String, arrival: String, departureNumber: Int, arrivalNumber: Int)

    /// Whether the alphanumeric flag is set.
    public var isAlphanumeric: Bool {
        if case .alphanumeric = self { return true }
        return false
    }

    /// The departure station as text: the number, or the 5-character code.
    public var departure: String {
        switch self {
        case .numeric(_, let departure, _): String(departure)
        case .alphanumeric(let departure, _, _, _): departure
        }
    }

    /// The arrival station as text: the number, or the 5-character code.
    public var arrival: String {
        switch self {
        case .numeric(_, _, let arrival): String(arrival)
        case .alphanumeric(_, let arrival, _, _): arrival
        }
    }
}

/// The common part of ticket types 1–4 (bits 27–144).
public struct SSBCommonPart: Sendable, Hashable {
    /// Number of adults (7 bits).
    public var adults: Int
    /// Number of children (7 bits).
    public var children: Int
    /// Whether this is a specimen (test) ticket.
    public var specimen: Bool
    /// The class of travel.
    public var travelClass: SSBClass
    /// The ticket control number (14 characters, trailing spaces removed).
    public var ticketNumber: String
    /// The last digit of the issuing year.
    public var issuingYearInDecade: Int
    /// The issuing day, 1 January = 1.
    public var issuingDayOfYear: Int
}

/// Type 1: IRT, RES, BOA.
public struct SSBReservation: Sendable, Hashable {
    /// The ticket sub-type (2 bits); B.12's meaning of the values is not in the sources.
    public var subType: Int
    /// The stations.
    public var stations: SSBStations
    /// The departure date, in days after the issuing date.
    public var departureDay: Int
    /// The departure time, in minutes after midnight.
    public var departureTime: Int
    /// The train number (5 characters).
    public var trainNumber: String
    /// The coach number.
    public var coach: Int
    /// The seat or berth (3 characters).
    public var seat: String
    /// Whether the seat is overbooked.
    public var overbooking: Bool
    /// The information message code.
    public var infoCode: Int
    /// The open text (27 characters).
    public var text: String
}

/// Type 2: NRT.
public struct SSBNonReservation: Sendable, Hashable {
    /// Whether the ticket includes the return journey.
    public var returnJourney: Bool
    /// The first day of validity, in days after the issuing date.
    public var firstDayOfValidity: Int
    /// The last day of validity, in days after the issuing date (not after the first day).
    public var lastDayOfValidity: Int
    /// The stations.
    public var stations: SSBStations
    /// The information message code.
    public var infoCode: Int
    /// The open text (37 characters).
    public var text: String
}

/// Type 3: GRP.
///
/// The countermark is read with 9 bits (UIC Java; it fills the 464 bits exactly); kitinerary and zuegli read 8.
public struct SSBGroup: Sendable, Hashable {
    /// Whether the ticket includes the return journey.
    public var returnJourney: Bool
    /// The first day of validity, in days after the issuing date.
    public var firstDayOfValidity: Int
    /// The last day of validity, in days after the issuing date.
    public var lastDayOfValidity: Int
    /// The stations.
    public var stations: SSBStations
    /// The name of the group leader (12 characters).
    public var groupName: String
    /// The countermark number (9 bits).
    public var counterMarkNumber: Int
    /// The information message code.
    public var infoCode: Int
    /// The open text (24 characters).
    public var text: String
}

/// Type 4: RPT.
public struct SSBPass: Sendable, Hashable {
    /// The kind of pass.
    public enum Kind: Sendable, Hashable, CustomStringConvertible {
        /// 1: Interrail.
        case interrail
        /// 2: Eurail Europe.
        case eurailEurope
        /// 3: Eurail Overseas.
        case eurailOverseas
        /// 0: not assigned.
        case other(Int)

        init(code: Int) {
            switch code {
            case 1: self = .interrail
            case 2: self = .eurailEurope
            case 3: self = .eurailOverseas
            default: self = .other(code)
            }
        }

        /// `Interrail`, `Eurail Europe`, `Eurail Overseas`, `pass sub-type 0`.
        public var description: String {
            switch self {
            case .interrail: "Interrail"
            case .eurailEurope: "Eurail Europe"
            case .eurailOverseas: "Eurail Overseas"
            case .other(let code): "pass sub-type \(code)"
            }
        }
    }

    /// The pass sub-type.
    public var kind: Kind
    /// The first day of validity after the issuing date; 0 = open date (a pass still to be activated).
    public var firstDayOfValidity: Int
    /// The last day of validity after the issuing date (for Overseas passes: the latest end).
    public var lastDayOfValidity: Int
    /// The number of days of travel allowed.
    public var travelDays: Int
    /// Country codes 1–5 (100 = all countries; above 100 zones); 0 means none.
    public var countries: [Int]
    /// Whether the pass is printed on two pages.
    public var secondPage: Bool
    /// The information message code.
    public var infoCode: Int
    /// The open text (40 characters).
    public var text: String
}

/// Types 21–31: bits 27–463 are laid out by the issuer's bilateral agreements; farecheck keeps them as they are.
public struct SSBNonUIC: Sendable, Hashable {
    /// The ticket type code (21–31).
    public var type: Int
    /// Bits 27–463 (437 bits), left-aligned in 55 bytes (the last 3 bits zero).
    public var data: [UInt8]
}

/// A station of versions 1 and 2: a number or a 5-character name.
public enum SSBLegacyStation: Sendable, Hashable, CustomStringConvertible {
    /// Station type bit 1: a station number (30 bits).
    case number(Int)
    /// Station type bit 0: a 5-character name.
    case name(String)

    /// The number or the name.
    public var description: String {
        switch self {
        case .number(let number): String(number)
        case .name(let name): name
        }
    }
}

/// A version 1 or 2 ticket (TAP TSI B.6 appendix C.1 and its keyed successor), laid out as kitinerary reads it.
public struct SSBLegacyTicket: Sendable, Hashable {
    /// The RCT2 type indicator (zuegli: return included).
    public var rct2Type: Bool
    /// Number of tickets.
    public var numberOfTickets: Int
    /// Number of adults.
    public var adults: Int
    /// Number of children.
    public var children: Int
    /// First day of validity, as a day of the year (no year is given).
    public var firstDayOfValidity: Int
    /// Last day of validity, as a day of the year.
    public var lastDayOfValidity: Int
    /// The customer number type bit (zuegli: 1 = individual, 0 = corporate frequent-traveller id).
    public var customerNumberType: Bool
    /// The customer number (47 bits).
    public var customerNumber: Int
    /// The departure station.
    public var departureStation: SSBLegacyStation
    /// The arrival station.
    public var arrivalStation: SSBLegacyStation
    /// The departure time slot: n (1–48) is (n − 1) × 30 minutes after midnight; 0 = none.
    public var departureTimeSlot: Int
    /// The train number (17 bits in version 1, 25 in version 2).
    public var trainNumber: Int
    /// The reservation reference (40 bits).
    public var reservationReference: Int
    /// The class, one character (1, 2, C club, P superior, T tourist).
    public var travelClass: String
    /// The coach number.
    public var coach: Int
    /// The seat number.
    public var seat: Int
    /// The berth, one character.
    public var berth: String
    /// The overbooking indicator.
    public var overbooking: Bool
    /// The issuer's PNR (7 characters).
    public var pnr: String
    /// The ticket type (4 bits).
    public var ticketType: Int
    /// The specimen bit as written (sources disagree on its sense: zuegli reads 0 as specimen).
    public var specimenBit: Bool
    /// The via stations (5 characters; kitinerary is unsure of this field).
    public var via: String
    /// Version 2: the railway carrier code (14 bits).
    public var carrierCode: Int?
    /// Version 2: a reference of 8 characters.
    public var reference: String?
}

/// A decoded ERA SSB ticket, every field typed.
public struct SSBTicket: Sendable, Hashable {
    /// What the frame holds, by version and ticket type.
    public enum Payload: Sendable, Hashable {
        /// Version 3, type 1.
        case reservation(SSBCommonPart, SSBReservation)
        /// Version 3, type 2.
        case nonReservation(SSBCommonPart, SSBNonReservation)
        /// Version 3, type 3.
        case group(SSBCommonPart, SSBGroup)
        /// Version 3, type 4.
        case pass(SSBCommonPart, SSBPass)
        /// Version 3, types 21–31.
        case nonUIC(SSBNonUIC)
        /// Version 1 or 2.
        case legacy(SSBLegacyTicket)
    }

    /// The version (1, 2 or 3).
    public var version: Int
    /// The issuer's RICS code.
    public var issuerCode: Int
    /// The key id; `nil` in version 1.
    public var keyID: Int?
    /// The version 3 ticket type; `nil` in versions 1 and 2.
    public var ticketType: SSBTicketType?
    /// The fields.
    public var payload: Payload

    /// The common part of types 1–4.
    public var common: SSBCommonPart? {
        switch payload {
        case .reservation(let common, _), .nonReservation(let common, _), .group(let common, _),
            .pass(let common, _):
            common
        case .nonUIC, .legacy: nil
        }
    }

    /// The stations of types 1–3.
    public var stations: SSBStations? {
        switch payload {
        case .reservation(_, let body): body.stations
        case .nonReservation(_, let body): body.stations
        case .group(_, let body): body.stations
        case .pass, .nonUIC, .legacy: nil
        }
    }

    /// Decodes the fields of a frame.
    ///
    /// - Throws: `unsupported` for version 3 ticket types 0 and 5–20, which B.12 does not define; `malformed`
    ///   when a field lies outside the frame (not for a frame that `SSBFrame` accepted).
    public init(frame: SSBFrame) throws(FormatError) {
        let bits = SSBBitReader(frame.bytes)
        version = frame.version
        issuerCode = frame.issuerCode
        keyID = frame.keyID
        switch frame.version {
        case 3:
            let type = SSBTicketType(code: try bits.value("ticket type", at: 22, width: 5))
            ticketType = type
            payload = try Self.decodeVersion3(type, bits)
        default:
            ticketType = nil
            payload = .legacy(try Self.decodeLegacy(version: frame.version, bits))
        }
    }

    /// Decodes a payload: `SSBFrame(parsing:)` then `init(frame:)`.
    public init(decoding payload: [UInt8]) throws(FormatError) {
        try self.init(frame: SSBFrame(parsing: payload))
    }

    private static func decodeVersion3(_ type: SSBTicketType, _ bits: SSBBitReader) throws(FormatError) -> Payload {
        switch type {
        case .reservation:
            let common = try commonPart(bits)
            return .reservation(
                common,
                SSBReservation(
                    subType: try bits.value("ticket sub-type", at: 145, width: 2),
                    stations: try stations(bits, at: 147),
                    departureDay: try bits.value("departure date", at: 208, width: 9),
                    departureTime: try bits.value("departure time", at: 217, width: 11),
                    trainNumber: try bits.text("train number", at: 228, count: 5, .ascii),
                    coach: try bits.value("coach number", at: 258, width: 10),
                    seat: try bits.text("seat", at: 268, count: 3, .ascii),
                    overbooking: try bits.flag("overbooking indicator", at: 286),
                    infoCode: try bits.value("information message code", at: 287, width: 14),
                    text: try bits.text("open text", at: 301, count: 27, .ascii)
                ))
        case .nonReservation:
            let common = try commonPart(bits)
            return .nonReservation(
                common,
                SSBNonReservation(
                    returnJourney: try bits.flag("return journey flag", at: 145),
                    firstDayOfValidity: try bits.value("first day of validity", at: 146, width: 9),
                    lastDayOfValidity: try bits.value("last day of validity", at: 155, width: 9),
                    stations: try stations(bits, at: 164),
                    infoCode: try bits.value("information message code", at: 225, width: 14),
                    text: try bits.text("open text", at: 239, count: 37, .ascii)
                ))
        case .group:
            let common = try commonPart(bits)
            return .group(
                common,
                SSBGroup(
                    returnJourney: try bits.flag("return journey flag", at: 145),
                    firstDayOfValidity: try bits.value("first day of validity", at: 146, width: 9),
                    lastDayOfValidity: try bits.value("last day of validity", at: 155, width: 9),
                    stations: try stations(bits, at: 164),
                    groupName: try bits.text("group leader's name", at: 225, count: 12, .ascii),
                    counterMarkNumber: try bits.value("countermark number", at: 297, width: 9),
                    infoCode: try bits.value("information message code", at: 306, width: 14),
                    text: try bits.text("open text", at: 320, count: 24, .ascii)
                ))
        case .pass:
            let common = try commonPart(bits)
            var countries: [Int] = []
            for index in 0..<5 {
                countries.append(try bits.value("country code \(index + 1)", at: 172 + 7 * index, width: 7))
            }
            return .pass(
                common,
                SSBPass(
                    kind: SSBPass.Kind(code: try bits.value("pass sub-type", at: 145, width: 2)),
                    firstDayOfValidity: try bits.value("first day of validity", at: 147, width: 9),
                    lastDayOfValidity: try bits.value("last day of validity", at: 156, width: 9),
                    travelDays: try bits.value("number of travel days", at: 165, width: 7),
                    countries: countries,
                    secondPage: try bits.flag("second page flag", at: 207),
                    infoCode: try bits.value("information message code", at: 208, width: 14),
                    text: try bits.text("open text", at: 222, count: 40, .ascii)
                ))
        case .nonUIC(let code):
            var data = [UInt8](repeating: 0, count: 55)
            for bit in 0..<437 {
                if try bits.flag("issuer-defined data", at: 27 + bit) { data[bit >> 3] |= 0x80 >> UInt8(bit & 7) }
            }
            return .nonUIC(SSBNonUIC(type: code, data: data))
        case .undefined(let code):
            throw .unsupported(
                "SSB ticket type \(code) (bits 22–26) is not defined by B.12 "
                    + "(1–4 are UIC types, 21–31 issuer-defined)")
        }
    }

    private static func commonPart(_ bits: SSBBitReader) throws(FormatError) -> SSBCommonPart {
        SSBCommonPart(
            adults: try bits.value("number of adults", at: 27, width: 7),
            children: try bits.value("number of children", at: 34, width: 7),
            specimen: try bits.flag("specimen flag", at: 41),
            travelClass: SSBClass(code: try bits.value("class of travel", at: 42, width: 6)),
            ticketNumber: try bits.text("ticket control number", at: 48, count: 14, .ascii),
            issuingYearInDecade: try bits.value("year of issue", at: 132, width: 4),
            issuingDayOfYear: try bits.value("issuing day", at: 136, width: 9)
        )
    }

    private static func stations(_ bits: SSBBitReader, at start: Int) throws(FormatError) -> SSBStations {
        if try bits.flag("station format flag", at: start) {
            return .alphanumeric(
                departure: try bits.text("departure station", at: start + 1, count: 5, .ascii),
                arrival: try bits.text("arrival station", at: start + 31, count: 5, .ascii),
                departureNumber: try bits.value("departure station", at: start + 1, width: 30),
                arrivalNumber: try bits.value("arrival station", at: start + 31, width: 30)
            )
        }
        return .numeric(
            table: SSBStationCodeTable(code: try bits.value("station code table", at: start + 1, width: 4)),
            departure: try bits.value("departure station", at: start + 5, width: 28),
            arrival: try bits.value("arrival station", at: start + 33, width: 28)
        )
    }

    /// Versions 1 and 2 share one layout; version 2 inserts the 4-bit key id at bit 18 and widens the train
    /// number from 17 to 25 bits, and adds a carrier code and a reference at the end.
    private static func decodeLegacy(version: Int, _ bits: SSBBitReader) throws(FormatError) -> SSBLegacyTicket {
        let v2 = version == 2
        // Every field up to the train number is 4 bits further in version 2; after it, 12 bits further.
        let shift = v2 ? 4 : 0
        let late = v2 ? 12 : 0
        func station(_ name: String, _ offset: Int) throws(FormatError) -> SSBLegacyStation {
            if try bits.flag("\(name) type", at: offset) {
                return .number(try bits.value(name, at: offset + 1, width: 30))
            }
            return .name(try bits.text(name, at: offset + 1, count: 5, .legacy))
        }
        return SSBLegacyTicket(
            rct2Type: try bits.flag("RCT2 type indicator", at: 18 + shift),
            numberOfTickets: try bits.value("number of tickets", at: 19 + shift, width: 6),
            adults: try bits.value("number of adults", at: 25 + shift, width: 7),
            children: try bits.value("number of children", at: 32 + shift, width: 7),
            firstDayOfValidity: try bits.value("first day of validity", at: 39 + shift, width: 9),
            lastDayOfValidity: try bits.value("last day of validity", at: 48 + shift, width: 9),
            customerNumberType: try bits.flag("customer number type", at: 57 + shift),
            customerNumber: try bits.value("customer number", at: 58 + shift, width: 47),
            departureStation: try station("departure station", 105 + shift),
            arrivalStation: try station("arrival station", 136 + shift),
            departureTimeSlot: try bits.value("departure time slot", at: 167 + shift, width: 6),
            trainNumber: try bits.value("train number", at: 173 + shift, width: v2 ? 25 : 17),
            reservationReference: try bits.value("reservation reference", at: 190 + late, width: 40),
            travelClass: try bits.text("class", at: 230 + late, count: 1, .legacy),
            coach: try bits.value("coach number", at: 236 + late, width: 10),
            seat: try bits.value("seat number", at: 246 + late, width: 7),
            berth: try bits.text("berth", at: 253 + late, count: 1, .legacy),
            overbooking: try bits.flag("overbooking indicator", at: 259 + late),
            pnr: try bits.text("issuer PNR", at: 260 + late, count: 7, .legacy),
            ticketType: try bits.value("ticket type", at: 302 + late, width: 4),
            specimenBit: try bits.flag("specimen flag", at: 306 + late),
            via: try bits.text("via stations", at: 307 + late, count: 5, .legacy),
            carrierCode: v2 ? try bits.value("railway carrier code", at: 349, width: 14) : nil,
            reference: v2 ? try bits.text("reference", at: 363, count: 8, .legacy) : nil
        )
    }
}
