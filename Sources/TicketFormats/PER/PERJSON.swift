import FareCore

/// Renders a decoded value tree as JSON with the schema's names: every field, nested, for display.
///
/// SEQUENCEs become objects (present and defaulted components, in schema order), CHOICEs an object with the
/// alternative's name, ENUMERATED values their names, OCTET STRINGs and long INTEGERs hex text, SEQUENCE
/// OFs arrays. Unknown extension alternatives and enumeration values show as their index.
public enum PERJSON {
    /// `value` (decoded as `type`) as compact JSON.
    public static func render(_ value: PERValue, as type: PERType) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(1_024)
        write(value, type, into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ value: PERValue, _ type: PERType, into out: inout [UInt8]) {
        switch value {
        case .boolean(let flag):
            out += Array((flag ? "true" : "false").utf8)
        case .integer(let number):
            out += Array(String(number).utf8)
        case .bigInteger(let bytes):
            string("0x" + bytes.hexString, into: &out)
        case .enumerated(let index):
            if case .enumerated(let enumeration) = type, let name = enumeration.name(at: index) {
                string(name, into: &out)
            } else {
                out += Array(String(index).utf8)
            }
        case .text(let text):
            string(text, into: &out)
        case .octets(let bytes):
            string(bytes.hexString, into: &out)
        case .bits(let packed, let count):
            var digits: [UInt8] = []
            for index in 0..<count {
                digits.append((packed[index / 8] >> (7 - UInt8(index % 8))) & 1 == 1 ? 0x31 : 0x30)
            }
            string(String(decoding: digits, as: UTF8.self), into: &out)
        case .null:
            out += Array("null".utf8)
        case .objectIdentifier(let arcs):
            string(arcs.map(String.init).joined(separator: "."), into: &out)
        case .sequence(let record):
            out.append(UInt8(ascii: "{"))
            var first = true
            for index in record.values.indices {
                guard let slot = record.value(at: index) else { continue }
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                let component = record.type.component(at: index)
                string(component.name, into: &out)
                out.append(UInt8(ascii: ":"))
                write(slot, component.type, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .choice(let index, let inner):
            out.append(UInt8(ascii: "{"))
            if case .choice(let choice) = resolved(type), let alternative = choice.alternative(at: index) {
                string(alternative.name, into: &out)
                out.append(UInt8(ascii: ":"))
                write(inner, alternative.type, into: &out)
            } else {
                string("extension alternative \(index)", into: &out)
                out.append(UInt8(ascii: ":"))
                write(inner, .octetString(nil), into: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .list(let items):
            let itemType: PERType
            if case .sequenceOf(let item, _) = resolved(type) { itemType = item } else { itemType = .null }
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                write(item, itemType, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        }
    }

    private static func resolved(_ type: PERType) -> PERType {
        if case .recursive(let recursion) = type { return recursion.resolve() }
        return type
    }

    /// A JSON string literal, escaping what JSON requires.
    private static func string(_ text: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [0x5C, 0x22]
            case UInt8(ascii: "\\"): out += [0x5C, 0x5C]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out += Array([byte].hexString.utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
