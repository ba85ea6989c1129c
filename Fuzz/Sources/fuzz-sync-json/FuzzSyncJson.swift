import FuzzSupport
import ValidationAPI

/// Fuzzes the sync client's JSON readers (`JSONReader` behind them): the signed document envelope, the revocation
/// page (strictly, and entry by entry as a validator reads a signed page), and the first-use page entry by entry.
@_cdecl("fuzz_sync_json_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let document = try? SignedDocument(jsonBytes: bytes) {
        _ = try? RevocationDelta(wireBytes: document.payload)
    }
    _ = try? RevocationDelta(wireBytes: bytes)
    _ = try? RevocationDelta.reading(wireBytes: bytes)
    _ = try? FirstUseDelta.reading(wireBytes: bytes)
    return 0
}
