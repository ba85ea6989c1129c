import FareCore
import Foundation

/// The JSON conventions every document of the API follows, so that both ends encode alike.
///
/// Dates are ISO 8601 text in UTC (`2026-11-22T08:30:00Z`; fractional seconds are accepted when
/// reading), byte strings are base64 (keys, payloads, signatures) or lowercase hex (ids and digests)
/// as each field's documentation says, and keys are written sorted so that output is stable.
public enum WireFormat {
    /// An encoder with the API's conventions.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(date.formatted(.iso8601))
        }
        return encoder
    }

    /// A decoder with the API's conventions.
    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = date(text) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "Expected an ISO 8601 date such as 2026-11-22T08:30:00Z, got \(text)")
            }
            return date
        }
        return decoder
    }

    /// Reads an ISO 8601 date: the API's own `2026-11-22T08:30:00Z` by hand, other forms (fractional seconds,
    /// offsets) with Foundation's parser; nil for anything else, and for a date outside `dateRange` (which the
    /// API's own form could not write back).
    static func date(_ text: String) -> Date? {
        var text = text
        let parsed =
            text.withUTF8({ plainUTCDate($0[...]) })
            ?? (try? Date(text, strategy: .iso8601))
            ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))
        guard let parsed, dateRange.contains(parsed) else { return nil }
        return parsed
    }

    /// The times the API carries: from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999Z, in Unix milliseconds
    /// (the years its ISO 8601 form writes with four digits). A time field outside it is refused where it is read.
    public static let millisecondRange: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// The same range as dates.
    public static let dateRange: ClosedRange<Date> =
        Date(
            timeIntervalSince1970: Double(millisecondRange.lowerBound) / 1000)...Date(
            timeIntervalSince1970: Double(millisecondRange.upperBound) / 1000)

    /// `date` in Unix milliseconds (rounded down), or nil when it is outside `millisecondRange` or not a number:
    /// the one conversion of a date from outside to an integer, which never traps.
    public static func milliseconds(_ date: Date) -> Int64? {
        let value = (date.timeIntervalSince1970 * 1000).rounded(.down)
        guard value.isFinite, value >= Double(millisecondRange.lowerBound),
            value <= Double(millisecondRange.upperBound)
        else { return nil }
        return Int64(value)
    }

    /// The date of `milliseconds`, or nil outside `millisecondRange`.
    public static func date(milliseconds: Int64) -> Date? {
        guard millisecondRange.contains(milliseconds) else { return nil }
        return Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }

    /// Reads the form the API writes, `2026-11-22T08:30:00Z`, without a date formatter; nil for anything else
    /// (other forms, impossible dates), which the formatter then reads or refuses.
    ///
    /// A revocation page holds tens of thousands of dates, and Foundation's ISO 8601 parser was most of the
    /// time spent decoding one.
    static func plainUTCDate(_ bytes: UnsafeBufferPointer<UInt8>.SubSequence) -> Date? {
        guard bytes.count == 20 else { return nil }
        let base = bytes.startIndex
        func at(_ offset: Int) -> UInt8 { bytes[base + offset] }
        guard at(4) == UInt8(ascii: "-"), at(7) == UInt8(ascii: "-"), at(10) == UInt8(ascii: "T"),
            at(13) == UInt8(ascii: ":"), at(16) == UInt8(ascii: ":"), at(19) == UInt8(ascii: "Z")
        else { return nil }
        func number(_ start: Int, _ count: Int) -> Int? {
            var value = 0
            for offset in start..<(start + count) {
                let digit = Int(at(offset)) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            return value
        }
        guard let year = number(0, 4), let month = number(5, 2), let day = number(8, 2),
            let hour = number(11, 2), let minute = number(14, 2), let second = number(17, 2),
            (1...12).contains(month), hour < 24, minute < 60, second < 60
        else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthLengths = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...monthLengths[month - 1]).contains(day) else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    /// Encodes a document as JSON bytes.
    public static func encode(_ value: some Encodable) throws -> [UInt8] {
        Array(try encoder().encode(value))
    }

    /// Decodes a document from JSON bytes.
    public static func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        try decoder().decode(type, from: Data(bytes))
    }

    /// The bytes of `text` when it is `^([0-9a-f]{2})+$`, the document's pattern for ids and digests.
    public static func strictHex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0 else { return nil }
        func value(_ digit: UInt8) -> UInt8? {
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        var index = 0
        while index + 1 < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    /// The pattern of padded standard base64, as the OpenAPI document states it.
    public static let base64Pattern = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"

    /// The bytes of `text` when it matches `base64Pattern`; the unused low bits of the last digit are ignored,
    /// as the pattern allows any digit there.
    public static func strictBase64(_ text: String) -> [UInt8]? {
        let characters = Array(text.utf8)
        guard characters.count % 4 == 0 else { return nil }
        func value(_ character: UInt8) -> UInt32? {
            switch character {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt32(character - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt32(character - UInt8(ascii: "a")) + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(character - UInt8(ascii: "0")) + 52
            case UInt8(ascii: "+"): 62
            case UInt8(ascii: "/"): 63
            default: nil
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 4 * 3)
        var start = 0
        while start < characters.count {
            let group = characters[start..<start + 4]
            let isLast = start + 4 == characters.count
            // Padding only at the very end: "xx==" or "xxx=".
            let padding = group.reversed().prefix { $0 == UInt8(ascii: "=") }.count
            guard padding <= 2, padding == 0 || isLast else { return nil }
            var word: UInt32 = 0
            for character in group.prefix(4 - padding) {
                guard let digit = value(character) else { return nil }
                word = word << 6 | digit
            }
            word <<= UInt32(6 * padding)
            let decoded = [
                UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8),
                UInt8(truncatingIfNeeded: word),
            ]
            bytes.append(contentsOf: decoded.prefix(3 - padding))
            start += 4
        }
        return bytes
    }
}

extension KeyedDecodingContainer {
    /// Reads a base64 text field as bytes.
    func decodeBase64(forKey key: Key) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "Not base64: \(text.prefix(40))")
        }
        return Array(data)
    }

    /// Reads a base64 text field exactly as the OpenAPI document's pattern states it: the standard alphabet,
    /// padded to a multiple of four, nothing else (no whitespace, no URL-safe letters).
    func decodeStrictBase64(forKey key: Key) throws -> [UInt8] {
        let text = try decode(String.self, forKey: key)
        guard let bytes = WireFormat.strictBase64(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "Not padded standard base64: \(text.prefix(40))")
        }
        return bytes
    }

    /// Reads an optional field that may be absent but not null: the OpenAPI document types it as its value only.
    func decodeAbsentOr<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        return try decode(type, forKey: key)
    }

    /// Reads an optional hex field exactly as the OpenAPI document's pattern states it: one or more bytes, each
    /// two lowercase hex digits; absent is nil, null is refused.
    func decodeStrictHexIfPresent(forKey key: Key) throws -> [UInt8]? {
        try decodeAbsentOr(String.self, forKey: key).map { text in try strictHexBytes(text, forKey: key) }
    }

    /// Reads a hex field exactly as the OpenAPI document's pattern states it (see `decodeStrictHexIfPresent`).
    func decodeStrictHex(forKey key: Key) throws -> [UInt8] {
        try strictHexBytes(try decode(String.self, forKey: key), forKey: key)
    }

    private func strictHexBytes(_ text: String, forKey key: Key) throws -> [UInt8] {
        guard let bytes = WireFormat.strictHex(text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "Not lowercase hex of at least one byte: \(text.prefix(40))")
        }
        return bytes
    }

    /// Reads a hex text field as bytes.
    func decodeHex(forKey key: Key) throws -> [UInt8] {
        try hexBytes(try decode(String.self, forKey: key), forKey: key)
    }

    /// Reads an optional hex text field as bytes; absent or null is nil.
    func decodeHexIfPresent(forKey key: Key) throws -> [UInt8]? {
        try decodeIfPresent(String.self, forKey: key).map { text in try hexBytes(text, forKey: key) }
    }

    private func hexBytes(_ text: String, forKey key: Key) throws -> [UInt8] {
        guard let bytes = [UInt8](hex: text) else {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: self, debugDescription: "Not hex: \(text.prefix(40))")
        }
        return bytes
    }
}

extension KeyedEncodingContainer {
    /// Writes bytes as base64 text.
    mutating func encodeBase64(_ bytes: [UInt8], forKey key: Key) throws {
        try encode(Data(bytes).base64EncodedString(), forKey: key)
    }

    /// Writes bytes as lowercase hex text.
    mutating func encodeHex(_ bytes: [UInt8], forKey key: Key) throws {
        try encode(bytes.hexString, forKey: key)
    }

    /// Writes optional bytes as lowercase hex text, leaving the field out when nil.
    mutating func encodeHexIfPresent(_ bytes: [UInt8]?, forKey key: Key) throws {
        guard let bytes else { return }
        try encode(bytes.hexString, forKey: key)
    }
}
