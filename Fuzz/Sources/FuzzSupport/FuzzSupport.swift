/// What every fuzz target shares: starting libFuzzer, and reading structured inputs.
///
/// SwiftPM links an executable with `main` aliased to `<module>_main`, so libFuzzer's own `main` is never
/// pulled from its archive: each target defines `<module>_main` and hands control to libFuzzer's driver here.

/// The callback libFuzzer calls with each input (`LLVMFuzzerTestOneInput`'s C signature).
public typealias FuzzCallback = @convention(c) (UnsafeRawPointer?, Int) -> CInt

@_silgen_name("LLVMFuzzerRunDriver")
private func llvmFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: FuzzCallback
) -> CInt

/// Runs libFuzzer with the process's arguments (corpus directories, `-max_total_time=…`, …).
public func runLibFuzzer(
    _ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, _ callback: FuzzCallback
) -> CInt {
    var argc = argc
    var argv = argv
    return llvmFuzzerRunDriver(&argc, &argv, callback)
}

/// The input as bytes (libFuzzer may hand an empty input without a buffer).
public func fuzzInput(_ start: UnsafeRawPointer?, _ count: Int) -> [UInt8] {
    guard let start, count > 0 else { return [] }
    return Array(UnsafeRawBufferPointer(start: start, count: count))
}

/// Reads a structured input front to back; every read past the end gives zeros, so any input is usable.
public struct FuzzReader {
    /// The input.
    public let bytes: [UInt8]
    /// Where the next read starts.
    public private(set) var offset = 0

    /// A reader at the start of `bytes`.
    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    public var isAtEnd: Bool { offset >= bytes.count }

    /// The next byte, or 0 past the end.
    public mutating func byte() -> UInt8 {
        guard offset < bytes.count else { return 0 }
        defer { offset += 1 }
        return bytes[offset]
    }

    /// The next little-endian integer of `width` bytes.
    public mutating func littleEndian(_ width: Int) -> UInt64 {
        var value: UInt64 = 0
        for shift in 0..<width { value |= UInt64(byte()) << (8 * shift) }
        return value
    }

    /// Up to `count` next bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, offset + max(0, count))
        defer { offset = max(offset, end) }
        return offset < end ? Array(bytes[offset..<end]) : []
    }

    /// Every byte not yet read.
    public mutating func rest() -> [UInt8] { take(bytes.count - offset) }
}
