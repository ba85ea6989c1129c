import FuzzSupport
import TicketFormats

/// Fuzzes the CBOR decoder, `COSESign1` and the FC1 claims mapping behind it.
@_cdecl("fuzz_cose_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let item = try? CBORDecoder.decode(bytes) {
        _ = CBOREncoder.encode(item)
    }
    if let message = try? COSESign1(decoding: bytes) {
        _ = message.algorithmID
        _ = message.keyID
        _ = message.signedBytes
        _ = try? FC1.ticket(fromClaims: message.payload)
    }
    _ = try? FC1.ticket(fromClaims: bytes)
    return 0
}
