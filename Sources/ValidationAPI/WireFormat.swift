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
    /// offsets) with Foundation's parser; nil for anything else.
    static func date(_ text: String) -> Date? {
        var text = text
        if let date = text.withUTF8({ plainUTCDate($0[...]) }) { return date }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        return try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true))
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
