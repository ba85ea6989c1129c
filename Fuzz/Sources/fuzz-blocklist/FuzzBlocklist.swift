import FareCore
import FuzzSupport
import TicketFormats

/// Fuzzes the readers of the published blocklists. The first byte selects what the rest is:
/// - 0: a DTVG zip archive (`DTVGBlocklistFile.readEntries`: zip structure, raw inflate with a 1 MiB cap, CRC,
///   then the CSV);
/// - 1: a piece size (1–256), then a DTVG CSV fed to `DTVGBlocklistCSV` in pieces of that size;
/// - 2: rows of the VDV-KA table for `VDVBlocklistRows`: cells one after another, each a tag (0 integer, 8 bytes
///   big-endian; 1 real, 8 bytes; 2 text and 3 blob, a length byte and the bytes; anything else NULL), five a row;
/// - 3: a blocklist version as text, read for both lists; what reads must write back as text that reads the same.
@_cdecl("fuzz_blocklist_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: read it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    guard let selector = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    switch selector % 4 {
    case 0:
        try? DTVGBlocklistFile.readEntries(zip: body, limit: 1 << 20) { entry, _ in check(entry) }
    case 1:
        csv(body)
    case 2:
        rows(body)
    default:
        versions(body)
    }
    return 0
}

/// What every entry read must be, whatever the input.
private func check(_ entry: DTVGBlocklistEntry) {
    precondition(entry.rics <= 99_999, "a RICS code of more than five digits")
    let id = Array(entry.ticketID.utf8)
    precondition((1...64).contains(id.count), "a ticket id of \(id.count) bytes")
    precondition(id.allSatisfy { $0 >= 0x20 && $0 < 0x7F }, "a ticket id that is not printable ASCII")
}

private func csv(_ body: [UInt8]) {
    guard let first = body.first else { return }
    let size = Int(first) + 1
    let text = Array(body.dropFirst())
    var reader = DTVGBlocklistCSV()
    do {
        var start = 0
        while start < text.count {
            let piece = Array(text[start..<min(text.count, start + size)])
            try piece.withUnsafeBufferPointer { (buffer) throws(FormatError) in
                try reader.consume(buffer) { entry, _ in check(entry) }
            }
            start += size
        }
        try reader.finish { entry, _ in check(entry) }
    } catch {
        precondition(!error.message.isEmpty, "an error without a message")
    }
}

private func rows(_ body: [UInt8]) {
    var index = 0
    func cell() -> SQLiteCell? {
        guard index < body.count else { return nil }
        let tag = body[index]
        index += 1
        func eight() -> UInt64? {
            guard index + 8 <= body.count else { return nil }
            defer { index += 8 }
            return body[index..<(index + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        func counted() -> [UInt8]? {
            guard index < body.count else { return nil }
            let length = Int(body[index])
            index += 1
            guard index + length <= body.count else { return nil }
            defer { index += length }
            return Array(body[index..<(index + length)])
        }
        switch tag {
        case 0: return eight().map { .integer(Int64(bitPattern: $0)) }
        case 1: return eight().map { .real(Double(bitPattern: $0)) }
        case 2: return counted().map { .text($0) }
        case 3: return counted().map { .blob($0) }
        default: return .null
        }
    }
    var reader = VDVBlocklistRows()
    var row = 0
    while true {
        var cells: [SQLiteCell] = []
        while cells.count < 5, let next = cell() { cells.append(next) }
        guard cells.count == 5 else { return }
        row += 1
        do {
            _ = try reader.accept(cells, row: row)
        } catch {
            return
        }
    }
}

private func versions(_ body: [UInt8]) {
    let text = String(decoding: body, as: UTF8.self)
    for list in BlocklistKind.allCases {
        guard let version = try? BlocklistVersion(parsing: text, for: list) else { continue }
        let again = try? BlocklistVersion(parsing: version.text, for: list)
        precondition(again == version, "version \(version.text) does not read back as itself")
    }
}
