import Foundation
import FuzzSupport
import Scanners

/// Fuzzes HID report descriptors and the HID POS layout derived from them (what `HIDIOCGRDESC` returns).
@_cdecl("fuzz_hid_descriptor_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    guard let descriptor = try? HIDReportDescriptor(bytes: bytes) else { return 0 }
    for kind in [HIDReportKind.input, .output, .feature] {
        for id in descriptor.reportIDs(of: kind) {
            _ = descriptor.reportLength(of: kind, reportID: id)
            for field in descriptor.fields(of: kind, reportID: id) {
                _ = field.usage(at: 0)
                _ = field.byteOffset(numbered: descriptor.usesReportIDs)
            }
        }
    }
    if let layout = HIDPOSReportLayout(descriptor: descriptor) {
        var assembler = HIDPOSAssembler(layout: layout)
        _ = assembler.accept(report: bytes, at: Date(timeIntervalSince1970: 0))
    }
    return 0
}
