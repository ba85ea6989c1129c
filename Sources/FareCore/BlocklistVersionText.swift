import Foundation

/// A blocklist version that could not be read, and why.
public struct BlocklistVersionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A sentence saying what was expected.
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

extension BlocklistVersion {
    /// Reads a version of `list` as given on the command line or in the list's version file.
    ///
    /// - VDV-KA (`version.txt`): an ISO 8601 timestamp, `YYYY-MM-DDTHH:MM[:SS[.fraction]]` (or a space for `T`)
    ///   with `Z`, `±HH:MM`, `±HHMM` or `±HH`; without a zone it is read as UTC. Kept to the millisecond.
    /// - DTVG (`versionuic.txt`): the JSON object `{"blacklistId": N}`, or the number N alone (0 or more).
    ///
    /// Whitespace around the text (a file's final newline) is ignored.
    ///
    /// - Throws: `BlocklistVersionError` saying what was expected.
    public init(parsing text: String, for list: BlocklistKind) throws(BlocklistVersionError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        switch list {
        case .vdvKA:
            guard let date = Self.timestamp(Array(trimmed.utf8)) else {
                throw BlocklistVersionError(
                    "the VDV-KA blocklist version \(Self.quoted(trimmed)) is not "
                        + "an ISO 8601 timestamp (e.g. 2025-06-01T03:00:00Z)")
            }
            self = .timestamp(date)
        case .dtvgUIC:
            if let number = Self.number(Array(trimmed.utf8)) {
                self = .number(number)
                return
            }
            struct VersionFile: Decodable {
                var blacklistId: Int64
            }
            guard trimmed.hasPrefix("{"),
                let file = try? JSONDecoder().decode(VersionFile.self, from: Data(trimmed.utf8)),
                file.blacklistId >= 0
            else {
                throw BlocklistVersionError(
                    "the DTVG blocklist version is neither a number nor {\"blacklistId\": N} with N a whole number "
                        + "0 or more (got \(Self.quoted(trimmed)))")
            }
            self = .number(file.blacklistId)
        }
    }

    /// The text for a message: at most 60 characters, in quotes.
    private static func quoted(_ text: String) -> String {
        "\"" + String(text.prefix(60)) + (text.count > 60 ? "…\"" : "\"")
    }

    /// 1 to 18 ASCII digits.
    private static func number(_ bytes: [UInt8]) -> Int64? {
        guard (1...18).contains(bytes.count), bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return bytes.reduce(Int64(0)) { $0 * 10 + Int64($1 - 0x30) }
    }

    /// An ISO 8601 timestamp as described in `init(parsing:for:)`.
    static func timestamp(_ bytes: [UInt8]) -> Date? {
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2) else {
            return nil
        }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "T") || bytes[index] == UInt8(ascii: " ") else {
            return nil
        }
        index += 1
        guard let hour = digits(2), expect(":"), let minute = digits(2) else { return nil }
        var second = 0
        var millis = 0
        if expect(":") {
            guard let value = digits(2) else { return nil }
            second = value
            if expect(".") || expect(",") {
                var scale = 100
                var count = 0
                while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39 {
                    millis += Int(bytes[index] - 0x30) * scale
                    scale /= 10
                    index += 1
                    count += 1
                }
                guard (1...9).contains(count) else { return nil }
            }
        }
        var offsetSeconds = 0
        if index < bytes.count {
            if expect("Z") {
            } else if bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
                index += 1
                guard let hours = digits(2), hours <= 23 else { return nil }
                var minutes = 0
                if index < bytes.count {
                    _ = expect(":")
                    guard let value = digits(2), value <= 59 else { return nil }
                    minutes = value
                }
                offsetSeconds = sign * (hours * 3600 + minutes * 60)
            } else {
                return nil
            }
        }
        guard index == bytes.count else { return nil }
        let daysInMonth = [
            31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31,
            30, 31, 30, 31,
        ]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day), hour <= 23, minute <= 59,
            second <= 60
        else { return nil }
        let seconds =
            BlocklistVersion.unixSeconds(
                year: year, month: month, day: day, hour: hour, minute: minute, second: min(second, 59))
            - Int64(offsetSeconds)
        return Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(millis) / 1000)
    }
}
