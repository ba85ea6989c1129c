import Foundation

/// The `U_HEAD` record (version 01): who issued the ticket, its key, and when.
///
/// Body: issuer code (4), ticket key (20, padded with NULs or spaces), issuing time `DDMMYYYYHHMM` (12),
/// flags (1), language (2), additional language (2): 41 bytes. Bytes after these are ignored, as later
/// versions of the standard may add fields.
public struct UICHead: Sendable, Hashable {
    /// The record id.
    public static let recordID = "U_HEAD"
    /// The length of the body that version 01 defines.
    public static let bodyLength = 41

    /// The issuing company's code, as written (e.g. `0080`, `1080`).
    public var issuerCode: String
    /// The ticket key with its padding removed, e.g. `RPEX4F-4`.
    public var ticketKey: String
    /// The bytes of the ticket key with its padding removed: the ticket's id.
    public var ticketKeyBytes: [UInt8]
    /// The issuing time as local Europe/Berlin time (see `UICTime`).
    public var issuedAt: Date
    /// The issuing day and time as written (`DDMMYYYYHHMM`), for display.
    public var issuedAtText: String
    /// The flags character as written (`0` in DB tickets).
    public var flags: String
    /// The ticket's language, e.g. `DE`.
    public var language: String
    /// The additional language, e.g. `DE`.
    public var additionalLanguage: String

    /// A head for building test tickets; `issuedAt` is kept to the minute, as the record keeps it.
    public init(
        issuerCode: String, ticketKey: String, issuedAt: Date, flags: String = "0", language: String = "DE",
        additionalLanguage: String = "DE"
    ) {
        self.issuerCode = issuerCode
        self.ticketKey = ticketKey
        self.ticketKeyBytes = Array(ticketKey.utf8)
        let local = UICTime.localFields(of: issuedAt)
        self.issuedAt = UICTime.date(local.day, hour: local.hour, minute: local.minute)
        issuedAtText = String(decoding: Self.issuingDigits(issuedAt), as: UTF8.self)
        self.flags = flags
        self.language = language
        self.additionalLanguage = additionalLanguage
    }

    /// Decodes a `U_HEAD` record.
    ///
    /// - Throws: `unsupported` for a version other than 01; `malformed`, naming the offset in the
    ///   inflated data, for a short body or an issuing time that is not a real day and time.
    public init(record: UICRecord) throws(FormatError) {
        guard record.version == "01" else {
            throw .unsupported("U_HEAD version \(record.version) at byte \(record.offset) is not supported (only 01)")
        }
        var cursor = UICFieldCursor(record.body, base: record.offset + UICRecord.headerLength, subject: "U_HEAD record")
        issuerCode = try cursor.text(4, "issuer code")
        let key = try cursor.take(20, "ticket key")
        ticketKeyBytes = UICFieldCursor.trimmedBytes(key)
        ticketKey = UICFieldCursor.text(ticketKeyBytes)
        let timeStart = cursor.position
        let time = try cursor.take(12, "issuing time")
        issuedAtText = UICFieldCursor.text(time)
        guard let day = UICDay.compact(time.prefix(8)),
            let hour = UICFieldCursor.asciiNumber(time.dropFirst(8).prefix(2)), hour < 24,
            let minute = UICFieldCursor.asciiNumber(time.suffix(2)), minute < 60
        else {
            throw .malformed(
                "the issuing time of the U_HEAD record at byte \(timeStart) is \(UICFieldCursor.describe(time)), "
                    + "not a day and time DDMMYYYYHHMM"
            )
        }
        issuedAt = UICTime.date(day, hour: hour, minute: minute)
        flags = try cursor.text(1, "flags")
        language = try cursor.text(2, "language")
        additionalLanguage = try cursor.text(2, "additional language")
    }

    /// The head as a `U_HEAD` version 01 record.
    ///
    /// - Precondition: `issuerCode` has 4 bytes, `ticketKey` at most 20, `flags` 1, the languages 2.
    public func record() -> UICRecord {
        precondition(issuerCode.utf8.count == 4 && ticketKeyBytes.count <= 20 && flags.utf8.count == 1)
        precondition(language.utf8.count == 2 && additionalLanguage.utf8.count == 2)
        let key = ticketKeyBytes + [UInt8](repeating: 0, count: 20 - ticketKeyBytes.count)
        let body =
            Array(issuerCode.utf8) + key + Self.issuingDigits(issuedAt) + Array(flags.utf8) + Array(language.utf8)
            + Array(additionalLanguage.utf8)
        return UICRecord(id: Self.recordID, version: "01", body: body)
    }

    /// `DDMMYYYYHHMM` of an instant in Berlin time.
    private static func issuingDigits(_ date: Date) -> [UInt8] {
        let local = UICTime.localFields(of: date)
        return local.day.compactDigits + uicDigits(local.hour, width: 2) + uicDigits(local.minute, width: 2)
    }
}
