import Foundation

/// The ticket an RSP6 barcode hides: the bit field inside the PKCS#1 block, taken apart (docs/uk-rsp6.md).
///
/// Bits are numbered from the most significant bit of byte 0; text is in 6-bit units, each value + 32 as an ASCII
/// character; numbers are unsigned, most significant bit first; a date-time is 14 bits of days since 1997-01-01
/// then 11 bits of minutes after midnight, in UK local time (`UKTime`). The fixed part ends at bit 390; purchase
/// data (122 bits), then the reservations (45 bits each), then a free text (51 characters) follow where their flags
/// say so.
public struct RSP6Ticket: Sendable, Hashable {
    /// A seat or train reservation.
    public struct Reservation: Sendable, Hashable {
        /// The train operator's two-letter code (`GR`), then the train number.
        public var trainOperator: String
        public var trainNumber: Int
        /// The coach letter; `nil` for none (`*` or a space).
        public var coach: String?
        /// The seat letter and number, e.g. `A` and 42; a letter alone, a number alone or neither.
        public var seatLetter: String?
        public var seatNumber: Int?

        /// The seat as printed, e.g. `A42`; `nil` when no seat is reserved.
        public var seat: String? {
            let text = (seatLetter ?? "") + (seatNumber.map { "\($0)" } ?? "")
            return text.isEmpty ? nil : text
        }
    }

    /// What the purchase data say (present when bit 384 is set).
    public struct Purchase: Sendable, Hashable {
        /// When the ticket was bought.
        public var purchasedAt: Date
        /// The price in pence.
        public var pricePence: Int
        /// The retailer's reference for the purchase.
        public var reference: String?
        /// For how many days the ticket is valid, from its travel date (0 is read as 1: one day).
        public var daysOfValidity: Int
    }

    /// The ticket reference (9 characters), the same as the text's characters 2–10.
    public var reference: String
    /// The version field (4 bits).
    public var version: Int
    /// The ticket type code, e.g. `SDS` (3 characters: the fare's product code).
    public var ticketType: String?
    /// The fare label (3 characters).
    public var fareLabel: String?
    /// The origin and destination as NLC codes (4 characters each), e.g. `3820`.
    public var origin: String?
    public var destination: String?
    /// The retailer's id (4 characters).
    public var retailer: String?
    /// The coupon type (2 bits).
    public var couponType: Int
    /// The discount (railcard) code (10 bits; 0 for none).
    public var discountCode: Int
    /// The route code (17 bits; 0 for any permitted route).
    public var routeCode: Int
    /// The travel date and time as written (UK local time); `departureTimeIsSet` says whether the time counts.
    public var departure: Date
    /// The departure time flag (2 bits): 0 = a travel date only, other values = a booked departure time.
    public var departureTimeFlag: Int
    /// The passenger id (17 bits).
    public var passengerID: Int
    /// The passenger's name as printed (12 characters), `nil` when blank.
    public var passengerName: String?
    /// The passenger's gender code (2 bits).
    public var passengerGender: Int
    /// The restriction code (read as 7 characters at bit 329: the sources are thin, see docs/uk-rsp6.md).
    public var restrictionCode: String?
    /// The limited-duration code (4 bits; 0 for none).
    public var limitedDurationCode: Int
    /// The purchase data, when the ticket carries them.
    public var purchase: Purchase?
    /// The reservations, in order.
    public var reservations: [Reservation]
    /// The free text, when the ticket carries one.
    public var freeText: String?

    /// The bit where the fixed part ends and purchase data, reservations and free text follow.
    public static let fixedPartBits = 390
    /// The bits of the purchase data, the bits of one reservation, and the characters of the free text.
    public static let purchaseBits = 122
    public static let reservationBits = 45
    public static let freeTextCharacters = 51

    /// Whether a departure time (not only a day) was booked.
    public var departureTimeIsSet: Bool { departureTimeFlag != 0 }

    /// The UK day of travel.
    public var travelDay: UICDay { UKTime.localFields(of: departure).day }

    /// The first instant of validity: the start of the travel day in UK time.
    public var validFrom: Date { validity.from }

    /// The last second of validity: the end of the last day of validity in UK time (the travel day plus the days
    /// of validity less one; a ticket without purchase data is judged on its travel day alone, and
    /// `statesDaysOfValidity` is false).
    public var validUntil: Date { validity.until }

    /// `validFrom` and `validUntil`, from one reading of the travel day.
    var validity: (from: Date, until: Date) {
        let day = travelDay
        let days = max(1, purchase?.daysOfValidity ?? 1)
        // 14 bits of days from 1997 plus 9 bits of days of validity stay far inside UICDay's years.
        let dayAfter = SSBCalendar.adding(days, to: day) ?? day
        return (UKTime.date(day, hour: 0, minute: 0), UKTime.date(dayAfter, hour: 0, minute: 0).addingTimeInterval(-1))
    }

    /// Whether the ticket says for how many days it is valid (its purchase data do).
    public var statesDaysOfValidity: Bool { purchase != nil }

    /// Takes the bit field apart.
    ///
    /// - Throws: `malformed`, naming the field and its bits, when the payload ends before a field its flags
    ///   announce, or when a date-time names a minute past midnight's 1440.
    public init(decoding payload: ArraySlice<UInt8>) throws(FormatError) {
        let bits = SSBBitReader(payload)
        guard bits.bitCount >= Self.fixedPartBits else {
            throw .malformed(
                "the RSP6 ticket has \(payload.count) bytes; its fixed part takes \(Self.fixedPartBits) bits "
                    + "(\((Self.fixedPartBits + 7) / 8) bytes)")
        }
        func text(_ field: @autoclosure () -> String, _ offset: Int, _ count: Int) throws(FormatError) -> String? {
            try bits.trimmedText(field(), at: offset, count: count, .ascii)
        }
        reference = try text("ticket reference", 8, 9) ?? ""
        version = try bits.value("version", at: 68, width: 4)
        ticketType = try text("ticket type", 73, 3)
        fareLabel = try text("fare label", 91, 3)
        origin = try text("origin", 109, 4)
        destination = try text("destination", 133, 4)
        retailer = try text("retailer id", 157, 4)
        couponType = try bits.value("coupon type", at: 182, width: 2)
        discountCode = try bits.value("discount code", at: 184, width: 10)
        routeCode = try bits.value("route code", at: 194, width: 17)
        departure = try Self.dateTime("departure date-time", at: 211, in: bits)
        departureTimeFlag = try bits.value("departure time flag", at: 236, width: 2)
        passengerID = try bits.value("passenger id", at: 238, width: 17)
        passengerName = try text("passenger name", 255, 12)
        passengerGender = try bits.value("passenger gender", at: 327, width: 2)
        restrictionCode = try text("restriction code", 329, 7)
        limitedDurationCode = try bits.value("limited-duration code", at: 379, width: 4)
        let hasPurchase = try bits.flag("purchase data flag", at: 384)
        let hasFreeText = try bits.flag("free text flag", at: 385)
        let reservationCount = try bits.value("number of reservations", at: 386, width: 4)

        var offset = Self.fixedPartBits
        if hasPurchase {
            purchase = Purchase(
                purchasedAt: try Self.dateTime("purchase date-time", at: offset, in: bits),
                pricePence: try bits.value("price", at: offset + 25, width: 21),
                reference: try text("purchase reference", offset + 59, 8),
                daysOfValidity: try bits.value("days of validity", at: offset + 107, width: 9))
            offset += Self.purchaseBits
        } else {
            purchase = nil
        }
        var reservations: [Reservation] = []
        for index in 0..<reservationCount {
            // The field names are built only for an error.
            let name = { "reservation \(index + 1)" }
            let coach = try text("\(name())'s coach", offset + 26, 1)
            reservations.append(
                Reservation(
                    trainOperator: try text("\(name())'s train operator", offset, 2) ?? "",
                    trainNumber: try bits.value("\(name())'s train number", at: offset + 12, width: 14),
                    coach: coach == "*" ? nil : coach,
                    seatLetter: try text("\(name())'s seat letter", offset + 32, 1),
                    seatNumber: try bits.value("\(name())'s seat number", at: offset + 38, width: 7).nonZero))
            offset += Self.reservationBits
        }
        self.reservations = reservations
        freeText = hasFreeText ? try text("free text", offset, Self.freeTextCharacters) : nil
    }

    /// A date-time field: 14 bits of days since 1997-01-01, then 11 bits of minutes, UK local time.
    static func dateTime(_ field: @autoclosure () -> String, at offset: Int, in bits: SSBBitReader)
        throws(FormatError) -> Date
    {
        let days = try bits.value(field(), at: offset, width: 14)
        let minutes = try bits.value(field(), at: offset + 14, width: 11)
        guard minutes < 1_440 else {
            throw .malformed(
                "the \(field()) at bit \(offset) says \(minutes) minutes after midnight; a day has 1440")
        }
        let day = SSBCalendar.adding(days, to: UKTime.epoch) ?? UKTime.epoch
        return UKTime.date(day, hour: minutes / 60, minute: minutes % 60)
    }
}

extension Int {
    /// `nil` for zero.
    fileprivate var nonZero: Int? { self == 0 ? nil : self }
}

/// UK local time (GMT, and BST, UTC+1, in summer), which RSP6 dates are written in.
///
/// Since 1996 UK summer time runs from the last Sunday of March to the last Sunday of October, switching at 01:00
/// UTC, the same instants as the rest of the EU: `UICTime` computes them for both zones; RSP6 dates begin in 1997. Computed here rather than taken from the host's zone database, so that every device reads a ticket alike.
/// A local time that occurs twice (01:00–02:00 on the October day) is read as the first, summer-time one; one that
/// does not exist (01:00–02:00 on the March day) with the winter offset.
public enum UKTime {
    /// 1997-01-01, day 0 of RSP6 dates.
    public static let epoch = UICDay(year: 1997, month: 1, day: 1)!

    /// The instant of a UK wall-clock time.
    public static func date(_ day: UICDay, hour: Int, minute: Int, second: Int = 0) -> Date {
        UICTime.date(day, hour: hour, minute: minute, second: second, in: .london)
    }

    /// The offset of UK time from UTC at `date`, in seconds (0 or 3600).
    public static func offset(at date: Date) -> Int { UICTime.offset(at: date, in: .london) }

    /// The UK wall-clock fields of `date`.
    public static func localFields(of date: Date) -> (day: UICDay, hour: Int, minute: Int) {
        let fields = UICTime.localFields(of: date, in: .london)
        return (fields.day, fields.hour, fields.minute)
    }
}
