/// Conversions of ECDSA and DSA signatures between `r ‖ s` and DER, done by hand because they are on the
/// verification hot path and OpenSSL's way (`ECDSA_SIG`, `BIGNUM`s, `i2d`) allocates four times.
enum SignatureIntegers {
    /// The longest integer accepted, in bytes: more than any DSA or ECDSA key has (P-521: 66).
    static let maximumIntegerByteCount = 512

    /// Finds `r` and `s` in a DER `SEQUENCE { r INTEGER, s INTEGER }`.
    ///
    /// The length comes from the DER header; the bytes after the sequence must all be zero (UIC 918.3
    /// pads its 50-byte field with them). Integers are read as unsigned magnitudes, so an encoder that
    /// forgot the sign byte is still understood; the integers themselves decide validity.
    static func parseDER(_ signature: [UInt8]) -> (r: ArraySlice<UInt8>, s: ArraySlice<UInt8>)? {
        guard signature.count >= 8, signature[0] == 0x30,
            let (sequenceLength, sequenceStart) = readLength(signature, at: 1)
        else { return nil }
        let sequenceEnd = sequenceStart + sequenceLength
        guard sequenceEnd <= signature.count,
            signature[sequenceEnd...].allSatisfy({ $0 == 0 }),
            let (r, afterR) = readInteger(signature, at: sequenceStart, end: sequenceEnd),
            let (s, afterS) = readInteger(signature, at: afterR, end: sequenceEnd),
            afterS == sequenceEnd
        else { return nil }
        return (r, s)
    }

    /// Splits a raw `r ‖ s` signature into its halves, or nil when it has no two equal, non-empty halves.
    static func splitRaw(_ signature: [UInt8]) -> (r: ArraySlice<UInt8>, s: ArraySlice<UInt8>)? {
        let half = signature.count / 2
        guard half > 0, signature.count == 2 * half, half <= maximumIntegerByteCount else { return nil }
        return (signature[..<half], signature[half...])
    }

    /// Encodes `r` and `s` (unsigned big-endian, leading zeros allowed) as minimal DER.
    static func der(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>) -> [UInt8] {
        let r = r.drop { $0 == 0 }
        let s = s.drop { $0 == 0 }
        let rContent = integerContentLength(r)
        let sContent = integerContentLength(s)
        let body = 1 + lengthFieldCount(rContent) + rContent + 1 + lengthFieldCount(sContent) + sContent
        var der: [UInt8] = []
        der.reserveCapacity(1 + lengthFieldCount(body) + body)
        der.append(0x30)
        appendLength(body, to: &der)
        appendInteger(r, contentLength: rContent, to: &der)
        appendInteger(s, contentLength: sContent, to: &der)
        return der
    }

    /// Turns a DER signature into `r ‖ s` with each integer left-padded with zeros to `width` bytes.
    static func raw(fromDER signature: [UInt8], width: Int) -> [UInt8]? {
        guard let (r, s) = parseDER(signature) else { return nil }
        let rMagnitude = r.drop { $0 == 0 }
        let sMagnitude = s.drop { $0 == 0 }
        guard rMagnitude.count <= width, sMagnitude.count <= width else { return nil }
        var raw = [UInt8](repeating: 0, count: 2 * width)
        raw.replaceSubrange((width - rMagnitude.count)..<width, with: rMagnitude)
        raw.replaceSubrange((2 * width - sMagnitude.count)..<(2 * width), with: sMagnitude)
        return raw
    }

    private static func readLength(_ bytes: [UInt8], at index: Int) -> (length: Int, contentStart: Int)? {
        guard index < bytes.count else { return nil }
        let first = Int(bytes[index])
        if first < 0x80 {
            return (first, index + 1)
        }
        // Long form with one or two length bytes covers every signature; 0x80 (indefinite) is not DER.
        let lengthBytes = first & 0x7F
        guard lengthBytes == 1 || lengthBytes == 2, index + lengthBytes < bytes.count else { return nil }
        var length = 0
        for offset in 1...lengthBytes {
            length = length << 8 | Int(bytes[index + offset])
        }
        return (length, index + 1 + lengthBytes)
    }

    private static func readInteger(
        _ bytes: [UInt8],
        at index: Int,
        end: Int
    ) -> (content: ArraySlice<UInt8>, next: Int)? {
        guard index < end, bytes[index] == 0x02,
            let (length, contentStart) = readLength(bytes, at: index + 1),
            length > 0, length <= maximumIntegerByteCount + 1, contentStart + length <= end
        else { return nil }
        return (bytes[contentStart..<(contentStart + length)], contentStart + length)
    }

    /// The content length of a DER INTEGER for a magnitude without leading zeros: a zero needs one
    /// byte, and a set top bit needs a zero byte in front so the integer stays positive.
    private static func integerContentLength(_ magnitude: ArraySlice<UInt8>) -> Int {
        guard let first = magnitude.first else { return 1 }
        return magnitude.count + (first & 0x80 != 0 ? 1 : 0)
    }

    private static func lengthFieldCount(_ length: Int) -> Int {
        length < 0x80 ? 1 : (length <= 0xFF ? 2 : 3)
    }

    private static func appendLength(_ length: Int, to der: inout [UInt8]) {
        if length < 0x80 {
            der.append(UInt8(length))
        } else if length <= 0xFF {
            der.append(0x81)
            der.append(UInt8(length))
        } else {
            der.append(0x82)
            der.append(UInt8(length >> 8))
            der.append(UInt8(length & 0xFF))
        }
    }

    private static func appendInteger(_ magnitude: ArraySlice<UInt8>, contentLength: Int, to der: inout [UInt8]) {
        der.append(0x02)
        appendLength(contentLength, to: &der)
        if contentLength > magnitude.count {
            der.append(0)
        }
        der.append(contentsOf: magnitude)
    }
}

/// The size of the integers of a DSA or ECDSA signature, for telling which keys can have made it.
public enum SignatureIntegerWidth {
    /// The byte count of the larger of `r` and `s`, leading zeros not counted, or `nil` when the bytes are not a
    /// signature of that encoding (DER: one `SEQUENCE` of two integers, zero padding after it; raw: two equal
    /// halves).
    ///
    /// A key whose subgroup order (DSA `q`, the curve order for ECDSA) takes `n` bytes makes integers below it, so
    /// a signature with wider integers was made with another key; and one whose integers are both several bytes
    /// shorter than `n` was almost surely made with a smaller key (each missing byte has odds of 1 in 256).
    public static func of(_ signature: [UInt8], encoding: SignatureEncoding) -> Int? {
        let parts: (r: ArraySlice<UInt8>, s: ArraySlice<UInt8>)?
        switch encoding {
        case .der: parts = SignatureIntegers.parseDER(signature)
        case .raw: parts = SignatureIntegers.splitRaw(signature)
        }
        guard let (r, s) = parts else { return nil }
        return max(r.drop { $0 == 0 }.count, s.drop { $0 == 0 }.count)
    }
}
