import FareCore
import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes a whole UIC 918.3 container: header, signature field, inflation, records, and the ticket mapping, with
/// the issuer quirks they tolerate (space-padded lengths, lenient U_TLAY) and what the inspector is shown of them
/// (the quirk warnings, the unreadable records, the printed layout, the FCB content).
@_cdecl("fuzz_uic_container_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let container = try? UICContainer(parsing: bytes, inflateLimit: 64 * 1024) {
        for record in container.records {
            _ = record.summary
        }
        if let content = try? UIC918_3.content(of: container) {
            _ = IssuerQuirk.warnings(content.quirks)
            _ = content.ticket.unreadableRecords.map(\.description)
        }
        _ = UIC918_3.unreadableRecords(in: container).map(\.description)
        _ = IssuerQuirk.warnings(container.quirks)
    }
    if case .drawn(let lines) = UIC918_3.layout(of: bytes) { _ = lines.count }
    _ = FCBContent(payload: bytes)
    return 0
}
