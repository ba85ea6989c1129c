import Foundation

/// A ticket as read from a verified payload: what the inspector checks.
///
/// Format-neutral: FC1 and UIC 918.3 tickets both map onto it. Fields a format does not carry stay
/// `nil`; format-specific content goes into `details`, in display order.
public struct Ticket: Sendable {
    /// The payload format.
    public var format: TicketFormat {
        get { storage.fields.format }
        set { update { $0.format = newValue } }
    }
    /// The issuer that the ticket claims (FC1 `iss`, UIC issuer code).
    public var issuer: IssuerID {
        get { storage.fields.issuer }
        set { update { $0.issuer = newValue } }
    }
    /// The ticket's own identifier (FC1 `cti`), as bytes.
    public var ticketID: TicketID {
        get { storage.fields.ticketID }
        set { update { $0.ticketID = newValue } }
    }
    /// Start of validity, when the ticket states one.
    public var validFrom: Date? {
        get { storage.fields.validFrom }
        set { update { $0.validFrom = newValue } }
    }
    /// End of validity, when the ticket states one.
    public var validUntil: Date? {
        get { storage.fields.validUntil }
        set { update { $0.validUntil = newValue } }
    }
    /// When the ticket was issued.
    public var issuedAt: Date? {
        get { storage.fields.issuedAt }
        set { update { $0.issuedAt = newValue } }
    }
    /// The product, e.g. `single`, `day`, `month`.
    public var product: String? {
        get { storage.fields.product }
        set { update { $0.product = newValue } }
    }
    /// Zones the ticket is valid in; `nil` means the whole network.
    public var zones: [String]? {
        get { storage.fields.zones }
        set { update { $0.zones = newValue } }
    }
    /// Passenger category: `adult`, `child`, `senior`, `reduced`, `disabled`.
    public var category: String? {
        get { storage.fields.category }
        set { update { $0.category = newValue } }
    }
    /// Number of passengers.
    public var passengers: Int? {
        get { storage.fields.passengers }
        set { update { $0.passengers = newValue } }
    }
    /// What the inspector checks against the holder, e.g. `ID card ****1234`.
    public var holder: String? {
        get { storage.fields.holder }
        set { update { $0.holder = newValue } }
    }
    /// The holder check as fields (name, date of birth, ID documents) for the inspector to compare with the
    /// passenger's ID: what `holder` says in one line, from the same decoded records. `nil` when the ticket carries
    /// no holder data.
    public var holderCheck: TicketHolder? {
        get { storage.fields.holderCheck }
        set { update { $0.holderCheck = newValue?.nonEmpty } }
    }
    /// When the rider activated the ticket, for tickets activated on the phone.
    public var activatedAt: Date? {
        get { storage.fields.activatedAt }
        set { update { $0.activatedAt = newValue } }
    }
    /// Reactivation counter of a subscription coupon.
    public var reactivations: Int? {
        get { storage.fields.reactivations }
        set { update { $0.reactivations = newValue } }
    }
    /// Format-specific content for display, in order.
    ///
    /// Built when read, not when the ticket is decoded (see `init(…, deferredDetails:)`): a verdict never
    /// reads it, and writing dozens of labelled strings costs more than deciding a verdict. Each read builds
    /// the lines again, so a consumer reads it once; assigning it stores the lines given.
    public var details: [(label: String, value: String)] {
        get {
            switch storage.fields.detailSource {
            case .built(let lines): lines
            case .deferred(let build): build()
            case .decoded: storage.fields.decodedContent?.detailLines() ?? []
            }
        }
        set { update { $0.detailSource = .built(newValue) } }
    }
    /// The travel documents of a ticket that carries several (UIC FCB transport documents), in order; empty
    /// for formats with one validity. When a document states a window, the verdict follows the one chosen by
    /// `governingDocument(at:)`, and `validFrom`/`validUntil` span all of them.
    public var documents: [TicketDocument] {
        get { storage.fields.documents }
        set { update { $0.documents = newValue } }
    }
    /// Where two parts of the ticket state different things (e.g. UIC `0080BL` and `U_FLEX` validity): which
    /// one was kept. Empty when they agree; a hook for a warning.
    public var disagreements: [TicketDisagreement] {
        get { storage.fields.disagreements }
        set { update { $0.disagreements = newValue } }
    }
    /// Records of the ticket that are present but could not be read (a U_TLAY that breaks its layout, a record in
    /// a version farecheck does not decode): listed, never dropped. A ticket whose deciding record is broken is no
    /// ticket (its verdict is `malformed`), so only records the ticket was judged without get here.
    public var unreadableRecords: [UnreadableRecord] {
        get { storage.fields.unreadableRecords }
        set { update { $0.unreadableRecords = newValue } }
    }

    public init(
        format: TicketFormat, issuer: IssuerID, ticketID: TicketID, validFrom: Date? = nil, validUntil: Date? = nil,
        issuedAt: Date? = nil, product: String? = nil, zones: [String]? = nil, category: String? = nil,
        passengers: Int? = nil, holder: String? = nil, holderCheck: TicketHolder? = nil,
        activatedAt: Date? = nil, reactivations: Int? = nil,
        details: [(label: String, value: String)] = [], documents: [TicketDocument] = [],
        disagreements: [TicketDisagreement] = []
    ) {
        storage = Storage(
            Fields(
                format: format, issuer: issuer, ticketID: ticketID, validFrom: validFrom, validUntil: validUntil,
                issuedAt: issuedAt, product: product, zones: zones, category: category, passengers: passengers,
                holder: holder, holderCheck: holderCheck?.nonEmpty, activatedAt: activatedAt,
                reactivations: reactivations, detailSource: .built(details),
                documents: documents, disagreements: disagreements, unreadableRecords: []))
    }

    /// A ticket whose `details` are built by `deferredDetails` when read; the other fields as in
    /// `init(format:issuer:ticketID:…)`. `deferredDetails` must be pure: it may run any number of times.
    public init(
        format: TicketFormat, issuer: IssuerID, ticketID: TicketID, validFrom: Date? = nil, validUntil: Date? = nil,
        issuedAt: Date? = nil, product: String? = nil, zones: [String]? = nil, category: String? = nil,
        passengers: Int? = nil, holder: String? = nil, holderCheck: TicketHolder? = nil,
        activatedAt: Date? = nil, reactivations: Int? = nil,
        documents: [TicketDocument] = [], disagreements: [TicketDisagreement] = [],
        deferredDetails: @escaping @Sendable () -> [(label: String, value: String)]
    ) {
        storage = Storage(
            Fields(
                format: format, issuer: issuer, ticketID: ticketID, validFrom: validFrom, validUntil: validUntil,
                issuedAt: issuedAt, product: product, zones: zones, category: category, passengers: passengers,
                holder: holder, holderCheck: holderCheck?.nonEmpty, activatedAt: activatedAt,
                reactivations: reactivations,
                detailSource: .deferred(deferredDetails), documents: documents, disagreements: disagreements,
                unreadableRecords: []))
    }

    /// A ticket whose `details` are built from `decodedContent` when read, and which keeps it: what the format
    /// decoded from the payload, for what is shown beyond the ticket's fields (see `decodedContent`). The other
    /// fields as in `init(format:issuer:ticketID:…)`.
    public init(
        format: TicketFormat, issuer: IssuerID, ticketID: TicketID, validFrom: Date? = nil, validUntil: Date? = nil,
        issuedAt: Date? = nil, product: String? = nil, zones: [String]? = nil, category: String? = nil,
        passengers: Int? = nil, holder: String? = nil, holderCheck: TicketHolder? = nil,
        activatedAt: Date? = nil, reactivations: Int? = nil,
        documents: [TicketDocument] = [], disagreements: [TicketDisagreement] = [],
        decodedContent: any DecodedTicketContent
    ) {
        storage = Storage(
            Fields(
                format: format, issuer: issuer, ticketID: ticketID, validFrom: validFrom, validUntil: validUntil,
                issuedAt: issuedAt, product: product, zones: zones, category: category, passengers: passengers,
                holder: holder, holderCheck: holderCheck?.nonEmpty, activatedAt: activatedAt,
                reactivations: reactivations, detailSource: .decoded,
                documents: documents, disagreements: disagreements, unreadableRecords: [],
                decodedContent: decodedContent))
    }

    /// What the format decoded from the payload to make this ticket (UIC 918.3 records, a DOSIPAS barcode), when
    /// its mapping keeps it: the printed layout, the FCB tree and the details are read from it, so that a payload
    /// is decoded once, by the verifier. `nil` for formats that keep nothing beyond the ticket's fields.
    public var decodedContent: (any DecodedTicketContent)? { storage.fields.decodedContent }

    /// Adds lines after the existing `details`, built when read as well.
    public mutating func appendDetails(_ more: @escaping @Sendable () -> [(label: String, value: String)]) {
        switch storage.fields.detailSource {
        case .built(let lines): update { $0.detailSource = .deferred { lines + more() } }
        case .deferred(let build): update { $0.detailSource = .deferred { build() + more() } }
        case .decoded:
            let content = storage.fields.decodedContent
            update { $0.detailSource = .deferred { (content?.detailLines() ?? []) + more() } }
        }
    }

    /// The fields, held once and shared by copies: a ticket is copied several times on its way into a
    /// verdict, and each copy of a dozen separately counted fields cost more than deciding the verdict.
    /// A storage is never changed: a setter (rare: mappings build tickets whole) makes a new one.
    private final class Storage: Sendable {
        let fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    /// What a ticket holds.
    private struct Fields: Sendable {
        var format: TicketFormat
        var issuer: IssuerID
        var ticketID: TicketID
        var validFrom: Date?
        var validUntil: Date?
        var issuedAt: Date?
        var product: String?
        var zones: [String]?
        var category: String?
        var passengers: Int?
        var holder: String?
        var holderCheck: TicketHolder?
        var activatedAt: Date?
        var reactivations: Int?
        var detailSource: DetailSource
        var documents: [TicketDocument]
        var disagreements: [TicketDisagreement]
        var unreadableRecords: [UnreadableRecord]
        var decodedContent: (any DecodedTicketContent)? = nil
    }

    private var storage: Storage

    /// Changes fields: a new storage with the change, so that copies sharing the old one keep theirs.
    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = storage.fields
        change(&fields)
        storage = Storage(fields)
    }

    /// The lines of `details`, or what builds them.
    private enum DetailSource: Sendable {
        case built([(label: String, value: String)])
        case deferred(@Sendable () -> [(label: String, value: String)])
        /// Built by the ticket's `decodedContent`.
        case decoded
    }

    /// The ticket id as lowercase hex, the form used in revocation lists and on screen.
    public var ticketIDHex: String { ticketID.description }
}

/// One travel document of a ticket that carries several: what it is and when it is valid.
public struct TicketDocument: Sendable, Hashable {
    /// What kind of document it is, as its format names it (e.g. `openTicket`, `reservation`).
    public var kind: String
    /// Start of validity, when the document states one.
    public var validFrom: Date?
    /// End of validity (the last instant it is valid), when the document states one.
    public var validUntil: Date?
    /// One line for display: product, class, passengers, route.
    public var summary: String
    /// The same line as the page says it in its language: the ticket's texts as they are, farecheck's words
    /// (`2nd class`, `1 adult`) as templates; `nil` when the format builds none.
    public var summaryExplanation: Explanation?

    public init(kind: String, validFrom: Date? = nil, validUntil: Date? = nil, summary: String) {
        self.kind = kind
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.summary = summary
    }

    /// A document whose line is `summary` said in English.
    public init(kind: String, validFrom: Date? = nil, validUntil: Date? = nil, summary: Explanation) {
        self.init(kind: kind, validFrom: validFrom, validUntil: validUntil, summary: summary.english)
        summaryExplanation = summary
    }

    /// Whether the document states a window at all (a start, an end or both).
    public var hasWindow: Bool { validFrom != nil || validUntil != nil }

    /// How far `instant` lies outside the window, in seconds; 0 inside it (an open side never ends).
    public func distance(from instant: Date) -> TimeInterval {
        if let validFrom, instant < validFrom { return validFrom.timeIntervalSince(instant) }
        if let validUntil, instant > validUntil { return instant.timeIntervalSince(validUntil) }
        return 0
    }
}

/// Two parts of a ticket that state different values for the same thing, and which one was kept.
public struct TicketDisagreement: Sendable, Hashable, CustomStringConvertible {
    /// What they disagree on, e.g. `validity`.
    public var subject: String
    /// The value kept, with its source, e.g. `2025-02-27 – 2025-03-01 (U_FLEX)`.
    public var kept: String
    /// The value set aside, with its source.
    public var overruled: String

    public init(subject: String, kept: String, overruled: String) {
        self.subject = subject
        self.kept = kept
        self.overruled = overruled
    }

    /// ``subject`` as a phrase that can be translated: the subjects the formats name (`validity`, `product`)
    /// are farecheck's words; any other stays as it is.
    public var subjectPhrase: Explanation {
        switch subject {
        case "validity": "validity"
        case "product": "product"
        default: .verbatim(subject)
        }
    }

    /// `validity: 2025-02-27 – 2025-03-01 (U_FLEX), not 01.02.2025 – 01.03.2025 (0080BL)`.
    public var description: String { "\(subject): \(kept), not \(overruled)" }
}

extension Ticket {
    /// The document whose validity decides the verdict at `instant`, by index in `documents`.
    ///
    /// Rule: among the documents that state a window, the first whose window contains `instant` (bounds
    /// included, an open side never ends); if none does, the one whose window is nearest to `instant` (the
    /// first of equals), so that a ticket used too early reports its next window and one used too late its
    /// last. `nil` when no document states a window.
    public func governingDocument(at instant: Date) -> Int? {
        var best: (index: Int, distance: TimeInterval)?
        for (index, document) in documents.enumerated() where document.hasWindow {
            let distance = document.distance(from: instant)
            if distance == 0 { return index }
            if distance < (best?.distance ?? .infinity) { best = (index, distance) }
        }
        return best?.index
    }

    /// The validity window that applies at `instant`: that of `governingDocument(at:)` when there is one,
    /// else `validFrom`/`validUntil`.
    public func validityWindow(at instant: Date) -> (validFrom: Date?, validUntil: Date?) {
        guard let index = governingDocument(at: instant) else { return (validFrom, validUntil) }
        return (documents[index].validFrom, documents[index].validUntil)
    }
}

/// A record of a ticket that is present but cannot be read: where it is and why, so that it is listed to the
/// inspector instead of disappearing.
public struct UnreadableRecord: Sendable, Hashable, Codable, CustomStringConvertible {
    /// What `offset` counts.
    public enum Place: String, Sendable, Hashable, Codable {
        /// A byte of the inflated data of a UIC 918.3 container, where the record's header starts.
        case inflatedData = "inflated-data"
        /// A block of a DOSIPAS barcode's level-1 data sequence, counted from 0.
        case level1Data = "level-1-data"
        /// The level-2 data of a DOSIPAS barcode (`offset` is 0).
        case level2Data = "level-2-data"
    }

    /// The record's tag, e.g. `U_TLAY`, or a DOSIPAS block's data format, e.g. `FCB3`.
    public var tag: String
    /// The record's version as written (`01`); empty where the format has none (DOSIPAS blocks).
    public var version: String
    /// Where the record is, counted as `place` says.
    public var offset: Int
    /// What `offset` counts.
    public var place: Place
    /// Why it cannot be read, as a sentence naming the byte or bit where it goes wrong.
    public var reason: String

    public init(tag: String, version: String, offset: Int, place: Place = .inflatedData, reason: String) {
        self.tag = tag
        self.version = version
        self.offset = offset
        self.place = place
        self.reason = reason
    }

    /// Where the record is, for a person: `U_TLAY 01 at byte 53 of the inflated data`, `FCB3, block 1 of the
    /// level-1 data`.
    public var location: String {
        switch place {
        case .inflatedData: "\(tag) \(version) at byte \(offset) of the inflated data"
        case .level1Data: "\(tag), block \(offset + 1) of the level-1 data"
        case .level2Data: "\(tag), the level-2 data"
        }
    }

    /// `U_TLAY 01 at byte 53 of the inflated data: the text of field 3 …`.
    public var description: String { "\(location): \(reason)" }

    private enum CodingKeys: String, CodingKey {
        case tag, version, offset, place, reason, location
    }

    /// Its fields, and `location` for readers that show it as it is (the inspector page).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(tag, forKey: .tag)
        try container.encode(version, forKey: .version)
        try container.encode(offset, forKey: .offset)
        try container.encode(place, forKey: .place)
        try container.encode(reason, forKey: .reason)
        try container.encode(location, forKey: .location)
    }

    /// Reads what `encode(to:)` wrote (`location` follows from the other fields).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        tag = try container.decode(String.self, forKey: .tag)
        version = try container.decode(String.self, forKey: .version)
        offset = try container.decode(Int.self, forKey: .offset)
        place = try container.decode(Place.self, forKey: .place)
        reason = try container.decode(String.self, forKey: .reason)
    }
}
