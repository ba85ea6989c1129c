/// The DER signatures of UIC 918.3 signature fields: recognising one, and converting between forms.
///
/// Only the structure is checked (`SEQUENCE` of two `INTEGER`s that fill it exactly, zero padding
/// after it); whether the integers make a valid signature is for the signature check to say.
enum UICSignatureField {
    /// The length of the DER `SEQUENCE { r INTEGER, s INTEGER }` at the start of `field`, whose remaining bytes
    /// must all be zero; nil when the field is not one (`whyNotDER` says why, when a reason is wanted: a raw
    /// `r ‖ s` field is not DER on every scan of a version 2 ticket, and that needs no sentence).
    static func derLength(_ field: ArraySlice<UInt8>) -> Int? {
        guard let (_, _, end) = parse(field) else { return nil }
        guard field[(field.startIndex + end)...].allSatisfy({ $0 == 0 }) else { return nil }
        return end
    }

    /// Why `derLength(field)` is nil, as a sentence tail such as "does not start with …".
    static func whyNotDER(_ field: ArraySlice<UInt8>) -> String {
        guard let (_, _, end) = parse(field) else { return explainFailure(field) }
        guard let nonZero = field[(field.startIndex + end)...].firstIndex(where: { $0 != 0 }) else {
            return "holds a DER signature"
        }
        // Slices keep the indices of the container, so `nonZero` is already the offset in the barcode.
        return "has 0x\(String(field[nonZero], radix: 16)) at byte \(nonZero), after its \(end)-byte DER "
            + "signature, where only zero padding may follow"
    }

    /// `r`, `s` and the end of the sequence, relative to the start of `bytes`; `nil` when it is not one.
    static func parse(_ bytes: ArraySlice<UInt8>) -> (r: ArraySlice<UInt8>, s: ArraySlice<UInt8>, end: Int)? {
        let start = bytes.startIndex
        guard bytes.count >= 8, bytes[start] == 0x30, let (length, contentStart) = readLength(bytes, at: start + 1)
        else { return nil }
        let end = contentStart + length
        guard end <= bytes.endIndex,
            let (r, afterR) = readInteger(bytes, at: contentStart, end: end),
            let (s, afterS) = readInteger(bytes, at: afterR, end: end),
            afterS == end
        else { return nil }
        return (r, s, end - start)
    }

    /// `r ‖ s` with each integer left-padded to `width` bytes, from a DER signature; `nil` when the
    /// bytes are not DER or an integer does not fit.
    static func raw(fromDER signature: [UInt8], width: Int) -> [UInt8]? {
        guard let (r, s, end) = parse(signature[...]), end == signature.count else { return nil }
        let rMagnitude = r.drop { $0 == 0 }
        let sMagnitude = s.drop { $0 == 0 }
        guard rMagnitude.count <= width, sMagnitude.count <= width else { return nil }
        var raw = [UInt8](repeating: 0, count: 2 * width)
        raw.replaceSubrange((width - rMagnitude.count)..<width, with: rMagnitude)
        raw.replaceSubrange((2 * width - sMagnitude.count)..<(2 * width), with: sMagnitude)
        return raw
    }

    /// A short explanation of the first way in which `field` is not a DER signature.
    private static func explainFailure(_ field: ArraySlice<UInt8>) -> String {
        let start = field.startIndex
        guard let first = field.first else { return "is empty" }
        guard first == 0x30 else {
            return "does not hold a DER signature: it starts with 0x\(String(first, radix: 16)), not 0x30 (SEQUENCE)"
        }
        guard let (length, contentStart) = readLength(field, at: start + 1) else {
            return "does not hold a DER signature: its SEQUENCE length byte is not a DER length that fits"
        }
        guard contentStart + length <= field.endIndex else {
            return "does not hold a DER signature: its SEQUENCE states \(length) bytes, more than the field has left"
        }
        return "does not hold a DER signature: its SEQUENCE does not hold exactly two INTEGERs"
    }

    private static func readLength(_ bytes: ArraySlice<UInt8>, at index: Int) -> (length: Int, contentStart: Int)? {
        guard index < bytes.endIndex else { return nil }
        let first = Int(bytes[index])
        if first < 0x80 { return (first, index + 1) }
        // One length byte covers every signature that fits a 64-byte field; 0x80 (indefinite) is not DER.
        guard first == 0x81, index + 1 < bytes.endIndex else { return nil }
        return (Int(bytes[index + 1]), index + 2)
    }

    private static func readInteger(
        _ bytes: ArraySlice<UInt8>, at index: Int, end: Int
    ) -> (value: ArraySlice<UInt8>, next: Int)? {
        guard index < end, bytes[index] == 0x02, let (length, contentStart) = readLength(bytes, at: index + 1),
            length > 0, contentStart + length <= end
        else { return nil }
        return (bytes[contentStart..<(contentStart + length)], contentStart + length)
    }

    /// Minimal DER of `r` and `s` (unsigned big-endian, leading zeros allowed).
    static func der(r: ArraySlice<UInt8>, s: ArraySlice<UInt8>) -> [UInt8] {
        func integer(_ magnitude: ArraySlice<UInt8>) -> [UInt8] {
            var content = Array(magnitude.drop { $0 == 0 })
            // A set top bit would make the integer negative: DER prefixes a zero byte.
            if content.isEmpty || content[0] & 0x80 != 0 { content.insert(0, at: 0) }
            return [0x02] + length(content.count) + content
        }
        func length(_ count: Int) -> [UInt8] { count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)] }
        let body = integer(r) + integer(s)
        return [0x30] + length(body.count) + body
    }
}
