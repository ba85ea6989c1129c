/// Where the fields that `FCBTicket` reads sit in the SEQUENCE types of one FCB version, resolved once per schema.
///
/// Reading a ticket by field name looked up about a hundred names per ticket (a hash and a string comparison
/// each); the positions depend only on the schema, so they are found once, when a version is first read, and
/// each record is then read by index. Every set of positions remembers the SEQUENCE it was resolved in: a record
/// of another type (a document built by hand in a test, a schema this layout was not made from) has its
/// positions resolved on the spot instead, so the values read are always those the names give.
struct FCBLayout: Sendable {
    /// `UicRailTicketData`.
    let root: FCBRootFields
    /// `IssuingData`.
    let issuing: FCBIssuingFields?
    /// `TravelerData`.
    let travelerDetail: FCBTravelerDetailFields?
    /// `TravelerType`.
    let traveler: FCBTravelerFields?
    /// `DocumentData`.
    let document: FCBDocumentDataFields?

    /// The layout of the `UicRailTicketData` SEQUENCE `root`.
    init(_ root: PERSequence) {
        self.root = FCBRootFields(root)
        issuing = root.componentSequence("issuingDetail").map(FCBIssuingFields.init)
        let travelerData = root.componentSequence("travelerDetail")
        travelerDetail = travelerData.map(FCBTravelerDetailFields.init)
        traveler = travelerData?.componentSequence("traveler").map(FCBTravelerFields.init)
        document = root.componentSequence("transportDocument").map(FCBDocumentDataFields.init)
    }

    private static let v13 = FCBLayout(FCBVersion.v1_3.schema.recordSequence!)
    private static let v2 = FCBLayout(FCBVersion.v2.schema.recordSequence!)
    private static let v3 = FCBLayout(FCBVersion.v3.schema.recordSequence!)

    /// The layout of `version`'s schema, resolved at its first use.
    static func of(_ version: FCBVersion) -> FCBLayout {
        switch version {
        case .v1_3: v13
        case .v2: v2
        case .v3: v3
        }
    }

    /// `cached` when it was resolved in `record`'s type, else the positions of that type, resolved now.
    static func fields<Fields: FCBFields>(_ cached: Fields?, for record: PERRecord) -> Fields {
        if let cached, cached.sequence === record.type { return cached }
        return Fields(record.type)
    }
}

/// Positions of named components in one SEQUENCE type.
protocol FCBFields: Sendable {
    /// The type the positions were resolved in.
    var sequence: PERSequence { get }
    /// Resolves the positions in `sequence`.
    init(_ sequence: PERSequence)
}

/// `UicRailTicketData`.
struct FCBRootFields: FCBFields {
    let sequence: PERSequence
    let issuingDetail: Int?
    let travelerDetail: Int?
    let transportDocument: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        issuingDetail = sequence.index(of: "issuingDetail")
        travelerDetail = sequence.index(of: "travelerDetail")
        transportDocument = sequence.index(of: "transportDocument")
    }
}

/// `IssuingData`.
struct FCBIssuingFields: FCBFields {
    let sequence: PERSequence
    let securityProviderNum: Int?
    let securityProviderIA5: Int?
    let issuerNum: Int?
    let issuerIA5: Int?
    let issuerName: Int?
    let issuingYear: Int?
    let issuingDay: Int?
    let issuingTime: Int?
    let specimen: Int?
    let securePaperTicket: Int?
    let activated: Int?
    let currency: Int?
    let currencyFract: Int?
    let issuerPNR: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        securityProviderNum = sequence.index(of: "securityProviderNum")
        securityProviderIA5 = sequence.index(of: "securityProviderIA5")
        issuerNum = sequence.index(of: "issuerNum")
        issuerIA5 = sequence.index(of: "issuerIA5")
        issuerName = sequence.index(of: "issuerName")
        issuingYear = sequence.index(of: "issuingYear")
        issuingDay = sequence.index(of: "issuingDay")
        issuingTime = sequence.index(of: "issuingTime")
        specimen = sequence.index(of: "specimen")
        securePaperTicket = sequence.index(of: "securePaperTicket")
        activated = sequence.index(of: "activated")
        currency = sequence.index(of: "currency")
        currencyFract = sequence.index(of: "currencyFract")
        issuerPNR = sequence.index(of: "issuerPNR")
    }
}

/// `TravelerData`.
struct FCBTravelerDetailFields: FCBFields {
    let sequence: PERSequence
    let traveler: Int?
    let groupName: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        traveler = sequence.index(of: "traveler")
        groupName = sequence.index(of: "groupName")
    }
}

/// `TravelerType`.
struct FCBTravelerFields: FCBFields {
    let sequence: PERSequence
    let firstName: Int?
    let secondName: Int?
    let lastName: Int?
    let title: Int?
    let yearOfBirth: Int?
    let monthOfBirth: Int?
    let dayOfBirthInMonth: Int?
    let dayOfBirth: Int?
    let idCard: Int?
    let passportId: Int?
    let customerIdNum: Int?
    let customerIdIA5: Int?
    let ticketHolder: Int?
    let passengerType: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        firstName = sequence.index(of: "firstName")
        secondName = sequence.index(of: "secondName")
        lastName = sequence.index(of: "lastName")
        title = sequence.index(of: "title")
        yearOfBirth = sequence.index(of: "yearOfBirth")
        monthOfBirth = sequence.index(of: "monthOfBirth")
        dayOfBirthInMonth = sequence.index(of: "dayOfBirthInMonth")
        dayOfBirth = sequence.index(of: "dayOfBirth")
        idCard = sequence.index(of: "idCard")
        passportId = sequence.index(of: "passportId")
        customerIdNum = sequence.index(of: "customerIdNum")
        customerIdIA5 = sequence.index(of: "customerIdIA5")
        ticketHolder = sequence.index(of: "ticketHolder")
        passengerType = sequence.index(of: "passengerType")
    }
}

/// `DocumentData`, with the positions in each alternative of its `ticket` CHOICE.
struct FCBDocumentDataFields: FCBFields {
    let sequence: PERSequence
    let ticket: Int?
    /// By alternative index (root alternatives, then the extension alternatives the schema knows); `nil` for an
    /// alternative that is not a SEQUENCE.
    let alternatives: [FCBDocumentFields?]

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        ticket = sequence.index(of: "ticket")
        guard let choice = sequence.componentChoice("ticket") else {
            alternatives = []
            return
        }
        alternatives = (choice.alternatives + choice.additions).map { alternative in
            alternative.type.recordSequence.map(FCBDocumentFields.init)
        }
    }

    /// The positions resolved for alternative `index`, when the schema knows it.
    func alternative(_ index: Int) -> FCBDocumentFields? {
        index >= 0 && index < alternatives.count ? alternatives[index] : nil
    }
}

/// The alternatives of `DocumentData.ticket` (`OpenTicketData`, `ReservationData`, …): every field that
/// `FCBDocument` reads from any of them, `nil` where this alternative has no such field.
///
/// A class: forty-odd positions are shared by reference rather than copied for every document read.
final class FCBDocumentFields: FCBFields {
    let sequence: PERSequence
    let referenceNum: Int?
    let referenceIA5: Int?
    let productOwnerNum: Int?
    let productOwnerIA5: Int?
    let productIdNum: Int?
    let productIdIA5: Int?
    let classCode: Int?
    let cardTypeDescr: Int?
    let cardIdNum: Int?
    let cardIdIA5: Int?
    let infoText: Int?
    let validRegionDesc: Int?
    let trainNum: Int?
    let trainIA5: Int?
    let stationCodeTable: Int?
    let fromStation: FCBStationFields
    let station: FCBStationFields
    let toStation: FCBStationFields
    let tariffs: Int?
    let tariff: Int?
    let places: Int?
    let coach: Int?
    let place: Int?
    let validFromDay: Int?
    let validFromTime: Int?
    let validFromUTCOffset: Int?
    let validUntilDay: Int?
    let validUntilTime: Int?
    let validUntilUTCOffset: Int?
    let validFromYear: Int?
    let validUntilYear: Int?
    let departureDate: Int?
    let departureTime: Int?
    let departureUTCOffset: Int?
    let arrivalDate: Int?
    let arrivalTime: Int?
    let arrivalUTCOffset: Int?
    let beginLoadingDate: Int?
    let beginLoadingTime: Int?
    let endLoadingTime: Int?
    let loadingUTCOffset: Int?
    let fromParkingDate: Int?
    let untilParkingDate: Int?
    /// `TariffType`, as the `tariffs` items (or the single `tariff`) of this alternative.
    let tariffFields: FCBTariffFields?
    /// `PlacesType`, as `places` of this alternative.
    let placesFields: FCBPlacesFields?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        referenceNum = sequence.index(of: "referenceNum")
        referenceIA5 = sequence.index(of: "referenceIA5")
        productOwnerNum = sequence.index(of: "productOwnerNum")
        productOwnerIA5 = sequence.index(of: "productOwnerIA5")
        productIdNum = sequence.index(of: "productIdNum")
        productIdIA5 = sequence.index(of: "productIdIA5")
        classCode = sequence.index(of: "classCode")
        cardTypeDescr = sequence.index(of: "cardTypeDescr")
        cardIdNum = sequence.index(of: "cardIdNum")
        cardIdIA5 = sequence.index(of: "cardIdIA5")
        infoText = sequence.index(of: "infoText")
        validRegionDesc = sequence.index(of: "validRegionDesc")
        trainNum = sequence.index(of: "trainNum")
        trainIA5 = sequence.index(of: "trainIA5")
        stationCodeTable = sequence.index(of: "stationCodeTable")
        fromStation = FCBStationFields(
            sequence, number: "fromStationNum", text: "fromStationIA5", name: "fromStationNameUTF8")
        station = FCBStationFields(sequence, number: "stationNum", text: "stationIA5", name: "stationNameUTF8")
        toStation = FCBStationFields(sequence, number: "toStationNum", text: "toStationIA5", name: "toStationNameUTF8")
        tariffs = sequence.index(of: "tariffs")
        tariff = sequence.index(of: "tariff")
        places = sequence.index(of: "places")
        coach = sequence.index(of: "coach")
        place = sequence.index(of: "place")
        validFromDay = sequence.index(of: "validFromDay")
        validFromTime = sequence.index(of: "validFromTime")
        validFromUTCOffset = sequence.index(of: "validFromUTCOffset")
        validUntilDay = sequence.index(of: "validUntilDay")
        validUntilTime = sequence.index(of: "validUntilTime")
        validUntilUTCOffset = sequence.index(of: "validUntilUTCOffset")
        validFromYear = sequence.index(of: "validFromYear")
        validUntilYear = sequence.index(of: "validUntilYear")
        departureDate = sequence.index(of: "departureDate")
        departureTime = sequence.index(of: "departureTime")
        departureUTCOffset = sequence.index(of: "departureUTCOffset")
        arrivalDate = sequence.index(of: "arrivalDate")
        arrivalTime = sequence.index(of: "arrivalTime")
        arrivalUTCOffset = sequence.index(of: "arrivalUTCOffset")
        beginLoadingDate = sequence.index(of: "beginLoadingDate")
        beginLoadingTime = sequence.index(of: "beginLoadingTime")
        endLoadingTime = sequence.index(of: "endLoadingTime")
        loadingUTCOffset = sequence.index(of: "loadingUTCOffset")
        fromParkingDate = sequence.index(of: "fromParkingDate")
        untilParkingDate = sequence.index(of: "untilParkingDate")
        tariffFields = (sequence.componentSequence("tariffs") ?? sequence.componentSequence("tariff"))
            .map(FCBTariffFields.init)
        placesFields = sequence.componentSequence("places").map(FCBPlacesFields.init)
    }
}

/// One station of a document: its `…Num`, `…IA5` and `…NameUTF8` components.
struct FCBStationFields: Sendable {
    let number: Int?
    let text: Int?
    let name: Int?

    init(_ sequence: PERSequence, number: String, text: String, name: String) {
        self.number = sequence.index(of: number)
        self.text = sequence.index(of: text)
        self.name = sequence.index(of: name)
    }
}

/// `TariffType`.
struct FCBTariffFields: FCBFields {
    let sequence: PERSequence
    let numberOfPassengers: Int?
    let passengerType: Int?
    let tariffDesc: Int?
    let tariffIdNum: Int?
    let tariffIdIA5: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        numberOfPassengers = sequence.index(of: "numberOfPassengers")
        passengerType = sequence.index(of: "passengerType")
        tariffDesc = sequence.index(of: "tariffDesc")
        tariffIdNum = sequence.index(of: "tariffIdNum")
        tariffIdIA5 = sequence.index(of: "tariffIdIA5")
    }
}

/// `PlacesType`.
struct FCBPlacesFields: FCBFields {
    let sequence: PERSequence
    let coach: Int?
    let placeIA5: Int?
    let placeNum: Int?
    let placeString: Int?
    let placeDescription: Int?

    init(_ sequence: PERSequence) {
        self.sequence = sequence
        coach = sequence.index(of: "coach")
        placeIA5 = sequence.index(of: "placeIA5")
        placeNum = sequence.index(of: "placeNum")
        placeString = sequence.index(of: "placeString")
        placeDescription = sequence.index(of: "placeDescription")
    }
}
