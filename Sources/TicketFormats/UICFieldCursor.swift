import FareCore

/// Reads the fixed-width ASCII fields of UIC 918.3 data, with errors that name the byte offset.
///
/// Every UIC record is a run of fixed-width fields (`4 digits`, `12 characters`, …). The cursor keeps the
/// offset of its bytes within the larger buffer (`base`) so that a message points at the byte a person
/// would find in a hex dump of the inflated data, not at an index into a slice.
struct UICFieldCursor {
    /// The bytes being read.
    let bytes: [UInt8]
    /// The offset of `bytes[0]` in the buffer that messages refer to.
    let base: Int
    /// What is being read, for messages: `U_HEAD record`, `0080BL record`.
    let subject: String
    /// The index of the next unread byte in `bytes`.
    private(set) var index = 0

    init(_ bytes: [UInt8], base: Int, subject: String) {
        self.bytes = bytes
        self.base = base
        self.subject = subject
    }

    /// The offset of the next unread byte, as messages state it.
    var position: Int { base + index }
    /// How many bytes are left.
    var remaining: Int { bytes.count - index }
    /// Whether every byte has been read.
    var isAtEnd: Bool { index >= bytes.count }

    /// The next `count` bytes without consuming them, or fewer at the end.
    func peek(_ count: Int) -> ArraySlice<UInt8> {
        bytes[index..<min(bytes.count, index + max(0, count))]
    }

    /// Consumes `count` bytes of the field `field`.
    ///
    /// The field's name is an autoclosure, as in the other readers: it is only needed for a message, and
    /// building a dozen names per record for every scan costs more than reading the record.
    mutating func take(_ count: Int, _ field: @autoclosure () -> String) throws(FormatError) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw .malformed(
                "the \(subject) ends at byte \(base + bytes.count) in its \(field()) at byte \(position), "
                    + "which needs \(count) bytes but has \(remaining)"
            )
        }
        defer { index += count }
        return bytes[index..<(index + count)]
    }

    /// Consumes a field of `count` ASCII digits and returns its value.
    mutating func number(_ count: Int, _ field: @autoclosure () -> String) throws(FormatError) -> Int {
        let start = position
        let raw = try take(count, field())
        guard let value = UICFieldCursor.asciiNumber(raw) else {
            throw .malformed(
                "the \(field()) of the \(subject) at byte \(start) is \(UICFieldCursor.describe(raw)), "
                    + "not \(count) digits"
            )
        }
        return value
    }

    /// Consumes a field of `count` ASCII digits, or of digits padded with spaces (`issuer quirk`): the value, and
    /// the field as written when it was padded.
    ///
    /// Only a field whose digits form one run, with spaces before or after it, is read so (`" 107"`, `"13  "`):
    /// that has one meaning. Spaces between digits, a field of spaces only, or any other byte is `malformed`,
    /// with the message `number(_:_:)` gives.
    mutating func paddedNumber(
        _ count: Int, _ field: @autoclosure () -> String
    ) throws(FormatError) -> (value: Int, padded: String?) {
        let start = position
        let raw = try take(count, field())
        if let value = UICFieldCursor.asciiNumber(raw) { return (value, nil) }
        if let value = UICFieldCursor.spacePaddedNumber(raw) {
            return (value, String(decoding: raw, as: UTF8.self))
        }
        throw .malformed(
            "the \(field()) of the \(subject) at byte \(start) is \(UICFieldCursor.describe(raw)), "
                + "not \(count) digits"
        )
    }

    /// Consumes the text of `count` characters (Unicode scalars of UTF-8), not bytes: for issuers that count U_TLAY
    /// text lengths so. `nil` (nothing consumed) when the bytes run out or are not UTF-8, or when a character takes
    /// four bytes (counted as one character by some and two by others, so the count would be ambiguous).
    mutating func characters(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0 else { return nil }
        var end = index
        for _ in 0..<count {
            guard end < bytes.count else { return nil }
            let lead = bytes[end]
            let width: Int
            switch lead {
            case 0x00...0x7F: width = 1
            case 0xC2...0xDF: width = 2
            case 0xE0...0xEF: width = 3
            default: return nil
            }
            guard end + width <= bytes.count else { return nil }
            end += width
        }
        let slice = bytes[index..<end]
        guard String(utf8Validating: slice) != nil else { return nil }
        index = end
        return slice
    }

    /// Consumes a text field of `count` bytes (UTF-8, or Latin-1 where it is not UTF-8).
    mutating func text(_ count: Int, _ field: @autoclosure () -> String) throws(FormatError) -> String {
        UICFieldCursor.text(try take(count, field()))
    }

    /// Skips `count` bytes.
    mutating func skip(_ count: Int) {
        index = min(bytes.count, index + max(0, count))
    }

    // MARK: - Byte helpers shared by the UIC parsers

    /// The value of a run of ASCII digits, or `nil` when a byte is not a digit or the run is empty.
    static func asciiNumber(_ bytes: some Collection<UInt8>) -> Int? {
        // Four or twelve digits at most in UIC data; 18 keeps any caller far from overflow.
        guard !bytes.isEmpty, bytes.count <= 18 else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return value
    }

    /// The value of a run of ASCII digits with spaces before or after it (not between), or `nil`: a number field
    /// as some issuers write it, padded with spaces instead of zeros. A field without a space is not padded (see
    /// `asciiNumber`), and one without a digit has no value.
    static func spacePaddedNumber(_ bytes: some Collection<UInt8>) -> Int? {
        let array = Array(bytes)
        guard let first = array.firstIndex(where: { $0 != 0x20 }),
            let last = array.lastIndex(where: { $0 != 0x20 }), first > 0 || last < array.count - 1
        else { return nil }
        return asciiNumber(array[first...last])
    }

    /// Text of a field: UTF-8 where the bytes are valid UTF-8, otherwise Latin-1.
    ///
    /// Older issuers wrote their layouts in ISO 8859-1; reading those as UTF-8 would turn every umlaut
    /// into a replacement character, while Latin-1 maps each byte to exactly one character.
    static func text(_ bytes: some Collection<UInt8>) -> String {
        if let text = String(utf8Validating: bytes) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    /// Text with NUL and space padding removed at both ends.
    static func trimmedText(_ bytes: some Collection<UInt8>) -> String {
        text(trimmedBytes(bytes))
    }

    /// Bytes with NUL and space padding removed at both ends.
    static func trimmedBytes(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let array = Array(bytes)
        let isPadding: (UInt8) -> Bool = { $0 == 0 || $0 == 0x20 }
        guard let first = array.firstIndex(where: { !isPadding($0) }),
            let last = array.lastIndex(where: { !isPadding($0) })
        else { return [] }
        return Array(array[first...last])
    }

    /// Whether every byte is printable ASCII (space to tilde).
    static func isPrintableASCII(_ bytes: some Collection<UInt8>) -> Bool {
        bytes.allSatisfy { $0 >= 0x20 && $0 <= 0x7E }
    }

    /// Bytes for a message: quoted when they are printable ASCII, otherwise hex.
    static func describe(_ bytes: some Collection<UInt8>) -> String {
        if isPrintableASCII(bytes) { return "\"\(String(decoding: bytes, as: UTF8.self))\"" }
        let shown = bytes.prefix(16).hexString
        return bytes.count > 16 ? "hex \(shown)…" : "hex \(shown)"
    }
}

/// ASCII digits of `value`, left-padded with zeros to `width`: the number fields of UIC data.
func uicDigits(_ value: Int, width: Int) -> [UInt8] {
    precondition(value >= 0, "UIC number fields hold no negative numbers")
    let text = String(value)
    precondition(text.count <= width, "\(value) does not fit a \(width)-digit UIC field")
    return [UInt8](repeating: 0x30, count: width - text.count) + Array(text.utf8)
}
