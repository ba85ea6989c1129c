import Foundation

/// Who a personal ticket belongs to, as the fields an inspector compares with the passenger's identity document.
///
/// `Ticket.holder` says the same in one line for reading; this says it in parts, so that a screen can set the name,
/// the date of birth and the document number side by side with what the passenger shows. Each format fills what it
/// carries (FCB traveler, UIC `0080BL`, VDV-KA `DB`/`D7`, RSP6 passenger name, FC1 `h`) and leaves the rest `nil`:
/// nothing is guessed or completed.
public struct TicketHolder: Sendable, Hashable, Codable {
    /// The name in reading order (`Max Mustermann`), as the ticket writes it; an abbreviated name keeps its stars
    /// (`K***e D****n`).
    public var name: String?
    /// The given name, when the ticket states it apart from the family name.
    public var givenName: String?
    /// The family name, when the ticket states it apart from the given name.
    public var familyName: String?
    /// The date of birth, as precisely as the ticket states it.
    public var dateOfBirth: HolderDate?
    /// The documents the ticket names by number (ID card, passport, bank card, …), in the ticket's order.
    public var idDocuments: [IDDocument]
    /// What the issuer asks the inspector to check, as it wrote it, for a format that states the holder check as
    /// text and not as fields (FC1 `h`, e.g. `ID ****1234`): it is shown, never read for parts.
    public var note: String?

    public init(
        name: String? = nil, givenName: String? = nil, familyName: String? = nil, dateOfBirth: HolderDate? = nil,
        idDocuments: [IDDocument] = [], note: String? = nil
    ) {
        self.name = name
        self.givenName = givenName
        self.familyName = familyName
        self.dateOfBirth = dateOfBirth
        self.idDocuments = idDocuments
        self.note = note
    }

    /// The holder, or `nil` when it holds nothing to compare: a ticket without holder data has no holder check.
    public var nonEmpty: TicketHolder? {
        name == nil && givenName == nil && familyName == nil && dateOfBirth == nil && idDocuments.isEmpty
            && note == nil ? nil : self
    }

    private enum CodingKeys: String, CodingKey {
        case name, givenName, familyName, dateOfBirth, idDocuments, note
    }

    /// The fields that are there: absent ones, and an empty document list, are left out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(givenName, forKey: .givenName)
        try container.encodeIfPresent(familyName, forKey: .familyName)
        try container.encodeIfPresent(dateOfBirth, forKey: .dateOfBirth)
        if !idDocuments.isEmpty { try container.encode(idDocuments, forKey: .idDocuments) }
        try container.encodeIfPresent(note, forKey: .note)
    }

    /// Reads what `encode(to:)` wrote.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        givenName = try container.decodeIfPresent(String.self, forKey: .givenName)
        familyName = try container.decodeIfPresent(String.self, forKey: .familyName)
        dateOfBirth = try container.decodeIfPresent(HolderDate.self, forKey: .dateOfBirth)
        idDocuments = try container.decodeIfPresent([IDDocument].self, forKey: .idDocuments) ?? []
        note = try container.decodeIfPresent(String.self, forKey: .note)
    }
}

/// A date of birth as precisely as a ticket states it: a year, a year and month, or a whole day.
///
/// Tickets may state only the year of birth (FCB makes month and day optional); a partial date stays partial, since
/// an invented 1 January would not match the passenger's ID.
public struct HolderDate: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The year, e.g. 1986.
    public let year: Int
    /// The month, 1–12, when stated.
    public let month: Int?
    /// The day of the month, when stated (only with a month).
    public let day: Int?

    /// A date, or `nil` when it is none: a month outside 1–12, a day without a month, or a day its month does not
    /// have (in the Gregorian calendar).
    public init?(year: Int, month: Int? = nil, day: Int? = nil) {
        guard (1...9999).contains(year) else { return nil }
        if let month {
            guard (1...12).contains(month) else { return nil }
            if let day {
                let components = DateComponents(year: year, month: month, day: day)
                guard components.isValidDate(in: Self.gregorian) else { return nil }
            }
        } else if day != nil {
            return nil
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Reads `1986-05-17`, `1986-05` or `1986`, as `description` writes it.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard (1...3).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCII) }),
            parts[0].count == 4, parts.dropFirst().allSatisfy({ $0.count == 2 })
        else { return nil }
        let numbers = parts.compactMap { Int($0) }
        guard numbers.count == parts.count else { return nil }
        self.init(
            year: numbers[0], month: numbers.count > 1 ? numbers[1] : nil, day: numbers.count > 2 ? numbers[2] : nil)
    }

    /// `1986-05-17`, `1986-05` or `1986` (ISO 8601 at the precision stated).
    public var description: String {
        var text = String(year)
        if text.count < 4 { text = String(repeating: "0", count: 4 - text.count) + text }
        if let month { text += month < 10 ? "-0\(month)" : "-\(month)" }
        if let day { text += day < 10 ? "-0\(day)" : "-\(day)" }
        return text
    }

    /// Written as `description`, one string, so that a reader sees at once how precise it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Reads what `encode(to:)` wrote.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let date = HolderDate(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "\"\(text)\" is no date of birth (YYYY, YYYY-MM or YYYY-MM-DD)")
        }
        self = date
    }

    private static let gregorian = Calendar(identifier: .gregorian)
}

/// A document that a ticket names by its number, for the inspector to compare with the one the passenger shows.
public struct IDDocument: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What kind of document it is.
    public var kind: IDDocumentKind
    /// Its number as the ticket states it, or `****` and its last four characters where the ticket's holder line
    /// shows no more (VDV-KA identification media, which may be bank cards, whose numbers are never shown in full).
    public var number: String

    public init(kind: IDDocumentKind, number: String) {
        self.kind = kind
        self.number = number
    }

    /// `ID card L01X00T47`.
    public var description: String { "\(kind.displayName) \(number)" }
}

/// The kinds of document tickets name for the holder check, as the formats say them.
public enum IDDocumentKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A national identity card (FCB `idCard`, VDV-KA `P`).
    case idCard = "id-card"
    /// A passport (FCB `passportId`, VDV-KA `R`).
    case passport
    /// A debit card such as a girocard (VDV-KA `E`).
    case bankCard = "bank-card"
    /// A credit card (VDV-KA `K`).
    case creditCard = "credit-card"
    /// A customer card of the carrier or transit network (FCB `customerIdIA5`/`customerIdNum`, VDV-KA `Ö`).
    case customerCard = "customer-card"
    /// A pupil's card (VDV-KA `S`).
    case pupilCard = "pupil-card"
    /// A student's card (VDV-KA `A`).
    case studentCard = "student-card"
    /// A social pass (VDV-KA `Z`).
    case socialPass = "social-pass"
    /// A phone number the ticket is bound to (VDV-KA `T`).
    case phoneNumber = "phone-number"
    /// A client id of the issuer (VDV-KA `C`).
    case clientID = "client-id"
    /// The IMEI of the device the ticket is bound to (VDV-KA `G`).
    case deviceIMEI = "device-imei"
    /// A number the ticket states without saying of which document (UIC `0080BL` `S027`): the inspector asks.
    case unstated
    /// A kind the format names but farecheck does not know.
    case other

    /// How the inspector reads it: `ID card`, `passport`, ….
    public var displayName: String {
        switch self {
        case .idCard: "ID card"
        case .passport: "passport"
        case .bankCard: "bank card"
        case .creditCard: "credit card"
        case .customerCard: "customer card"
        case .pupilCard: "pupil card"
        case .studentCard: "student card"
        case .socialPass: "social pass"
        case .phoneNumber: "phone number"
        case .clientID: "client id"
        case .deviceIMEI: "device IMEI"
        case .unstated: "ID"
        case .other: "document"
        }
    }
}
