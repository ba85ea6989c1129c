import FuzzSupport
import Scanners

/// Fuzzes keyboard wedge input: evdev `input_event` records decoded, then framed into scans.
///
/// The first byte chooses the keyboard layout and whether an AIM identifier is stripped; the rest is what
/// an evdev node returns (24-byte records, as `Tests/Fixtures/recordings/*.inputevents`).
@_cdecl("fuzz_wedge_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    var reader = FuzzReader(bytes)
    let options = reader.byte()
    let layouts = KeyboardLayout.all
    var framer = WedgeFramer(
        layout: layouts[Int(options & 0x7F) % layouts.count], stripsAIMIdentifier: options & 0x80 != 0)
    var decoder = InputEventDecoder()
    for event in decoder.decode(reader.rest()) {
        _ = framer.accept(event)
    }
    _ = framer.finishIdleScan()
    _ = framer.abandon(reason: "the input ended")
    return 0
}
