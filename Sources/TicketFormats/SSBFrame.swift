import FareCore

/// ERA SSB, the Small Structured Barcode of TAP TSI B.12: a fixed-size, bit-packed rail ticket with a DSA signature.
///
/// `SSBFrame` recognises a frame and splits off its signature, `SSBTicket` decodes the fields of every version
/// and ticket type, and `ticket(from:signatureForm:inspectedAt:)` maps a decoded ticket onto a `Ticket`.
///
/// Detection rule (`isFrame`): a binary payload of exactly 114 bytes whose high nibble (the version) is 3 or 2,
/// or of exactly 107 bytes whose high nibble is 1. A payload that is all printable ASCII is never taken for SSB
/// (the signature alone makes that all but impossible for a real frame), so text payloads and their
/// `XYZ:` prefixes keep their own handling. `PayloadDetector` asks only after the `#UT` (UIC 918.3) magic and the
/// accepted FC1 text prefixes; a plain COSE_Sign1 (0xD2, 0x84) or zlib (0x78) payload has another high nibble, so
/// FC1 payloads are never taken for SSB.
///
/// Eurostar (per kitinerary) puts the 114 bytes into the barcode as base64 text: `base64Frame` accepts text of
/// standard base64 (padding optional, a trailing line break allowed) that decodes to a binary frame of version 2
/// or 3. Such text starts with `I`–`P` and has no `:`, so it meets neither the FC1 prefixes nor the text-prefix rule.
public enum ERASSB {
    /// The size of a version 2 or 3 frame.
    public static let frameByteCount = 114
    /// The size of a version 1 frame (per kitinerary and zuegli).
    public static let version1ByteCount = 107
    /// The signed part of a version 2 or 3 frame: bytes 0–57 (464 bits).
    public static let signedByteCount = 58
    /// The signature part: bytes 58–113.
    public static let signatureByteCount = 56

    /// Whether `payload` is laid out like an SSB frame (see the detection rule above); it may still be malformed.
    public static func isFrame(_ payload: [UInt8]) -> Bool {
        guard let first = payload.first else { return false }
        let version = first >> 4
        switch payload.count {
        case frameByteCount: guard version == 3 || version == 2 else { return false }
        case version1ByteCount: guard version == 1 else { return false }
        default: return false
        }
        return !payload.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
    }

    /// The frame inside base64 text (Eurostar's transport), or `nil` when `payload` is not base64 of a version 2
    /// or 3 frame.
    public static func base64Frame(_ payload: [UInt8]) -> [UInt8]? {
        var text = payload[...]
        while let last = text.last, last == 0x0A || last == 0x0D { text = text.dropLast() }
        while text.last == UInt8(ascii: "=") { text = text.dropLast() }
        // 114 bytes are 152 characters (without padding); anything else cannot be a frame.
        guard text.count == 152 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(frameByteCount)
        var group = 0
        var bits = 0
        for character in text {
            guard let value = base64Value(character) else { return nil }
            group = (group << 6 | value) & 0xFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8(truncatingIfNeeded: group >> bits))
            }
        }
        guard bytes.count == frameByteCount, let first = bytes.first, first >> 4 == 3 || first >> 4 == 2,
            isFrame(bytes)
        else { return nil }
        return bytes
    }

    private static func base64Value(_ character: UInt8) -> Int? {
        switch character {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): Int(character) - 0x41
        case UInt8(ascii: "a")...UInt8(ascii: "z"): Int(character) - 0x61 + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(character) - 0x30 + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }
}

/// How the 56 signature bytes of a frame hold `r` and `s`.
public enum SSBSignatureForm: Sendable, Hashable, CustomStringConvertible {
    /// `r ‖ s`, 28 bytes each (DSA 2048/224, the standard form).
    case raw28
    /// `r ‖ s`, 20 bytes each, then 16 zero bytes (DSA 1024/160).
    case raw20
    /// A DER `SEQUENCE { r INTEGER, s INTEGER }` followed by zero padding (seen from DB 1080 and NS 1184).
    case der

    /// How the inspector sees it, e.g. `raw r‖s (28 + 28 bytes)`.
    public var description: String {
        switch self {
        case .raw28: "raw r‖s (28 + 28 bytes)"
        case .raw20: "raw r‖s (20 + 20 bytes, zero padded)"
        case .der: "DER, zero padded"
        }
    }
}

/// An SSB frame taken apart: header, signed bytes and signature; the fields are decoded by `SSBTicket`.
public struct SSBFrame: Sendable, Hashable {
    /// The version, the high nibble of byte 0 (1, 2 or 3).
    public var version: Int
    /// The issuer's RICS code (bits 4–17).
    public var issuerCode: Int
    /// The key id (bits 18–21); `nil` in version 1, which has none.
    public var keyID: Int?
    /// The whole payload as received.
    public var bytes: [UInt8]
    /// The signed bytes exactly as received (bytes 0–57); never rebuilt from decoded fields.
    public var signedData: [UInt8]
    /// The signature as `r ‖ s` (for `.raw28`, `.raw20`) or the DER sequence without its padding (for `.der`);
    /// `nil` in version 1, whose signature no source places.
    public var signature: [UInt8]?
    /// How the signature was laid out; `nil` with `signature`.
    public var signatureForm: SSBSignatureForm?

    /// Takes a frame apart.
    ///
    /// Version 2 frames of 114 bytes are split like version 3 (bytes 0–57 signed, 58–113 signature), as zuegli's
    /// envelope does; their fields (which end at bit 411) are read with the version 2 layout by `SSBTicket`.
    /// The signature bytes are read as DER when they hold one exactly (lengths consistent, only zeros after it);
    /// else as 20 + 20 bytes when bytes 40–55 of the signature are all zero; else as 28 + 28 bytes.
    ///
    /// - Throws: `malformed` when the size does not fit the version (114 bytes for versions 2 and 3, 107 for
    ///   version 1), naming the size; `unsupported` for versions other than 1, 2 and 3.
    public init(parsing payload: [UInt8]) throws(FormatError) {
        guard let first = payload.first else { throw .malformed("the SSB payload is empty") }
        let version = Int(first >> 4)
        let reader = SSBBitReader(payload)
        switch version {
        case 2, 3:
            guard payload.count == ERASSB.frameByteCount else {
                throw .malformed(
                    "an SSB version \(version) frame has \(ERASSB.frameByteCount) bytes, this one \(payload.count)")
            }
            keyID = try reader.value("key id", at: 18, width: 4)
            signedData = Array(payload[..<ERASSB.signedByteCount])
            let field = Array(payload[ERASSB.signedByteCount...])
            (signature, signatureForm) = Self.split(field)
        case 1:
            guard payload.count == ERASSB.version1ByteCount else {
                throw .malformed(
                    "an SSB version 1 frame has \(ERASSB.version1ByteCount) bytes, this one \(payload.count)")
            }
            keyID = nil
            signedData = payload
            signature = nil
            signatureForm = nil
        default:
            throw .unsupported("SSB version \(version) (the high nibble of byte 0) is not one farecheck knows (1–3)")
        }
        self.version = version
        self.bytes = payload
        issuerCode = try reader.value("issuer code", at: 4, width: 14)
    }

    private static func split(_ field: [UInt8]) -> ([UInt8], SSBSignatureForm) {
        if let length = derLength(field) {
            return (Array(field[..<length]), .der)
        }
        if field[40...].allSatisfy({ $0 == 0 }) {
            return (Array(field[..<40]), .raw20)
        }
        return (field, .raw28)
    }

    /// The length of a DER `SEQUENCE { INTEGER, INTEGER }` at the start of `field` that is followed only by zeros.
    ///
    /// Raw `r` bytes that happen to start `30 xx 02` pass only if every length agrees and the rest is zero.
    private static func derLength(_ field: [UInt8]) -> Int? {
        guard field.count >= 8, field[0] == 0x30, field[1] < 0x80 else { return nil }
        let end = 2 + Int(field[1])
        guard end <= field.count else { return nil }
        var index = 2
        for _ in 0..<2 {
            guard index + 2 <= end, field[index] == 0x02, field[index + 1] < 0x80, field[index + 1] > 0 else {
                return nil
            }
            index += 2 + Int(field[index + 1])
        }
        guard index == end, field[end...].allSatisfy({ $0 == 0 }) else { return nil }
        return end
    }
}
