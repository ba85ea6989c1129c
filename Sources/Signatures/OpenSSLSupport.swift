import COpenSSL

extension OpenSSLError {
    /// Reads and removes every entry on this thread's OpenSSL error queue.
    ///
    /// The queue is per thread and outlives the call that filled it: entries left behind would be
    /// blamed on whatever fails next on this thread, so every failure path empties it.
    static func takeQueue() -> OpenSSLError {
        var entries: [String] = []
        var buffer = [CChar](repeating: 0, count: 256)
        while true {
            var data: UnsafePointer<CChar>?
            var flags: Int32 = 0
            let code = ERR_get_error_all(nil, nil, nil, &data, &flags)
            if code == 0 { break }
            ERR_error_string_n(code, &buffer, buffer.count)
            var entry = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if flags & ERR_TXT_STRING != 0, let data, data.pointee != 0 {
                entry += ": " + String(cString: data)
            }
            entries.append(entry)
        }
        return OpenSSLError(entries: entries)
    }

    /// Empties this thread's OpenSSL error queue without reading it, for failures that are answers
    /// (a signature that does not verify) rather than errors.
    static func discardQueue() {
        ERR_clear_error()
    }
}

/// Calls `body` with a pointer to the bytes and their count; the pointer is never nil, even for no bytes,
/// because some OpenSSL functions treat a NULL buffer as "ask for the size" rather than "empty".
@inline(__always)
func withBytes<R>(_ bytes: [UInt8], _ body: (UnsafePointer<UInt8>, Int) -> R) -> R {
    bytes.withUnsafeBufferPointer { buffer in
        if let base = buffer.baseAddress {
            return body(base, buffer.count)
        }
        var placeholder: UInt8 = 0
        return withUnsafePointer(to: &placeholder) { body($0, 0) }
    }
}

/// Runs `body` with a read-only memory BIO over `bytes`; the BIO does not copy, so it lives only inside.
func withMemoryBIO<R>(_ bytes: [UInt8], _ body: (OpaquePointer) -> R) -> R? {
    withBytes(bytes) { base, count in
        guard let bio = BIO_new_mem_buf(base, Int32(clamping: count)) else { return nil }
        defer { BIO_free(bio) }
        return body(bio)
    }
}

/// Runs `write` against a fresh memory BIO and returns what it wrote, or nil when `write` reports failure.
func bytesWritten(by write: (OpaquePointer) -> Bool) -> [UInt8]? {
    guard let bio = BIO_new(BIO_s_mem()) else { return nil }
    defer { BIO_free(bio) }
    guard write(bio) else { return nil }
    var data: UnsafeMutablePointer<CChar>?
    let count = COpenSSL_BIO_get_mem_data(bio, &data)
    guard count >= 0, let data else { return count == 0 ? [] : nil }
    return data.withMemoryRebound(to: UInt8.self, capacity: count) {
        Array(UnsafeBufferPointer(start: $0, count: count))
    }
}

/// Encodes `der` as a PEM block with the given label (`CERTIFICATE`, `PUBLIC KEY`, ...).
func pemEncoded(_ der: [UInt8], label: String) -> String? {
    let pem = bytesWritten { bio in
        withBytes(der) { base, count in PEM_write_bio(bio, label, "", base, count) > 0 }
    }
    return pem.map { String(decoding: $0, as: UTF8.self) }
}

/// Encodes an OpenSSL object to DER with one of its `i2d_*` functions, which are called twice: for the
/// size, then to write.
func derEncoded(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?) -> Int32) -> [UInt8]? {
    let count = encode(nil)
    guard count > 0 else { return nil }
    var result = [UInt8](repeating: 0, count: Int(count))
    let written = result.withUnsafeMutableBufferPointer { buffer -> Int32 in
        var cursor = buffer.baseAddress
        return encode(&cursor)
    }
    return written == count ? result : nil
}

/// Decodes DER with one of OpenSSL's `d2i_*` functions and returns the object and how many bytes it used.
func derDecoded(
    _ bytes: [UInt8],
    _ decode: (UnsafeMutablePointer<UnsafePointer<UInt8>?>, Int) -> OpaquePointer?
) -> (object: OpaquePointer, consumed: Int)? {
    withBytes(bytes) { base, count -> (OpaquePointer, Int)? in
        var cursor: UnsafePointer<UInt8>? = base
        guard let object = decode(&cursor, count), let end = cursor else { return nil }
        return (object, base.distance(to: end))
    }
}
