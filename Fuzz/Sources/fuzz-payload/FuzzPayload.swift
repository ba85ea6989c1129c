import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes payload detection as the verifier runs it: recognise the format, unwrap the transport, then map
/// the envelope to a ticket (what the verifier does after the signature check, here without one).
@_cdecl("fuzz_payload_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    guard let recognised = try? PayloadDetector(inflateLimit: 64 * 1024).recognise(bytes) else { return 0 }
    _ = recognised.format
    switch recognised {
    case .fc1(let message, _): _ = try? FC1.ticket(fromClaims: message.payload)
    case .uic(let container): _ = try? UIC918_3.ticket(from: container)
    case .ssb(let frame):
        if let ticket = try? SSBTicket(frame: frame) {
            _ = try? ERASSB.ticket(from: ticket, inspectedAt: Date(timeIntervalSince1970: 1_800_000_000))
        }
    case .dosipas(let barcode): _ = try? DOSIPAS.ticket(from: barcode, at: Date(timeIntervalSince1970: 1_800_000_000))
    case .vdv(let barcode): _ = barcode.caReference
    case .rsp6(let barcode):
        // No key here: the number's bytes stand in for a recovered ticket, to reach the bit-field reader.
        _ = barcode.rsaInput(byteCount: 128)
        if let ticket = try? RSP6Ticket(decoding: barcode.block[...]) {
            _ = RSP6.ticket(from: ticket, barcode: barcode).details
        }
    }
    return 0
}
