import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes ERA SSB: frame recognition (binary and base64), the frame, the ticket fields and their mapping.
@_cdecl("fuzz_ssb_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    let frame = ERASSB.isFrame(bytes) ? bytes : ERASSB.base64Frame(bytes) ?? bytes
    if let parsed = try? SSBFrame(parsing: frame), let ticket = try? SSBTicket(frame: parsed) {
        _ = try? ERASSB.ticket(from: ticket, inspectedAt: Date(timeIntervalSince1970: 1_800_000_000))
    }
    _ = try? SSBTicket(decoding: bytes)
    return 0
}
