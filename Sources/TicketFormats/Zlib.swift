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
