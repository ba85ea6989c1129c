import FuzzSupport
import Scanners

/// Fuzzes Zebra SSI: one packet decoded whole, and the byte stream framer fed in chunks.
///
/// The stream is cut where the input says: each chunk is a length byte then that many bytes, and a zero
/// length means the line went quiet (the framer's timeout).
@_cdecl("fuzz_ssi_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    _ = try? SSIFrame(decoding: bytes)
    var framer = SSIFramer()
    var reader = FuzzReader(bytes)
    var outputs = 0
    while !reader.isAtEnd {
        let length = Int(reader.byte())
        if length == 0 {
            framer.lineWentQuiet()
        } else {
            framer.append(reader.take(length))
        }
        while framer.next() != nil {
            outputs += 1
            // Each output consumes at least one byte of input: more outputs than bytes would be a loop.
            precondition(outputs <= bytes.count, "the SSI framer gave more outputs than input bytes")
        }
    }
    return 0
}
