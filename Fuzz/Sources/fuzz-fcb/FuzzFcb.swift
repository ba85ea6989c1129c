import FuzzSupport
import TicketFormats

/// Fuzzes the unaligned PER decoder through FCB (`FCBTicket` over `FCBData`), in every FCB version.
///
/// The first byte chooses the version (the encoding carries none: the container says which).
@_cdecl("fuzz_fcb_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    var reader = FuzzReader(bytes)
    let versions = FCBVersion.allCases
    let version = versions[Int(reader.byte()) % versions.count]
    _ = try? FCBTicket(decoding: reader.rest(), version: version)
    return 0
}
