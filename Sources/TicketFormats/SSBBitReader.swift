/// Reads the big-endian bit fields of an ERA SSB frame: bit 0 is the most significant bit of byte 0.
///
/// Private to the SSB decoder (internal, named for SSB) so that it does not clash with the other bit readers of
/// the module; SSB needs nothing more than unsigned fields and 6-bit characters at fixed offsets.
struct SSBBitReader {
    /// The bytes read.
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// How many bits there are.
    var bitCount: Int { bytes.count &* 8 }

    /// The unsigned integer in bits `offset ..< offset + width` (width at most 62).
    ///
    /// - Throws: `malformed`, naming the field and its bits, when they are not all inside the bytes.
    func value(_ field: String, at offset: Int, width: Int) throws(FormatError) -> Int {
        guard width >= 0, width <= 62, offset >= 0, offset <= bitCount - width else {
            throw .malformed(
                "the \(field) (bits \(offset)–\(offset + width - 1)) lies past the end of the "
                    + "\(bytes.count)-byte ticket")
        }
        var value = 0
        var bit = offset
        while bit < offset + width {
            value = value << 1 | Int(bytes[bit >> 3] >> (7 - (bit & 7)) & 1)
            bit += 1
        }
        return value
    }

    /// Whether bit `offset` is set.
    func flag(_ field: String, at offset: Int) throws(FormatError) -> Bool {
        try value(field, at: offset, width: 1) == 1
    }

    /// `count` six-bit characters from bit `offset`, read with `set`, trailing spaces removed.
    func text(_ field: String, at offset: Int, count: Int, _ set: SSBCharacterSet) throws(FormatError) -> String {
        var ascii: [UInt8] = []
        ascii.reserveCapacity(count)
        for index in 0..<count {
            ascii.append(set.character(try value(field, at: offset + 6 * index, width: 6)))
        }
        while ascii.last == 0x20 { ascii.removeLast() }
        return String(decoding: ascii, as: UTF8.self)
    }
}

/// The 6-bit character tables of ERA SSB.
public enum SSBCharacterSet: Sendable, Hashable {
    /// Version 3: value v is the ASCII character v + 32 (0 = space, 16–25 = digits, 33–58 = letters).
    case ascii
    /// Versions 1 and 2: 0–9 are digits, 10–35 letters; 36 is read as a space (as zuegli does) and every other
    /// value as `?`, because no source has the official table for them.
    case legacy

    /// The ASCII byte for a 6-bit value.
    func character(_ value: Int) -> UInt8 {
        switch self {
        case .ascii:
            return UInt8(truncatingIfNeeded: (value & 0x3F) + 32)
        case .legacy:
            switch value {
            case 0...9: return UInt8(truncatingIfNeeded: 0x30 + value)
            case 10...35: return UInt8(truncatingIfNeeded: 0x41 + value - 10)
            case 36: return 0x20
            default: return UInt8(ascii: "?")
            }
        }
    }

    /// The 6-bit value of an ASCII character, or `nil` when the table has none (for building frames in tests).
    public func value(of character: UInt8) -> Int? {
        switch self {
        case .ascii:
            // The encoder upper-cases text: lower-case letters have no 6-bit value of their own.
            let upper = (0x61...0x7A).contains(character) ? character - 0x20 : character
            guard (0x20...0x5F).contains(upper) else { return nil }
            return Int(upper) - 32
        case .legacy:
            switch character {
            case 0x30...0x39: return Int(character) - 0x30
            case 0x41...0x5A: return Int(character) - 0x41 + 10
            case 0x20: return 36
            default: return nil
            }
        }
    }
}
