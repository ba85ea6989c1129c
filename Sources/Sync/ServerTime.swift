import Foundation
import Synchronization

/// The newest time the validation server stated (its HTTP `Date`) in a successful reply to this device's
/// authenticated requests: evidence for the trusted-time floor, which the sync round offers to the store.
///
/// Shared by every copy of a `ValidationAPIClient`, so that the replies to online checks count too.
public final class ServerTime: Sendable {
    private let newestDate = Mutex<Date?>(nil)

    /// Makes an empty record.
    public init() {}

    /// The newest `Date` seen so far, if any.
    public var newest: Date? { newestDate.withLock { $0 } }

    /// Notes the `Date` header of a successful reply; a header that is not an HTTP date is ignored.
    func note(dateHeader text: String?) {
        guard let text, let date = Self.date(httpDate: text) else { return }
        newestDate.withLock { $0 = max($0 ?? date, date) }
    }

    /// Reads an HTTP date in its preferred form (RFC 9110 IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`), by
    /// hand: `nil` for the obsolete forms and for anything else, which then simply does not count.
    public static func date(httpDate text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20,
            bytes[11] == 0x20, bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            bytes[25] == 0x20, bytes[26...] == Array("GMT".utf8)[...]
        else { return nil }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let monthIndex = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            let day = number(5..<7), let year = number(12..<16), let hour = number(17..<19),
            let minute = number(20..<22), let second = number(23..<25),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        let month = monthIndex + 1
        let lengths = [
            31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30,
            31, 30, 31,
        ]
        guard day <= lengths[monthIndex] else { return nil }
        // Days since 1970-01-01 in the proleptic Gregorian calendar (the civil-from-days inverse).
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = shiftedYear / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + min(second, 59)))
    }
}
