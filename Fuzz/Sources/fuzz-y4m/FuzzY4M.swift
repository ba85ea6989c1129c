import FuzzSupport
import Symbols

/// Fuzzes the recorded-frame path: the YUV4MPEG2 reader, then each frame through the scanner's camera pass and the
/// presentation tracker, as `farecheck scan --video` and a camera source run them.
@_cdecl("fuzz_y4m_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: a recording. Refusals are the expected outcome; crashes, traps, leaks and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    guard let reader = try? Y4MReader(source: MemoryByteSource(bytes)) else { return 0 }
    // A frame's pixels are allocated before they are read (they are read straight into the image): a header
    // claiming 8K frames costs a 36 MB allocation under the sanitizer on every such input. Real headers up to
    // 256 × 256 keep the fuzzer fast; the limits themselves are the reader's tests.
    guard reader.header.luminanceByteCount <= 256 * 256 else { return 0 }
    var presentations = PresentationReader(absenceForNewPresentation: .milliseconds(500))
    // A few frames are enough to reach every state of the reader. Decoding costs a hundred times what reading
    // does under the sanitizer: only the first two frames are decoded, and only small ones, so that the fuzzer
    // spends its time on the reader's states as much as on the image path.
    for index in 0..<4 {
        guard let frame = try? reader.nextFrame() else { break }
        if index < 2 && frame.image.pixelCount <= 128 * 128 { _ = presentations.presentations(in: frame) }
    }
    return 0
}
