import Foundation
import FuzzSupport
import TicketFormats

/// Fuzzes VDV-KA: the BER-TLV envelope, CV certificate bodies, ISO 9796-2 message recovery (given a block,
/// as the RSA operation would return it) and the entitlement data with its mapping onto a ticket.
@_cdecl("fuzz_vdv_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it as each VDV structure; errors are the expected outcome.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    _ = try? VDVBarcode(parsing: bytes)
    _ = try? VDVCertificate(parsing: bytes)
    _ = try? VDVCertificateEnvelope(parsingFile: bytes)
    if let entitlement = try? VDVEntitlement(parsing: bytes) { _ = try? entitlement.ticket() }
    // The recovery with a fake digest: the header, trailer and lengths are what can go wrong with input.
    _ = try? ISO9796_2.recoverMessage(block: bytes, remainder: Array(bytes.prefix(8))) { _ in
        [UInt8](repeating: 0, count: 20)
    }
    return 0
}
