import FareCore

/// A way an issuer writes a UIC 918.3 ticket that breaks the letter of the standard but whose meaning is not in
/// doubt: farecheck reads it as meant and names it, so that a genuine ticket is not refused at the gate and the
/// inspector (and the issuer's support) can see what was tolerated.
///
/// Each kind is recognised only where its reading is unambiguous (see docs/issuer-quirks.md): a number padded
/// with spaces has exactly one run of digits; U_TLAY text lengths are read as characters only when the byte
/// reading fails and the character reading consumes the record exactly; a U_TLAY with fewer fields than it
/// announces keeps them only when the record ends at a field boundary. The signature is always checked over the
/// bytes as scanned: a quirk changes how the bytes are read, never which bytes are signed.
public struct IssuerQuirk: Sendable, Hashable, CustomStringConvertible {
    /// The quirks farecheck knows.
    public enum Kind: Sendable, Hashable {
        /// A fixed-width ASCII number with spaces where the standard puts leading zeros (`"  53"`, `" 107"`), or
        /// spaces after its digits (`"13  "`); `written` is the field as it stands.
        case spacePaddedNumber(written: String)
        /// A U_TLAY text length (or the U_TLAY record's own length) counted in characters instead of UTF-8 bytes:
        /// the first such field's text (or the record) has `characters` characters in `bytes` bytes.
        case lengthInCharacters(characters: Int, bytes: Int)
        /// A U_TLAY that announces `announced` fields and holds `held`, ending cleanly after the last.
        case fewerFieldsThanAnnounced(announced: Int, held: Int)
        /// A `#UT` header of version 2 over a container laid out as version 1: a 50-byte field holding DER.
        case version1LayoutUnderVersion2

        /// A stable name, e.g. `space-padded-number`.
        public var name: String {
            switch self {
            case .spacePaddedNumber: "space-padded-number"
            case .lengthInCharacters: "length-in-characters"
            case .fewerFieldsThanAnnounced: "fewer-fields-than-announced"
            case .version1LayoutUnderVersion2: "version-1-layout-in-version-2"
            }
        }

        /// What the quirk is, for a person.
        public var title: String {
            switch self {
            case .spacePaddedNumber: "numbers padded with spaces instead of zeros"
            case .lengthInCharacters: "U_TLAY lengths counted in characters instead of bytes"
            case .fewerFieldsThanAnnounced: "a U_TLAY that announces more fields than it holds"
            case .version1LayoutUnderVersion2: "a version 2 header over a version 1 layout"
            }
        }
    }

    /// The record tag used for the `#UT` header of the container itself.
    public static let containerHeader = "#UT"

    /// Which quirk, with what was found.
    public var kind: Kind
    /// The record it is in (`U_TLAY`, `U_HEAD`, …), or `#UT` for the container's header.
    public var record: String
    /// The byte of its first instance: in the barcode for the `#UT` header, in the inflated data otherwise.
    public var offset: Int
    /// The field of the first instance, e.g. `data length`, `length`, `number of fields`, `field 3's text length`.
    public var field: String
    /// How many times the record has this quirk (numbers padded, texts counted in characters); 1 for the others.
    public var count: Int

    /// A quirk found once.
    public init(_ kind: Kind, record: String, offset: Int, field: String, count: Int = 1) {
        self.kind = kind
        self.record = record
        self.offset = offset
        self.field = field
        self.count = count
    }

    /// `byte 64 of the barcode` or `byte 8 of the inflated data`.
    public var place: String {
        record == Self.containerHeader ? "byte \(offset) of the barcode" : "byte \(offset) of the inflated data"
    }

    /// Where and what, e.g. `the length of record U_HEAD at byte 8 of the inflated data, "  53"`.
    public var description: String {
        let owner = record == Self.containerHeader ? "the #UT header" : "record \(record)"
        // "the data length", but "field 2's text length".
        let what = field.hasPrefix("field ") ? field : "the \(field)"
        switch kind {
        case .spacePaddedNumber(let written):
            let more = count > 1 ? " and \(count - 1) more number\(count == 2 ? "" : "s") of the record" : ""
            return "\(what) of \(owner) at \(place), written \"\(written)\"\(more)"
        case .lengthInCharacters(let characters, let bytes):
            let more = count > 1 ? " and \(count - 1) more field\(count == 2 ? "" : "s")" : ""
            return "\(what) of \(owner) at \(place): \(characters) characters, which take \(bytes) bytes\(more)"
        case .fewerFieldsThanAnnounced(let announced, let held):
            return "\(owner) announces \(announced) fields at \(place) but holds \(held); the \(announced - held) "
                + "missing are not shown"
        case .version1LayoutUnderVersion2:
            return "\(owner) says version 02 at \(place), but its signature field is 50 bytes of DER, as in version 1"
        }
    }

    /// The warnings for `quirks`: one per kind, naming every record and byte where it was found.
    public static func warnings(_ quirks: [IssuerQuirk]) -> [VerdictWarning] {
        var order: [String] = []
        var byKind: [String: [IssuerQuirk]] = [:]
        for quirk in quirks {
            if byKind[quirk.kind.name] == nil { order.append(quirk.kind.name) }
            byKind[quirk.kind.name, default: []].append(quirk)
        }
        return order.compactMap { name in
            guard let group = byKind[name], let first = group.first else { return nil }
            let places = group.map(\.description).joined(separator: "; ")
            return VerdictWarning(
                code: VerdictWarning.issuerQuirkCode,
                message: "The issuer wrote \(first.kind.title) (\(name)): \(places). Read as meant; the signature "
                    + "was checked over the bytes as scanned.")
        }
    }
}
