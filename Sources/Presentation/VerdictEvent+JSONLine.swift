import FareCore
import Foundation
import Synchronization

extension VerdictEvent {
    /// The event's JSON line, written field by field: the bytes `JSONEncoder` writes with ``encoder`` (sorted keys,
    /// ISO 8601 dates, slashes unescaped), at a fraction of its cost. Every verdict the daemon publishes is encoded
    /// once, on the scans' thread, and `JSONEncoder` (its generic containers, a dictionary per object, the sorting of
    /// keys, a formatter per date) was about a tenth of that thread's time.
    ///
    /// The fields every verdict has (and the ticket's) are written here, in the encoder's order of keys (their
    /// bytes compared: `keyId` before `keys`, `validUntil` before `verdict`). The rare structured ones (the keys
    /// considered, unreadable records, a blocklist revocation) are left to `JSONEncoder`, one value each, with the
    /// same options. The holder check is written here too: every personal ticket has one.
    var handWrittenJSONLine: String {
        var line = JSONLineBuilder()
        line.open()
        if form == .report, let activatedAt { line.field("activatedAt", activatedAt) }
        if let category { line.field("category", category) }
        if let clockFloor { line.field("clockFloor", clockFloor) }
        if let clockFloorSource { line.field("clockFloorSource", clockFloorSource.rawValue) }
        if form == .event { line.field("decidedBy", decidedBy.rawValue) }
        if let details {
            line.key("details")
            line.array(details) { line, detail in
                line.open()
                line.field("label", detail.label)
                line.field("value", detail.value)
                line.close()
            }
        }
        if form == .event { line.field("device", device.rawValue) }
        if form == .event, let documents {
            line.key("documents")
            line.array(documents) { line, document in
                line.open()
                line.field("kind", document.kind)
                line.field("summary", document.summary)
                if let explanation = document.summaryExplanation {
                    line.key("summaryExplanation")
                    line.explanation(explanation)
                }
                if let validFrom = document.validFrom { line.field("validFrom", validFrom) }
                if let validUntil = document.validUntil { line.field("validUntil", validUntil) }
                line.close()
            }
        }
        if form == .report, let expected { line.field("expected", expected) }
        if let explanation {
            line.key("explanation")
            line.explanation(explanation)
        }
        if let format { line.field("format", format.rawValue) }
        if let holder { line.field("holder", holder) }
        if let holderCheck {
            line.key("holderCheck")
            line.holder(holderCheck)
        }
        if form == .event { line.field("id", id.rawValue) }
        line.field("inspectedAt", inspectedAt)
        if form == .event, let inspector { line.field("inspector", inspector) }
        if form == .report, let issuedAt { line.field("issuedAt", issuedAt) }
        if let issuer { line.field("issuer", issuer.rawValue) }
        if let keyID { line.field("keyId", keyID.rawValue) }
        if let keys { line.encoded("keys", keys) }
        if form == .event { line.field("latencyMicros", latencyMicros) }
        if let layout { line.field("layout", layout) }
        if let passengers { line.field("passengers", passengers) }
        line.field("payloadBytes", payloadBytes)
        if let product { line.field("product", product) }
        if form == .report, let reactivations { line.field("reactivations", reactivations) }
        line.field("reason", reason)
        if let revocation { line.encoded("revocation", revocation) }
        line.field("signature", signature.rawValue)
        if form == .report { line.field("source", device.rawValue) }
        if let symbology { line.field("symbology", symbology.rawValue) }
        if let ticketId { line.field("ticketId", ticketId) }
        if let unreadableRecords { line.encoded("unreadableRecords", unreadableRecords) }
        if let validFrom { line.field("validFrom", validFrom) }
        if let validUntil { line.field("validUntil", validUntil) }
        line.field("verdict", verdict.rawValue)
        if let warningExplanations {
            line.key("warningExplanations")
            line.array(warningExplanations) { line, explanation in line.explanation(explanation) }
        }
        line.field("warningMessages", warningMessages)
        line.field("warnings", warnings)
        if let zones { line.field("zones", zones) }
        line.close()
        return line.text
    }

    /// The encoder for the values ``handWrittenJSONLine`` leaves to `JSONEncoder`: made once (it is thread-safe).
    fileprivate static let sharedEncoder = encoder
}

/// A JSON text written byte by byte as `JSONEncoder` writes it (no spaces, `"` `\` and control characters escaped,
/// `/` and non-ASCII text as they are).
struct JSONLineBuilder {
    private(set) var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(1024) }

    var text: String { String(decoding: bytes, as: UTF8.self) }

    mutating func open() { bytes.append(UInt8(ascii: "{")) }
    mutating func close() { bytes.append(UInt8(ascii: "}")) }

    /// The comma before a key or an array's element, unless it is the first of its object or array.
    private mutating func separate() {
        if let last = bytes.last, last != UInt8(ascii: "{"), last != UInt8(ascii: "[") {
            bytes.append(UInt8(ascii: ","))
        }
    }

    /// `"name":` (a name needs no escaping: it is one of ours).
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: StaticString, _ value: String) {
        key(name)
        string(value)
    }

    mutating func field(_ name: StaticString, _ value: Int) {
        key(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    mutating func field(_ name: StaticString, _ value: Date) {
        key(name)
        date(value)
    }

    mutating func field(_ name: StaticString, _ values: [String]) {
        key(name)
        array(values) { line, value in line.string(value) }
    }

    /// `"name":` and the value as `JSONEncoder` writes it.
    mutating func encoded(_ name: StaticString, _ value: some Encodable) {
        key(name)
        if let data = try? VerdictEvent.sharedEncoder.encode(value) {
            bytes.append(contentsOf: data)
        } else {
            bytes.append(contentsOf: "null".utf8)
        }
    }

    /// The holder check, as `TicketHolder.encode(to:)` writes it: the fields that are there, in sorted order.
    mutating func holder(_ holder: TicketHolder) {
        open()
        if let dateOfBirth = holder.dateOfBirth { field("dateOfBirth", dateOfBirth.description) }
        if let familyName = holder.familyName { field("familyName", familyName) }
        if let givenName = holder.givenName { field("givenName", givenName) }
        if !holder.idDocuments.isEmpty {
            key("idDocuments")
            array(holder.idDocuments) { line, document in
                line.open()
                line.field("kind", document.kind.rawValue)
                line.field("number", document.number)
                line.close()
            }
        }
        if let name = holder.name { field("name", name) }
        if let note = holder.note { field("note", note) }
        close()
    }

    mutating func array<Element>(_ elements: [Element], _ write: (inout JSONLineBuilder, Element) -> Void) {
        bytes.append(UInt8(ascii: "["))
        for element in elements {
            separate()
            write(&self, element)
        }
        bytes.append(UInt8(ascii: "]"))
    }

    /// `{"arguments":[…],"template":"…"}`, as `Explanation.encode(to:)` makes it.
    mutating func explanation(_ explanation: Explanation) {
        open()
        key("arguments")
        array(explanation.arguments) { line, argument in
            line.open()
            switch argument {
            case .text(let text): line.field("text", text)
            case .date(let date): line.field("date", date)
            case .number(let number): line.field("number", number)
            case .duration(let seconds): line.encoded("duration", seconds)
            case .explanation(let inner):
                line.key("explanation")
                line.explanation(inner)
            }
            line.close()
        }
        field("template", explanation.template)
        close()
    }

    /// A string in double quotes, escaped as `JSONEncoder` escapes it.
    mutating func string(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// `"2027-01-15T08:00:00Z"`: whole seconds, UTC, as `Date.ISO8601FormatStyle` writes them. A year outside
    /// 1583…9999 is left to that style: its calendar is Julian before October 1582, and it writes longer years.
    mutating func date(_ value: Date) {
        let seconds = value.timeIntervalSince1970.rounded(.down)
        guard seconds.magnitude < 1e12 else { return string(value.formatted(.iso8601)) }
        let time = CivilTime(unixSeconds: Int64(seconds))
        guard (1583...9999).contains(time.year) else { return string(value.formatted(.iso8601)) }
        bytes.append(UInt8(ascii: "\""))
        let parts: [(value: Int, width: Int, then: Unicode.Scalar)] = [
            (time.year, 4, "-"), (time.month, 2, "-"), (time.day, 2, "T"), (time.hour, 2, ":"),
            (time.minute, 2, ":"), (time.second, 2, "Z"),
        ]
        for part in parts {
            digits(part.value, count: part.width)
            bytes.append(UInt8(ascii: part.then))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func digits(_ value: Int, count: Int) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
