import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes UIC 918.9 DOSIPAS: the header (v1, v2), the level-1 and level-2 data, the FCB blocks, the dynamic
/// content (FDC1, Intercode) and the mapping onto a ticket.
@_cdecl("fuzz_dosipas_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let barcode = try? DOSIPASBarcode(decoding: bytes) {
        _ = try? DOSIPAS.ticket(from: barcode, at: Date(timeIntervalSince1970: 1_800_000_000))
        _ = DOSIPAS.unreadableBlocks(of: barcode).map(\.description)
        if case .decoded(let json) = DOSIPAS.railTicketJSON(of: barcode) { _ = json.utf8.count }
        // The year of an FDC1 stamp: the latest such instant not after the limit, for any day and second.
        if case .fdc1(let content)? = try? barcode.dynamicContent(), let stamp = content.timeStamp {
            let limit = Date(timeIntervalSince1970: 1_800_000_000)
            precondition(stamp.date(notAfter: limit) <= limit, "an FDC1 stamp read after its limit")
        }
    }
    return 0
}
