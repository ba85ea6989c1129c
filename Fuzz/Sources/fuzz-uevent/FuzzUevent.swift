import FuzzSupport
import Scanners

/// Fuzzes netlink uevent messages, the kernel's and udev's (with its binary header), as hotplug reads them.
@_cdecl("fuzz_uevent_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let event = HotplugEvent.parse(bytes) {
        _ = event.devicePath
    }
    return 0
}
