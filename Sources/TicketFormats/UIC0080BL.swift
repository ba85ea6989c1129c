import Foundation

/// Deutsche Bahn's `0080BL` record (versions 02 and 03): product, validity blocks and the `S` fields.
///
/// Body: a 2-character code (`03` in the samples), 1 digit for the number of validity blocks, each
/// block valid-from `DDMMYYYY`, valid-to `DDMMYYYY` and a serial number (10 characters in version 03,
/// 8 in version 02), then 2 digits for the number of fields, each `S` + 3-digit tag + 4-digit byte
/// length + value.
///
/// The serial width of version 02 is known only from other implementations, so the parser checks
/// that the data after the blocks reads as a field count and `S` fields, and tries the other width
/// (8 or 10) when it does not.
public struct UIC0080BL: Sendable, Hashable {
    /// The record id.
    public static let recordID = "0080BL"

    /// A validity block: a range of days and a serial number.
    public struct ValidityBlock: Sendable, Hashable {
        /// The first day of validity.
        public var firstDay: UICDay
        /// The last day of validity.
        public var lastDay: UICDay
        /// The serial number, with NUL and space padding removed.
        public var serial: String

        /// A block for building test tickets.
        public init(firstDay: UICDay, lastDay: UICDay, serial: String) {
            self.firstDay = firstDay
            self.lastDay = lastDay
            self.serial = serial
        }
    }

    /// An `S` field: a numbered tag and its text.
    public struct Field: Sendable, Hashable {
        /// The tag number: 1 for `S001`.
        public var tag: Int
        /// The value as written.
        public var value: String

        /// A field, e.g. `Field(tag: 1, value: "Super Sparpreis")`.
        public init(tag: Int, value: String) {
            self.tag = tag
            self.value = value
        }

        /// The tag as written, e.g. `S001`.
        public var tagName: String { "S" + String(decoding: uicDigits(tag, width: 3), as: UTF8.self) }
        /// What the field means (`product`, `from`, …), or the tag name when farecheck does not know it.
        public var label: String { UIC0080BL.labels[tag] ?? tagName }
    }

    /// The labels of the tags that farecheck knows, with DB's German terms where they help.
    public static let labels: [Int: String] = [
        1: "product (Tarifbezeichnung)",
        2: "product category",
        3: "class outward (Produktklasse Hinfahrt)",
        4: "class return (Produktklasse Rückfahrt)",
        9: "passengers and BahnCard",
        12: "children",
        14: "class",
        15: "from",
        16: "to",
        21: "route (Wegetext)",
        23: "holder",
        26: "price type",
        27: "ID number",
        28: "name (last#first)",
        31: "valid from",
        32: "valid until",
        35: "from station number",
        36: "to station number",
    ]

    /// The record version, `02` or `03`.
    public var version: String
    /// The 2-character code at the start of the body.
    public var code: String
    /// The validity blocks, in order.
    public var validityBlocks: [ValidityBlock]
    /// The width of the serial numbers as read: 10 (version 03) or 8 (version 02).
    public var serialWidth: Int
    /// The `S` fields, in order.
    public var fields: [Field]
    /// Why the fields after the last one in `fields` could not be read, when the record breaks after its validity
    /// (`S031` and `S032`) was read: the rest only informs, so the record is kept with the fields before the break
    /// (see `init(record:)`). `nil` for a record read whole.
    public var unreadableFields: FormatError?

    /// A record for building test tickets (written as version 03, serial width 10).
    public init(code: String = "03", validityBlocks: [ValidityBlock], fields: [Field]) {
        version = "03"
        self.code = code
        self.validityBlocks = validityBlocks
        serialWidth = 10
        self.fields = fields
        unreadableFields = nil
    }

    /// The value of the first field with `tag`, e.g. `value(1)` for the product.
    public func value(_ tag: Int) -> String? {
        fields.first { $0.tag == tag }?.value
    }

    /// The first day of validity from `S031` (`DD.MM.YYYY`), when it is there and a real day.
    public var validFromDay: UICDay? { value(31).flatMap(UICDay.dotted) }
    /// The last day of validity from `S032` (`DD.MM.YYYY`), when it is there and a real day.
    public var validUntilDay: UICDay? { value(32).flatMap(UICDay.dotted) }

    /// The numbers in `S009`, `adults-BahnCards-BahnCard type` (e.g. `1-1-49`), when it reads so.
    public var passengersAndBahnCard: (adults: Int, bahnCards: Int, bahnCardType: Int)? {
        guard let text = value(9) else { return nil }
        let parts = text.trimmingASCIIWhitespace().split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, let adults = UICFieldCursor.asciiNumber(parts[0].utf8),
            let cards = UICFieldCursor.asciiNumber(parts[1].utf8), let type = UICFieldCursor.asciiNumber(parts[2].utf8)
        else { return nil }
        return (adults, cards, type)
    }

    /// The number of children from `S012`, when it is a number.
    public var childCount: Int? {
        value(12).flatMap { UICFieldCursor.asciiNumber($0.trimmingASCIIWhitespace().utf8) }
    }

    /// Decodes a `0080BL` record.
    ///
    /// Validity decides, the rest informs: when the `S` fields break (a field that does not start with `S`, a
    /// length that is not digits or overruns the record, bytes other than zero padding after the last field)
    /// after both `S031` and `S032` were read, the record is kept with the fields before the break and the
    /// error in `unreadableFields`. A break before them leaves the validity unknown, so it is an error.
    ///
    /// - Throws: `unsupported` for a version other than 02 and 03; `malformed`, naming the offset in
    ///   the inflated data, for a count or length that is not digits, a day that does not exist, or a break in the
    ///   `S` fields before the validity was read.
    public init(record: UICRecord) throws(FormatError) {
        guard record.version == "02" || record.version == "03" else {
            throw .unsupported(
                "0080BL version \(record.version) at byte \(record.offset) is not supported (only 02, 03)")
        }
        version = record.version
        var cursor = UICFieldCursor(record.body, base: record.offset + UICRecord.headerLength, subject: "0080BL record")
        code = try cursor.text(2, "code")
        let blockCount = try cursor.number(1, "number of validity blocks")

        let preferred = record.version == "03" ? 10 : 8
        var chosen: (width: Int, blocks: [ValidityBlock], cursor: UICFieldCursor)?
        for attempt in 0..<2 {
            let width = attempt == 0 ? preferred : 18 - preferred
            var trial = cursor
            guard let blocks = try? Self.validityBlocks(blockCount, serialWidth: width, from: &trial),
                Self.continuesWithFields(trial)
            else { continue }
            chosen = (width, blocks, trial)
            break
        }
        guard let chosen else {
            // Neither width fits: report what the preferred width finds wrong.
            var trial = cursor
            _ = try Self.validityBlocks(blockCount, serialWidth: preferred, from: &trial)
            throw .malformed(
                "the 0080BL record does not continue at byte \(trial.position) with a field count and S fields, "
                    + "neither with \(preferred)- nor with \(18 - preferred)-character serial numbers: "
                    + "found \(UICFieldCursor.describe(trial.peek(6)))"
            )
        }
        validityBlocks = chosen.blocks
        serialWidth = chosen.width
        cursor = chosen.cursor

        let fieldCount = try cursor.number(2, "number of fields")
        var fields: [Field] = []
        do throws(FormatError) {
            for index in 0..<fieldCount {
                let start = cursor.position
                let marker = try cursor.take(1, "field \(index + 1)")
                guard marker.first == UInt8(ascii: "S") else {
                    throw .malformed(
                        "field \(index + 1) of the 0080BL record at byte \(start) starts with "
                            + "\(UICFieldCursor.describe(marker)), not S"
                    )
                }
                let tag = try cursor.number(3, "field \(index + 1)'s tag")
                let length = try cursor.number(4, "field \(index + 1)'s length")
                fields.append(Field(tag: tag, value: try cursor.text(length, "field S\(tag)'s value")))
            }
            let trailing = cursor.peek(cursor.remaining)
            if let nonZero = trailing.firstIndex(where: { $0 != 0 }) {
                throw .malformed(
                    "\(trailing.count) bytes follow the last of the \(fieldCount) fields of the 0080BL record at "
                        + "byte \(cursor.base + nonZero), and they are not zero padding"
                )
            }
            unreadableFields = nil
        } catch {
            // The validity days are read: what breaks after them only informs.
            let tags = Set(fields.map(\.tag))
            guard tags.contains(31), tags.contains(32) else { throw error }
            unreadableFields = error
        }
        self.fields = fields
    }

    /// The record as `0080BL` version 03 (serial numbers padded with NULs to 10 characters).
    ///
    /// - Precondition: `code` has 2 characters, at most 9 blocks, serials at most 10 bytes, at most 99
    ///   fields, tags below 1000 and values shorter than 10 000 bytes.
    public func record() -> UICRecord {
        precondition(code.utf8.count == 2 && validityBlocks.count <= 9 && fields.count <= 99)
        var body = Array(code.utf8) + uicDigits(validityBlocks.count, width: 1)
        for block in validityBlocks {
            let serial = Array(block.serial.utf8)
            precondition(serial.count <= 10, "a version 03 serial number has at most 10 characters")
            body += block.firstDay.compactDigits + block.lastDay.compactDigits
            body += serial + [UInt8](repeating: 0, count: 10 - serial.count)
        }
        body += uicDigits(fields.count, width: 2)
        for field in fields {
            let value = Array(field.value.utf8)
            body += Array(field.tagName.utf8) + uicDigits(value.count, width: 4) + value
        }
        return UICRecord(id: Self.recordID, version: "03", body: body)
    }

    private static func validityBlocks(
        _ count: Int, serialWidth: Int, from cursor: inout UICFieldCursor
    ) throws(FormatError) -> [ValidityBlock] {
        var blocks: [ValidityBlock] = []
        blocks.reserveCapacity(count)
        for index in 0..<count {
            // Named only in an error: not built for every scan.
            func name() -> String { "validity block \(index + 1)" }
            let firstStart = cursor.position
            let first = try cursor.take(8, "\(name())'s first day")
            let lastStart = cursor.position
            let last = try cursor.take(8, "\(name())'s last day")
            guard let firstDay = UICDay.compact(first) else {
                throw .malformed(
                    "the first day of \(name()) of the 0080BL record at byte \(firstStart) is "
                        + "\(UICFieldCursor.describe(first)), not a day DDMMYYYY"
                )
            }
            guard let lastDay = UICDay.compact(last) else {
                throw .malformed(
                    "the last day of \(name()) of the 0080BL record at byte \(lastStart) is "
                        + "\(UICFieldCursor.describe(last)), not a day DDMMYYYY"
                )
            }
            let serial = UICFieldCursor.trimmedText(try cursor.take(serialWidth, "\(name())'s serial number"))
            blocks.append(ValidityBlock(firstDay: firstDay, lastDay: lastDay, serial: serial))
        }
        return blocks
    }

    /// Whether the bytes at the cursor read as a field count followed by an `S` field (or by nothing
    /// but padding when the count is 0).
    private static func continuesWithFields(_ cursor: UICFieldCursor) -> Bool {
        let head = Array(cursor.peek(6))
        guard head.count >= 2, let count = UICFieldCursor.asciiNumber(head[0..<2]) else { return false }
        if count == 0 { return cursor.peek(cursor.remaining).dropFirst(2).allSatisfy { $0 == 0 } }
        return head.count == 6 && head[2] == UInt8(ascii: "S") && UICFieldCursor.asciiNumber(head[3..<6]) != nil
    }
}
