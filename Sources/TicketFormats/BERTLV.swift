import FareCore

/// One BER-TLV element (ISO/IEC 8825-1 tag and length, as VDV-KA barcodes and CV certificates use them).
///
/// The element records where it was found, so that errors about its content can name the offset in
/// the whole payload, and so that its exact bytes can be taken again (e.g. as a cache key).
public struct BERTLV: Sendable, Hashable {
    /// The tag as its raw bytes (`[0x9E]`, `[0x7F, 0x21]`): VDV compares tags byte for byte.
    public var tag: [UInt8]
    /// The value bytes.
    public var value: [UInt8]
    /// Offset of the tag's first byte in the buffer that was read.
    public var offset: Int
    /// Offset of the first value byte in the buffer that was read.
    public var valueOffset: Int

    /// Offset just past the value.
    public var end: Int { valueOffset + value.count }

    /// The tag as hex, e.g. `7F21`, for messages.
    public var tagHex: String { tag.hexString.uppercased() }

    /// Makes an element (used when writing test barcodes).
    public init(tag: [UInt8], value: [UInt8], offset: Int = 0, valueOffset: Int = 0) {
        self.tag = tag
        self.value = value
        self.offset = offset
        self.valueOffset = valueOffset
    }

    /// The longest tag read: VDV uses one and two bytes, so three gives room and bounds the loop.
    static let maximumTagLength = 3

    /// Reads the elements that exactly fill `bytes[range]`, one after another.
    ///
    /// Strict: every length must fit in what is left of the range, lengths take the short form or
    /// `81 nn` / `82 nn nn` (longer forms are not used by VDV), and the indefinite form `80` is refused.
    ///
    /// - Parameters:
    ///   - bytes: The whole buffer; offsets in errors and in the elements count from its start.
    ///   - range: The part to read; the whole buffer when `nil`.
    ///   - context: What the bytes are (e.g. `the barcode`, `certificate 7F21`), for messages.
    /// - Throws: `FormatError.malformed` naming the offset of the first element that breaks the rules.
    public static func elements(
        in bytes: [UInt8], range: Range<Int>? = nil, context: String
    ) throws(FormatError) -> [BERTLV] {
        try BERTLVSpan.spans(in: bytes, range: range, context: context).map { BERTLV($0, in: bytes) }
    }

    /// Reads one element starting at `offset`, which must end by `end`.
    static func element(in bytes: [UInt8], at offset: Int, end: Int, context: String) throws(FormatError) -> BERTLV {
        BERTLV(try BERTLVSpan(in: bytes, at: offset, end: end, context: context), in: bytes)
    }

    /// The element a span found, with its tag and value copied out of `bytes`.
    init(_ span: BERTLVSpan, in bytes: [UInt8]) {
        self.init(
            tag: span.tagBytes, value: Array(bytes[span.valueRange]), offset: span.offset, valueOffset: span.valueOffset
        )
    }

    /// The element written out: tag, minimal length, value.
    public var encoded: [UInt8] {
        tag + Self.encodedLength(value.count) + value
    }

    /// A length in its minimal BER form (short, `81 nn`, `82 nn nn`); lengths above 65535 are not used by VDV.
    public static func encodedLength(_ length: Int) -> [UInt8] {
        switch length {
        case ..<0x80: [UInt8(length)]
        case ..<0x100: [0x81, UInt8(length)]
        default: [0x82, UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        }
    }
}

/// Where one BER-TLV element lies in a buffer: its tag packed into a number and its positions, nothing
/// copied. The verdict path reads barcodes and ticket data through spans, so that taking a barcode apart
/// allocates nothing; `BERTLV` is the same element with its bytes copied out, for everything else.
struct BERTLVSpan: Sendable, Hashable {
    /// The tag bytes, big-endian in one number: `9E` is `0x9E`, `7F21` is `0x7F21`.
    var tag: UInt32
    /// How many bytes the tag has (1–3).
    var tagLength: Int
    /// Offset of the tag's first byte.
    var offset: Int
    /// Offset of the first value byte.
    var valueOffset: Int
    /// Offset just past the value.
    var end: Int

    /// The value's positions.
    var valueRange: Range<Int> { valueOffset..<end }
    /// The value's length.
    var count: Int { end - valueOffset }
    /// The whole element's positions, tag included.
    var elementRange: Range<Int> { offset..<end }

    /// The tag as its bytes.
    var tagBytes: [UInt8] { Self.bytes(tag, tagLength) }

    /// The tag as hex, e.g. `7F21`, for messages.
    var tagHex: String { Self.hex(tag, tagLength) }

    /// A packed tag of `length` bytes as its bytes: what `packed` undoes.
    static func bytes(_ tag: UInt32, _ length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: tag >> (8 * UInt32(length - 1 - $0))) }
    }

    /// A packed tag of `length` bytes as hex.
    static func hex(_ tag: UInt32, _ length: Int) -> String {
        bytes(tag, length).hexString.uppercased()
    }

    /// A tag's bytes packed as `tag` packs them (at most 3 bytes; VDV's tags have one or two).
    static func packed(_ tag: [UInt8]) -> UInt32 {
        tag.reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// Throws unless the value has at least `minimum` bytes; `name` says what the element is, e.g. `the area (DC)`.
    func requireAtLeast(_ minimum: Int, _ name: String) throws(FormatError) {
        guard count >= minimum else {
            throw .malformed("\(name) at byte \(offset) has \(count) bytes; at least \(minimum) are needed")
        }
    }

    /// Whether every value byte is zero (VDV writes "not given" so).
    func valueIsZero(in bytes: [UInt8]) -> Bool {
        var index = valueOffset
        while index < end {
            if bytes[index] != 0 { return false }
            index += 1
        }
        return true
    }

    /// A span from its parts.
    init(tag: UInt32, tagLength: Int, offset: Int, valueOffset: Int, end: Int) {
        self.tag = tag
        self.tagLength = tagLength
        self.offset = offset
        self.valueOffset = valueOffset
        self.end = end
    }

    /// Reads one element starting at `offset`, which must end by `end`: the rules of `BERTLV.elements`.
    @inline(__always)
    init(in bytes: [UInt8], at offset: Int, end: Int, context: @autoclosure () -> String) throws(FormatError) {
        guard offset >= 0, end <= bytes.count else {
            throw .malformed("\(context()) lies outside its buffer (bytes \(offset)..<\(end))")
        }
        var position = offset
        guard position < end else {
            throw .malformed("\(context()) ends at byte \(offset) where a tag was expected")
        }
        var tag = UInt32(bytes[position])
        var tagLength = 1
        position += 1
        if tag & 0x1F == 0x1F {
            // Further tag bytes follow while bit 8 of the previous one is set.
            while true {
                guard position < end else {
                    throw .malformed("\(context()) ends inside the multi-byte tag at byte \(offset)")
                }
                let next = bytes[position]
                tag = tag << 8 | UInt32(next)
                tagLength += 1
                position += 1
                if next & 0x80 == 0 { break }
                guard tagLength < BERTLV.maximumTagLength else {
                    throw .malformed(
                        "the tag at byte \(offset) of \(context()) is longer than \(BERTLV.maximumTagLength) bytes")
                }
            }
        }
        self.tag = tag
        self.tagLength = tagLength
        self.offset = offset
        guard position < end else {
            throw .malformed(
                "\(context()) ends after the tag \(Self.hex(tag, tagLength)) at byte \(offset), before its length")
        }
        let lengthOffset = position
        let first = bytes[position]
        position += 1
        let length: Int
        switch first {
        case 0x00...0x7F:
            length = Int(first)
        case 0x81:
            guard end - position >= 1 else {
                throw .malformed("\(context()) ends inside the length at byte \(lengthOffset)")
            }
            length = Int(bytes[position])
            position += 1
        case 0x82:
            guard end - position >= 2 else {
                throw .malformed("\(context()) ends inside the length at byte \(lengthOffset)")
            }
            length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            position += 2
        case 0x80:
            throw .malformed(
                "the element \(Self.hex(tag, tagLength)) at byte \(offset) of \(context()) has an indefinite length, which VDV does not use"
            )
        default:
            throw .malformed(
                "the length byte \(String(first, radix: 16, uppercase: true)) at byte \(lengthOffset) of \(context()) is not a short, 81 or 82 form"
            )
        }
        guard length <= end - position else {
            throw .malformed(
                "the element \(Self.hex(tag, tagLength)) at byte \(offset) of \(context()) claims \(length) bytes but only \(end - position) follow"
            )
        }
        valueOffset = position
        self.end = position + length
    }

    /// The elements that exactly fill `bytes[range]` (the whole buffer when `nil`).
    static func spans(in bytes: [UInt8], range: Range<Int>? = nil, context: String) throws(FormatError) -> [BERTLVSpan]
    {
        let range = range ?? bytes.startIndex..<bytes.endIndex
        guard range.lowerBound >= bytes.startIndex, range.upperBound <= bytes.endIndex else {
            throw .malformed("\(context) lies outside its buffer (bytes \(range.lowerBound)..<\(range.upperBound))")
        }
        var spans: [BERTLVSpan] = []
        var position = range.lowerBound
        while position < range.upperBound {
            let span = try BERTLVSpan(in: bytes, at: position, end: range.upperBound, context: context)
            spans.append(span)
            position = span.end
        }
        return spans
    }
}
