import FareCore

/// The DTVG UIC blocklist as published: a zip archive holding `blacklistuic.csv`.
///
/// The CSV, as read here (and nothing else):
/// - UTF-8 starting with exactly one byte order mark (`EF BB BF`): a file without one, or with a second, is refused;
/// - lines end in LF or CRLF; the last line may lack its end; empty lines are skipped;
/// - fields are separated by commas; a field may be enclosed in double quotes (then `""` stands for one quote
///   inside it, and it holds no line end); nothing may follow a closing quote but the comma or the line end;
/// - the first line is the header, naming exactly the two columns `rics` and `ticketId` (in either order);
/// - every other line has exactly two fields: `rics`, 1 to 5 ASCII digits (`0080` = `80`), and `ticketId`, 1 to
///   64 printable ASCII characters without leading or trailing spaces;
/// - a line is at most 1,024 bytes.
///
/// Duplicate rows are refused by the importer (the store keeps each ticket once), not here.
public enum DTVGBlocklistFile {
    /// The file the archive must hold.
    public static let csvName = "blacklistuic.csv"
    /// The most bytes the CSV may inflate to: far above the ~20 MB of a million entries.
    public static let defaultCSVLimit = 512 * 1024 * 1024

    /// Reads the entries of a DTVG blocklist zip, one at a time, in file order, with the line each is on.
    ///
    /// - Throws: `malformed` or `unsupported`, naming what is wrong and where (zip structure, CRC, CSV line).
    public static func readEntries(
        zip bytes: [UInt8], limit: Int = defaultCSVLimit,
        progress: ((_ bytesRead: Int, _ totalBytes: Int) -> Void)? = nil,
        entry: (DTVGBlocklistEntry, _ line: Int) throws(FormatError) -> Void
    ) throws(FormatError) {
        let archive = try ZipArchive(bytes: bytes)
        let file = try archive.entry(named: csvName)
        var reader = DTVGBlocklistCSV()
        var read = 0
        try archive.read(file, limit: limit) { (piece) throws(FormatError) in
            try reader.consume(piece, entry: entry)
            read += piece.count
            progress?(read, file.uncompressedSize)
        }
        try reader.finish(entry: entry)
    }
}

/// The CSV of the DTVG UIC blocklist, read in pieces of any size (see `DTVGBlocklistFile` for the rules).
public struct DTVGBlocklistCSV: Sendable {
    /// The longest line accepted.
    public static let maximumLineLength = 1024
    /// The longest ticket id accepted.
    public static let maximumTicketIDLength = 64

    private var line: [UInt8] = []
    private var lineNumber = 0
    private var sawBOM = false
    /// Column positions from the header: (rics, ticketId).
    private var columns: (rics: Int, ticketID: Int)?
    /// Entries read.
    public private(set) var entryCount = 0

    public init() {
        line.reserveCapacity(Self.maximumLineLength)
    }

    /// Reads the next piece of the file; calls `entry` for each complete row.
    public mutating func consume(
        _ bytes: UnsafeBufferPointer<UInt8>, entry: (DTVGBlocklistEntry, _ line: Int) throws(FormatError) -> Void
    ) throws(FormatError) {
        for byte in bytes {
            if byte == 0x0A {
                try endLine(entry: entry)
            } else {
                guard line.count < Self.maximumLineLength else {
                    throw .malformed("line \(lineNumber + 1) is longer than \(Self.maximumLineLength) bytes")
                }
                line.append(byte)
            }
        }
    }

    /// Ends the file: reads a last line without its line end; checks the file had a header.
    public mutating func finish(
        entry: (DTVGBlocklistEntry, _ line: Int) throws(FormatError) -> Void
    ) throws(FormatError) {
        if !line.isEmpty { try endLine(entry: entry) }
        if !sawBOM { throw .malformed("the CSV is empty: it has no byte order mark and no header") }
        if columns == nil { throw .malformed("the CSV has no header line (rics,ticketId)") }
    }

    private mutating func endLine(
        entry: (DTVGBlocklistEntry, _ line: Int) throws(FormatError) -> Void
    ) throws(FormatError) {
        lineNumber += 1
        defer { line.removeAll(keepingCapacity: true) }
        var content = line[...]
        if content.last == 0x0D { content = content.dropLast() }
        if lineNumber == 1 {
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            guard content.starts(with: bom) else {
                throw .malformed("the CSV does not start with the UTF-8 byte order mark (EF BB BF) the list carries")
            }
            content = content.dropFirst(3)
            if content.starts(with: bom) {
                throw .malformed("the CSV starts with two byte order marks: it was saved twice as UTF-8 with BOM")
            }
            sawBOM = true
        }
        if content.isEmpty { return }
        let fields = try Self.fields(content, line: lineNumber)
        guard let columns else {
            guard fields.count == 2 else {
                throw .malformed(
                    "the CSV header names \(fields.count) columns (\(Self.quoted(fields))); it must be rics,ticketId")
            }
            let names = fields.map { String(decoding: $0, as: UTF8.self) }
            guard let rics = names.firstIndex(of: "rics"), let ticketID = names.firstIndex(of: "ticketId"),
                rics != ticketID
            else {
                throw .malformed("the CSV header is \(Self.quoted(fields)); it must name the columns rics and ticketId")
            }
            self.columns = (rics, ticketID)
            return
        }
        guard fields.count == 2 else {
            throw .malformed("line \(lineNumber) has \(fields.count) fields; rows have two (rics, ticketId)")
        }
        let rics = try Self.rics(fields[columns.rics], line: lineNumber)
        let ticketID = try Self.ticketID(fields[columns.ticketID], line: lineNumber)
        entryCount += 1
        try entry(DTVGBlocklistEntry(rics: rics, ticketID: ticketID), lineNumber)
    }

    /// The fields of one line (without its line end), quotes undone.
    static func fields(_ content: ArraySlice<UInt8>, line: Int) throws(FormatError) -> [[UInt8]] {
        var fields: [[UInt8]] = []
        var index = content.startIndex
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        while true {
            var field: [UInt8] = []
            if index < content.endIndex, content[index] == quote {
                index += 1
                var closed = false
                while index < content.endIndex {
                    let byte = content[index]
                    index += 1
                    if byte == quote {
                        if index < content.endIndex, content[index] == quote {
                            field.append(quote)
                            index += 1
                        } else {
                            closed = true
                            break
                        }
                    } else {
                        field.append(byte)
                    }
                }
                guard closed else { throw .malformed("line \(line) has a quoted field that is not closed") }
                guard index == content.endIndex || content[index] == comma else {
                    throw .malformed("line \(line) has characters after a closing quote")
                }
            } else {
                while index < content.endIndex, content[index] != comma {
                    guard content[index] != quote else {
                        throw .malformed("line \(line) has a quote inside a field that does not start with one")
                    }
                    field.append(content[index])
                    index += 1
                }
            }
            fields.append(field)
            if index == content.endIndex { return fields }
            index += 1  // the comma
        }
    }

    /// A RICS code: 1 to 5 ASCII digits, as a number.
    static func rics(_ field: [UInt8], line: Int) throws(FormatError) -> UInt32 {
        guard (1...5).contains(field.count), field.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw .malformed("line \(line): rics \(quoted(field)) is not a RICS code (1 to 5 digits)")
        }
        return field.reduce(UInt32(0)) { $0 * 10 + UInt32($1 - 0x30) }
    }

    /// A ticket id: 1 to 64 printable ASCII characters, no space at either end.
    static func ticketID(_ field: [UInt8], line: Int) throws(FormatError) -> String {
        guard !field.isEmpty else { throw .malformed("line \(line): the ticketId is empty") }
        guard field.count <= maximumTicketIDLength else {
            throw .malformed("line \(line): the ticketId is \(field.count) bytes, longer than \(maximumTicketIDLength)")
        }
        if field.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw .malformed("line \(line) holds a byte order mark: the file was joined from several CSV files")
        }
        guard field.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            throw .malformed(
                "line \(line): the ticketId \(quoted(field)) holds a character that is not printable ASCII")
        }
        guard field.first != 0x20, field.last != 0x20 else {
            throw .malformed("line \(line): the ticketId \(quoted(field)) begins or ends with a space")
        }
        return String(decoding: field, as: UTF8.self)
    }

    /// Fields for a message: printable ASCII as it is, other bytes as `\xNN`, at most 40 bytes each.
    static func quoted(_ fields: [[UInt8]]) -> String { fields.map(quoted).joined(separator: ",") }

    static func quoted(_ field: [UInt8]) -> String {
        var text = "\""
        for byte in field.prefix(40) {
            if byte >= 0x20, byte < 0x7F, byte != 0x22, byte != 0x5C {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (digits.count == 1 ? "0" : "") + digits
            }
        }
        return text + (field.count > 40 ? "…\"" : "\"")
    }
}
