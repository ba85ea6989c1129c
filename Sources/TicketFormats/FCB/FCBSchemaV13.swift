// FCB v1.3.5: the types of uicRailTicketData_v1.3.5.asn (U_FLEX version 13 or 01, DOSIPAS FCB1/FCB13).
// Generated from the ASN.1 module of the same name (scripts/fcb-asn1) by scripts/generate-fcb-schemas.sh: one
// static per type, in the order of the module, so that a reader can hold the two side by side. Do not edit;
// CI (scripts/check-fcb-generated.sh) fails when this file differs from what the script writes.

/// The types of the module, as data for `PERDecoder`.
enum FCBSchemaV13 {
    static let uicRailTicketData: PERType = .sequence(
        PERSequence(
            "UicRailTicketData", extensible: true,
            [
                PERComponent("issuingDetail", issuingData),
                PERComponent("travelerDetail", travelerData, .optional),
                PERComponent("transportDocument", .sequenceOf(documentData, nil), .optional),
                PERComponent("controlDetail", controlData, .optional),
                PERComponent("extension", .sequenceOf(extensionData, nil), .optional),
            ]
        ))
    static let documentData: PERType = .sequence(
        PERSequence(
            "DocumentData", extensible: true,
            [
                PERComponent("token", tokenType, .optional),
                PERComponent("ticket", documentDataTicket),
            ]
        ))
    static let documentDataTicket: PERType = .choice(
        PERChoice(
            "DocumentDataTicket", extensible: true,
            [
                PERComponent("reservation", reservationData),
                PERComponent("carCarriageReservation", carCarriageReservationData),
                PERComponent("openTicket", openTicketData),
                PERComponent("pass", passData),
                PERComponent("voucher", voucherData),
                PERComponent("customerCard", customerCardData),
                PERComponent("counterMark", countermarkData),
                PERComponent("parkingGround", parkingGroundData),
                PERComponent("fipTicket", fipTicketData),
                PERComponent("stationPassage", stationPassageData),
                PERComponent("extension", extensionData),
                PERComponent("delayConfirmation", delayConfirmation),
            ]
        ))
    static let delayConfirmation: PERType = .sequence(
        PERSequence(
            "DelayConfirmation", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("trainNum", .unconstrainedInteger, .optional),
                PERComponent("trainIA5", .ia5String(nil), .optional),
                PERComponent("departureYear", .integer(2016, 2269), .optional),
                PERComponent("departureDay", .integer(1, 366), .optional),
                PERComponent("departureTime", .integer(0, 1440), .optional),
                PERComponent("departureUTCOffset", .integer(-60, 60), .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("stationNum", .integer(1, 9_999_999), .optional),
                PERComponent("stationIA5", .ia5String(nil), .optional),
                PERComponent("delay", .integer(1, 999)),
                PERComponent("trainCancelled", .boolean),
                PERComponent("confirmationType", confirmationType, .defaulted(.enumerated(1))),
                PERComponent("affectedTickets", .sequenceOf(ticketLinkType, nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let confirmationType: PERType = .enumerated(
        PEREnumeration(
            "ConfirmationType", ["trainDelayConfirmation", "travelerDelayConfirmation", "trainLinkedTicketDelay"],
            extensible: true))
    static let issuingData: PERType = .sequence(
        PERSequence(
            "IssuingData", extensible: true,
            [
                PERComponent("securityProviderNum", .integer(1, 32000), .optional),
                PERComponent("securityProviderIA5", .ia5String(nil), .optional),
                PERComponent("issuerNum", .integer(1, 32000), .optional),
                PERComponent("issuerIA5", .ia5String(nil), .optional),
                PERComponent("issuingYear", .integer(2016, 2269)),
                PERComponent("issuingDay", .integer(1, 366)),
                PERComponent("issuingTime", .integer(0, 1440), .optional),
                PERComponent("issuerName", .utf8String(nil), .optional),
                PERComponent("specimen", .boolean),
                PERComponent("securePaperTicket", .boolean),
                PERComponent("activated", .boolean),
                PERComponent("currency", .ia5String(PERSize(3, 3)), .defaulted(.text("EUR"))),
                PERComponent("currencyFract", .integer(1, 3), .defaulted(.integer(2))),
                PERComponent("issuerPNR", .ia5String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
                PERComponent("issuedOnTrainNum", .unconstrainedInteger, .optional),
                PERComponent("issuedOnTrainIA5", .ia5String(nil), .optional),
                PERComponent("issuedOnLine", .unconstrainedInteger, .optional),
                PERComponent("pointOfSale", geoCoordinateType, .optional),
            ]
        ))
    static let controlData: PERType = .sequence(
        PERSequence(
            "ControlData", extensible: true,
            [
                PERComponent("identificationByCardReference", .sequenceOf(cardReferenceType, nil), .optional),
                PERComponent("identificationByIdCard", .boolean),
                PERComponent("identificationByPassportId", .boolean),
                PERComponent("identificationItem", .unconstrainedInteger, .optional),
                PERComponent("passportValidationRequired", .boolean),
                PERComponent("onlineValidationRequired", .boolean),
                PERComponent("randomDetailedValidationRequired", .integer(0, 99), .optional),
                PERComponent("ageCheckRequired", .boolean),
                PERComponent("reductionCardCheckRequired", .boolean),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("includedTickets", .sequenceOf(ticketLinkType, nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let travelerData: PERType = .sequence(
        PERSequence(
            "TravelerData", extensible: true,
            [
                PERComponent("traveler", .sequenceOf(travelerType, nil), .optional),
                PERComponent("preferredLanguage", .ia5String(PERSize(2, 2)), .optional),
                PERComponent("groupName", .utf8String(nil), .optional),
            ]
        ))
    static let reservationData: PERType = .sequence(
        PERSequence(
            "ReservationData", extensible: true,
            [
                PERComponent("trainNum", .unconstrainedInteger, .optional),
                PERComponent("trainIA5", .ia5String(nil), .optional),
                PERComponent("departureDate", .integer(-1, 370), .defaulted(.integer(0))),
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("serviceBrand", .integer(0, 32000), .optional),
                PERComponent("serviceBrandAbrUTF8", .utf8String(nil), .optional),
                PERComponent("serviceBrandNameUTF8", .utf8String(nil), .optional),
                PERComponent("service", serviceType, .defaulted(.enumerated(0))),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(1))),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("departureTime", .integer(0, 1440)),
                PERComponent("departureUTCOffset", .integer(-60, 60), .optional),
                PERComponent("arrivalDate", .integer(0, 20), .defaulted(.integer(0))),
                PERComponent("arrivalTime", .integer(0, 1440), .optional),
                PERComponent("arrivalUTCOffset", .integer(-60, 60), .optional),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("classCode", travelClassType, .defaulted(.enumerated(2))),
                PERComponent("serviceLevel", .ia5String(PERSize(1, 2)), .optional),
                PERComponent("places", placesType, .optional),
                PERComponent("additionalPlaces", placesType, .optional),
                PERComponent("bicyclePlaces", placesType, .optional),
                PERComponent("compartmentDetails", compartmentDetailsType, .optional),
                PERComponent("numberOfOverbooked", .integer(0, 200), .defaulted(.integer(0))),
                PERComponent("berth", .sequenceOf(berthDetailData, nil), .optional),
                PERComponent("tariff", .sequenceOf(tariffType, nil), .optional),
                PERComponent("priceType", priceTypeType, .defaulted(.enumerated(3))),
                PERComponent("price", .unconstrainedInteger, .optional),
                PERComponent("vatDetail", .sequenceOf(vatDetailType, nil), .optional),
                PERComponent("typeOfSupplement", .integer(0, 9), .defaulted(.integer(0))),
                PERComponent("numberOfSupplements", .integer(0, 200), .defaulted(.integer(0))),
                PERComponent("luggage", luggageRestrictionType, .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let vatDetailType: PERType = .sequence(
        PERSequence(
            "VatDetailType", extensible: false,
            [
                PERComponent("country", .integer(1, 999)),
                PERComponent("percentage", .integer(0, 999)),
                PERComponent("amount", .unconstrainedInteger, .optional),
                PERComponent("vatId", .ia5String(nil), .optional),
            ]
        ))
    static let carCarriageReservationData: PERType = .sequence(
        PERSequence(
            "CarCarriageReservationData", extensible: true,
            [
                PERComponent("trainNum", .unconstrainedInteger, .optional),
                PERComponent("trainIA5", .ia5String(nil), .optional),
                PERComponent("beginLoadingDate", .integer(-1, 370), .defaulted(.integer(0))),
                PERComponent("beginLoadingTime", .integer(0, 1440), .optional),
                PERComponent("endLoadingTime", .integer(0, 1440), .optional),
                PERComponent("loadingUTCOffset", .integer(-60, 60), .optional),
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("serviceBrand", .integer(1, 32000), .optional),
                PERComponent("serviceBrandAbrUTF8", .utf8String(nil), .optional),
                PERComponent("serviceBrandNameUTF8", .utf8String(nil), .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(1))),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("coach", .ia5String(nil), .optional),
                PERComponent("place", .ia5String(nil), .optional),
                PERComponent("compartmentDetails", compartmentDetailsType, .optional),
                PERComponent("numberPlate", .ia5String(nil)),
                PERComponent("trailerPlate", .ia5String(nil), .optional),
                PERComponent("carCategory", .integer(0, 9)),
                PERComponent("boatCategory", .integer(0, 6), .optional),
                PERComponent("textileRoof", .boolean),
                PERComponent("roofRackType", roofRackType, .defaulted(.enumerated(0))),
                PERComponent("roofRackHeight", .integer(0, 99), .optional),
                PERComponent("attachedBoats", .integer(0, 2), .optional),
                PERComponent("attachedBicycles", .integer(0, 4), .optional),
                PERComponent("attachedSurfboards", .integer(0, 5), .optional),
                PERComponent("loadingListEntry", .integer(0, 999), .optional),
                PERComponent("loadingDeck", loadingDeckType, .defaulted(.enumerated(1))),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("tariff", tariffType),
                PERComponent("priceType", priceTypeType, .defaulted(.enumerated(3))),
                PERComponent("price", .unconstrainedInteger, .optional),
                PERComponent("vatDetail", .sequenceOf(vatDetailType, nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let openTicketData: PERType = .sequence(
        PERSequence(
            "OpenTicketData", extensible: true,
            [
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("extIssuerId", .unconstrainedInteger, .optional),
                PERComponent("issuerAuthorizationId", .unconstrainedInteger, .optional),
                PERComponent("returnIncluded", .boolean),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("validRegionDesc", .utf8String(nil), .optional),
                PERComponent("validRegion", .sequenceOf(regionalValidityType, nil), .optional),
                PERComponent("returnDescription", returnRouteDescriptionType, .optional),
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
                PERComponent("activatedDay", .sequenceOf(.integer(0, 370), nil), .optional),
                PERComponent("classCode", travelClassType, .defaulted(.enumerated(2))),
                PERComponent("serviceLevel", .ia5String(PERSize(1, 2)), .optional),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("includedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("excludedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("tariffs", .sequenceOf(tariffType, nil), .optional),
                PERComponent("price", .unconstrainedInteger, .optional),
                PERComponent("vatDetail", .sequenceOf(vatDetailType, nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("includedAddOns", .sequenceOf(includedOpenTicketType, nil), .optional),
                PERComponent("luggage", luggageRestrictionType, .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let passData: PERType = .sequence(
        PERSequence(
            "PassData", extensible: true,
            [
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("passType", .integer(1, 250), .optional),
                PERComponent("passDescription", .utf8String(nil), .optional),
                PERComponent("classCode", travelClassType, .defaulted(.enumerated(2))),
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validityPeriodDetails", validityPeriodDetailType, .optional),
                PERComponent("numberOfValidityDays", .integer(0, 370), .optional),
                PERComponent("numberOfPossibleTrips", .integer(1, 250), .optional),
                PERComponent("numberOfDaysOfTravel", .integer(1, 250), .optional),
                PERComponent("activatedDay", .sequenceOf(.integer(0, 370), nil), .optional),
                PERComponent("countries", .sequenceOf(.integer(1, 250), nil), .optional),
                PERComponent("includedCarrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("includedCarrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("excludedCarrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("excludedCarrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("includedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("excludedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("validRegion", .sequenceOf(regionalValidityType, nil), .optional),
                PERComponent("tariffs", .sequenceOf(tariffType, nil), .optional),
                PERComponent("price", .unconstrainedInteger, .optional),
                PERComponent("vatDetail", .sequenceOf(vatDetailType, nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let validityPeriodDetailType: PERType = .sequence(
        PERSequence(
            "ValidityPeriodDetailType", extensible: false,
            [
                PERComponent("validityPeriod", .sequenceOf(validityPeriodType, nil), .optional),
                PERComponent("excludedTimeRange", .sequenceOf(timeRangeType, nil), .optional),
            ]
        ))
    static let validityPeriodType: PERType = .sequence(
        PERSequence(
            "ValidityPeriodType", extensible: false,
            [
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
            ]
        ))
    static let timeRangeType: PERType = .sequence(
        PERSequence(
            "TimeRangeType", extensible: false,
            [
                PERComponent("fromTime", .integer(0, 1440)),
                PERComponent("untilTime", .integer(0, 1440)),
            ]
        ))
    static let voucherData: PERType = .sequence(
        PERSequence(
            "VoucherData", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("validFromYear", .integer(2016, 2269)),
                PERComponent("validFromDay", .integer(0, 370)),
                PERComponent("validUntilYear", .integer(2016, 2269)),
                PERComponent("validUntilDay", .integer(0, 370)),
                PERComponent("value", .unconstrainedInteger, .defaulted(.integer(0))),
                PERComponent("type", .integer(1, 32000), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let fipTicketData: PERType = .sequence(
        PERSequence(
            "FIPTicketData", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("activatedDay", .sequenceOf(.integer(0, 370), nil), .optional),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("numberOfTravelDays", .integer(1, 200)),
                PERComponent("includesSupplements", .boolean),
                PERComponent("classCode", travelClassType, .defaulted(.enumerated(2))),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let stationPassageData: PERType = .sequence(
        PERSequence(
            "StationPassageData", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("productName", .utf8String(nil), .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("stationNum", .sequenceOf(.unconstrainedInteger, nil), .optional),
                PERComponent("stationIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("stationNameUTF8", .sequenceOf(.utf8String(nil), nil), .optional),
                PERComponent("areaCodeNum", .sequenceOf(.unconstrainedInteger, nil), .optional),
                PERComponent("areaCodeIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("areaNameUTF8", .sequenceOf(.utf8String(nil), nil), .optional),
                PERComponent("validFromDay", .integer(-1, 700)),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
                PERComponent("numberOfDaysValid", .unconstrainedInteger, .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let customerCardData: PERType = .sequence(
        PERSequence(
            "CustomerCardData", extensible: true,
            [
                PERComponent("customer", travelerType, .optional),
                PERComponent("cardIdIA5", .ia5String(nil), .optional),
                PERComponent("cardIdNum", .unconstrainedInteger, .optional),
                PERComponent("validFromYear", .integer(2016, 2269)),
                PERComponent("validFromDay", .integer(0, 370), .optional),
                PERComponent("validUntilYear", .integer(0, 250), .defaulted(.integer(0))),
                PERComponent("validUntilDay", .integer(0, 370), .optional),
                PERComponent("classCode", travelClassType, .optional),
                PERComponent("cardType", .integer(1, 1000), .optional),
                PERComponent("cardTypeDescr", .utf8String(nil), .optional),
                PERComponent("customerStatus", .unconstrainedInteger, .optional),
                PERComponent("customerStatusDescr", .ia5String(nil), .optional),
                PERComponent("includedServices", .sequenceOf(.unconstrainedInteger, nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let parkingGroundData: PERType = .sequence(
        PERSequence(
            "ParkingGroundData", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("parkingGroundId", .ia5String(nil)),
                PERComponent("fromParkingDate", .integer(-1, 370)),
                PERComponent("untilParkingDate", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("accessCode", .ia5String(nil), .optional),
                PERComponent("location", .utf8String(nil)),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("stationNum", .unconstrainedInteger, .optional),
                PERComponent("stationIA5", .utf8String(nil), .optional),
                PERComponent("specialInformation", .utf8String(nil), .optional),
                PERComponent("entryTrack", .utf8String(nil), .optional),
                PERComponent("numberPlate", .ia5String(nil), .optional),
                PERComponent("price", .unconstrainedInteger, .optional),
                PERComponent("vatDetail", .sequenceOf(vatDetailType, nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let countermarkData: PERType = .sequence(
        PERSequence(
            "CountermarkData", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("ticketReferenceIA5", .ia5String(nil), .optional),
                PERComponent("ticketReferenceNum", .unconstrainedInteger, .optional),
                PERComponent("numberOfCountermark", .integer(1, 200)),
                PERComponent("totalOfCountermarks", .integer(1, 200)),
                PERComponent("groupName", .utf8String(nil)),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("validRegionDesc", .utf8String(nil), .optional),
                PERComponent("validRegion", .sequenceOf(regionalValidityType, nil), .optional),
                PERComponent("returnIncluded", .boolean),
                PERComponent("returnDescription", returnRouteDescriptionType, .optional),
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
                PERComponent("classCode", travelClassType, .defaulted(.enumerated(2))),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("includedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("excludedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let extensionData: PERType = .sequence(
        PERSequence(
            "ExtensionData", extensible: false,
            [
                PERComponent("extensionId", .ia5String(nil)),
                PERComponent("extensionData", .octetString(nil)),
            ]
        ))
    static let includedOpenTicketType: PERType = .sequence(
        PERSequence(
            "IncludedOpenTicketType", extensible: true,
            [
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("productIdNum", .integer(0, 32000), .optional),
                PERComponent("productIdIA5", .ia5String(nil), .optional),
                PERComponent("externalIssuerId", .unconstrainedInteger, .optional),
                PERComponent("issuerAuthorizationId", .unconstrainedInteger, .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("validRegion", .sequenceOf(regionalValidityType, nil), .optional),
                PERComponent("validFromDay", .integer(-1, 700), .defaulted(.integer(0))),
                PERComponent("validFromTime", .integer(0, 1440), .optional),
                PERComponent("validFromUTCOffset", .integer(-60, 60), .optional),
                PERComponent("validUntilDay", .integer(0, 370), .defaulted(.integer(0))),
                PERComponent("validUntilTime", .integer(0, 1440), .optional),
                PERComponent("validUntilUTCOffset", .integer(-60, 60), .optional),
                PERComponent("classCode", travelClassType, .optional),
                PERComponent("serviceLevel", .ia5String(PERSize(1, 2)), .optional),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("includedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("excludedServiceBrands", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("tariffs", .sequenceOf(tariffType, nil), .optional),
                PERComponent("infoText", .utf8String(nil), .optional),
                PERComponent("extension", extensionData, .optional),
            ]
        ))
    static let tariffType: PERType = .sequence(
        PERSequence(
            "TariffType", extensible: true,
            [
                PERComponent("numberOfPassengers", .integer(1, 200), .defaulted(.integer(1))),
                PERComponent("passengerType", passengerType, .optional),
                PERComponent("ageBelow", .integer(1, 64), .optional),
                PERComponent("ageAbove", .integer(1, 128), .optional),
                PERComponent("travelerid", .sequenceOf(.integer(0, 254), nil), .optional),
                PERComponent("restrictedToCountryOfResidence", .boolean),
                PERComponent("restrictedToRouteSection", routeSectionType, .optional),
                PERComponent("seriesDataDetails", seriesDetailType, .optional),
                PERComponent("tariffIdNum", .unconstrainedInteger, .optional),
                PERComponent("tariffIdIA5", .ia5String(nil), .optional),
                PERComponent("tariffDesc", .utf8String(nil), .optional),
                PERComponent("reductionCard", .sequenceOf(cardReferenceType, nil), .optional),
            ]
        ))
    static let seriesDetailType: PERType = .sequence(
        PERSequence(
            "SeriesDetailType", extensible: false,
            [
                PERComponent("supplyingCarrier", .integer(1, 32000), .optional),
                PERComponent("offerIdentification", .integer(1, 99), .optional),
                PERComponent("series", .unconstrainedInteger, .optional),
            ]
        ))
    static let routeSectionType: PERType = .sequence(
        PERSequence(
            "RouteSectionType", extensible: false,
            [
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
            ]
        ))
    static let cardReferenceType: PERType = .sequence(
        PERSequence(
            "CardReferenceType", extensible: true,
            [
                PERComponent("cardIssuerNum", .integer(1, 32000), .optional),
                PERComponent("cardIssuerIA5", .ia5String(nil), .optional),
                PERComponent("cardIdNum", .unconstrainedInteger, .optional),
                PERComponent("cardIdIA5", .ia5String(nil), .optional),
                PERComponent("cardName", .utf8String(nil), .optional),
                PERComponent("cardType", .unconstrainedInteger, .optional),
                PERComponent("leadingCardIdNum", .unconstrainedInteger, .optional),
                PERComponent("leadingCardIdIA5", .ia5String(nil), .optional),
                PERComponent("trailingCardIdNum", .unconstrainedInteger, .optional),
                PERComponent("trailingCardIdIA5", .ia5String(nil), .optional),
            ]
        ))
    static let travelerType: PERType = .sequence(
        PERSequence(
            "TravelerType", extensible: true,
            [
                PERComponent("firstName", .utf8String(nil), .optional),
                PERComponent("secondName", .utf8String(nil), .optional),
                PERComponent("lastName", .utf8String(nil), .optional),
                PERComponent("idCard", .ia5String(nil), .optional),
                PERComponent("passportId", .ia5String(nil), .optional),
                PERComponent("title", .ia5String(PERSize(1, 3)), .optional),
                PERComponent("gender", genderType, .optional),
                PERComponent("customerIdIA5", .ia5String(nil), .optional),
                PERComponent("customerIdNum", .unconstrainedInteger, .optional),
                PERComponent("yearOfBirth", .integer(1901, 2155), .optional),
                PERComponent("dayOfBirth", .integer(0, 370), .optional),
                PERComponent("ticketHolder", .boolean),
                PERComponent("passengerType", passengerType, .optional),
                PERComponent("passengerWithReducedMobility", .boolean, .optional),
                PERComponent("countryOfResidence", .integer(1, 999), .optional),
                PERComponent("countryOfPassport", .integer(1, 999), .optional),
                PERComponent("countryOfIdCard", .integer(1, 999), .optional),
                PERComponent("status", .sequenceOf(customerStatusType, nil), .optional),
            ]
        ))
    static let customerStatusType: PERType = .sequence(
        PERSequence(
            "CustomerStatusType", extensible: false,
            [
                PERComponent("statusProviderNum", .integer(1, 32000), .optional),
                PERComponent("statusProviderIA5", .ia5String(nil), .optional),
                PERComponent("customerStatus", .unconstrainedInteger, .optional),
                PERComponent("customerStatusDescr", .ia5String(nil), .optional),
            ]
        ))
    static let returnRouteDescriptionType: PERType = .sequence(
        PERSequence(
            "ReturnRouteDescriptionType", extensible: true,
            [
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("validReturnRegionDesc", .utf8String(nil), .optional),
                PERComponent("validReturnRegion", .sequenceOf(regionalValidityType, nil), .optional),
            ]
        ))
    static let regionalValidityType: PERType = .choice(
        PERChoice(
            "RegionalValidityType", extensible: true,
            [
                PERComponent("trainLink", trainLinkType),
                PERComponent("viaStations", viaStationType),
                PERComponent("zones", zoneType),
                PERComponent("lines", lineType),
                PERComponent("polygone", polygoneType),
            ]
        ))
    static let trainLinkType: PERType = .sequence(
        PERSequence(
            "TrainLinkType", extensible: false,
            [
                PERComponent("trainNum", .unconstrainedInteger, .optional),
                PERComponent("trainIA5", .ia5String(nil), .optional),
                PERComponent("travelDate", .integer(-1, 370)),
                PERComponent("departureTime", .integer(0, 1440)),
                PERComponent("departureUTCOffset", .integer(-60, 60), .optional),
                PERComponent("fromStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("fromStationIA5", .ia5String(nil), .optional),
                PERComponent("toStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("toStationIA5", .ia5String(nil), .optional),
                PERComponent("fromStationNameUTF8", .utf8String(nil), .optional),
                PERComponent("toStationNameUTF8", .utf8String(nil), .optional),
            ]
        ))
    static let lineType: PERType = .sequence(
        PERSequence(
            "LineType", extensible: true,
            [
                PERComponent("carrierNum", .integer(1, 32000), .optional),
                PERComponent("carrierIA5", .ia5String(nil), .optional),
                PERComponent("lineId", .sequenceOf(.unconstrainedInteger, nil), .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("entryStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("entryStationIA5", .ia5String(nil), .optional),
                PERComponent("terminatingStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("terminatingStationIA5", .ia5String(nil), .optional),
                PERComponent("city", .integer(1, 9_999_999), .optional),
                PERComponent("binaryZoneId", .octetString(nil), .optional),
            ]
        ))
    static let zoneType: PERType = .sequence(
        PERSequence(
            "ZoneType", extensible: true,
            [
                PERComponent("carrierNum", .integer(1, 32000), .optional),
                PERComponent("carrierIA5", .ia5String(nil), .optional),
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("entryStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("entryStationIA5", .ia5String(nil), .optional),
                PERComponent("terminatingStationNum", .integer(1, 9_999_999), .optional),
                PERComponent("terminatingStationIA5", .ia5String(nil), .optional),
                PERComponent("city", .unconstrainedInteger, .optional),
                PERComponent("zoneId", .sequenceOf(.unconstrainedInteger, nil), .optional),
                PERComponent("binaryZoneId", .octetString(nil), .optional),
                PERComponent("nutsCode", .ia5String(nil), .optional),
            ]
        ))
    static let viaStationType: PERType = .sequence(
        PERSequence(
            "ViaStationType", extensible: true,
            [
                PERComponent("stationCodeTable", codeTableType, .defaulted(.enumerated(0))),
                PERComponent("stationNum", .integer(1, 9_999_999), .optional),
                PERComponent("stationIA5", .ia5String(nil), .optional),
                PERComponent("alternativeRoutes", .sequenceOf(.recursive(viaStationTypeRecursion), nil), .optional),
                PERComponent("route", .sequenceOf(.recursive(viaStationTypeRecursion), nil), .optional),
                PERComponent("border", .boolean),
                PERComponent("carrierNum", .sequenceOf(.integer(1, 32000), nil), .optional),
                PERComponent("carrierIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("seriesId", .unconstrainedInteger, .optional),
                PERComponent("routeId", .unconstrainedInteger, .optional),
            ]
        ))
    /// `ViaStationType` contains itself: its components refer to it through this.
    static let viaStationTypeRecursion = PERRecursion("ViaStationType") { viaStationType }
    static let polygoneType: PERType = .sequence(
        PERSequence(
            "PolygoneType", extensible: false,
            [
                PERComponent("firstEdge", geoCoordinateType),
                PERComponent("edges", .sequenceOf(deltaCoordinates, nil)),
            ]
        ))
    static let tokenType: PERType = .sequence(
        PERSequence(
            "TokenType", extensible: false,
            [
                PERComponent("tokenProviderNum", .unconstrainedInteger, .optional),
                PERComponent("tokenProviderIA5", .ia5String(nil), .optional),
                PERComponent("tokenSpecification", .ia5String(nil), .optional),
                PERComponent("token", .octetString(nil)),
            ]
        ))
    static let ticketLinkType: PERType = .sequence(
        PERSequence(
            "TicketLinkType", extensible: true,
            [
                PERComponent("referenceIA5", .ia5String(nil), .optional),
                PERComponent("referenceNum", .unconstrainedInteger, .optional),
                PERComponent("issuerName", .utf8String(nil), .optional),
                PERComponent("issuerPNR", .ia5String(nil), .optional),
                PERComponent("productOwnerNum", .integer(1, 32000), .optional),
                PERComponent("productOwnerIA5", .ia5String(nil), .optional),
                PERComponent("ticketType", ticketType, .defaulted(.enumerated(0))),
                PERComponent("linkMode", linkMode, .defaulted(.enumerated(0))),
            ]
        ))
    static let codeTableType: PERType = .enumerated(
        PEREnumeration(
            "CodeTableType",
            [
                "stationUIC", "stationUICReservation", "stationERA", "localCarrierStationCodeTable",
                "proprietaryIssuerStationCodeTable",
            ], extensible: false))
    static let serviceType: PERType = .enumerated(
        PEREnumeration("ServiceType", ["seat", "couchette", "berth", "carcarriage"], extensible: false))
    static let passengerType: PERType = .enumerated(
        PEREnumeration(
            "PassengerType",
            ["adult", "senior", "child", "youth", "dog", "bicycle", "freeAddonPassenger", "freeAddonChild"],
            extensible: true))
    static let ticketType: PERType = .enumerated(
        PEREnumeration("TicketType", ["openTicket", "pass", "reservation", "carCarriageReservation"], extensible: true))
    static let linkMode: PERType = .enumerated(
        PEREnumeration("LinkMode", ["issuedTogether", "onlyValidInCombination"], extensible: true))
    static let placesType: PERType = .sequence(
        PERSequence(
            "PlacesType", extensible: false,
            [
                PERComponent("coach", .ia5String(nil), .optional),
                PERComponent("placeString", .ia5String(nil), .optional),
                PERComponent("placeDescription", .utf8String(nil), .optional),
                PERComponent("placeIA5", .sequenceOf(.ia5String(nil), nil), .optional),
                PERComponent("placeNum", .sequenceOf(.integer(1, 254), nil), .optional),
            ]
        ))
    static let priceTypeType: PERType = .enumerated(
        PEREnumeration("PriceTypeType", ["noPrice", "reservationFee", "supplement", "travelPrice"], extensible: false))
    static let berthTypeType: PERType = .enumerated(
        PEREnumeration("BerthTypeType", ["single", "special", "double", "t2", "t3", "t4"], extensible: false))
    static let compartmentGenderType: PERType = .enumerated(
        PEREnumeration("CompartmentGenderType", ["unspecified", "family", "female", "male", "mixed"], extensible: true))
    static let genderType: PERType = .enumerated(
        PEREnumeration("GenderType", ["unspecified", "female", "male", "other"], extensible: true))
    static let travelClassType: PERType = .enumerated(
        PEREnumeration(
            "TravelClassType",
            ["notApplicable", "first", "second", "tourist", "comfort", "premium", "business", "all"], extensible: true))
    static let berthDetailData: PERType = .sequence(
        PERSequence(
            "BerthDetailData", extensible: true,
            [
                PERComponent("berthType", berthTypeType),
                PERComponent("numberOfBerths", .integer(1, 999)),
                PERComponent("gender", compartmentGenderType, .defaulted(.enumerated(1))),
            ]
        ))
    static let compartmentDetailsType: PERType = .sequence(
        PERSequence(
            "CompartmentDetailsType", extensible: true,
            [
                PERComponent("coachType", .integer(1, 99), .optional),
                PERComponent("compartmentType", .integer(1, 99), .optional),
                PERComponent("specialAllocation", .integer(1, 99), .optional),
                PERComponent("coachTypeDescr", .utf8String(nil), .optional),
                PERComponent("compartmentTypeDescr", .utf8String(nil), .optional),
                PERComponent("specialAllocationDescr", .utf8String(nil), .optional),
                PERComponent("position", compartmentPositionType, .defaulted(.enumerated(0))),
            ]
        ))
    static let luggageRestrictionType: PERType = .sequence(
        PERSequence(
            "LuggageRestrictionType", extensible: true,
            [
                PERComponent("maxHandLuggagePieces", .integer(0, 99), .defaulted(.integer(3))),
                PERComponent("maxNonHandLuggagePieces", .integer(0, 99), .defaulted(.integer(1))),
                PERComponent("registeredLuggage", .sequenceOf(registeredLuggageType, nil), .optional),
            ]
        ))
    static let registeredLuggageType: PERType = .sequence(
        PERSequence(
            "RegisteredLuggageType", extensible: true,
            [
                PERComponent("registrationId", .ia5String(nil), .optional),
                PERComponent("maxWeight", .integer(1, 99), .optional),
                PERComponent("maxSize", .integer(1, 300), .optional),
            ]
        ))
    static let geoCoordinateType: PERType = .sequence(
        PERSequence(
            "GeoCoordinateType", extensible: false,
            [
                PERComponent("geoUnit", geoUnitType, .defaulted(.enumerated(2))),
                PERComponent("coordinateSystem", geoCoordinateSystemType, .defaulted(.enumerated(0))),
                PERComponent("hemisphereLongitude", hemisphereLongitudeType, .defaulted(.enumerated(0))),
                PERComponent("hemisphereLatitude", hemisphereLatitudeType, .defaulted(.enumerated(0))),
                PERComponent("longitude", .unconstrainedInteger),
                PERComponent("latitude", .unconstrainedInteger),
                PERComponent("accuracy", geoUnitType, .optional),
            ]
        ))
    static let deltaCoordinates: PERType = .sequence(
        PERSequence(
            "DeltaCoordinates", extensible: false,
            [
                PERComponent("longitude", .unconstrainedInteger),
                PERComponent("latitude", .unconstrainedInteger),
            ]
        ))
    static let geoCoordinateSystemType: PERType = .enumerated(
        PEREnumeration("GeoCoordinateSystemType", ["wgs84", "grs80"], extensible: false))
    static let geoUnitType: PERType = .enumerated(
        PEREnumeration(
            "GeoUnitType", ["microDegree", "tenthmilliDegree", "milliDegree", "centiDegree", "deciDegree"],
            extensible: false))
    static let hemisphereLongitudeType: PERType = .enumerated(
        PEREnumeration("HemisphereLongitudeType", ["east", "west"], extensible: false))
    static let hemisphereLatitudeType: PERType = .enumerated(
        PEREnumeration("HemisphereLatitudeType", ["north", "south"], extensible: false))
    static let loadingDeckType: PERType = .enumerated(
        PEREnumeration("LoadingDeckType", ["unspecified", "upper", "lower"], extensible: false))
    static let compartmentPositionType: PERType = .enumerated(
        PEREnumeration("CompartmentPositionType", ["unspecified", "upperLevel", "lowerLevel"], extensible: false))
    static let roofRackType: PERType = .enumerated(
        PEREnumeration(
            "RoofRackType",
            [
                "norack", "roofRailing", "luggageRack", "skiRack", "boxRack", "rackWithOneBox", "rackWithTwoBoxes",
                "bicycleRack", "otherRack",
            ], extensible: true))
}
