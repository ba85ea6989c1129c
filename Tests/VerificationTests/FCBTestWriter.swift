@testable import TicketFormats

/// A value to write in unaligned PER, by component name: the tests' own FCB content (a BahnCard, say) for which no
/// real ticket is at hand. Only what those tests need: no extension additions, lengths below 16 384.
enum FCBTestValue {
    case integer(Int)
    case boolean(Bool)
    case enumerated(Int)
    case text(String)
    /// A SEQUENCE: the components that are there, by name; the others are absent (or their DEFAULT).
    case sequence([String: FCBTestValue])
    /// A CHOICE: the alternative's name and value.
    indirect case choice(String, FCBTestValue)
    case list([FCBTestValue])
}

/// Writes values in unaligned PER (X.691) after the schema farecheck decodes with: the inverse of `PERDecoder` for
/// root components, so that a ticket built here is read by the real decoder.
struct FCBTestWriter {
    enum Failure: Error, CustomStringConvertible {
        case mismatch(String)
        var description: String {
            switch self {
            case .mismatch(let text): text
            }
        }
    }

    private(set) var bits: [Bool] = []

    /// The bytes, the last one padded with zero bits.
    var bytes: [UInt8] {
        stride(from: 0, to: bits.count, by: 8).map { start in
            var byte: UInt8 = 0
            for offset in 0..<8 { byte = byte << 1 | (start + offset < bits.count && bits[start + offset] ? 1 : 0) }
            return byte
        }
    }

    /// A v3 `UicRailTicketData` holding `value`.
    static func fcbV3(_ value: FCBTestValue) throws -> [UInt8] {
        var writer = FCBTestWriter()
        try writer.write(value, as: FCBSchemaV3.uicRailTicketData, at: "UicRailTicketData")
        return writer.bytes
    }

    private mutating func append(_ value: UInt64, width: Int) {
        for shift in stride(from: width - 1, through: 0, by: -1) { bits.append(value >> UInt64(shift) & 1 == 1) }
    }

    /// A length determinant (X.691 11.9.3.6–7, unaligned): 8 bits below 128, else `10` and 14 bits.
    private mutating func appendLength(_ length: Int) {
        if length < 128 {
            append(UInt64(length), width: 8)
        } else {
            append(0b10, width: 2)
            append(UInt64(length), width: 14)
        }
    }

    mutating func write(_ value: FCBTestValue, as type: PERType, at path: String) throws {
        switch (type, value) {
        case (.boolean, .boolean(let flag)):
            bits.append(flag)
        case (.integer(let lower, let upper), .integer(let number)):
            guard (lower...upper).contains(number) else { throw Failure.mismatch("\(path): \(number) out of range") }
            append(UInt64(number - lower), width: PERSize.bitWidth(UInt64(upper - lower)))
        case (.unconstrainedInteger, .integer(let number)):
            var octets: [UInt8] = []
            var rest = number
            repeat {
                octets.insert(UInt8(truncatingIfNeeded: rest), at: 0)
                rest >>= 8
            } while !(rest == 0 && octets[0] & 0x80 == 0) && !(rest == -1 && octets[0] & 0x80 != 0)
            appendLength(octets.count)
            for octet in octets { append(UInt64(octet), width: 8) }
        case (.enumerated(let enumeration), .enumerated(let index)):
            if enumeration.isExtensible { bits.append(false) }
            append(UInt64(index), width: PERSize.bitWidth(UInt64(enumeration.names.count - 1)))
        case (.ia5String(let size), .text(let text)):
            let characters = Array(text.utf8)
            try appendSize(characters.count, size, at: path)
            for character in characters { append(UInt64(character), width: 7) }
        case (.utf8String, .text(let text)):
            let octets = Array(text.utf8)
            appendLength(octets.count)
            for octet in octets { append(UInt64(octet), width: 8) }
        case (.sequence(let sequence), .sequence(let fields)):
            let known = Set(sequence.components.map(\.name))
            if let stray = fields.keys.first(where: { !known.contains($0) }) {
                throw Failure.mismatch("\(path): \(sequence.name) has no root component \(stray)")
            }
            if sequence.isExtensible { bits.append(false) }
            for component in sequence.components where component.hasPresenceBit {
                bits.append(fields[component.name] != nil)
            }
            for component in sequence.components {
                guard let field = fields[component.name] else {
                    if case .required = component.presence {
                        throw Failure.mismatch("\(path).\(component.name) is required")
                    }
                    continue
                }
                try write(field, as: component.type, at: "\(path).\(component.name)")
            }
        case (.choice(let choice), .choice(let name, let alternative)):
            guard let index = choice.alternatives.firstIndex(where: { $0.name == name }) else {
                throw Failure.mismatch("\(path): \(choice.name) has no alternative \(name)")
            }
            if choice.isExtensible { bits.append(false) }
            append(UInt64(index), width: PERSize.bitWidth(UInt64(choice.alternatives.count - 1)))
            try write(alternative, as: choice.alternatives[index].type, at: "\(path).\(name)")
        case (.sequenceOf(let item, let size), .list(let items)):
            try appendSize(items.count, size, at: path)
            for (index, element) in items.enumerated() { try write(element, as: item, at: "\(path)[\(index)]") }
        default:
            throw Failure.mismatch("\(path): \(value) cannot be written as \(type)")
        }
    }

    /// A count under a SIZE constraint: none for a fixed size, a constrained number when bounded, else a length.
    private mutating func appendSize(_ count: Int, _ size: PERSize?, at path: String) throws {
        guard let size else { return appendLength(count) }
        guard count >= size.lowerBound, size.upperBound.map({ count <= $0 }) ?? true else {
            throw Failure.mismatch("\(path): size \(count) outside its constraint")
        }
        if let width = size.constrainedWidth {
            append(UInt64(count - size.lowerBound), width: width)
        } else {
            appendLength(count)
        }
    }
}
