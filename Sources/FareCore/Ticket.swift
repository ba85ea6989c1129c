import Foundation

/// A ticket as read from a verified payload: what the inspector checks.
///
/// Format-neutral: FC1 and UIC 918.3 tickets both map onto it. Fields a format does not carry stay
/// `nil`; format-specific content goes into `details`, in display order.
public struct Ticket: Sendable {
    /// The payload format.
    public var format: TicketFormat
    /// The issuer that the ticket claims (FC1 `iss`, UIC issuer code).
    public var issuer: String
    /// The ticket's own identifier (FC1 `cti`), as bytes.
    public var ticketID: [UInt8]
    /// Start of validity, when the ticket states one.
    public var validFrom: Date?
    /// End of validity, when the ticket states one.
    public var validUntil: Date?
    /// When the ticket was issued.
    public var issuedAt: Date?
    /// The product, e.g. `single`, `day`, `month`.
    public var product: String?
    /// Zones the ticket is valid in; `nil` means the whole network.
    public var zones: [String]?
    /// Passenger category: `adult`, `child`, `senior`, `reduced`, `disabled`.
    public var category: String?
    /// Number of passengers.
    public var passengers: Int?
    /// What the inspector checks against the holder, e.g. `ID card ****1234`.
    public var holder: String?
    /// When the rider activated the ticket, for tickets activated on the phone.
    public var activatedAt: Date?
    /// Reactivation counter of a subscription coupon.
    public var reactivations: Int?
    /// Format-specific content for display, in order.
    public var details: [(label: String, value: String)]

    public init(
        format: TicketFormat, issuer: String, ticketID: [UInt8], validFrom: Date? = nil, validUntil: Date? = nil,
        issuedAt: Date? = nil, product: String? = nil, zones: [String]? = nil, category: String? = nil,
        passengers: Int? = nil, holder: String? = nil, activatedAt: Date? = nil, reactivations: Int? = nil,
        details: [(label: String, value: String)] = []
    ) {
        self.format = format
        self.issuer = issuer
        self.ticketID = ticketID
        self.validFrom = validFrom
        self.validUntil = validUntil
        self.issuedAt = issuedAt
        self.product = product
        self.zones = zones
        self.category = category
        self.passengers = passengers
        self.holder = holder
        self.activatedAt = activatedAt
        self.reactivations = reactivations
        self.details = details
    }

    /// The ticket id as lowercase hex, the form used in revocation lists and on screen.
    public var ticketIDHex: String { ticketID.hexString }
}
