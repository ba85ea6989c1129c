import CZlib

#if canImport(Glibc)
    import Glibc
#endif

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
        // A ticket's stream goes through this thread's inflater and scratch buffer (set up once, reset per
        // stream): a new inflater allocates its state and a 32 KiB window, and a buffer as large as the cap is
        // 64 KiB more, on every scan. The result is copied out at its own size.
        guard limit <= defaultInflateLimit, let inflater = ThreadInflater.current() else {
            return try inflate(input, limit: limit, stream: nil)
        }
        return try inflate(input, limit: limit, stream: inflater)
    }

    private static func inflate(
        _ input: [UInt8], limit: Int, stream reused: ThreadInflater?
    ) throws(FormatError) -> [UInt8] {
        let stream: UnsafeMutablePointer<z_stream>
        let scratch: UnsafeMutableBufferPointer<UInt8>
        if let reused {
            guard inflateReset(reused.stream) == Z_OK else { throw .malformed("zlib could not start inflating") }
            (stream, scratch) = (reused.stream, UnsafeMutableBufferPointer(rebasing: reused.output[..<(limit + 1)]))
        } else {
            stream = .allocate(capacity: 1)
            stream.initialize(to: z_stream())
            guard CZlib_inflateInit(stream) == Z_OK else {
                stream.deallocate()
                throw .malformed("zlib could not start inflating")
            }
            // One byte larger than the cap: filling it is the bomb signal.
            scratch = .allocate(capacity: limit + 1)
        }
        defer {
            if reused == nil {
                inflateEnd(stream)
                stream.deallocate()
                scratch.deallocate()
            }
        }
        var failure: FormatError?
        var consumed = 0
        var produced = 0
        input.withUnsafeBufferPointer { inputBuffer in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inputBuffer.baseAddress)
            stream.pointee.avail_in = uInt(inputBuffer.count)
            stream.pointee.next_out = scratch.baseAddress
            stream.pointee.avail_out = uInt(scratch.count)
            while true {
                let status = CZlib.inflate(stream, Z_NO_FLUSH)
                produced = scratch.count - Int(stream.pointee.avail_out)
                if status == Z_STREAM_END { break }
                if stream.pointee.avail_out == 0 {
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
                    let message = stream.pointee.msg.map { String(cString: $0) } ?? "error \(status)"
                    failure = .malformed("zlib stream is broken at byte \(Int(stream.pointee.total_in)): \(message)")
                }
                return
            }
            consumed = inputBuffer.count - Int(stream.pointee.avail_in)
        }
        if let failure { throw failure }
        guard consumed == input.count else {
            throw .malformed("\(input.count - consumed) bytes follow the end of the zlib stream at byte \(consumed)")
        }
        return Array(UnsafeBufferPointer(rebasing: scratch[..<produced]))
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

/// A thread's zlib inflater and output buffer, kept for the thread's life and reset for each stream. A stream is
/// inflated on one thread from start to end and never starts another inside, so no lock is taken. Freed when
/// its thread ends.
private final class ThreadInflater {
    let stream: UnsafeMutablePointer<z_stream>
    /// ``Zlib/defaultInflateLimit`` + 1 bytes.
    let output: UnsafeMutableBufferPointer<UInt8>

    private init?() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard CZlib_inflateInit(stream) == Z_OK else {
            stream.deallocate()
            return nil
        }
        output = .allocate(capacity: Zlib.defaultInflateLimit + 1)
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        output.deallocate()
    }

    /// The thread-specific key whose destructor releases a thread's inflater; `nil` when the process has used up
    /// its keys (then every stream gets an inflater of its own).
    private static let key: pthread_key_t? = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { inflater in
            guard let inflater else { return }
            Unmanaged<ThreadInflater>.fromOpaque(inflater).release()
        }
        return created == 0 ? key : nil
    }()

    /// This thread's inflater, made on first use; `nil` when it cannot be made.
    static func current() -> ThreadInflater? {
        guard let key else { return nil }
        if let existing = pthread_getspecific(key) {
            return Unmanaged<ThreadInflater>.fromOpaque(existing).takeUnretainedValue()
        }
        guard let inflater = ThreadInflater() else { return nil }
        let retained = Unmanaged.passRetained(inflater)
        guard pthread_setspecific(key, retained.toOpaque()) == 0 else {
            retained.release()
            return nil
        }
        return inflater
    }
}
