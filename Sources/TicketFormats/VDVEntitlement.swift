import FareCore

/// The ticket data of a VDV-KA barcode ("Berechtigung"), as recovered from its signature.
///
/// Layout: an 18-byte header (entitlement number, KVP organisation, product, PV organisation,
/// validity begin and end), the product data (`85` holding TLVs: `DA` basic data, `DB` traveller,
/// `DC` area, `D7` identification medium, …), 17 bytes of transaction data, the product-specific
/// transaction data (`8A`), 12 bytes of issue (SAM) data, zero padding, and `VDV` + 2 version bytes.
public struct VDVEntitlement: Sendable, Hashable {
    /// The recovered bytes.
    public let bytes: [UInt8]
    /// The entitlement number ("Berechtigung_ID"), unique per KVP organisation.
    public let entitlementNumber: UInt32
    /// The organisation that sold the ticket (KVP, "Kundenvertragspartner"): the issuer.
    public let kvpOrganisationID: Int
    /// The product number; 9999 is the Deutschland-Ticket.
    public let productNumber: Int
    /// The organisation that owns the product (PV, "Produktverantwortlicher").
    public let pvOrganisationID: Int
    /// The first moment of validity.
    public let validFrom: VDVDateTime
    /// The last moment of validity (inclusive).
    public let validUntil: VDVDateTime

    /// Where the parts read on demand lie in `bytes`, found (and checked) when the data was read: a verdict
    /// needs a few of them, so nothing is copied out until a property asks.
    private let productDataRange: Range<Int>
    let basicDataSpan: BERTLVSpan?
    let travellerSpan: BERTLVSpan?
    let areaSpan: BERTLVSpan?
    let identificationMediumSpan: BERTLVSpan?
    let transactionOffset: Int
    private let productTransactionRange: Range<Int>
    private let issueOffset: Int

    /// Every element of the product data, in order, including those read into the fields below.
    public var productData: [BERTLV] {
        // Checked when the data was read, so this cannot fail.
        (try? BERTLV.elements(in: bytes, range: productDataRange, context: "the product data (85)")) ?? []
    }
    /// The basic data (`DA`), when present.
    public var basicData: VDVBasicData? { basicDataSpan.map { VDVBasicData(bytes, $0) } }
    /// The traveller (`DB`), when present.
    public var traveller: VDVTraveller? { travellerSpan.map { VDVTraveller(bytes, $0) } }
    /// The area of validity (`DC`), when present.
    public var area: VDVArea? { areaSpan.map { VDVArea(bytes, $0) } }
    /// The identification medium the ticket is bound to (`D7`), when present.
    public var identificationMedium: VDVIdentificationMedium? {
        identificationMediumSpan.map { VDVIdentificationMedium(bytes, $0) }
    }
    /// The common transaction data: who sold the ticket, where and when.
    public var transaction: VDVTransaction { VDVTransaction(bytes, at: transactionOffset) }
    /// The product-specific transaction data (`8A` content), often empty.
    public var productTransactionData: [UInt8] { Array(bytes[productTransactionRange]) }
    /// The issue data of the SAM that signed.
    public var issue: VDVIssueData { VDVIssueData(bytes, at: issueOffset) }
    /// The 2 version bytes after `VDV` (e.g. `11 09`).
    public var version: [UInt8] { Array(bytes[(bytes.count - 2)...]) }

    /// The product, named when it is one of the Deutschland-Ticket family.
    public var product: VDVProduct { VDVProduct(number: productNumber) }

    /// The shortest ticket data there is (kitinerary, zuegli): header, empty product data, fixed blocks, trailer.
    public static let minimumByteCount = 111

    private static let productTag = BERTLVSpan.packed([0x85])
    private static let productTransactionTag = BERTLVSpan.packed([0x8A])

    /// Reads recovered ticket data.
    ///
    /// - Throws: `FormatError.malformed` naming the offset for data that is too short, a missing
    ///   `85` or `8A` element, a product element of the wrong size, or a missing `VDV` trailer.
    public init(parsing bytes: [UInt8]) throws(FormatError) {
        guard bytes.count >= Self.minimumByteCount else {
            throw .malformed(
                "the ticket data has \(bytes.count) bytes; VDV ticket data has at least \(Self.minimumByteCount)")
        }
        let trailerStart = bytes.count - 5
        guard bytes[trailerStart] == UInt8(ascii: "V"), bytes[trailerStart + 1] == UInt8(ascii: "D"),
            bytes[trailerStart + 2] == UInt8(ascii: "V")
        else {
            throw .malformed(
                "the ticket data does not end with \"VDV\" and a version (bytes \(trailerStart)–\(bytes.count - 1))")
        }
        self.bytes = bytes
        entitlementNumber = UInt32(VDVEntitlement.number(bytes, 0, 4))
        kvpOrganisationID = VDVEntitlement.number(bytes, 4, 2)
        productNumber = VDVEntitlement.number(bytes, 6, 2)
        pvOrganisationID = VDVEntitlement.number(bytes, 8, 2)
        validFrom = VDVDateTime(raw: UInt32(VDVEntitlement.number(bytes, 10, 4)))
        validUntil = VDVDateTime(raw: UInt32(VDVEntitlement.number(bytes, 14, 4)))

        let product = try BERTLVSpan(in: bytes, at: 18, end: trailerStart, context: "the ticket data")
        guard product.tag == Self.productTag else {
            throw .malformed("the ticket data has \(product.tagHex) at byte 18 where the product data (85) belongs")
        }
        productDataRange = product.valueRange
        var basicData: BERTLVSpan?
        var traveller: BERTLVSpan?
        var area: BERTLVSpan?
        var identificationMedium: BERTLVSpan?
        var position = product.valueOffset
        while position < product.end {
            let element = try BERTLVSpan(in: bytes, at: position, end: product.end, context: "the product data (85)")
            position = element.end
            // Elements of zero bytes stand for "not given" (zuegli ignores them); the basic data always counts.
            if element.tag != VDVBasicData.tag, element.valueIsZero(in: bytes) { continue }
            switch element.tag {
            case VDVBasicData.tag:
                try VDVBasicData.check(element)
                basicData = element
            case VDVTraveller.tag:
                try VDVTraveller.check(element)
                traveller = element
            case VDVArea.tag:
                try VDVArea.check(element)
                area = element
            case VDVIdentificationMedium.tag:
                try VDVIdentificationMedium.check(element)
                identificationMedium = element
            default: break
            }
        }
        basicDataSpan = basicData
        travellerSpan = traveller
        areaSpan = area
        identificationMediumSpan = identificationMedium

        position = product.end
        guard trailerStart - position >= VDVTransaction.byteCount else {
            throw .malformed(
                "the ticket data ends at byte \(trailerStart) inside the transaction data (from byte \(position))")
        }
        transactionOffset = position
        position += VDVTransaction.byteCount
        let productTransaction = try BERTLVSpan(in: bytes, at: position, end: trailerStart, context: "the ticket data")
        guard productTransaction.tag == Self.productTransactionTag else {
            throw .malformed(
                "the ticket data has \(productTransaction.tagHex) at byte \(position) where the product transaction data (8A) belongs"
            )
        }
        productTransactionRange = productTransaction.valueRange
        position = productTransaction.end
        guard trailerStart - position >= VDVIssueData.byteCount else {
            throw .malformed(
                "the ticket data ends at byte \(trailerStart) inside the issue data (from byte \(position))")
        }
        issueOffset = position
    }

    /// An unsigned big-endian number of `count` bytes at `offset` (the caller has checked the bounds).
    static func number(_ bytes: [UInt8], _ offset: Int, _ count: Int) -> Int {
        var value = 0
        for index in offset..<(offset + count) { value = value << 8 | Int(bytes[index]) }
        return value
    }
}

/// The products with their own name: the Deutschland-Ticket family (product numbers of the central PV).
public enum VDVProduct: Sendable, Hashable, CustomStringConvertible {
    /// 9999: the Deutschland-Ticket.
    case deutschlandTicket
    /// 9998: the Deutschland-Ticket as a job ticket.
    case deutschlandJobticket
    /// 9997: the first month of a Deutschland-Ticket subscription ("Startkarte").
    case deutschlandTicketStartkarte
    /// 9996: the Deutschland-Ticket for students (semester ticket).
    case deutschlandSemesterticket
    /// 9995: the Deutschland-Ticket for pupils.
    case deutschlandSchuelerticket
    /// Any other product, by number: its name is the PV organisation's.
    case other(Int)

    /// The product of a product number.
    public init(number: Int) {
        switch number {
        case 9999: self = .deutschlandTicket
        case 9998: self = .deutschlandJobticket
        case 9997: self = .deutschlandTicketStartkarte
        case 9996: self = .deutschlandSemesterticket
        case 9995: self = .deutschlandSchuelerticket
        default: self = .other(number)
        }
    }

    /// Whether this is a Deutschland-Ticket of any kind: valid on local transport all over Germany.
    public var isDeutschlandTicket: Bool {
        if case .other = self { return false }
        return true
    }

    /// The name, e.g. `Deutschland-Ticket`, or `product 4560`.
    public var description: String {
        switch self {
        case .deutschlandTicket: "Deutschland-Ticket"
        case .deutschlandJobticket: "Deutschland-Jobticket"
        case .deutschlandTicketStartkarte: "Deutschland-Ticket Startkarte"
        case .deutschlandSemesterticket: "Deutschland-Semesterticket"
        case .deutschlandSchuelerticket: "Deutschland-Schülerticket"
        case .other(let number): "product \(number)"
        }
    }
}

/// The class of travel in the basic data.
public enum VDVServiceClass: Sendable, Hashable, CustomStringConvertible {
    /// 0: not stated.
    case unknown
    /// 1: first class.
    case first
    /// 2: second class.
    case second
    /// 3: an upgrade to first class.
    case firstClassUpgrade
    /// Another value.
    case other(Int)

    init(_ value: UInt8) {
        switch value {
        case 0: self = .unknown
        case 1: self = .first
        case 2: self = .second
        case 3: self = .firstClassUpgrade
        default: self = .other(Int(value))
        }
    }

    /// `first`, `second`, `first class upgrade`, `unknown`, or `class 7`.
    public var description: String {
        switch self {
        case .unknown: "unknown"
        case .first: "first"
        case .second: "second"
        case .firstClassUpgrade: "first class upgrade"
        case .other(let value): "class \(value)"
        }
    }
}

/// The basic data of a ticket (`DA`, 17 bytes).
public struct VDVBasicData: Sendable, Hashable {
    /// How the ticket was paid (issuer-specific code).
    public var paymentType: Int
    /// The passenger type: 1 adult, 2 child, 3 student, 19 pupil, 25 senior, 64 reduced, 65 bicycle, 66 dog, ….
    public var passengerType: Int
    /// Travellers included beyond the holder, up to two kinds (those with a count of zero left out).
    public var includedTravellers: [VDVIncludedTravellers]
    /// The transport category (issuer-specific code).
    public var transportCategory: Int
    /// The class of travel.
    public var serviceClass: VDVServiceClass
    /// The price in euro cents.
    public var priceCents: Int
    /// The VAT rate as carried (sources disagree on its unit).
    public var vatRate: Int
    /// The price level.
    public var priceLevel: Int
    /// The issuer's internal product number.
    public var internalProductNumber: Int

    /// The size of the element's content.
    public static let byteCount = 17

    /// Its tag.
    static let tag = BERTLVSpan.packed([0xDA])

    /// Checks the element's size.
    static func check(_ element: BERTLVSpan) throws(FormatError) {
        guard element.count == byteCount else {
            throw .malformed(
                "the basic data (DA) at byte \(element.offset) has \(element.count) bytes instead of \(byteCount)")
        }
    }

    /// Reads a checked element of `bytes`.
    init(_ bytes: [UInt8], _ element: BERTLVSpan) {
        let v = element.valueOffset
        paymentType = Int(bytes[v])
        passengerType = Self.passengerType(bytes, element)
        // Kinds with a count of zero are left out.
        includedTravellers = []
        if bytes[v + 3] > 0 {
            includedTravellers.append(VDVIncludedTravellers(passengerType: Int(bytes[v + 2]), count: Int(bytes[v + 3])))
        }
        if bytes[v + 5] > 0 {
            includedTravellers.append(VDVIncludedTravellers(passengerType: Int(bytes[v + 4]), count: Int(bytes[v + 5])))
        }
        transportCategory = Int(bytes[v + 6])
        serviceClass = VDVServiceClass(bytes[v + 7])
        priceCents = VDVEntitlement.number(bytes, v + 8, 3)
        vatRate = VDVEntitlement.number(bytes, v + 11, 2)
        priceLevel = Int(bytes[v + 13])
        internalProductNumber = VDVEntitlement.number(bytes, v + 14, 3)
    }

    /// The passenger type of a checked element of `bytes`, read without decoding the rest.
    static func passengerType(_ bytes: [UInt8], _ element: BERTLVSpan) -> Int {
        Int(bytes[element.valueOffset + 1])
    }

    /// How many travellers come along with the holder (the counts of both included kinds), read so.
    static func includedTravellerCount(_ bytes: [UInt8], _ element: BERTLVSpan) -> Int {
        Int(bytes[element.valueOffset + 3]) + Int(bytes[element.valueOffset + 5])
    }

    /// The passenger category in `Ticket`'s words, when it is one of them.
    public var category: String? { Self.category(passengerType: passengerType) }

    /// The category of a passenger type, when it is one of `Ticket`'s.
    static func category(passengerType: Int) -> String? {
        switch passengerType {
        case 1: "adult"
        case 2: "child"
        case 25: "senior"
        case 64: "reduced"
        default: nil
        }
    }
}

/// Travellers of one passenger type that a ticket includes beyond its holder.
public struct VDVIncludedTravellers: Sendable, Hashable {
    /// Their passenger type (as `VDVBasicData.passengerType`).
    public var passengerType: Int
    /// How many.
    public var count: Int
}

/// A name shortened to its first and last letters and the number hidden between them (`K3e`: K…e, 3 hidden).
public struct VDVAbbreviatedName: Sendable, Hashable, CustomStringConvertible {
    /// The first letter.
    public var first: String
    /// How many letters are hidden.
    public var hiddenCount: Int
    /// The last letter.
    public var last: String

    /// Reads `<letter><digits><letter>`, or `nil`.
    init?(_ text: Substring) {
        guard let first = text.first, let last = text.last, text.count >= 3 else { return nil }
        let digits = text.dropFirst().dropLast()
        guard digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(digits), count < 1_000 else {
            return nil
        }
        self.first = String(first)
        self.hiddenCount = count
        self.last = String(last)
    }

    /// `K***e`: the hidden letters as asterisks.
    public var description: String { first + String(repeating: "*", count: hiddenCount) + last }
}

/// The traveller's name as the ticket writes it.
public enum VDVTravellerName: Sendable, Hashable, CustomStringConvertible {
    /// `Given#Family`.
    case split(given: String, family: String)
    /// `K3e@D4n`: both names shortened.
    case abbreviated(given: VDVAbbreviatedName, family: VDVAbbreviatedName)
    /// Any other text: one name.
    case whole(String)

    /// Reads the name bytes (trailing zero bytes already removed). An ASCII `Given#Family`, the usual
    /// case, is split on its bytes; anything else is read as text first (see `VDVTraveller.text`).
    init?(_ bytes: ArraySlice<UInt8>) {
        guard !bytes.isEmpty else { return nil }
        if let hash = bytes.firstIndex(of: UInt8(ascii: "#")), bytes.allSatisfy({ $0 < 0x80 }) {
            self = .split(
                given: String(decoding: bytes[..<hash], as: UTF8.self),
                family: String(decoding: bytes[(hash + 1)...], as: UTF8.self))
        } else {
            self.init(VDVTraveller.text(bytes))
        }
    }

    /// Reads the name text (trailing zero bytes already removed).
    init?(_ text: String) {
        guard !text.isEmpty else { return nil }
        if let hash = text.firstIndex(of: "#") {
            self = .split(given: String(text[..<hash]), family: String(text[text.index(after: hash)...]))
        } else if let at = text.firstIndex(of: "@"),
            let given = VDVAbbreviatedName(text[..<at]),
            let family = VDVAbbreviatedName(text[text.index(after: at)...])
        {
            self = .abbreviated(given: given, family: family)
        } else {
            self = .whole(text)
        }
    }

    /// The given name; for a shortened name its first letter (all that is known for sure).
    public var givenName: String? {
        switch self {
        case .split(let given, _): given
        case .abbreviated(let given, _): given.first
        case .whole: nil
        }
    }

    /// The family name; for a shortened name its first letter; for an unsplit name the whole text.
    public var familyName: String? {
        switch self {
        case .split(_, let family): family
        case .abbreviated(_, let family): family.first
        case .whole(let text): text
        }
    }

    /// `Max Mustermann`, `K***e D****n`.
    public var description: String {
        switch self {
        case .split(let given, let family): given.isEmpty || family.isEmpty ? given + family : given + " " + family
        case .abbreviated(let given, let family): "\(given) \(family)"
        case .whole(let text): text
        }
    }
}

/// The traveller (`DB`): gender, date of birth, name.
public struct VDVTraveller: Sendable, Hashable {
    /// 0 not stated, 1 male, 2 female, 3 diverse.
    public var gender: Int
    /// The date of birth; `nil` when not stated (all zero) or not a date.
    public var dateOfBirth: UICDay?
    /// The name; `nil` when empty.
    public var name: VDVTravellerName?

    /// Its tag.
    static let tag = BERTLVSpan.packed([0xDB])

    /// Checks the element's size.
    static func check(_ element: BERTLVSpan) throws(FormatError) {
        try element.requireAtLeast(5, "the traveller (DB)")
    }

    /// Reads a checked element of `bytes`.
    init(_ bytes: [UInt8], _ element: BERTLVSpan) {
        let v = element.valueOffset
        gender = Int(bytes[v])
        dateOfBirth = VDVBCD.day(yyyymmdd: bytes[(v + 1)..<(v + 5)])
        var nameEnd = element.end
        while nameEnd > v + 5, bytes[nameEnd - 1] == 0 { nameEnd -= 1 }
        name = VDVTravellerName(bytes[(v + 5)..<nameEnd])
    }

    /// UTF-8 when the bytes are valid UTF-8, else Latin-1 (sources disagree; both appear in tickets).
    static func text(_ bytes: ArraySlice<UInt8>) -> String {
        if let utf8 = String(utf8Validating: bytes) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}

/// The area of validity (`DC`): a definition type, an organisation, and ids whose layout depends on the type.
public struct VDVArea: Sendable, Hashable, CustomStringConvertible {
    /// The definition type (e.g. 0x0F: a list of 2-byte big-endian tariff points).
    public var definitionType: Int
    /// The organisation the ids belong to (0 = the PV organisation).
    public var organisationID: Int
    /// The bytes after the organisation.
    public var data: [UInt8]

    /// Its tag.
    static let tag = BERTLVSpan.packed([0xDC])

    /// Checks the element's size.
    static func check(_ element: BERTLVSpan) throws(FormatError) {
        try element.requireAtLeast(3, "the area (DC)")
    }

    /// Reads a checked element of `bytes`.
    init(_ bytes: [UInt8], _ element: BERTLVSpan) {
        let v = element.valueOffset
        definitionType = Int(bytes[v])
        organisationID = VDVEntitlement.number(bytes, v + 1, 2)
        data = Array(bytes[(v + 3)..<element.end])
    }

    /// The tariff point ids of a plain list (types 0x0D–0x10), or `nil` for other layouts.
    ///
    /// Within each group of four types the id is 3 bytes big-endian, 3 little-endian, 2 big-endian,
    /// 2 little-endian.
    public var ids: [Int]? {
        guard let list = Self.plainList(type: definitionType, byteCount: data.count) else { return nil }
        return stride(from: 0, to: data.count, by: list.width).map { Self.id(data, at: $0, list) }
    }

    /// How a plain tariff-point list (types 0x0D–0x10) of `byteCount` bytes writes its ids: 2 or 3 bytes
    /// each, in either byte order; `nil` for another type, or bytes that are not a whole number of ids.
    static func plainList(type: Int, byteCount: Int) -> (width: Int, bigEndian: Bool)? {
        guard (0x0D...0x10).contains(type) else { return nil }
        let width = type % 4 == 1 || type % 4 == 2 ? 3 : 2
        guard byteCount % width == 0 else { return nil }
        return (width, type % 4 == 1 || type % 4 == 3)
    }

    /// The id written at `offset` of `bytes` as `list` says.
    static func id(_ bytes: [UInt8], at offset: Int, _ list: (width: Int, bigEndian: Bool)) -> Int {
        var id = 0
        for index in 0..<list.width {
            id = id << 8 | Int(bytes[list.bigEndian ? offset + index : offset + list.width - 1 - index])
        }
        return id
    }

    /// `organisation 5000, ids 1`, or `organisation 6100, type 0x11, 04B0…`.
    public var description: String {
        if let ids { return "organisation \(organisationID), ids \(ids.map(String.init).joined(separator: ", "))" }
        let type = String(definitionType, radix: 16, uppercase: true)
        return
            "organisation \(organisationID), type 0x\(type.count == 1 ? "0" + type : type), \(data.hexString.uppercased())"
    }
}

/// The identification medium a personal ticket is bound to (`D7`): a type letter and a number.
public struct VDVIdentificationMedium: Sendable, Hashable, CustomStringConvertible {
    /// E girocard, K credit card, Ö transit customer card, P ID card, R passport, T phone, Z social pass,
    /// S pupil card, A student card, C client id, G device IMEI, X/Y security paper.
    public var type: String
    /// The number, as text.
    public var number: String

    /// Its tag.
    static let tag = BERTLVSpan.packed([0xD7])

    /// Checks the element's size.
    static func check(_ element: BERTLVSpan) throws(FormatError) {
        guard element.count > 0 else {
            throw .malformed("the identification medium (D7) at byte \(element.offset) is empty")
        }
    }

    /// Reads a checked element of `bytes`.
    init(_ bytes: [UInt8], _ element: BERTLVSpan) {
        type = VDVTraveller.text(bytes[element.valueOffset..<(element.valueOffset + 1)])
        number = VDVTraveller.text(bytes[(element.valueOffset + 1)..<element.end])
    }

    /// The medium for the holder check: its kind, and the number's last four characters as the holder line shows
    /// them (`****1234`), whatever the kind: a girocard's or credit card's number is never shown in full, and for
    /// one kind the inspector compares as much as for the others.
    public var idDocument: IDDocument {
        let kind: IDDocumentKind =
            switch type {
            case "E": .bankCard
            case "K": .creditCard
            case "Ö": .customerCard
            case "P": .idCard
            case "R": .passport
            case "T": .phoneNumber
            case "Z": .socialPass
            case "S": .pupilCard
            case "A": .studentCard
            case "C": .clientID
            case "G": .deviceIMEI
            default: .other
            }
        return IDDocument(kind: kind, number: "****\(number.suffix(4))")
    }

    /// The kind and the number's last four characters, e.g. `ID card ****1234`.
    public var description: String {
        let kind =
            switch type {
            case "E": "girocard"
            case "K": "credit card"
            case "Ö": "customer card"
            case "P": "ID card"
            case "R": "passport"
            case "T": "phone"
            case "S": "pupil card"
            case "A": "student card"
            default: "medium \(type)"
            }
        return "\(kind) ****\(number.suffix(4))"
    }
}

/// Who sold the ticket, where and when (17 bytes).
public struct VDVTransaction: Sendable, Hashable {
    /// The selling organisation (KVP).
    public var kvpOrganisationID: Int
    /// The terminal type: 2 vending machine, 16 HandyTicket server, 17 online ticket server, ….
    public var terminalType: Int
    /// The terminal number.
    public var terminalNumber: Int
    /// The terminal's organisation.
    public var terminalOrganisationID: Int
    /// When the ticket was sold; zero when not stated.
    public var time: VDVDateTime
    /// The location type: 0 bus stop, 2 railway station, 255 none, ….
    public var locationType: Int
    /// The location number.
    public var locationNumber: Int
    /// The location's organisation.
    public var locationOrganisationID: Int

    static let byteCount = 17

    /// When the ticket was sold, read from the transaction data at `offset` without decoding the rest.
    static func time(_ bytes: [UInt8], at offset: Int) -> VDVDateTime {
        VDVDateTime(raw: UInt32(VDVEntitlement.number(bytes, offset + 7, 4)))
    }

    init(_ bytes: [UInt8], at offset: Int) {
        kvpOrganisationID = VDVEntitlement.number(bytes, offset, 2)
        terminalType = Int(bytes[offset + 2])
        terminalNumber = VDVEntitlement.number(bytes, offset + 3, 2)
        terminalOrganisationID = VDVEntitlement.number(bytes, offset + 5, 2)
        time = Self.time(bytes, at: offset)
        locationType = Int(bytes[offset + 11])
        locationNumber = VDVEntitlement.number(bytes, offset + 12, 3)
        locationOrganisationID = VDVEntitlement.number(bytes, offset + 15, 2)
    }
}

/// The SAM data of the issue (12 bytes).
public struct VDVIssueData: Sendable, Hashable {
    /// The SAM's first sequence number.
    public var samSequenceNumber1: Int
    /// The SAM version.
    public var samVersion: Int
    /// The SAM's second sequence number.
    public var samSequenceNumber2: Int
    /// The SAM number (as in the issuer certificate's holder reference).
    public var samID: Int

    static let byteCount = 12

    init(_ bytes: [UInt8], at offset: Int) {
        samSequenceNumber1 = VDVEntitlement.number(bytes, offset, 4)
        samVersion = Int(bytes[offset + 4])
        samSequenceNumber2 = VDVEntitlement.number(bytes, offset + 5, 4)
        samID = VDVEntitlement.number(bytes, offset + 9, 3)
    }
}
