import FareCore

/// The `U_TLAY` record (version 01): the text of the paper ticket, field by field, with positions.
///
/// Body: layout standard (4, e.g. `RCT2`, `PLAI`), number of fields (4 digits), then for each field
/// line (2), column (2), height (2), width (2), formatting (1), text length in bytes (4) and the text
/// (UTF-8; Latin-1 where it is not valid UTF-8).
public struct UICLayout: Sendable, Hashable {
    /// The record id.
    public static let recordID = "U_TLAY"

    /// One text field of the layout.
    public struct Field: Sendable, Hashable {
        /// The line the field starts on (0-based).
        public var line: Int
        /// The column the field starts in (0-based).
        public var column: Int
        /// How many lines the field may use.
        public var height: Int
        /// How many columns the field may use.
        public var width: Int
        /// The formatting code: 0 normal, 1 bold, 2 italic, 3 bold italic, 4 small, 5 small bold,
        /// 6 small italic, 7 small bold italic.
        public var formatting: Int
        /// The field's text.
        public var text: String

        /// A field; one line high and unformatted unless stated.
        public init(line: Int, column: Int, height: Int = 1, width: Int, formatting: Int = 0, text: String) {
            self.line = line
            self.column = column
            self.height = height
            self.width = width
            self.formatting = formatting
            self.text = text
        }
    }

    /// The layout standard, e.g. `RCT2` (the 15 × 72 grid of the paper ticket) or `PLAI`.
    public var standard: String
    /// The fields, in record order.
    public var fields: [Field]
    /// How the record departs from the standard, when it was read from a ticket (see `init(record:)`).
    public var quirks: [IssuerQuirk] = []

    /// A layout for building test tickets.
    public init(standard: String, fields: [Field]) {
        self.standard = standard
        self.fields = fields
    }

    /// The texts of the fields, in record order: the layout as a plain list.
    public var texts: [String] { fields.map(\.text) }

    /// Decodes a `U_TLAY` record, reading the issuer quirks that have one meaning and naming them in `quirks`.
    ///
    /// The record is read as the standard says, except:
    /// - a number padded with spaces instead of zeros (`"13  "`, `" 5"`) is read as its digits;
    /// - a record that ends cleanly after fewer fields than it announces (at a field boundary, or with zero
    ///   padding only) keeps the fields it holds;
    /// - when that reading fails, the text lengths are read as counts of characters instead of bytes, and that
    ///   reading is taken only if it consumes the record exactly and some length differs (issuers whose systems
    ///   count characters: such a record cannot be read by bytes).
    ///
    /// - Throws: `unsupported` for a version other than 01; `malformed`, naming the offset in the inflated
    ///   data, with what the byte reading found wrong (a number that is not digits, a text that overruns the
    ///   record, bytes other than zero padding after the last field) when no reading holds.
    public init(record: UICRecord) throws(FormatError) {
        guard record.version == "01" else {
            throw .unsupported("U_TLAY version \(record.version) at byte \(record.offset) is not supported (only 01)")
        }
        do {
            self = try Self.read(record, lengthsInCharacters: false)
        } catch {
            guard let counted = try? Self.read(record, lengthsInCharacters: true) else { throw error }
            self = counted
        }
    }

    /// Reads a record with the text lengths counted in bytes (the standard) or in characters.
    private static func read(_ record: UICRecord, lengthsInCharacters: Bool) throws(FormatError) -> UICLayout {
        let base = record.offset + UICRecord.headerLength
        var cursor = UICFieldCursor(record.body, base: base, subject: "U_TLAY record")
        let standard = try cursor.text(4, "layout standard")
        var padding = PaddedNumbers(record: record.id)
        let countStart = cursor.position
        let count = padding.note(try cursor.paddedNumber(4, "number of fields"), "number of fields", at: countStart)
        var fields: [Field] = []
        var characterCounted: (first: IssuerQuirk, count: Int)?
        for index in 0..<count {
            // Fewer fields than announced: kept when the record ends cleanly here (lengths in bytes only, where a
            // clean end is unambiguous; a character reading must consume the record exactly).
            if !lengthsInCharacters, cursor.peek(cursor.remaining).allSatisfy({ $0 == 0 }) { break }
            func subject() -> String { "field \(index + 1)" }
            func number(_ width: Int, _ name: String) throws(FormatError) -> Int {
                let start = cursor.position
                let read = try cursor.paddedNumber(width, "\(subject())'s \(name)")
                return padding.note(read, "\(subject())'s \(name)", at: start)
            }
            let line = try number(2, "line")
            let column = try number(2, "column")
            let height = try number(2, "height")
            let width = try number(2, "width")
            let formatting = try number(1, "formatting")
            let lengthStart = cursor.position
            let length = try number(4, "text length")
            let text: String
            if lengthsInCharacters {
                guard let characters = cursor.characters(length) else {
                    throw .malformed(
                        "\(subject())'s text of the U_TLAY record at byte \(cursor.position) is not "
                            + "\(length) characters"
                    )
                }
                if characters.count != length {
                    let quirk = IssuerQuirk(
                        .lengthInCharacters(characters: length, bytes: characters.count), record: record.id,
                        offset: lengthStart, field: "\(subject())'s text length")
                    characterCounted = (characterCounted?.first ?? quirk, (characterCounted?.count ?? 0) + 1)
                }
                text = UICFieldCursor.text(characters)
            } else {
                text = try cursor.text(length, "\(subject())'s text")
            }
            fields.append(
                Field(line: line, column: column, height: height, width: width, formatting: formatting, text: text))
        }
        let trailing = cursor.peek(cursor.remaining)
        if lengthsInCharacters {
            // Taken only when it explains the record exactly, and only when some length counted characters.
            guard trailing.isEmpty, fields.count == count, characterCounted != nil else {
                throw .malformed("the U_TLAY record does not read with its text lengths counted in characters")
            }
        } else if let nonZero = trailing.firstIndex(where: { $0 != 0 }) {
            throw .malformed(
                "\(trailing.count) bytes follow the last of the \(count) fields of the U_TLAY record at byte "
                    + "\(cursor.base + nonZero), and they are not zero padding"
            )
        }
        var layout = UICLayout(standard: standard, fields: fields)
        layout.quirks = padding.quirks
        if let characterCounted {
            var quirk = characterCounted.first
            quirk.count = characterCounted.count
            layout.quirks.append(quirk)
        }
        if fields.count < count {
            layout.quirks.append(
                IssuerQuirk(
                    .fewerFieldsThanAnnounced(announced: count, held: fields.count), record: record.id,
                    offset: countStart, field: "number of fields"))
        }
        return layout
    }

    /// The numbers of a record that were padded with spaces: one quirk, at the first, with their count.
    private struct PaddedNumbers {
        let record: String
        var first: IssuerQuirk?
        var count = 0

        init(record: String) {
            self.record = record
        }

        /// The value of a number just read, noting it when it was padded.
        mutating func note(
            _ number: (value: Int, padded: String?), _ field: @autoclosure () -> String, at offset: Int
        ) -> Int {
            if let padded = number.padded {
                if first == nil {
                    first = IssuerQuirk(
                        .spacePaddedNumber(written: padded), record: record, offset: offset, field: field())
                }
                count += 1
            }
            return number.value
        }

        var quirks: [IssuerQuirk] {
            guard var first else { return [] }
            first.count = count
            return [first]
        }
    }

    /// The layout as a `U_TLAY` version 01 record.
    ///
    /// - Precondition: `standard` has 4 bytes; positions and sizes fit 2 digits, formatting 1 digit,
    ///   texts fewer than 10 000 bytes.
    public func record() -> UICRecord {
        precondition(standard.utf8.count == 4, "a layout standard has 4 characters")
        var body = Array(standard.utf8) + uicDigits(fields.count, width: 4)
        for field in fields {
            let text = Array(field.text.utf8)
            body += uicDigits(field.line, width: 2) + uicDigits(field.column, width: 2)
            body += uicDigits(field.height, width: 2) + uicDigits(field.width, width: 2)
            body += uicDigits(field.formatting, width: 1) + uicDigits(text.count, width: 4) + text
        }
        return UICRecord(id: Self.recordID, version: "01", body: body)
    }

    /// The layout drawn as a fixed-width text grid, the way the printed ticket shows it.
    ///
    /// `RCT2` is a grid of 15 lines of 72 columns; other standards get a grid just large enough for
    /// their fields, and a field reaching past the grid widens it rather than losing text. Each field's
    /// text is placed at its line and column and word-wrapped within its width and height (a word
    /// longer than the width is cut; what does not fit the box is dropped; a line break in the text
    /// starts a new line). Later fields overwrite earlier ones where they overlap. Trailing spaces of
    /// each line and trailing empty lines are removed.
    public func renderedLines() -> [String] {
        let isRCT2 = standard == "RCT2"
        var rowCount = isRCT2 ? 15 : 0
        var columnCount = isRCT2 ? 72 : 0
        let boxes = fields.map { field in
            // A width of 0 states no box: the text keeps its own length.
            let width = field.width > 0 ? field.width : max(1, field.text.count)
            return (field, wrap(field.text, width: width, height: max(1, field.height)))
        }
        for (field, lines) in boxes {
            rowCount = max(rowCount, field.line + lines.count)
            columnCount = max(columnCount, field.column + (lines.map(\.count).max() ?? 0))
        }
        var grid = [[Character]](repeating: [Character](repeating: " ", count: columnCount), count: rowCount)
        for (field, lines) in boxes {
            for (index, line) in lines.enumerated() {
                for (offset, character) in line.enumerated() {
                    grid[field.line + index][field.column + offset] = character
                }
            }
        }
        var rendered = grid.map { row in
            var line = String(row)
            while line.last == " " { line.removeLast() }
            return line
        }
        while rendered.last?.isEmpty == true { rendered.removeLast() }
        return rendered
    }

    /// Word-wraps `text` into at most `height` lines of at most `width` characters.
    private func wrap(_ text: String, width: Int, height: Int) -> [[Character]] {
        var lines: [[Character]] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current: [Character] = []
            // Whether `current` has begun: an empty first word (a leading space) still counts.
            var begun = false
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                var word = Array(word)
                if (begun ? current.count + 1 : 0) + word.count <= width {
                    if begun { current.append(" ") }
                    current += word
                    begun = true
                    continue
                }
                if begun { lines.append(current) }
                if lines.count >= height { return Array(lines.prefix(height)) }
                // A word longer than the box is cut into box-wide pieces.
                while word.count > width {
                    lines.append(Array(word.prefix(width)))
                    word.removeFirst(width)
                    if lines.count >= height { return lines }
                }
                current = word
                begun = true
            }
            lines.append(current)
            if lines.count >= height { break }
        }
        return Array(lines.prefix(height))
    }
}

extension UIC918_3 {
    /// The U_TLAY grid of a UIC 918.3 payload as printed (`UICLayout.renderedLines`), or `nil` when the payload is
    /// not a UIC container or has no readable layout (`layout(of:)` says which).
    ///
    /// Read from the payload as scanned, whatever the verdict: a forged ticket's text is shown too, under its
    /// verdict, because the inspector compares it with the paper or the phone.
    public static func printedLayout(of payload: [UInt8]) -> [String]? {
        layout(of: payload).lines
    }

    /// The printed layout of a payload, or why there is none: never "no layout" for a ticket that has a U_TLAY
    /// record. Read from the payload as scanned, whatever the verdict: for a payload on its own (tests, fuzzing);
    /// beside a verdict, `PayloadDecoding` reads it from the verifier's decoding instead.
    public static func layout(of payload: [UInt8]) -> PrintedLayout {
        guard isContainer(payload) else { return .absent }
        let container: UICContainer
        do {
            container = try UICContainer(parsing: payload)
        } catch {
            return .containerUnreadable(asSentence(error.message))
        }
        return layout(of: container)
    }

    /// The printed layout of a container taken apart, or why there is none (see `layout(of:)` for a payload).
    public static func layout(of container: UICContainer) -> PrintedLayout {
        guard let record = container.record(UICLayout.recordID) else { return .absent }
        do {
            return .drawn(try UICLayout(record: record).renderedLines())
        } catch {
            return .unreadable(unreadable(record, error))
        }
    }
}
