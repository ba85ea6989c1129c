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
            if let date = try? Date(text, strategy: .iso8601) { return date }
            if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
                return date
            }
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Expected an ISO 8601 date such as 2026-11-22T08:30:00Z, got \(text)")
        }
        return decoder
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
