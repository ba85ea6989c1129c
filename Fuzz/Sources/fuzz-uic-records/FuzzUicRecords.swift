import FuzzSupport
import TicketFormats

/// Fuzzes the records of inflated UIC 918.3 data: the record splitter, then the record decoders.
///
/// The first byte chooses what the rest is: 0 inflated data split into records (each known record decoded),
/// 1 a `U_HEAD` body, 2 a `U_TLAY` body, 3 a `0080BL` body (version 3), 4 a `U_FLEX` body (version 13),
/// 5 a `U_FLEX` body (version 03). Selecting the body directly lets the fuzzer reach decoders without first
/// getting the record header right.
@_cdecl("fuzz_uic_records_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    var reader = FuzzReader(bytes)
    let selector = reader.byte() % 6
    let body = reader.rest()
    switch selector {
    case 0:
        guard let records = try? UICRecord.records(in: body) else { break }
        for record in records {
            _ = record.quirks.map(\.description)
            decodeRecord(record)
        }
    case 1: decodeRecord(UICRecord(id: "U_HEAD", version: "01", body: body))
    case 2: decodeRecord(UICRecord(id: "U_TLAY", version: "01", body: body))
    case 3: decodeRecord(UICRecord(id: "0080BL", version: "03", body: body))
    case 4: decodeRecord(UICRecord(id: "U_FLEX", version: "13", body: body))
    default: decodeRecord(UICRecord(id: "U_FLEX", version: "03", body: body))
    }
    return 0
}

/// Decodes a record with the decoder its id calls for.
func decodeRecord(_ record: UICRecord) {
    switch record.id {
    case "U_HEAD": _ = try? UICHead(record: record)
    case "U_TLAY":
        // Lenient: space-padded numbers, fewer fields than announced, lengths in characters.
        if let layout = try? UICLayout(record: record) {
            _ = layout.renderedLines()
            _ = IssuerQuirk.warnings(layout.quirks)
        }
    case "0080BL":
        if let bl = try? UIC0080BL(record: record) { _ = (bl.value(1), bl.unreadableFields?.message) }
    case "U_FLEX": _ = try? UICFlex.ticket(record: record)
    default: break
    }
}
