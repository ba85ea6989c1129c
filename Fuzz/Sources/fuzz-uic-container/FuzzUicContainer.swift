import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes a whole UIC 918.3 container: header, signature field, inflation, records, and the ticket mapping.
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
        _ = try? UIC918_3.ticket(from: container)
    }
    return 0
}
