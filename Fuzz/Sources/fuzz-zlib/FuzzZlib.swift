import FuzzSupport
import TicketFormats

/// Fuzzes `Zlib.inflate` with a cap: the cap must hold whatever the stream claims.
@_cdecl("fuzz_zlib_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    let limit = 64 * 1024
    if let inflated = try? Zlib.inflate(bytes, limit: limit) {
        precondition(inflated.count <= limit, "inflate returned \(inflated.count) bytes past its limit of \(limit)")
    }
    _ = Zlib.looksLikeZlib(bytes)
    return 0
}
