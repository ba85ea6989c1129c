/// Reads CBOR items in place, one head at a time, for the hot paths that know what they expect (an FC1 ticket's
/// claims): nothing is built for the items skipped, and a value is made only once its type is the expected one.
///
/// It answers `nil` (or `false`) for anything irregular — malformed, indefinite, too deep, an unexpected type —
/// and the caller then reads the same bytes with `CBORDecoder`, whose errors say what is wrong. So it accepts only
/// what `CBORDecoder` accepts, and its checks mirror that decoder's, in the same order.
struct CBORScanner {
    /// A data item's initial byte and argument.
    struct Head {
        let major: UInt8
        /// The additional information (low five bits of the initial byte).
        let info: UInt8
        /// The argument: a length, count, integer or tag; a simple value or float's bits for major type 7.
        let value: UInt64
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    /// Whether every byte has been read.
    var isAtEnd: Bool { offset == bytes.count }

    var remaining: Int { bytes.count - offset }

    /// The next item's head; `nil` when truncated, indefinite or reserved.
    mutating func head() -> Head? {
        guard offset < bytes.count else { return nil }
        let initial = bytes[offset]
        offset += 1
        let major = initial >> 5
        let info = initial & 0x1F
        switch info {
        case 0..<24: return Head(major: major, info: info, value: UInt64(info))
        case 24, 25, 26, 27:
            let width = 1 << Int(info - 24)
            guard width <= remaining else { return nil }
            var value: UInt64 = 0
            for index in offset..<offset + width { value = value << 8 | UInt64(bytes[index]) }
            offset += width
            return Head(major: major, info: info, value: value)
        default:
            // 28–30 are reserved; 31 is indefinite length (or "break"), which tickets do not use.
            return nil
        }
    }

    /// The bytes of a byte or text string whose head was just read; `nil` when they run past the end.
    mutating func take(_ head: Head) -> UnsafeBufferPointer<UInt8>? {
        guard head.value <= UInt64(remaining) else { return nil }
        let count = Int(head.value)
        defer { offset += count }
        return UnsafeBufferPointer(rebasing: bytes[offset..<offset + count])
    }

    /// A text string's value, when the next item is one and valid UTF-8.
    mutating func text() -> String? {
        guard let head = head(), head.major == 3, let raw = take(head) else { return nil }
        return String(utf8Validating: raw)
    }

    /// A byte string's value, when the next item is one.
    mutating func byteString() -> [UInt8]? {
        guard let head = head(), head.major == 2, let raw = take(head) else { return nil }
        return Array(raw)
    }

    /// An integer's value as `CBOR.intValue` reads it, when the next item is an integer that fits in an `Int64`.
    mutating func integer() -> Int64? {
        guard let head = head() else { return nil }
        switch head.major {
        case 0: return CBOR.unsigned(head.value).intValue
        case 1: return CBOR.negative(head.value).intValue
        default: return nil
        }
    }

    /// Skips one whole item at nesting `depth` (0 at the top), checking it as `CBORDecoder` would.
    mutating func skip(depth: Int) -> Bool {
        guard depth <= CBORDecoder.maximumDepth, let head = head() else { return false }
        switch head.major {
        case 0, 1: return true
        case 2: return take(head) != nil
        case 3:
            guard let raw = take(head) else { return false }
            return String(utf8Validating: raw) != nil
        case 4:
            guard head.value <= UInt64(remaining) else { return false }
            for _ in 0..<head.value where !skip(depth: depth + 1) { return false }
            return true
        case 5:
            guard head.value <= UInt64(remaining) / 2 else { return false }
            for _ in 0..<head.value * 2 where !skip(depth: depth + 1) { return false }
            return true
        case 6: return skip(depth: depth + 1)
        default:
            // Simple values and floats: `head()` has read their argument; 24 takes a byte, 20–23 and 0–19 none.
            return true
        }
    }
}
