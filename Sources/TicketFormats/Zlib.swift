import CZlib

/// zlib (RFC 1950) streams with a hard cap on what inflating may produce.
///
/// A barcode holds at most a few kilobytes; a stream that inflates past the cap is a bomb, not a
/// ticket, and is stopped as soon as it crosses the cap rather than after it has filled memory.
public enum Zlib {
    /// The default cap on inflated size: 64 KiB.
    public static let defaultInflateLimit = 64 * 1024

    /// Whether `bytes` begins like a zlib stream (CMF/FLG pair with method 8 and a valid check).
    public static func looksLikeZlib(_ bytes: some Collection<UInt8>) -> Bool {
        guard bytes.count >= 2 else { return false }
        let cmf = bytes[bytes.startIndex]
        let flg = bytes[bytes.index(after: bytes.startIndex)]
        return cmf & 0x0F == 8 && cmf >> 4 <= 7 && (UInt16(cmf) << 8 | UInt16(flg)) % 31 == 0
    }

    /// Inflates a complete zlib stream, throwing `malformed` for a broken stream, a truncated one,
    /// trailing bytes after its end, or an output larger than `limit` bytes.
    public static func inflate(_ input: [UInt8], limit: Int = defaultInflateLimit) throws(FormatError) -> [UInt8] {
        var stream = z_stream()
        guard CZlib_inflateInit(&stream) == Z_OK else {
            throw .malformed("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }

        // Inflate straight into one buffer one byte larger than the cap: filling it is the bomb signal,
        // and a ticket needs no second pass or copy.
        var failure: FormatError?
        var consumed = 0
        let output = input.withUnsafeBufferPointer { inputBuffer in
            [UInt8](unsafeUninitializedCapacity: limit + 1) { buffer, initialized in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(buffer.count)
                while true {
                    let status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    initialized = Int(stream.total_out)
                    if status == Z_STREAM_END { break }
                    if stream.avail_out == 0 {
                        failure = .malformed(
                            "zlib stream inflates past the \(limit / 1024) KiB limit (a compression bomb, not a ticket)"
                        )
                        return
                    }
                    switch status {
                    case Z_OK: continue
                    case Z_BUF_ERROR:
                        // No progress with output space left: the input ran out before the stream ended.
                        failure = .malformed("zlib stream is truncated after \(inputBuffer.count) bytes")
                    case Z_NEED_DICT:
                        failure = .unsupported("zlib stream needs a preset dictionary")
                    default:
                        let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                        failure = .malformed("zlib stream is broken at byte \(Int(stream.total_in)): \(message)")
                    }
                    return
                }
                consumed = Int(stream.total_in)
            }
        }
        if let failure { throw failure }
        guard consumed == input.count else {
            throw .malformed("\(input.count - consumed) bytes follow the end of the zlib stream at byte \(consumed)")
        }
        return output
    }

    /// Inflates a complete raw deflate stream (RFC 1951, as a zip entry holds it) in pieces of at most 64 KiB,
    /// handing each to `chunk` as it comes, so that a large entry is never held whole.
    ///
    /// - Throws: `malformed` for a broken or truncated stream, bytes after its end, or an output larger than
    ///   `limit` bytes (stopped as soon as it crosses the cap); whatever `chunk` throws.
    /// - Returns: The number of bytes inflated.
    @discardableResult
    public static func inflateRaw(
        _ input: UnsafeBufferPointer<UInt8>, limit: Int,
        chunk: (UnsafeBufferPointer<UInt8>) throws(FormatError) -> Void
    ) throws(FormatError) -> Int {
        var stream = z_stream()
        // -15: a raw deflate stream with the largest window (no zlib header or Adler-32 trailer).
        guard CZlib_inflateInit2(&stream, -15) == Z_OK else {
            throw .malformed("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        let window = 64 * 1024
        let output = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: window)
        defer { output.deallocate() }
        stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
        stream.avail_in = uInt(input.count)
        var produced = 0
        while true {
            stream.next_out = output.baseAddress
            stream.avail_out = uInt(window)
            let status = CZlib.inflate(&stream, Z_NO_FLUSH)
            let count = window - Int(stream.avail_out)
            switch status {
            case Z_OK, Z_STREAM_END:
                break
            case Z_BUF_ERROR:
                // No progress with output space left: the input ran out before the stream ended.
                throw .malformed("the deflate stream is truncated after \(input.count) bytes")
            case Z_NEED_DICT:
                throw .unsupported("the deflate stream needs a preset dictionary")
            default:
                let message = stream.msg.map { String(cString: $0) } ?? "error \(status)"
                throw .malformed("the deflate stream is broken at byte \(Int(stream.total_in)): \(message)")
            }
            produced += count
            if produced > limit {
                throw .malformed("the deflate stream inflates past the \(limit / (1024 * 1024)) MiB limit")
            }
            if count > 0 { try chunk(UnsafeBufferPointer(rebasing: output[0..<count])) }
            if status == Z_STREAM_END { break }
        }
        let consumed = Int(stream.total_in)
        guard consumed == input.count else {
            throw .malformed("\(input.count - consumed) bytes follow the end of the deflate stream at byte \(consumed)")
        }
        return produced
    }

    /// The CRC-32 (ISO 3309, as zip uses it) of `bytes`, continuing from `crc` (0 to start).
    public static func crc32(_ bytes: UnsafeBufferPointer<UInt8>, continuing crc: UInt32 = 0) -> UInt32 {
        var value = uLong(crc)
        var start = 0
        // zlib's length is a 32-bit uInt: feed large buffers in parts.
        while start < bytes.count {
            let count = min(bytes.count - start, 1 << 30)
            value = CZlib.crc32(value, bytes.baseAddress! + start, uInt(count))
            start += count
        }
        return UInt32(truncatingIfNeeded: value)
    }

    /// Compresses `input` into a zlib stream (level 9: barcode space is what counts).
    public static func deflate(_ input: [UInt8], level: Int32 = 9) -> [UInt8] {
        var stream = z_stream()
        guard CZlib_deflateInit(&stream, level) == Z_OK else { preconditionFailure("zlib deflateInit failed") }
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))))
        var written = 0
        input.withUnsafeBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { out in
                stream.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
                stream.avail_in = uInt(inputBuffer.count)
                stream.next_out = out.baseAddress
                stream.avail_out = uInt(out.count)
                let status = CZlib.deflate(&stream, Z_FINISH)
                precondition(status == Z_STREAM_END, "zlib deflate into a deflateBound buffer must finish")
                written = Int(stream.total_out)
            }
        }
        return Array(output[0..<written])
    }
}
