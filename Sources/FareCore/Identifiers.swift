import Foundation

/// A name that identifies something, as text, with a type saying what it names: an issuer, a key, an inspection, a
/// scan's source. Two identifiers of different kinds never mix up, although both are text on the wire and in SQLite.
///
/// On the wire (JSON) and in a column each is the plain text it always was, so records stay readable by versions
/// that held them as strings.
public protocol TextIdentifier: RawRepresentable<String>, Sendable, Hashable, Comparable, Codable,
    CustomStringConvertible, ExpressibleByStringInterpolation
{
    /// The identifier `text` names.
    init(_ text: String)
}

extension TextIdentifier {
    public init(rawValue: String) { self.init(rawValue) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(stringInterpolation: DefaultStringInterpolation) {
        self.init(String(stringInterpolation: stringInterpolation))
    }
    public var description: String { rawValue }
    /// Whether the identifier is empty text (names nothing).
    public var isEmpty: Bool { rawValue.isEmpty }
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

/// The issuer a ticket or a key belongs to, as the format names it: an FC1 `iss`, a UIC company code (`1080`), a VDV
/// organisation number, an RSP6 issuer id.
public struct IssuerID: TextIdentifier {
    public let rawValue: String
    public init(_ text: String) { rawValue = text }
}

/// A signing key's identifier within its issuer, as text (hex for FC1, the key number for UIC).
public struct KeyID: TextIdentifier {
    public let rawValue: String
    public init(_ text: String) { rawValue = text }
}

/// One inspection's id: a UUID as text, chosen by the validator. The same in the journal, the upload, the server's
/// store and every sink; the server knows a record by the device that uploaded it and this id.
public struct InspectionID: TextIdentifier {
    public let rawValue: String
    public init(_ text: String) { rawValue = text }

    /// A new id: a random (version 4) UUID as text, its 122 random bits from the system's generator (`getrandom`,
    /// twice). Foundation's `UUID()` opens, reads and closes /dev/urandom for each one, on every scan.
    public static func random() -> InspectionID {
        var generator = SystemRandomNumberGenerator()
        let words = (generator.next() as UInt64, generator.next() as UInt64)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeBytes(of: words) { random in withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: random) } }
        uuid.6 = uuid.6 & 0x0F | 0x40  // version 4
        uuid.8 = uuid.8 & 0x3F | 0x80  // the RFC 9562 variant
        return InspectionID(UUID(uuid: uuid).uuidString)
    }
}

/// Where a scan came from, as the validator names it: a scanner's configured name (`front-door`), else its device
/// path (`/dev/ttyACM0`), a camera, or a file at the bench. Carried from the scan to the journal, the upload and the
/// server under this one name.
public struct SourceName: TextIdentifier {
    public let rawValue: String
    public init(_ text: String) { rawValue = text }
}

/// A ticket's id within its issuer, as bytes (an FC1 `jti`, a UIC ticket number's text, a VDV Berechtigungsnummer);
/// hex as text, on the wire and in messages.
public struct TicketID: Sendable, Hashable, Codable, CustomStringConvertible, ExpressibleByArrayLiteral {
    /// The id's bytes, as the ticket states them.
    public let bytes: [UInt8]

    public init(_ bytes: [UInt8]) { self.bytes = bytes }
    public init(arrayLiteral elements: UInt8...) { bytes = elements }

    /// The id hashed as one block: `[UInt8]`'s own hashing feeds the hasher byte by byte, and revocations and
    /// replays look a ticket up by its id on every scan.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.count)
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// How many bytes the id has.
    public var count: Int { bytes.count }

    /// Whether the id names nothing (no bytes).
    public var isEmpty: Bool { bytes.isEmpty }

    /// Lowercase hex.
    public var description: String { bytes.hexString }

    /// Lowercase hex, as `[UInt8].hexString` writes the bytes.
    public var hexString: String { bytes.hexString }

    /// Reads lowercase or uppercase hex; `nil` for anything else.
    public init?(hex: String) {
        guard let bytes = [UInt8](hex: hex) else { return nil }
        self.bytes = bytes
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let id = TicketID(hex: text) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "a ticket id is hex, not \(text)")
        }
        self = id
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
