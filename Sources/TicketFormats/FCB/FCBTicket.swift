import FareCore
import Foundation

/// An FCB ticket (UIC 918.9 `UicRailTicketData`) read into types: who issued it, for whom, and each transport
/// document with its validity resolved to instants.
///
/// Built from the generic tree (`FCBData`) by field name, so one reader serves v1.3, v2 and v3: the names are
/// resolved to positions once per version (`FCBLayout`) and each record is read by position. Fields the ticket
/// leaves out stay `nil`; every decoded field, including those not modelled here, is in `data.json`.
public struct FCBTicket: Sendable {
    /// The decoded tree this ticket was read from.
    public var data: FCBData
    /// `issuingDetail`.
    public var issuing: FCBIssuing
    /// `travelerDetail.traveler`, in order.
    public var travelers: [FCBTraveler]
    /// `travelerDetail.groupName`.
    public var groupName: String?
    /// `transportDocument`, in order.
    public var documents: [FCBDocument]

    /// The version the ticket was decoded with.
    public var version: FCBVersion { data.version }

    /// Decodes FCB bytes of a known version and reads them into types.
    ///
    /// - Throws: `malformed` naming the bit offset and field path when the bytes do not decode.
    public init(
        decoding bytes: [UInt8], version: FCBVersion, subject: @autoclosure () -> String = "the FCB data"
    ) throws(FormatError) {
        self.init(try FCBData(decoding: bytes, version: version, subject: subject()))
    }

    /// Reads a decoded tree into types.
    public init(_ data: FCBData) {
        self.data = data
        let layout = FCBLayout.of(data.version)
        let root = data.root
        let rootFields = FCBLayout.fields(layout.root, for: root)
        // issuingDetail is mandatory in every version: a decoded tree always has it.
        let issuingRecord = root[position: rootFields.issuingDetail]?.record
        issuing = FCBIssuing(issuingRecord, fields: layout.issuing)
        let travelerDetail = root[position: rootFields.travelerDetail]?.record
        let detailFields = travelerDetail.map { FCBLayout.fields(layout.travelerDetail, for: $0) }
        var travelers: [FCBTraveler] = []
        if let travelerDetail, let detailFields {
            for item in travelerDetail[position: detailFields.traveler]?.items ?? [] {
                guard let record = item.record else { continue }
                travelers.append(FCBTraveler(record, fields: FCBLayout.fields(layout.traveler, for: record)))
            }
            groupName = travelerDetail[position: detailFields.groupName]?.text
        }
        self.travelers = travelers
        let base = issuing.issuingDay
        var documents: [FCBDocument] = []
        for item in root[position: rootFields.transportDocument]?.items ?? [] {
            guard let record = item.record else { continue }
            documents.append(
                FCBDocument(record, fields: FCBLayout.fields(layout.document, for: record), issuingDay: base))
        }
        self.documents = documents
    }

    /// The traveler marked as ticket holder, else the only traveler.
    public var holder: FCBTraveler? {
        travelers.first { $0.isTicketHolder } ?? (travelers.count == 1 ? travelers.first : nil)
    }
}

/// A code that FCB writes either as a number (`…Num`) or as text (`…IA5`): issuers, products, references.
public enum FCBCode: Sendable, Hashable, CustomStringConvertible {
    /// The `…Num` form.
    case number(Int)
    /// The `…IA5` form.
    case text(String)

    /// The number or the text.
    public var description: String {
        switch self {
        case .number(let value): String(value)
        case .text(let value): value
        }
    }

    /// The `<stem>Num` or `<stem>IA5` component of `record` (the number when both are there), from their
    /// positions in its type (`nil` where it has no such component), resolved once per type by the caller: a
    /// lookup by name per record hashed and compared each name every time.
    init?(_ record: PERRecord, number: Int?, text: Int?) {
        if let number = record[position: number]?.integer {
            self = .number(number)
        } else if let text = record[position: text]?.text {
            self = .text(text)
        } else {
            return nil
        }
    }
}

/// `issuingDetail`: issuer, issuing time and the flags that decide whether the ticket counts at all.
public struct FCBIssuing: Sendable {
    /// The RICS code (or IA5 code) of the party whose key signs the ticket.
    public var securityProvider: FCBCode?
    /// The issuer, when different from the security provider.
    public var issuer: FCBCode?
    /// `issuerName`, e.g. `DB AG`.
    public var issuerName: String?
    /// The issuing day as encoded (`issuingYear`/`issuingDay`, a UTC date): the base of the day offsets.
    public var issuingDay: FCBDay
    /// `issuingTime` in minutes after midnight UTC (optional before v3).
    public var issuingMinute: Int?
    /// The issuing instant (midnight UTC of the issuing day when the time is absent).
    public var issuedAt: Date
    /// `specimen`: a test ticket, not valid for travel.
    public var isSpecimen: Bool
    /// `securePaperTicket`.
    public var isSecurePaperTicket: Bool
    /// `activated`: `false` means the ticket still needs activation.
    public var isActivated: Bool
    /// ISO 4217 currency of the prices (`EUR` by default).
    public var currency: String
    /// Prices are in units of 10^−currencyFraction (2 by default).
    public var currencyFraction: Int
    /// `issuerPNR`: the booking code.
    public var issuerPNR: String?

    /// Reads `issuingDetail`, at the positions `cached` when they were resolved in its type.
    init(_ record: PERRecord?, fields cached: FCBIssuingFields?) {
        let fields = record.map { FCBLayout.fields(cached, for: $0) }
        func value(_ position: Int?) -> PERValue? { record?[position: position] }
        if let record, let fields {
            securityProvider = FCBCode(
                record, number: fields.securityProviderNum, text: fields.securityProviderIA5)
            issuer = FCBCode(record, number: fields.issuerNum, text: fields.issuerIA5)
        }
        issuerName = value(fields?.issuerName)?.text
        issuingDay = FCBDay(
            year: value(fields?.issuingYear)?.integer ?? 2016, dayOfYear: value(fields?.issuingDay)?.integer ?? 1)
        issuingMinute = value(fields?.issuingTime)?.integer
        issuedAt = Date(
            timeIntervalSince1970: TimeInterval(issuingDay.epochDay * 86_400 + (issuingMinute ?? 0) * 60))
        isSpecimen = value(fields?.specimen)?.boolean ?? false
        isSecurePaperTicket = value(fields?.securePaperTicket)?.boolean ?? false
        isActivated = value(fields?.activated)?.boolean ?? true
        currency = value(fields?.currency)?.text ?? "EUR"
        currencyFraction = value(fields?.currencyFract)?.integer ?? 2
        issuerPNR = value(fields?.issuerPNR)?.text
    }
}

/// A calendar day counted as days since 1970-01-01, the form in which FCB day offsets add up.
public struct FCBDay: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var epochDay: Int

    /// The day `dayOfYear` (1 = 1 January) of `year`; days past the year's end run into the next year.
    public init(year: Int, dayOfYear: Int) {
        epochDay = UICTime.daysFromCivil(year: year, month: 1, day: 1) &+ dayOfYear &- 1
    }

    /// The day `epochDay` days after 1970-01-01.
    public init(epochDay: Int) {
        self.epochDay = epochDay
    }

    /// The day `count` days later (earlier when negative).
    public func adding(days count: Int) -> FCBDay { FCBDay(epochDay: epochDay &+ count) }

    /// Year, month and day of the month.
    public var civil: (year: Int, month: Int, day: Int) { UICTime.civil(fromDays: epochDay) }

    /// `YYYY-MM-DD`.
    public var description: String {
        let (year, month, day) = civil
        return "\(year)-\(month.twoDigits)-\(day.twoDigits)"
    }

    /// Earlier days first.
    public static func < (lhs: FCBDay, rhs: FCBDay) -> Bool { lhs.epochDay < rhs.epochDay }
}

/// A passenger type (`PassengerType`).
public enum FCBPassengerType: String, Sendable, Hashable, CaseIterable {
    case adult, senior, child, youth, dog, bicycle, freeAddonPassenger, freeAddonChild

    init?(_ value: PERValue?) {
        guard let index = value?.enumeratedIndex, index < Self.allCases.count else { return nil }
        self = Self.allCases[index]
    }
}

/// A travel class (`TravelClassType`; the last four exist from v2 on).
public enum FCBTravelClass: String, Sendable, Hashable, CaseIterable {
    case notApplicable, first, second, tourist, comfort, premium, business, all
    case premiumFirst, standardFirst, premiumSecond, standardSecond

    init?(_ value: PERValue?) {
        guard let index = value?.enumeratedIndex, index < Self.allCases.count else { return nil }
        self = Self.allCases[index]
    }
}

/// A traveler (`TravelerType`).
public struct FCBTraveler: Sendable {
    /// `firstName`.
    public var firstName: String?
    /// `secondName`.
    public var secondName: String?
    /// `lastName`.
    public var lastName: String?
    /// `title`.
    public var title: String?
    /// Year of birth.
    public var yearOfBirth: Int?
    /// Month of birth (v2, v3; from the day of the year in v1.3).
    public var monthOfBirth: Int?
    /// Day of the month of birth (v2, v3; from the day of the year in v1.3).
    public var dayOfBirth: Int?
    /// `idCard`: the ID card number to check.
    public var idCard: String?
    /// `passportId`.
    public var passportID: String?
    /// `customerIdNum` / `customerIdIA5`.
    public var customerID: FCBCode?
    /// `ticketHolder`.
    public var isTicketHolder: Bool
    /// `passengerType`.
    public var passengerType: FCBPassengerType?

    /// Reads a `TravelerType` record at the positions `fields` (resolved in its type).
    init(_ record: PERRecord, fields: FCBTravelerFields) {
        firstName = record[position: fields.firstName]?.text
        secondName = record[position: fields.secondName]?.text
        lastName = record[position: fields.lastName]?.text
        title = record[position: fields.title]?.text
        yearOfBirth = record[position: fields.yearOfBirth]?.integer
        if let month = record[position: fields.monthOfBirth]?.integer {
            monthOfBirth = month
            dayOfBirth = record[position: fields.dayOfBirthInMonth]?.integer
        } else if let dayOfYear = record[position: fields.dayOfBirth]?.integer, let year = yearOfBirth, dayOfYear >= 1 {
            // v1.3 writes the day of the year (1 January = 1).
            let civil = FCBDay(year: year, dayOfYear: dayOfYear).civil
            if civil.year == year {
                monthOfBirth = civil.month
                dayOfBirth = civil.day
            }
        }
        idCard = record[position: fields.idCard]?.text
        passportID = record[position: fields.passportId]?.text
        customerID = FCBCode(record, number: fields.customerIdNum, text: fields.customerIdIA5)
        isTicketHolder = record[position: fields.ticketHolder]?.boolean ?? false
        passengerType = FCBPassengerType(record[position: fields.passengerType])
    }

    /// `First Second Last`, from the names that are there.
    public var name: String? {
        var text = ""
        func append(_ part: String?) {
            guard let part, !part.isEmpty else { return }
            if !text.isEmpty { text += " " }
            text += part
        }
        append(firstName)
        append(secondName)
        append(lastName)
        return text.isEmpty ? nil : text
    }

    /// The traveler as the fields an inspector compares with an ID: the name (given names `firstName secondName`, as
    /// kitinerary reads them), the date of birth as far as it is stated, and the ID card, passport and customer
    /// numbers; `nil` when the traveler carries none of them.
    public var holderCheck: TicketHolder? {
        let given: String? =
            switch (firstName.flatMap { $0.isEmpty ? nil : $0 }, secondName.flatMap { $0.isEmpty ? nil : $0 }) {
            case (let first?, let second?): first + " " + second
            case (let first?, nil): first
            case (nil, let second?): second
            case (nil, nil): nil
            }
        var documents: [IDDocument] = []
        if let idCard, !idCard.isEmpty { documents.append(IDDocument(kind: .idCard, number: idCard)) }
        if let passportID, !passportID.isEmpty { documents.append(IDDocument(kind: .passport, number: passportID)) }
        if let customerID { documents.append(IDDocument(kind: .customerCard, number: customerID.description)) }
        // A day its month does not have is left out, not the year and month with it: those still match an ID.
        let birth = yearOfBirth.flatMap { year in
            HolderDate(year: year, month: monthOfBirth, day: dayOfBirth) ?? HolderDate(year: year, month: monthOfBirth)
                ?? HolderDate(year: year)
        }
        return TicketHolder(
            name: name, givenName: given,
            familyName: lastName.flatMap { $0.isEmpty ? nil : $0 }, dateOfBirth: birth, idDocuments: documents
        ).nonEmpty
    }

    /// `YYYY-MM-DD`, `YYYY-MM` or `YYYY`, as far as the ticket states it.
    public var dateOfBirth: String? {
        guard let year = yearOfBirth else { return nil }
        guard let month = monthOfBirth else { return "\(year)" }
        guard let day = dayOfBirth else { return "\(year)-\(month.twoDigits)" }
        return "\(year)-\(month.twoDigits)-\(day.twoDigits)"
    }
}

/// A tariff line (`TariffType`): how many passengers of which type, under which tariff.
public struct FCBTariff: Sendable {
    /// `numberOfPassengers` (1 by default).
    public var numberOfPassengers: Int
    /// `passengerType`.
    public var passengerType: FCBPassengerType?
    /// `tariffDesc`, e.g. `Deutschland-Ticket`.
    public var description: String?
    /// `tariffIdNum` / `tariffIdIA5`.
    public var tariffID: FCBCode?

    /// Reads a `TariffType` record at the positions `fields` (resolved in its type).
    init(_ record: PERRecord, fields: FCBTariffFields) {
        numberOfPassengers = record[position: fields.numberOfPassengers]?.integer ?? 1
        passengerType = FCBPassengerType(record[position: fields.passengerType])
        description = record[position: fields.tariffDesc]?.text
        tariffID = FCBCode(record, number: fields.tariffIdNum, text: fields.tariffIdIA5)
    }
}

/// A station as FCB names it: a code (in `codeTable`), a name, or both.
public struct FCBStation: Sendable, Hashable, CustomStringConvertible {
    /// The number or IA5 code.
    public var code: FCBCode?
    /// The name, e.g. `Mannheim`.
    public var name: String?
    /// The code table's name (`stationUIC`, `proprietaryIssuerStationCodeTable`, …).
    public var codeTable: String?

    /// `Mannheim (8000244)`, or whichever part is there.
    public var description: String {
        switch (name, code) {
        case (let name?, let code?): "\(name) (\(code))"
        case (let name?, nil): name
        case (nil, let code?): "\(code)"
        case (nil, nil): "?"
        }
    }
}

/// One end of a validity window: the local day and time as the ticket states them, and the instant.
public struct FCBInstant: Sendable, Hashable {
    /// The local calendar day.
    public var day: FCBDay
    /// Minutes after local midnight.
    public var minute: Int
    /// Seconds past the minute: 59 for an end that runs through its whole minute (23:59 by default), else 0.
    public var second: Int
    /// The UTC offset in quarter hours with FCB's sign (UTC = local + offset × 15 min, so CET is −4); `nil`
    /// when the ticket states none and local time is where the traveler is.
    public var utcOffset: Int?
    /// The instant: with the offset when there is one, else read as Europe/Berlin time (`UICTime`).
    public var date: Date

    /// Resolves a local day and time (`second` past the minute, for ends that run through 23:59).
    init(day: FCBDay, minute: Int, second: Int = 0, utcOffset: Int?) {
        self.day = day
        self.minute = minute
        self.second = second
        self.utcOffset = utcOffset
        let seconds = minute &* 60 &+ second
        if let utcOffset {
            date = Date(timeIntervalSince1970: TimeInterval(day.epochDay &* 86_400 &+ seconds &+ utcOffset &* 900))
        } else {
            let (year, month, dayOfMonth) = day.civil
            let base = UICDay(year: year, month: month, day: dayOfMonth) ?? UICDay(year: 1970, month: 1, day: 1)!
            date = UICTime.date(base, hour: 0, minute: 0, second: seconds)
        }
    }
}

/// The kind of a transport document: the alternative of the `ticket` CHOICE.
public enum FCBDocumentKind: Sendable, Hashable, CustomStringConvertible {
    case reservation, carCarriageReservation, openTicket, pass, voucher, customerCard, counterMark
    /// `extensionData` is the `extension` alternative (a keyword in Swift): ExtensionData, e.g. DB's "no ticket".
    case parkingGround, fipTicket, stationPassage, extensionData, delayConfirmation
    /// An alternative of a newer schema, by its index.
    case other(Int)

    /// The root alternatives in CHOICE order (the same in v1.3, v2 and v3).
    static let rootOrder: [FCBDocumentKind] = [
        .reservation, .carCarriageReservation, .openTicket, .pass, .voucher, .customerCard, .counterMark,
        .parkingGround, .fipTicket, .stationPassage, .extensionData, .delayConfirmation,
    ]

    init(index: Int) {
        self = index >= 0 && index < Self.rootOrder.count ? Self.rootOrder[index] : .other(index)
    }

    /// The schema's name, e.g. `openTicket`.
    public var description: String {
        switch self {
        case .reservation: "reservation"
        case .carCarriageReservation: "carCarriageReservation"
        case .openTicket: "openTicket"
        case .pass: "pass"
        case .voucher: "voucher"
        case .customerCard: "customerCard"
        case .counterMark: "counterMark"
        case .parkingGround: "parkingGround"
        case .fipTicket: "fipTicket"
        case .stationPassage: "stationPassage"
        case .extensionData: "extension"
        case .delayConfirmation: "delayConfirmation"
        case .other(let index): "alternative \(index)"
        }
    }
}

/// A transport document (`DocumentData.ticket`): its kind, what it is for, and when it is valid.
public struct FCBDocument: Sendable {
    /// Which alternative of the CHOICE it is.
    public var kind: FCBDocumentKind
    /// The alternative's decoded fields (`nil` for an alternative of a newer schema).
    public var record: PERRecord?
    /// Start of validity (see `init` for each kind); `nil` when the document states no validity.
    public var validFrom: FCBInstant?
    /// End of validity, the last instant it is valid.
    public var validUntil: FCBInstant?
    /// `referenceNum` / `referenceIA5`: the document's own id.
    public var reference: FCBCode?
    /// `productOwnerNum` / `productOwnerIA5`.
    public var productOwner: FCBCode?
    /// `productIdNum` / `productIdIA5`.
    public var productID: FCBCode?
    /// Tariff lines (`tariffs`, or the single `tariff` of a car carriage reservation).
    public var tariffs: [FCBTariff]
    /// `classCode`.
    public var travelClass: FCBTravelClass?
    /// A customer card's own description (`cardTypeDescr`), e.g. `BahnCard 25 (2. Klasse)`.
    public var cardDescription: String?
    /// A customer card's number (`cardIdNum` / `cardIdIA5`).
    public var cardID: FCBCode?
    /// Origin (`fromStation…`, or the station of a station passage or parking ground).
    public var origin: FCBStation?
    /// Destination (`toStation…`).
    public var destination: FCBStation?
    /// `validRegionDesc`: the route or region in words.
    public var regionDescription: String?
    /// The train (`trainNum` / `trainIA5`) of a reservation.
    public var train: FCBCode?
    /// Coach and places of a reservation, e.g. `coach 12, place 45, 46`.
    public var places: String?
    /// `infoText`.
    public var infoText: String?

    /// A document read from the alternative value of `DocumentData`.
    ///
    /// Validity, with day offsets counted from the encoded issuing day, times in minutes after local midnight,
    /// UTC offsets in quarter hours (UTC = local + offset × 15 min; an absent until-offset is the from-offset;
    /// no offset at all is local time, read as Europe/Berlin):
    /// - openTicket, pass, counterMark, stationPassage: `validFromDay` (+ `validFromTime`, default 00:00)
    ///   to `validFromDay + validUntilDay` (+ `validUntilTime`, default through 23:59);
    /// - fipTicket: the same days, 00:00 through 23:59;
    /// - reservation: `departureDate`/`departureTime` to `arrivalDate` (days after departure) and
    ///   `arrivalTime`, through 23:59 of the arrival day when there is no arrival time;
    /// - carCarriageReservation: `beginLoadingDate`, `beginLoadingTime` to `endLoadingTime` that day;
    /// - parkingGround: `fromParkingDate` to `untilParkingDate` days later, whole days;
    /// - voucher: absolute `validFromYear`/`validFromDay` to `validUntilYear`/`validUntilDay`, whole days;
    /// - customerCard: `validFromYear`/`validFromDay` (1 January without a day) to `validFromYear +
    ///   validUntilYear` and `validUntilDay` (31 December without a day), whole days;
    /// - delayConfirmation, extension and unknown kinds: no validity.
    init(_ document: PERRecord, issuingDay: FCBDay) {
        self.init(document, fields: FCBDocumentDataFields(document.type), issuingDay: issuingDay)
    }

    /// The same, reading `document` at the positions `fields` (resolved in its type) and the alternative at the
    /// positions resolved for it there, when they were resolved in its type.
    init(_ document: PERRecord, fields: FCBDocumentDataFields, issuingDay: FCBDay) {
        guard case .choice(let index, let value)? = document[position: fields.ticket] else {
            kind = .other(-1)
            tariffs = []
            return
        }
        kind = FCBDocumentKind(index: index)
        let record = value.record
        self.record = record
        tariffs = []
        guard let record else { return }
        let fields = FCBLayout.fields(fields.alternative(index), for: record)

        reference = FCBCode(record, number: fields.referenceNum, text: fields.referenceIA5)
        productOwner = FCBCode(record, number: fields.productOwnerNum, text: fields.productOwnerIA5)
        productID = FCBCode(record, number: fields.productIdNum, text: fields.productIdIA5)
        travelClass = FCBTravelClass(record[position: fields.classCode])
        cardDescription = record[position: fields.cardTypeDescr]?.text.flatMap { $0.isEmpty ? nil : $0 }
        cardID = FCBCode(record, number: fields.cardIdNum, text: fields.cardIdIA5)
        infoText = record[position: fields.infoText]?.text
        regionDescription = record[position: fields.validRegionDesc]?.text
        train = FCBCode(record, number: fields.trainNum, text: fields.trainIA5)
        let codeTable = Self.codeTableName(record[position: fields.stationCodeTable])
        origin =
            Self.station(record, fields.fromStation, table: codeTable)
            ?? Self.station(record, fields.station, table: codeTable)
        destination = Self.station(record, fields.toStation, table: codeTable)
        if let list = record[position: fields.tariffs] {
            for item in list.items {
                guard let tariff = item.record else { continue }
                tariffs.append(FCBTariff(tariff, fields: FCBLayout.fields(fields.tariffFields, for: tariff)))
            }
        } else if let single = record[position: fields.tariff]?.record {
            tariffs = [FCBTariff(single, fields: FCBLayout.fields(fields.tariffFields, for: single))]
        }
        places = Self.places(record, fields)
        (validFrom, validUntil) = Self.validity(kind, record, fields, issuingDay: issuingDay)
    }

    /// The product's name for people: a customer card's own description, else the first tariff description,
    /// else the product id.
    public var productName: String? {
        if let cardDescription { return cardDescription }
        for tariff in tariffs {
            if let description = tariff.description { return description }
        }
        return productID?.description
    }

    /// The number of passengers the tariffs cover (`nil` without tariffs).
    public var passengerCount: Int? {
        tariffs.isEmpty ? nil : tariffs.reduce(0) { $0 &+ $1.numberOfPassengers }
    }

    // MARK: - Validity

    private static func validity(
        _ kind: FCBDocumentKind, _ record: PERRecord, _ fields: FCBDocumentFields, issuingDay: FCBDay
    ) -> (FCBInstant?, FCBInstant?) {
        func int(_ position: Int?) -> Int? { record[position: position]?.integer }
        switch kind {
        case .openTicket, .pass, .counterMark, .stationPassage, .fipTicket:
            let timed = kind != .fipTicket
            let fromDay = issuingDay.adding(days: int(fields.validFromDay) ?? 0)
            let untilDay = fromDay.adding(days: int(fields.validUntilDay) ?? 0)
            let fromOffset = timed ? int(fields.validFromUTCOffset) : nil
            let untilOffset = timed ? int(fields.validUntilUTCOffset) ?? fromOffset : nil
            let start = FCBInstant(
                day: fromDay, minute: timed ? int(fields.validFromTime) ?? 0 : 0, utcOffset: fromOffset)
            return (start, end(untilDay, minute: timed ? int(fields.validUntilTime) : nil, utcOffset: untilOffset))
        case .reservation:
            let departureDay = issuingDay.adding(days: int(fields.departureDate) ?? 0)
            let arrivalDay = departureDay.adding(days: int(fields.arrivalDate) ?? 0)
            let departureOffset = int(fields.departureUTCOffset)
            let start = FCBInstant(
                day: departureDay, minute: int(fields.departureTime) ?? 0, utcOffset: departureOffset)
            return (
                start,
                end(
                    arrivalDay, minute: int(fields.arrivalTime),
                    utcOffset: int(fields.arrivalUTCOffset) ?? departureOffset)
            )
        case .carCarriageReservation:
            let day = issuingDay.adding(days: int(fields.beginLoadingDate) ?? 0)
            let offset = int(fields.loadingUTCOffset)
            let start = FCBInstant(day: day, minute: int(fields.beginLoadingTime) ?? 0, utcOffset: offset)
            return (start, end(day, minute: int(fields.endLoadingTime), utcOffset: offset))
        case .parkingGround:
            guard let from = int(fields.fromParkingDate) else { return (nil, nil) }
            let fromDay = issuingDay.adding(days: from)
            let untilDay = fromDay.adding(days: int(fields.untilParkingDate) ?? 0)
            return (FCBInstant(day: fromDay, minute: 0, utcOffset: nil), end(untilDay, minute: nil, utcOffset: nil))
        case .voucher:
            guard let fromYear = int(fields.validFromYear), let fromDay = int(fields.validFromDay),
                let untilYear = int(fields.validUntilYear), let untilDay = int(fields.validUntilDay)
            else { return (nil, nil) }
            return (
                FCBInstant(day: FCBDay(year: fromYear, dayOfYear: fromDay), minute: 0, utcOffset: nil),
                end(FCBDay(year: untilYear, dayOfYear: untilDay), minute: nil, utcOffset: nil)
            )
        case .customerCard:
            guard let fromYear = int(fields.validFromYear) else { return (nil, nil) }
            let untilYear = fromYear &+ (int(fields.validUntilYear) ?? 0)
            let fromDay = FCBDay(year: fromYear, dayOfYear: int(fields.validFromDay) ?? 1)
            let untilDay =
                int(fields.validUntilDay).map { FCBDay(year: untilYear, dayOfYear: $0) }
                ?? FCBDay(year: untilYear &+ 1, dayOfYear: 0)
            return (FCBInstant(day: fromDay, minute: 0, utcOffset: nil), end(untilDay, minute: nil, utcOffset: nil))
        case .extensionData, .delayConfirmation, .other:
            return (nil, nil)
        }
    }

    /// The end of validity: the stated minute, or through the whole minute 23:59 when none is stated.
    private static func end(_ day: FCBDay, minute: Int?, utcOffset: Int?) -> FCBInstant {
        guard let minute else { return FCBInstant(day: day, minute: 1_439, second: 59, utcOffset: utcOffset) }
        return FCBInstant(day: day, minute: minute, utcOffset: utcOffset)
    }

    // MARK: - Stations and places

    private static let codeTableNames = [
        "stationUIC", "stationUICReservation", "stationERA", "localCarrierStationCodeTable",
        "proprietaryIssuerStationCodeTable",
    ]

    private static func codeTableName(_ value: PERValue?) -> String? {
        guard let index = value?.enumeratedIndex, index < codeTableNames.count else { return nil }
        return codeTableNames[index]
    }

    private static func station(_ record: PERRecord, _ fields: FCBStationFields, table: String?) -> FCBStation? {
        let code = FCBCode(record, number: fields.number, text: fields.text)
        let name = record[position: fields.name]?.text
        guard code != nil || name != nil else { return nil }
        return FCBStation(code: code, name: name, codeTable: table)
    }

    private static func places(_ record: PERRecord, _ documentFields: FCBDocumentFields) -> String? {
        guard let places = record[position: documentFields.places]?.record else {
            if let coach = record[position: documentFields.coach]?.text {
                return ["coach \(coach)", record[position: documentFields.place]?.text.map { "place \($0)" }]
                    .compactMap { $0 }.joined(separator: ", ")
            }
            return nil
        }
        let fields = FCBLayout.fields(documentFields.placesFields, for: places)
        var parts: [String] = []
        if let coach = places[position: fields.coach]?.text { parts.append("coach \(coach)") }
        let written: [PERValue] = places[position: fields.placeIA5]?.items ?? []
        let numbered: [PERValue] = places[position: fields.placeNum]?.items ?? []
        var seats: [String] = written.compactMap { (value: PERValue) -> String? in value.text }
        for value in numbered {
            if let number = value.integer { seats.append(String(number)) }
        }
        if let text = places[position: fields.placeString]?.text { seats.append(text) }
        if !seats.isEmpty { parts.append("place \(seats.joined(separator: ", "))") }
        if let description = places[position: fields.placeDescription]?.text { parts.append(description) }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}
