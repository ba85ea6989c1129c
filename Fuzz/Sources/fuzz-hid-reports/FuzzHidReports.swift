import Foundation
import FuzzSupport
import Scanners

/// Fuzzes the HID report assemblers (HID POS with the Honeywell and Newland layouts, Zebra SNAPI).
///
/// The first byte chooses the assembler; the rest is a recording as `Tests/Fixtures/recordings` keeps
/// them: per report a `u32 LE` time in microseconds, a `u16 LE` length, the report.
@_cdecl("fuzz_hid_reports_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    var reader = FuzzReader(bytes)
    var assembler: any HIDReportAssembler
    switch reader.byte() % 3 {
    case 0: assembler = HIDPOSAssembler(layout: .honeywell)
    case 1: assembler = HIDPOSAssembler(layout: .newland)
    default: assembler = SNAPIAssembler()
    }
    while !reader.isAtEnd {
        let microseconds = reader.littleEndian(4)
        let length = Int(reader.littleEndian(2))
        let report = reader.take(length)
        _ = assembler.accept(report: report, at: Date(timeIntervalSince1970: Double(microseconds) / 1_000_000))
    }
    _ = assembler.abandon(reason: "the input ended")
    return 0
}
