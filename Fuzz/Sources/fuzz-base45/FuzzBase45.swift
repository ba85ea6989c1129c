import FuzzSupport
import TicketFormats

/// Fuzzes `Base45.decode`: the FC1 text transport.
@_cdecl("fuzz_base45_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let decoded = try? Base45.decode(bytes) {
        // What decodes must encode back to the same text: a decoder that accepts two spellings of one value
        // would let a forged text pass for a genuine one.
        precondition(Base45.encode(decoded) == bytes, "base45 text does not round-trip")
    }
    return 0
}
