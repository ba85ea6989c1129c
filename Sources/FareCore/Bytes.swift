private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

/// Hex helpers for byte identifiers (key ids, ticket ids) shown to people and stored as text.
extension Sequence where Element == UInt8 {
    /// Lowercase hex, two digits a byte.
    public var hexString: String {
        // Built as ASCII bytes, then one String: appending Characters one by one is far slower.
        var ascii: [UInt8] = []
        ascii.reserveCapacity(underestimatedCount * 2)
        for byte in self {
            ascii.append(hexDigits[Int(byte >> 4)])
            ascii.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: ascii, as: UTF8.self)
    }
}

extension Array where Element == UInt8 {
    /// Lowercase hex, two digits a byte, written straight into the string's storage: a key id is turned into
    /// text on every verdict, and the generic form above is not specialised across modules.
    public var hexString: String {
        withUnsafeBufferPointer { bytes in
            String(unsafeUninitializedCapacity: bytes.count * 2) { out in
                for (index, byte) in bytes.enumerated() {
                    out[2 * index] = hexDigits[Int(byte >> 4)]
                    out[2 * index + 1] = hexDigits[Int(byte & 0x0F)]
                }
                return bytes.count * 2
            }
        }
    }

    /// Parses hex (either case, optional `0x`, spaces and colons ignored); `nil` for anything else.
    public init?(hex text: some StringProtocol) {
        var body = Substring(text)
        if body.hasPrefix("0x") || body.hasPrefix("0X") { body = body.dropFirst(2) }
        let nibbles = body.compactMap { ch -> UInt8? in
            if ch == " " || ch == ":" { return 0xFF }
            return ch.hexDigitValue.map { UInt8($0) }
        }
        guard nibbles.count == body.count else { return nil }
        let digits = nibbles.filter { $0 != 0xFF }
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            bytes.append(digits[index] << 4 | digits[index + 1])
            index += 2
        }
        self = bytes
    }
}

extension String {
    /// The text of `bytes` when they are valid UTF-8, else `nil`: `String(validating:as: UTF8.self)`, with
    /// ASCII (nearly every field of a ticket) decoded directly. The standard library's validating initialiser
    /// is generic over the encoding and looks up type metadata on every call, which made it the largest single
    /// cost of reading a printed-layout record.
    @inlinable
    public init?(utf8Validating bytes: some Collection<UInt8>) {
        if bytes.allSatisfy({ $0 < 0x80 }) {
            self = String(decoding: bytes, as: UTF8.self)
        } else if let text = String(validating: bytes, as: UTF8.self) {
            self = text
        } else {
            return nil
        }
    }
}
