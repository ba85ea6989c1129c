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
        let range = range ?? bytes.startIndex..<bytes.endIndex
        guard range.lowerBound >= bytes.startIndex, range.upperBound <= bytes.endIndex else {
            throw .malformed("\(context) lies outside its buffer (bytes \(range.lowerBound)..<\(range.upperBound))")
        }
        var elements: [BERTLV] = []
        var position = range.lowerBound
        while position < range.upperBound {
            let element = try element(in: bytes, at: position, end: range.upperBound, context: context)
            elements.append(element)
            position = element.end
        }
        return elements
    }

    /// Reads one element starting at `offset`, which must end by `end`.
    static func element(in bytes: [UInt8], at offset: Int, end: Int, context: String) throws(FormatError) -> BERTLV {
        var position = offset
        guard position < end else {
            throw .malformed("\(context) ends at byte \(offset) where a tag was expected")
        }
        var tag = [bytes[position]]
        position += 1
        if tag[0] & 0x1F == 0x1F {
            // Further tag bytes follow while bit 8 of the previous one is set.
            while true {
                guard position < end else {
                    throw .malformed("\(context) ends inside the multi-byte tag at byte \(offset)")
                }
                let next = bytes[position]
                tag.append(next)
                position += 1
                if next & 0x80 == 0 { break }
                guard tag.count < maximumTagLength else {
                    throw .malformed("the tag at byte \(offset) of \(context) is longer than \(maximumTagLength) bytes")
                }
            }
        }
        guard position < end else {
            throw .malformed(
                "\(context) ends after the tag \(tag.hexString.uppercased()) at byte \(offset), before its length")
        }
        let lengthOffset = position
        let first = bytes[position]
        position += 1
        let length: Int
        switch first {
        case 0x00...0x7F:
            length = Int(first)
        case 0x81, 0x82:
            let count = Int(first & 0x7F)
            guard end - position >= count else {
                throw .malformed("\(context) ends inside the length at byte \(lengthOffset)")
            }
            length = bytes[position..<position + count].reduce(0) { $0 << 8 | Int($1) }
            position += count
        case 0x80:
            throw .malformed(
                "the element \(tag.hexString.uppercased()) at byte \(offset) of \(context) has an indefinite length, which VDV does not use"
            )
        default:
            throw .malformed(
                "the length byte \(String(first, radix: 16, uppercase: true)) at byte \(lengthOffset) of \(context) is not a short, 81 or 82 form"
            )
        }
        guard length <= end - position else {
            throw .malformed(
                "the element \(tag.hexString.uppercased()) at byte \(offset) of \(context) claims \(length) bytes but only \(end - position) follow"
            )
        }
        return BERTLV(
            tag: tag, value: Array(bytes[position..<position + length]), offset: offset, valueOffset: position)
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
