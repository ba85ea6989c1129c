import Foundation

/// Why a document's JSON could not be read: what was expected, and at which byte.
public struct JSONReadError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public var message: String
    /// The byte offset in the document where reading stopped.
    public var offset: Int

    /// Makes an error.
    public init(_ message: String, at offset: Int) {
        self.message = message
        self.offset = offset
    }

    /// The message with its offset.
    public var description: String { "\(message) at byte \(offset)" }
}

/// A strict JSON (RFC 8259) reader that pulls values one at a time from UTF-8 bytes, without building a tree.
///
/// The API's large documents (revocation pages of tens of thousands of entries) are read with it instead
/// of `JSONDecoder`, which spent about 11 µs per entry. It refuses what `JSONDecoder` refuses (trailing
/// commas, comments, unescaped control characters, invalid UTF-8, lone surrogates, bytes after the
/// document) and what a signed document must not hold (duplicate keys, checked by the caller), and
/// nests no deeper than `maximumDepth` when skipping a value it does not know.
struct JSONReader {
    /// The deepest nesting `skipValue()` follows; a deeper document is refused, not recursed into.
    static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private(set) var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: Structure

    /// Whether only whitespace is left.
    mutating func expectEnd() throws(JSONReadError) {
        skipWhitespace()
        guard position == bytes.count else { throw error("unexpected bytes after the document") }
    }

    /// Reads `{`.
    mutating func beginObject() throws(JSONReadError) {
        try expect(UInt8(ascii: "{"), "an object")
    }

    /// Reads the next member's key and its `:`, or the object's `}` (then nil). `first` is true before the
    /// first member and is cleared here.
    mutating func nextKey(first: inout Bool) throws(JSONReadError) -> JSONKey? {
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
            return nil
        }
        if first {
            first = false
        } else {
            try expect(UInt8(ascii: ","), "',' or '}' after a member")
            skipWhitespace()
        }
        let start = position
        let key: JSONKey
        if let raw = try readRawString() {
            // Compared as bytes, never made into a String unless an error names it.
            if raw.contains(where: { $0 >= 0x80 }), String(validating: raw, as: UTF8.self) == nil {
                throw error("a string is not valid UTF-8", at: start)
            }
            key = JSONKey(raw: raw, decoded: nil)
        } else {
            key = JSONKey(raw: nil, decoded: try readEscapedString(from: start))
        }
        try expect(UInt8(ascii: ":"), "':' after a key")
        return key
    }

    /// Reads `[`.
    mutating func beginArray() throws(JSONReadError) {
        try expect(UInt8(ascii: "["), "an array")
    }

    /// Whether another element follows (consuming its `,`), or the array ends (consuming `]`).
    mutating func nextElement(first: inout Bool) throws(JSONReadError) -> Bool {
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
            return false
        }
        if first {
            first = false
        } else {
            try expect(UInt8(ascii: ","), "',' or ']' after an element")
        }
        return true
    }

    /// Reads an object whose known members are `fields`: `read` is called with the index in `fields` of each
    /// known member and reads its value. Other members are skipped; a known member named twice is refused,
    /// so that no two readers can disagree on what a signed document says.
    mutating func readObject(
        fields: [StaticString], _ read: (Int, inout JSONReader) throws(JSONReadError) -> Void
    ) throws(JSONReadError) {
        var seen: UInt64 = 0
        try beginObject()
        var first = true
        while let key = try nextKey(first: &first) {
            guard let field = fields.firstIndex(where: { key.is($0) }) else {
                try skipValue()
                continue
            }
            guard seen & (1 << field) == 0 else {
                throw error("the member \"\(key.name)\" is named twice")
            }
            seen |= 1 << field
            try read(field, &self)
        }
    }

    /// Reads an array, each element with `element`.
    mutating func readArray<Element>(
        _ element: (inout JSONReader) throws(JSONReadError) -> Element
    ) throws(JSONReadError) -> [Element] {
        var elements: [Element] = []
        try beginArray()
        var first = true
        while try nextElement(first: &first) {
            elements.append(try element(&self))
        }
        return elements
    }

    /// Reads an array as `readArray(_:)` does, but an element `element` cannot read is skipped whole and its error
    /// handed to `skipped` with its index; only an element that is not JSON at all fails the array.
    mutating func readArray<Element>(
        skipping skipped: (Int, JSONReadError) -> Void,
        _ element: (inout JSONReader) throws(JSONReadError) -> Element
    ) throws(JSONReadError) -> [Element] {
        var elements: [Element] = []
        try beginArray()
        var first = true
        var index = 0
        while try nextElement(first: &first) {
            skipWhitespace()
            let start = position
            do {
                elements.append(try element(&self))
            } catch {
                position = start
                try skipValue()
                skipped(index, error)
            }
            index += 1
        }
        return elements
    }

    // MARK: Values

    /// Reads `null` if it comes next, and says whether it did.
    mutating func readNull() throws(JSONReadError) -> Bool {
        skipWhitespace()
        guard peek() == UInt8(ascii: "n") else { return false }
        try literal("null")
        return true
    }

    /// Reads `true` or `false`.
    mutating func readBool() throws(JSONReadError) -> Bool {
        skipWhitespace()
        switch peek() {
        case UInt8(ascii: "t"):
            try literal("true")
            return true
        case UInt8(ascii: "f"):
            try literal("false")
            return false
        default:
            throw error("expected true or false")
        }
    }

    /// Reads an integer; a fraction, an exponent or a value beyond 64 bits is refused.
    mutating func readInt64() throws(JSONReadError) -> Int64 {
        skipWhitespace()
        let start = position
        let negative = peek() == UInt8(ascii: "-")
        if negative { position += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected an integer", at: start) }
        if first == UInt8(ascii: "0"), let next = byteAt(position + 1), isDigit(next) {
            throw error("a number must not have a leading zero", at: start)
        }
        var magnitude: UInt64 = 0
        while let digit = peek(), isDigit(digit) {
            let (times, overflowA) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(UInt64(digit - 48))
            guard !overflowA, !overflowB else { throw error("the integer does not fit in 64 bits", at: start) }
            magnitude = sum
            position += 1
        }
        if let next = peek(), next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") {
            throw error("expected an integer, not a fraction or an exponent", at: start)
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else {
                throw error("the integer does not fit in 64 bits", at: start)
            }
            return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw error("the integer does not fit in 64 bits", at: start) }
        return Int64(magnitude)
    }

    /// Reads a string.
    mutating func readString() throws(JSONReadError) -> String {
        let start = position
        let raw = try readRawString()
        if let raw { return try string(from: raw, at: start) }
        return try readEscapedString(from: start)
    }

    /// Reads a string, reusing `cache` when its bytes are the same as last time: a page names the same issuer
    /// and reason thousands of times.
    mutating func readString(cache: inout StringCache) throws(JSONReadError) -> String {
        let start = position
        guard let raw = try readRawString() else { return try readEscapedString(from: start) }
        if let cached = cache.string, raw.count == cache.bytes.count,
            raw.isEmpty
                || cache.bytes.withUnsafeBytes({
                    memcmp($0.baseAddress!, raw.base.baseAddress! + raw.startIndex, raw.count)
                }) == 0
        {
            return cached
        }
        let value = try string(from: raw, at: start)
        cache = StringCache(bytes: Array(raw), string: value)
        return value
    }

    /// Reads a string of hex digits as bytes; anything `[UInt8](hex:)` reads is accepted.
    mutating func readHex() throws(JSONReadError) -> [UInt8] {
        let start = position
        if let raw = try readRawString(), raw.count % 2 == 0 {
            var result = [UInt8](repeating: 0, count: raw.count / 2)
            var valid = true
            for index in 0..<result.count {
                guard let high = hexValue(raw[raw.startIndex + 2 * index]),
                    let low = hexValue(raw[raw.startIndex + 2 * index + 1])
                else {
                    valid = false
                    break
                }
                result[index] = high << 4 | low
            }
            if valid { return result }
        }
        position = start
        let text = try readString()
        guard let result = [UInt8](hex: text) else { throw error("expected hex digits", at: start) }
        return result
    }

    /// Reads a string of base64 as bytes.
    mutating func readBase64() throws(JSONReadError) -> [UInt8] {
        let start = position
        let data: Data?
        if let raw = try readRawString() {
            data = Data(base64Encoded: Data(raw))
        } else {
            data = Data(base64Encoded: try readEscapedString(from: start))
        }
        guard let data else { throw error("expected base64", at: start) }
        return [UInt8](data)
    }

    /// Reads a date: the API's `2026-11-22T08:30:00Z`, or any ISO 8601 form `WireFormat` reads.
    mutating func readDate() throws(JSONReadError) -> Date {
        let start = position
        if let raw = try readRawString(), let date = WireFormat.plainUTCDate(raw) {
            // Year 0000 fits the form but not the API's range.
            guard WireFormat.dateRange.contains(date) else {
                throw error(
                    "a date outside years 1-9999: \(String(decoding: raw.prefix(40), as: UTF8.self))", at: start)
            }
            return date
        }
        position = start
        let text = try readString()
        guard let date = WireFormat.date(text) else {
            throw error("expected an ISO 8601 date such as 2026-11-22T08:30:00Z, got \(text.prefix(40))", at: start)
        }
        return date
    }

    /// Skips any value, nested no deeper than `maximumDepth`.
    mutating func skipValue() throws(JSONReadError) {
        var depth = 0
        // Closing brackets owed, innermost last; each container's members are read by the same loop.
        var closers: [UInt8] = []
        var firstInContainer = true
        repeat {
            skipWhitespace()
            if let closer = closers.last {
                if peek() == closer {
                    position += 1
                    closers.removeLast()
                    depth -= 1
                    firstInContainer = false
                    continue
                }
                if !firstInContainer { try expect(UInt8(ascii: ","), "',' in a container") }
                if closer == UInt8(ascii: "}") {
                    skipWhitespace()
                    _ = try readString()
                    try expect(UInt8(ascii: ":"), "':' after a key")
                }
                skipWhitespace()
            }
            firstInContainer = false
            switch peek() {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth)") }
                closers.append(peek() == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                position += 1
                firstInContainer = true
            case UInt8(ascii: "\""):
                _ = try readString()
            case UInt8(ascii: "t"), UInt8(ascii: "f"):
                _ = try readBool()
            case UInt8(ascii: "n"):
                _ = try readNull()
            default:
                try skipNumber()
            }
        } while !closers.isEmpty
    }

    // MARK: Pieces

    private func peek() -> UInt8? {
        position < bytes.count ? bytes[position] : nil
    }

    private func byteAt(_ index: Int) -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(JSONReadError) {
        skipWhitespace()
        guard peek() == byte else { throw error("expected \(what)") }
        position += 1
    }

    private mutating func literal(_ word: StaticString) throws(JSONReadError) {
        let start = position
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { throw error("expected \(word)", at: start) }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] {
            throw error("expected \(word)", at: start)
        }
        position += count
    }

    private mutating func skipNumber() throws(JSONReadError) {
        let start = position
        if peek() == UInt8(ascii: "-") { position += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a value", at: start) }
        position += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        if peek() == UInt8(ascii: ".") {
            position += 1
            guard let digit = peek(), isDigit(digit) else { throw error("expected digits after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            position += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("expected digits in an exponent") }
            skipDigits()
        }
    }

    private mutating func skipDigits() {
        while let digit = peek(), isDigit(digit) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte &- 48 < 10 }

    private func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 48...57: byte - 48
        case 97...102: byte - 87
        case 65...70: byte - 55
        default: nil
        }
    }

    /// Reads a string that holds no escape and returns its bytes (quotes excluded), or nil with the position
    /// unchanged at the opening quote when it holds an escape.
    private mutating func readRawString() throws(JSONReadError) -> UnsafeBufferPointer<UInt8>.SubSequence? {
        skipWhitespace()
        guard peek() == UInt8(ascii: "\"") else { throw error("expected a string") }
        let start = position
        var index = position + 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                position = index + 1
                return bytes[(start + 1)..<index]
            }
            if byte == UInt8(ascii: "\\") { return nil }
            if byte < 0x20 { throw error("a control character must be escaped in a string", at: index) }
            index += 1
        }
        throw error("unterminated string", at: start)
    }

    private func string(from raw: UnsafeBufferPointer<UInt8>.SubSequence, at start: Int) throws(JSONReadError)
        -> String
    {
        guard let value = String(validating: raw, as: UTF8.self) else {
            throw error("a string is not valid UTF-8", at: start)
        }
        return value
    }

    /// Reads a string with escapes, from its opening quote.
    private mutating func readEscapedString(from start: Int) throws(JSONReadError) -> String {
        position = start + 1
        var utf8: [UInt8] = []
        while true {
            guard let byte = peek() else { throw error("unterminated string", at: start) }
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let value = String(validating: utf8, as: UTF8.self) else {
                    throw error("a string is not valid UTF-8", at: start)
                }
                return value
            case UInt8(ascii: "\\"):
                guard let escape = peek() else { throw error("unterminated string", at: start) }
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try readHexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard peek() == UInt8(ascii: "\\"), byteAt(position + 1) == UInt8(ascii: "u") else {
                            throw error("a lone surrogate in a \\u escape")
                        }
                        position += 2
                        let low = try readHexQuad()
                        guard (0xDC00..<0xE000).contains(low) else { throw error("a lone surrogate in a \\u escape") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw error("a lone surrogate in a \\u escape")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw error("not a Unicode scalar") }
                    utf8.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    throw error("an unknown escape \\\(Character(Unicode.Scalar(escape)))", at: position - 2)
                }
            default:
                guard byte >= 0x20 else { throw error("a control character must be escaped in a string") }
                utf8.append(byte)
            }
        }
    }

    private mutating func readHexQuad() throws(JSONReadError) -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = peek().flatMap(hexValue) else { throw error("expected 4 hex digits in a \\u escape") }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private func error(_ message: String, at offset: Int? = nil) -> JSONReadError {
        JSONReadError(message, at: offset ?? position)
    }
}

/// A member's name as read: its bytes when it holds no escape, else the decoded string.
struct JSONKey {
    fileprivate let raw: UnsafeBufferPointer<UInt8>.SubSequence?
    fileprivate let decoded: String?

    /// Whether the name is `name`.
    func `is`(_ name: StaticString) -> Bool {
        guard let raw else { return decoded == name.description }
        guard raw.count == name.utf8CodeUnitCount else { return false }
        if raw.isEmpty { return true }
        return memcmp(raw.base.baseAddress! + raw.startIndex, name.utf8Start, raw.count) == 0
    }

    /// Lets a `switch` over a key name its cases with string literals.
    static func ~= (pattern: StaticString, key: JSONKey) -> Bool { key.is(pattern) }

    /// The name, for messages.
    var name: String { decoded ?? raw.map { String(decoding: $0, as: UTF8.self) } ?? "" }
}

/// The last string read for one field, so that a repeated value is not made again.
struct StringCache {
    var bytes: [UInt8] = []
    var string: String? = nil
}
