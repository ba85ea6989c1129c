/// Reads the big-endian bit fields of an ERA SSB frame: bit 0 is the most significant bit of byte 0.
///
/// Private to the SSB decoder (internal, named for SSB) so that it does not clash with the other bit readers of
/// the module; SSB needs nothing more than unsigned fields and 6-bit characters at fixed offsets.
struct SSBBitReader {
    /// The bytes read (a slice keeps its indices: reads start at `bytes.startIndex`).
    let bytes: ArraySlice<UInt8>

    init(_ bytes: [UInt8]) {
        self.bytes = bytes[...]
    }

    /// Reads `bytes` where they are, without copying them out (an RSP6 ticket inside its recovered block).
    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
    }

    /// How many bits there are.
    var bitCount: Int { bytes.count &* 8 }

    /// The unsigned integer in bits `offset ..< offset + width` (width at most 62).
    ///
    /// - Throws: `malformed`, naming the field and its bits, when they are not all inside the bytes. The field's
    ///   name is only built then.
    func value(_ field: @autoclosure () -> String, at offset: Int, width: Int) throws(FormatError) -> Int {
        guard width >= 0, width <= 62, offset >= 0, offset <= bitCount - width else {
            throw .malformed(
                "the \(field()) (bits \(offset)–\(offset + width - 1)) lies past the end of the "
                    + "\(bytes.count)-byte ticket")
        }
        return unchecked(at: offset, width: width)
    }

    /// The value of bits inside the bytes (checked by the caller).
    private func unchecked(at offset: Int, width: Int) -> Int {
        guard width > 0 else { return 0 }
        // The bytes the field touches, at most 9 for 62 bits, gathered a byte at a time (not a bit at a time),
        // then the field cut out of them.
        let end = offset + width
        let first = bytes.startIndex + offset >> 3
        let last = bytes.startIndex + (end - 1) >> 3
        var window: UInt64 = 0
        var index = first
        var high: UInt64 = 0
        while index <= last {
            high = high << 8 | window >> 56
            window = window << 8 | UInt64(bytes[index])
            index += 1
        }
        let shift = UInt64(7 - (end - 1) & 7)
        // `high` holds the bits shifted out of the window when the field spans 9 bytes.
        let value = window >> shift | (shift == 0 ? 0 : high << (64 - shift))
        return Int(truncatingIfNeeded: value & (UInt64(1) << UInt64(width) &- 1))
    }

    /// Whether bit `offset` is set.
    func flag(_ field: @autoclosure () -> String, at offset: Int) throws(FormatError) -> Bool {
        try value(field(), at: offset, width: 1) == 1
    }

    /// `count` six-bit characters from bit `offset`, read with `set`, leading and trailing spaces removed; `nil`
    /// when nothing else is left. Built in place, as `text` is, in one pass: each character is read once (an RSP6
    /// ticket reads a dozen texts for every verdict).
    func trimmedText(_ field: @autoclosure () -> String, at offset: Int, count: Int, _ set: SSBCharacterSet)
        throws(FormatError) -> String?
    {
        guard count >= 0, offset >= 0, offset <= bitCount - 6 * count else {
            for index in 0..<max(0, count) { _ = try value(field(), at: offset + 6 * index, width: 6) }
            return nil
        }
        let text = String(unsafeUninitializedCapacity: count) { ascii in
            var first = -1
            var last = -1
            for index in 0..<count {
                let character = set.character(sixBits(at: offset + 6 * index))
                ascii[index] = character
                if character != 0x20 {
                    if first < 0 { first = index }
                    last = index
                }
            }
            guard first >= 0 else { return 0 }
            // The leading spaces dropped: the rest moved to the front, forwards, so no byte is overwritten before it
            // is moved.
            if first > 0 {
                for index in first...last { ascii[index - first] = ascii[index] }
            }
            return last - first + 1
        }
        return text.isEmpty ? nil : text
    }

    /// The 6 bits from bit `offset` (inside the bytes, checked by the caller): one byte, or the two they straddle.
    private func sixBits(at offset: Int) -> Int {
        let index = bytes.startIndex + offset >> 3
        let within = offset & 7
        var window = Int(bytes[index]) << 8
        if within > 2 { window |= Int(bytes[index + 1]) }
        return window >> (10 - within) & 0x3F
    }

    /// `count` six-bit characters from bit `offset`, read with `set`, trailing spaces removed. Built in place: a
    /// text of up to 15 characters is a small string, with no allocation.
    func text(_ field: @autoclosure () -> String, at offset: Int, count: Int, _ set: SSBCharacterSet)
        throws(FormatError) -> String
    {
        guard count >= 0, offset >= 0, offset <= bitCount - 6 * count else {
            // Some character lies past the end: name the first, as reading them in turn would.
            for index in 0..<max(0, count) { _ = try value(field(), at: offset + 6 * index, width: 6) }
            return ""
        }
        return String(unsafeUninitializedCapacity: count) { ascii in
            var length = 0
            for index in 0..<count {
                let character = set.character(sixBits(at: offset + 6 * index))
                ascii[index] = character
                if character != 0x20 { length = index + 1 }
            }
            return length
        }
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
