/// A payload format farecheck reads: every name a format goes by, in one place.
///
/// The raw value is the format's name everywhere a person or a program reads it: `verify --json`, the event line,
/// the journal, the `[verification] formats` list of the configuration and the inspection upload.
public enum TicketFormat: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// farecheck's own format: COSE_Sign1 over CWT claims.
    case fc1 = "fc1"
    /// UIC 918.3 static rail tickets (`#UT` containers), with their U_HEAD, U_TLAY, 0080BL and U_FLEX records.
    case uic9183 = "uic-918-3"
    /// UIC 918.9 DOSIPAS (`UicBarcodeHeader`): FCB content with one or two signature levels.
    case uic9189 = "uic-918-9"
    /// The ERA Small Structured Barcode (114 bytes).
    case eraSSB = "era-ssb"
    /// The VDV-KA static barcode of German local transport (and the Deutschland-Ticket).
    case vdvKA = "vdv-ka"
    /// The UK National Rail e-ticket (RSP6): an RSA block in base-26 letters behind a clear header.
    case ukRSP6 = "uk-rsp6"

    /// The format's name, as in JSON, events, the journal and the configuration.
    public var name: String { rawValue }

    /// The name in a sentence for the inspector, e.g. `UIC 918.3`.
    public var displayName: String {
        switch self {
        case .fc1: "FC1"
        case .uic9183: "UIC 918.3"
        case .uic9189: "UIC 918.9 (DOSIPAS)"
        case .eraSSB: "ERA SSB"
        case .vdvKA: "VDV-KA"
        case .ukRSP6: "UK RSP6"
        }
    }

    /// The family of keys that sign tickets of this format: UIC 918.3, DOSIPAS and SSB share the UIC key list.
    public var keyFamily: KeyFamily {
        switch self {
        case .fc1: .fc1
        case .uic9183, .uic9189, .eraSSB: .uic
        case .vdvKA: .vdv
        case .ukRSP6: .rsp6
        }
    }

    /// The format named `name` (its own name, case-insensitively), or `nil`.
    public init?(name: String) {
        self.init(rawValue: name.lowercased())
    }

    /// Every format's name, comma-separated: for messages that list what is accepted.
    public static var allNames: String { allCases.map(\.name).joined(separator: ", ") }

    public var description: String { rawValue }
}

/// The families of signing keys: which list a key comes from and which formats it may verify.
///
/// A key is stored, distributed in key bundles and looked up under its family. Each family has a store name
/// (the `format` column of the store's key table, kept from earlier schemas) and a wire name (the key bundle's
/// `format` member).
public enum KeyFamily: String, Sendable, Hashable, CaseIterable, Codable, CustomStringConvertible {
    /// FC1 keys, found by their key id (kid) alone.
    case fc1
    /// Keys of the UIC public key list (RICS issuer code + key id): UIC 918.3, DOSIPAS level 1, ERA SSB.
    case uic
    /// VDV-KA certificates (CA and sub-CA), found by their certificate holder reference.
    case vdv
    /// UK RSP6 issuers' RSA keys, found by the issuer id (each key's id is made from its modulus; a ticket names
    /// none, so every key of the issuer is tried).
    case rsp6

    /// The name in the store's key table.
    public var storeName: String {
        switch self {
        case .fc1: "fc1"
        case .uic: "uic-918-3"
        case .vdv: "vdv-ka"
        case .rsp6: "uk-rsp6"
        }
    }

    /// The name in key bundles and key references of the validation API.
    public var wireName: String {
        switch self {
        case .fc1: "fc1"
        case .uic: "uic"
        case .vdv: "vdv"
        case .rsp6: "rsp6"
        }
    }

    /// The family whose store name is `name`, or `nil`.
    public init?(storeName name: String) {
        guard let family = Self.allCases.first(where: { $0.storeName == name }) else { return nil }
        self = family
    }

    /// The family whose wire name is `name`, or `nil`.
    public init?(wireName name: String) {
        guard let family = Self.allCases.first(where: { $0.wireName == name }) else { return nil }
        self = family
    }

    /// The family a person names on a command line: its wire or store name, or a format of the family
    /// (`uic-918-9`, `era-ssb` are `uic`).
    public init?(name: String) {
        let lowered = name.lowercased()
        if let family = Self(wireName: lowered) ?? Self(storeName: lowered) {
            self = family
        } else if let format = TicketFormat(name: lowered) {
            self = format.keyFamily
        } else {
            return nil
        }
    }

    public var description: String { wireName }
}

/// Whose verdict was shown: this validator's own, or the validation API's online check.
public enum Decider: String, Sendable, Hashable, CaseIterable, Codable {
    /// The validator decided offline, from its own store.
    case offline
    /// The validation API's online check decided (it can only turn `valid` into `revoked`).
    case online
}
