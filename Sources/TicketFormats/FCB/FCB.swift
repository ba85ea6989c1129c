/// The versions of FCB (UIC 918.9 "flexible content", ASN.1 `UicRailTicketData`) that farecheck decodes.
///
/// The encoding carries no version of its own: decoding with the wrong module silently gives garbage, so the
/// version always comes from the container (the `U_FLEX` record version, the DOSIPAS `dataFormat`).
public enum FCBVersion: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Version 1.3 (`uicRailTicketData_v1.3.5.asn`). Named as the schema versions are, with the dot as `_`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    case v1_3 = "1.3"
    /// Version 2 (`uicRailTicketData_v2.0.3.asn`).
    case v2 = "2"
    /// Version 3 (`uicRailTicketData_v3.0.6.asn`).
    case v3 = "3"

    /// The version of a `U_FLEX` record: `13` (and `01`, used for 1.3 before `13` was agreed), `02`, `03`;
    /// `nil` for any other.
    public init?(uflexRecordVersion version: String) {
        switch version {
        case "13", "01": self = .v1_3
        case "02": self = .v2
        case "03": self = .v3
        default: return nil
        }
    }

    /// The version of a DOSIPAS `DataType.dataFormat`: `FCB1` or `FCB13` (the UIC registry's name),
    /// `FCB2`, `FCB3`; `nil` for any other format.
    public init?(dosipasDataFormat format: String) {
        switch format {
        case "FCB1", "FCB13": self = .v1_3
        case "FCB2": self = .v2
        case "FCB3": self = .v3
        default: return nil
        }
    }

    /// The schema of `UicRailTicketData` in this version.
    public var schema: PERType {
        switch self {
        case .v1_3: FCBSchemaV13.uicRailTicketData
        case .v2: FCBSchemaV2.uicRailTicketData
        case .v3: FCBSchemaV3.uicRailTicketData
        }
    }

    /// `FCB 1.3`, `FCB 2`, `FCB 3`.
    public var description: String { "FCB \(rawValue)" }
}

/// Decoded FCB data: the generic value tree, with the version it was decoded with.
///
/// `FCBTicket` reads the fields that matter for inspection from it; `json` shows every field.
public struct FCBData: Sendable {
    /// The version the data was decoded with.
    public let version: FCBVersion
    /// The top-level `UicRailTicketData` SEQUENCE.
    public let root: PERRecord

    /// Decodes FCB bytes of a known version.
    ///
    /// - Parameter subject: what the bytes are, for messages, e.g. `the U_FLEX record at byte 153`; built only
    ///   when there is an error.
    /// - Throws: `malformed` naming the bit offset and the field path.
    public init(
        decoding bytes: [UInt8], version: FCBVersion, subject: @autoclosure () -> String = "the FCB data"
    ) throws(FormatError) {
        let value = try PERDecoder.decode(bytes, as: version.schema, subject: subject())
        guard let root = value.record else {
            // The FCB schemas' top level is a SEQUENCE: this cannot happen.
            throw .malformed("\(subject()) does not decode to a UicRailTicketData sequence")
        }
        self.version = version
        self.root = root
    }

    /// Every decoded field as JSON, nested, with the schema's field names (DEFAULT fields included).
    public var json: String { PERJSON.render(.sequence(root), as: version.schema) }
}
