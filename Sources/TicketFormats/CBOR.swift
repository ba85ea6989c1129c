import FareCore

/// A CBOR data item (RFC 8949), the subset that COSE and CWT use.
///
/// Floats are kept as their bit pattern so that nothing from outside is interpreted more than needed.
///
/// Only a tag boxes its item: arrays and maps hold theirs in their own storage, so a scalar item costs no
/// allocation of its own (an `indirect enum` boxed every item, two thirds of an FC1 verdict's allocations).
public enum CBOR: Sendable, Hashable {
    case unsigned(UInt64)
    /// A negative integer, stored as CBOR does: the value is `-1 - n`.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBOR])
    /// A map, in the order its pairs were encoded.
    case map([(key: CBOR, value: CBOR)])
    indirect case tagged(UInt64, CBOR)
    case simple(UInt8)
    case bool(Bool)
    case null
    case undefined
    /// A float, as its encoded bit pattern and width in bytes (2, 4 or 8).
    case float(bits: UInt64, width: UInt8)

    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsigned(let a), .unsigned(let b)), (.negative(let a), .negative(let b)): a == b
        case (.float(let a, let w1), .float(let b, let w2)): a == b && w1 == w2
        case (.bytes(let a), .bytes(let b)): a == b
        case (.text(let a), .text(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        case (.tagged(let t1, let a), .tagged(let t2, let b)): t1 == t2 && a == b
        case (.simple(let a), .simple(let b)): a == b
        case (.bool(let a), .bool(let b)): a == b
        case (.null, .null), (.undefined, .undefined): true
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .unsigned(let v):
            hasher.combine(0)
            hasher.combine(v)
        case .negative(let v):
            hasher.combine(1)
            hasher.combine(v)
        case .bytes(let v):
            hasher.combine(2)
            hasher.combine(v)
        case .text(let v):
            hasher.combine(3)
            hasher.combine(v)
        case .array(let v):
            hasher.combine(4)
            hasher.combine(v)
        case .map(let v):
            hasher.combine(5)
            for pair in v {
                hasher.combine(pair.key)
                hasher.combine(pair.value)
            }
        case .tagged(let t, let v):
            hasher.combine(6)
            hasher.combine(t)
            hasher.combine(v)
        case .simple(let v):
            hasher.combine(7)
            hasher.combine(v)
        case .bool(let v):
            hasher.combine(8)
            hasher.combine(v)
        case .null: hasher.combine(9)
        case .undefined: hasher.combine(10)
        case .float(let v, let w):
            hasher.combine(11)
            hasher.combine(v)
            hasher.combine(w)
        }
    }

    /// An integer item for `value`.
    public static func int(_ value: Int64) -> CBOR {
        value >= 0 ? .unsigned(UInt64(value)) : .negative(UInt64(-1 - value))
    }

    /// The value as a signed integer, when it is an integer that fits.
    public var intValue: Int64? {
        switch self {
        case .unsigned(let v): v <= UInt64(Int64.max) ? Int64(v) : nil
        case .negative(let v): v <= UInt64(Int64.max) ? -1 - Int64(v) : nil
        default: nil
        }
    }

    /// The pairs of a map, or `nil`.
    public var mapPairs: [(key: CBOR, value: CBOR)]? {
        if case .map(let pairs) = self { pairs } else { nil }
    }

    /// Looks up a key in a map (first match); `nil` for a missing key or when this is no map.
    public subscript(key: CBOR) -> CBOR? {
        mapPairs?.first { $0.key == key }?.value
    }

    /// A short name of the item's type, for error messages.
    public var typeName: String {
        switch self {
        case .unsigned, .negative: "integer"
        case .bytes: "byte string"
        case .text: "text string"
        case .array: "array"
        case .map: "map"
        case .tagged: "tagged item"
        case .simple, .bool, .null, .undefined: "simple value"
        case .float: "float"
        }
    }
}

/// Reads one CBOR item from bytes, defensively: every length is checked against what is left,
/// nesting is bounded, and nothing is allocated ahead of the bytes that justify it.
public struct CBORDecoder {
    /// Deepest nesting accepted; real tickets use three or four levels.
    public static let maximumDepth = 32

    private let bytes: [UInt8]
    private var offset: Int

    /// Decodes exactly one item that spans all of `bytes`.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> CBOR {
        var decoder = CBORDecoder(bytes: bytes, offset: 0)
        let item = try decoder.item(depth: 0)
        guard decoder.offset == bytes.count else {
            throw .malformed(
                "CBOR item ends at byte \(decoder.offset) but \(bytes.count - decoder.offset) bytes follow it")
        }
        return item
    }

    private mutating func byte() throws(FormatError) -> UInt8 {
        guard offset < bytes.count else { throw .malformed("CBOR data is truncated at byte \(offset)") }
        defer { offset += 1 }
        return bytes[offset]
    }

    private mutating func take(_ count: UInt64) throws(FormatError) -> ArraySlice<UInt8> {
        guard count <= UInt64(bytes.count - offset) else {
            throw .malformed(
                "CBOR length \(count) at byte \(offset) runs past the end of the data (\(bytes.count - offset) bytes left)"
            )
        }
        let n = Int(count)
        defer { offset += n }
        return bytes[offset..<offset + n]
    }

    private mutating func argument(_ info: UInt8, at start: Int) throws(FormatError) -> UInt64 {
        switch info {
        case 0..<24: return UInt64(info)
        case 24: return UInt64(try byte())
        case 25, 26, 27:
            let width = 1 << (info - 24)
            var value: UInt64 = 0
            for byte in try take(UInt64(width)) { value = value << 8 | UInt64(byte) }
            return value
        case 31: throw .unsupported("indefinite-length CBOR at byte \(start) is not accepted in tickets")
        default: throw .malformed("reserved CBOR additional information \(info) at byte \(start)")
        }
    }

    private mutating func item(depth: Int) throws(FormatError) -> CBOR {
        guard depth <= Self.maximumDepth else {
            throw .malformed("CBOR nesting deeper than \(Self.maximumDepth) at byte \(offset)")
        }
        let start = offset
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1F
        if major == 7 {
            switch info {
            case 20: return .bool(false)
            case 21: return .bool(true)
            case 22: return .null
            case 23: return .undefined
            case 24: return .simple(try byte())
            case 25, 26, 27: return .float(bits: try argument(info, at: start), width: 1 << (info - 24))
            case 0..<20: return .simple(info)
            default: throw .malformed("invalid CBOR simple value \(info) at byte \(start)")
            }
        }
        let value = try argument(info, at: start)
        switch major {
        case 0: return .unsigned(value)
        case 1: return .negative(value)
        case 2: return .bytes(Array(try take(value)))
        case 3:
            let raw = try take(value)
            guard let text = String(utf8Validating: raw) else {
                throw .malformed("CBOR text string at byte \(start) is not valid UTF-8")
            }
            return .text(text)
        case 4:
            // Each element needs at least one byte, so a count beyond the bytes left is a lie.
            guard value <= UInt64(bytes.count - offset) else {
                throw .malformed("CBOR array at byte \(start) claims \(value) elements, more than the data holds")
            }
            var elements: [CBOR] = []
            elements.reserveCapacity(Int(value))
            for _ in 0..<value { elements.append(try item(depth: depth + 1)) }
            return .array(elements)
        case 5:
            guard value <= UInt64(bytes.count - offset) / 2 else {
                throw .malformed("CBOR map at byte \(start) claims \(value) pairs, more than the data holds")
            }
            var pairs: [(key: CBOR, value: CBOR)] = []
            pairs.reserveCapacity(Int(value))
            for _ in 0..<value {
                let key = try item(depth: depth + 1)
                let element = try item(depth: depth + 1)
                pairs.append((key, element))
            }
            return .map(pairs)
        default:  // 6: tag
            return .tagged(value, try item(depth: depth + 1))
        }
    }
}

/// Writes CBOR items in the core deterministic encoding (shortest argument forms).
///
/// Map pairs are written in the order given: issuers that want canonical order sort them first.
public enum CBOREncoder {
    /// The encoded bytes of `item`.
    public static func encode(_ item: CBOR) -> [UInt8] {
        var out: [UInt8] = []
        write(item, into: &out)
        return out
    }

    private static func head(_ major: UInt8, _ value: UInt64, into out: inout [UInt8]) {
        let m = major << 5
        switch value {
        case 0..<24: out.append(m | UInt8(value))
        case 24...0xFF:
            out.append(m | 24)
            out.append(UInt8(value))
        case 0x100...0xFFFF:
            out.append(m | 25)
            out.append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)])
        case 0x10000...0xFFFF_FFFF:
            out.append(m | 26)
            for shift in stride(from: 24, through: 0, by: -8) { out.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
        default:
            out.append(m | 27)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((value >> UInt64(shift)) & 0xFF)) }
        }
    }

    private static func write(_ item: CBOR, into out: inout [UInt8]) {
        switch item {
        case .unsigned(let v): head(0, v, into: &out)
        case .negative(let v): head(1, v, into: &out)
        case .bytes(let b):
            head(2, UInt64(b.count), into: &out)
            out.append(contentsOf: b)
        case .text(let t):
            let utf8 = Array(t.utf8)
            head(3, UInt64(utf8.count), into: &out)
            out.append(contentsOf: utf8)
        case .array(let a):
            head(4, UInt64(a.count), into: &out)
            for element in a { write(element, into: &out) }
        case .map(let pairs):
            head(5, UInt64(pairs.count), into: &out)
            for pair in pairs {
                write(pair.key, into: &out)
                write(pair.value, into: &out)
            }
        case .tagged(let tag, let inner):
            head(6, tag, into: &out)
            write(inner, into: &out)
        case .simple(let v):
            if v < 24 {
                out.append(0xE0 | v)
            } else {
                out.append(0xF8)
                out.append(v)
            }
        case .bool(let b): out.append(b ? 0xF5 : 0xF4)
        case .null: out.append(0xF6)
        case .undefined: out.append(0xF7)
        case .float(let bits, let width):
            // Written back at the width it was read with, so a decoded item re-encodes to the same bytes.
            let info: UInt8 = width == 2 ? 25 : width == 4 ? 26 : 27
            out.append(0xE0 | info)
            let byteCount = 1 << Int(info - 24)
            for index in stride(from: byteCount - 1, through: 0, by: -1) {
                out.append(UInt8((bits >> UInt64(index * 8)) & 0xFF))
            }
        }
    }
}
