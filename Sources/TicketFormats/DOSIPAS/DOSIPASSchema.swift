// DOSIPAS (UIC 918.9 dynamic frame) schemas: the types of uicBarcodeHeader_v1.0.0.asn and _v2.0.1.asn, of
// uicDynamicContentData_v1.0.5.asn (FDC1), and of the French Intercode 6 extensions (intercode6.schema.json),
// declared as data for `PERDecoder` in the order of their modules, like the FCB schemas.

/// The types of the DOSIPAS header modules (v1 for "U1", v2 for "U2").
///
/// The headers have no extension markers, so the decoder reads exactly the bits that are signed. The top
/// level (`UicBarcodeHeader`, `Level2DataType`) is read field by field by `DOSIPASBarcode` to know where each
/// signed range starts and ends; only `Level1DataType` and `DataType` are decoded as wholes.
enum DOSIPASSchema {
    /// `DataType ::= SEQUENCE { dataFormat IA5String, data OCTET STRING }` (same in v1 and v2).
    static let dataType: PERType = .sequence(
        PERSequence(
            "DataType", extensible: false,
            [
                PERComponent("dataFormat", .ia5String(nil)),
                PERComponent("data", .octetString(nil)),
            ]))

    /// The components of `Level1DataType` common to v1 and v2.
    private static let level1Common: [PERComponent] = [
        PERComponent("securityProviderNum", .integer(1, 32_000), .optional),
        PERComponent("securityProviderIA5", .ia5String(nil), .optional),
        PERComponent("keyId", .integer(0, 99_999), .optional),
        PERComponent("dataSequence", .sequenceOf(dataType, nil)),
        PERComponent("level1KeyAlg", .objectIdentifier, .optional),
        PERComponent("level2KeyAlg", .objectIdentifier, .optional),
        PERComponent("level1SigningAlg", .objectIdentifier, .optional),
        PERComponent("level2SigningAlg", .objectIdentifier, .optional),
        PERComponent("level2PublicKey", .octetString(nil), .optional),
    ]

    /// `Level1DataType` of header v1.0.0: an 8-bit presence bitmap.
    static let level1DataV1: PERType = .sequence(PERSequence("Level1DataType", extensible: false, level1Common))

    /// `Level1DataType` of header v2.0.1: v1 plus the end of validity (UTC) and the validity duration of the
    /// dynamic barcode; a 12-bit presence bitmap.
    static let level1DataV2: PERType = .sequence(
        PERSequence(
            "Level1DataType", extensible: false,
            level1Common + [
                PERComponent("endOfValidityYear", .integer(2016, 2269), .optional),
                PERComponent("endOfValidityDay", .integer(1, 366), .optional),
                PERComponent("endOfValidityTime", .integer(0, 1439), .optional),
                PERComponent("validityDuration", .integer(1, 3600), .optional),
            ]))

    // MARK: - FDC1: uicDynamicContentData_v1.0.5.asn

    /// `UicDynamicContentData` (extensible; a 5-bit presence bitmap).
    static let uicDynamicContentData: PERType = .sequence(
        PERSequence(
            "UicDynamicContentData", extensible: true,
            [
                PERComponent("dynamicContentMobileAppId", .ia5String(nil), .optional),
                PERComponent("dynamicContentTimeStamp", timeStampData, .optional),
                PERComponent("dynamicContentGeoCoordinate", geoCoordinateType, .optional),
                PERComponent("dynamicContentResponseToChallenge", .sequenceOf(extensionData, nil), .optional),
                PERComponent("dynamicContentExtension", extensionData, .optional),
            ]))

    /// `TimeStampData ::= SEQUENCE { day INTEGER (1..366), time INTEGER (0..86399) }`, UTC.
    static let timeStampData: PERType = .sequence(
        PERSequence(
            "TimeStampData", extensible: false,
            [
                PERComponent("day", .integer(1, 366)),
                PERComponent("time", .integer(0, 86_399)),
            ]))

    /// `GeoCoordinateType` of the FDC1 module (not extensible).
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
            ]))

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

    /// `ExtensionData ::= SEQUENCE { extensionId IA5String, extensionData OCTET STRING }`.
    static let extensionData: PERType = .sequence(
        PERSequence(
            "ExtensionData", extensible: false,
            [
                PERComponent("extensionId", .ia5String(nil)),
                PERComponent("extensionData", .octetString(nil)),
            ]))

    // MARK: - Intercode 6 (French) extensions

    /// `RetailChannelData` (extensible).
    static let retailChannelData: PERType = .enumerated(
        PEREnumeration(
            "RetailChannelData",
            [
                "smsTicket", "mobileApplication", "webSite", "ticketOffice", "depositaryTerminal", "onBoardTerminal",
                "ticketVendingMachine",
            ],
            extensible: true))

    /// `ProductRetailerData` (extensible; `retailTraceability` is its first extension addition).
    static let productRetailerData: PERType = .sequence(
        PERSequence(
            "ProductRetailerData", extensible: true,
            [
                PERComponent("retailChannel", retailChannelData, .optional),
                PERComponent("retailGeneratorId", .integer(0, 255), .optional),
                PERComponent("retailServerId", .integer(0, 255), .optional),
                PERComponent("retailerId", .integer(0, 4095), .optional),
                PERComponent("retailPointId", .unconstrainedInteger, .optional),
            ],
            additions: [PERComponent("retailTraceability", .ia5String(nil), .optional)]))

    /// `IntercodeIssuingData`: the content of the FCB issuing extension `_RICSII1` / `+FRII1` (extensible).
    static let intercodeIssuingData: PERType = .sequence(
        PERSequence(
            "IntercodeIssuingData", extensible: true,
            [
                PERComponent("intercodeVersion", .integer(0, 7)),
                PERComponent("intercodeInstanciation", .integer(0, 7)),
                PERComponent("networkId", .octetString(PERSize(3, 3))),
                PERComponent("productRetailer", productRetailerData, .optional),
            ]))

    /// `IntercodeDynamicData`: the content of level-2 data `_RICS.ID1` (extensible).
    static let intercodeDynamicData: PERType = .sequence(
        PERSequence(
            "IntercodeDynamicData", extensible: true,
            [
                PERComponent("dynamicContentDay", .integer(-1, 1070), .defaulted(.integer(0))),
                PERComponent("dynamicContentTime", .integer(0, 86_399), .optional),
                PERComponent("dynamicContentUTCOffset", .integer(-60, 60), .optional),
                PERComponent("dynamicContentDuration", .integer(0, 86_399), .optional),
            ]))
}
