/// The text of a UK National Rail e-ticket's Aztec code (RSP6), taken apart: its clear header and the RSA block
/// that hides the ticket.
///
/// The text is ASCII: `06` (the version), the ticket reference (9 characters), 2 characters whose meaning is not
/// established, the issuer id (2 letters or digits, naming the key set), then letters `A`–`Z` only: a base-26
/// number (`A` = 0) whose last letter is the most significant digit. That number's bytes, in reverse order, are the
/// RSA input c (`rsaInput(byteCount:)`), which one of the issuer's public keys turns into a PKCS#1 v1.5 block
/// holding the ticket. Facts
/// from the public reverse engineering of the format (docs/uk-rsp6.md).
public struct RSP6Barcode: Sendable, Hashable {
    /// The version characters, `06`.
    public let version: String
    /// The ticket reference as the text carries it (characters 2–10), e.g. `DNQL4XHVK`.
    public let reference: String
    /// Characters 11–12, as the text carries them: their meaning is not established, and real issuers write `00`,
    /// a space and a digit (` 0`), or other printable characters there.
    public let unknownCharacters: String
    /// How many base-26 letters follow the header: a block of a key of b bits takes at most
    /// `RSP6Barcode.letters(bits:)`, a few fewer when its number happens to be small.
    public let letterCount: Int
    /// The issuer id (characters 13–14), e.g. `TT`: it names the keys to try.
    public let issuerID: String
    /// The base-26 number's bytes, least significant first: the RSA input c's bytes from its first (c read
    /// big-endian), without the zero bytes at its end, which the number (having no leading zero bytes) cannot
    /// carry. `rsaInput(byteCount:)` gives them back.
    public let block: [UInt8]

    /// The characters before the base-26 number.
    public static let headerLength = 15
    /// The version farecheck reads.
    public static let supportedVersion = "06"
    /// At most this many base-26 letters are read: enough for a 4096-bit block (4096 / log2 26 ≈ 872), so that no
    /// input makes the conversion (quadratic in the length) slow.
    public static let maximumLetters = 900

    /// The reference as tickets print it: the issuer id, then the reference (`TTDNQL4XHVK`). Revocations and
    /// replay know a ticket by it.
    public var ticketReference: String { issuerID + reference }

    /// Whether `payload` is to be read as an RSP6 text: two digits (the version), then printable ASCII only (a
    /// line end at the end aside; spaces in the header only, where real issuers write one in characters 11–12), at
    /// least one character after the header. Loose on purpose: such a text is no other format's, and one that
    /// breaks the format (a lowercase letter, a wrong version, a body cut short or run on) is then refused by
    /// `init(parsing:)` or the verifier with what is wrong, rather than called a format farecheck does not know.
    /// Cheap: the detector asks it of every payload that no other format claims.
    public static func isCandidate(_ payload: [UInt8]) -> Bool {
        let text = withoutLineEnd(payload[...])
        guard text.count > headerLength, isDigit(text[text.startIndex]), isDigit(text[text.startIndex + 1]) else {
            return false
        }
        // Spaces in the header: real issuers write one in the reserved characters, and one elsewhere is a broken
        // header that `init(parsing:)` names; the body has none.
        return text.withUnsafeBufferPointer { bytes in
            let body = bytes.startIndex + headerLength
            return all(of: UnsafeBufferPointer(rebasing: bytes[..<body]), in: 0x20, 0x7E)
                && all(of: UnsafeBufferPointer(rebasing: bytes[body...]), in: 0x21, 0x7E)
        }
    }

    /// Characters 11–12: reserved, any printable ASCII character or a space.
    static let reservedRange = 11..<13

    /// Whether the header character at `index` (0 to 14) may be `byte`: printable ASCII, and a space in the
    /// reserved characters.
    private static func isHeaderByte(_ byte: UInt8, at index: Int) -> Bool {
        (0x21...0x7E).contains(byte) || (byte == 0x20 && reservedRange.contains(index))
    }

    /// The most base-26 letters a block of a `bits`-bit key takes: those of 2^bits − 1 (218 for 1024 bits).
    public static func letters(bits: Int) -> Int {
        // The least L with 26^L ≥ 2^bits: bits / log2(26), rounded up (log2(26) is irrational: never a tie).
        Int((Double(bits) / 4.700_439_718_141_092).rounded(.up))
    }

    /// Whether every byte of `bytes` is from `lowest` to `highest`. Every byte is looked at, without an early exit:
    /// the loop is then one the compiler turns into vector instructions, which read a few hundred bytes (an RSP6
    /// text) in a few dozen cycles. Only a rejected payload, rare, needs to know where the first wrong byte is.
    private static func all(of bytes: UnsafeBufferPointer<UInt8>, in lowest: UInt8, _ highest: UInt8) -> Bool {
        let span = highest &- lowest
        var outside: UInt8 = 0
        for byte in bytes { outside |= byte &- lowest > span ? 1 : 0 }
        return outside == 0
    }

    /// Whether `payload` is a well-formed RSP6 text of the version farecheck reads: `06`, 13 printable ASCII
    /// characters, then only letters `A`–`Z` (at least 40 of them).
    public static func isBarcode(_ payload: [UInt8]) -> Bool {
        let text = withoutLineEnd(payload[...])
        guard text.count >= headerLength + 40, text.starts(with: Array(supportedVersion.utf8)) else { return false }
        let header = text.prefix(headerLength)
        guard header.enumerated().allSatisfy({ isHeaderByte($0.element, at: $0.offset) }) else { return false }
        return text.dropFirst(headerLength).allSatisfy { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) }
    }

    /// `text` without the CR and LF a scanner may end a line with.
    private static func withoutLineEnd(_ text: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var text = text
        while let last = text.last, last == 0x0A || last == 0x0D { text = text.dropLast() }
        return text
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }

    /// Takes the text apart.
    ///
    /// - Throws: `unsupported` for another version; `malformed`, naming the character, for a header that is not
    ///   printable ASCII, a character after the header that is not a letter `A`–`Z`, a text too short to hold a
    ///   block or longer than `maximumLetters` allows.
    public init(parsing bytes: [UInt8]) throws(FormatError) {
        // Indices from 0: `bytes` is an array, and the slice keeps its indices.
        let payload = Self.withoutLineEnd(bytes[...])
        guard payload.count > Self.headerLength else {
            throw .malformed(
                "an RSP6 text has \(Self.headerLength) characters of header and then the ticket; this one has "
                    + "\(payload.count) characters")
        }
        for (index, byte) in payload[..<Self.headerLength].enumerated() where !Self.isHeaderByte(byte, at: index) {
            throw .malformed("character \(index) of the RSP6 header is byte \(byte), not a printable character")
        }
        // The version is compared as bytes: its text is only made for the error.
        guard payload[0] == UInt8(ascii: "0"), payload[1] == UInt8(ascii: "6") else {
            let version = String(decoding: payload[0..<2], as: UTF8.self)
            throw .unsupported("the RSP6 version at character 0 is \"\(version)\"; farecheck reads version 06")
        }
        let letters = payload[Self.headerLength...]
        guard letters.count <= Self.maximumLetters else {
            throw .malformed(
                "the RSP6 ticket has \(letters.count) letters; a block of a 4096-bit key takes at most "
                    + "\(Self.maximumLetters)")
        }
        // Read through a buffer: a check per letter without the slice's bounds checks, on every scan, and where
        // the first non-letter is only looked for when there is one.
        let firstNonLetter = letters.withUnsafeBufferPointer { digits in
            Self.all(of: digits, in: UInt8(ascii: "A"), UInt8(ascii: "Z"))
                ? nil : digits.firstIndex { $0 &- UInt8(ascii: "A") > 25 }
        }
        if let offset = firstNonLetter {
            let index = letters.startIndex + offset
            throw .malformed(
                "character \(index) of the RSP6 text is \(Self.describe(letters[index])), not a letter A–Z")
        }
        self.version = Self.supportedVersion
        reference = String(decoding: payload[2..<11], as: UTF8.self)
        unknownCharacters = String(decoding: payload[11..<13], as: UTF8.self)
        issuerID = String(decoding: payload[13..<15], as: UTF8.self)
        letterCount = letters.count
        block = Self.blockBytes(letters)
    }

    /// The RSA input of `letters` (each `A`–`Z`): the base-26 number (last letter most significant), its bytes
    /// reversed.
    static func blockBytes(_ letters: ArraySlice<UInt8>) -> [UInt8] {
        // The number in 64-bit limbs, least significant first, built from the most significant letter: thirteen
        // letters at a time (26^13 < 2^64), each step one multiply-add over the limbs with 128-bit products. After
        // k steps the number is below 26^(13k) < 2^(64k): k limbs at most. The limbs are written little-endian
        // straight into the array returned, whose bytes they then are (the number's little-endian bytes, which is
        // what `block` holds): no second buffer, no copy.
        let limbCapacity = (letters.count + 12) / 13
        return letters.withUnsafeBufferPointer { digits in
            Self.powersOf26.withUnsafeBufferPointer { powers in
                [UInt8](unsafeUninitializedCapacity: limbCapacity * 8) { bytes, initialized in
                    guard let limbs = UnsafeMutableRawPointer(bytes.baseAddress) else {
                        initialized = 0
                        return
                    }
                    var used = 0
                    var end = digits.count
                    while end > 0 {
                        let start = max(0, end - 13)
                        let multiplier = powers[end - start]
                        var carry: UInt64 = 0
                        // The letters of this step, each times its power of 26 (the last the highest): products
                        // that do not wait on each other, where a running `carry * 26 + letter` would make one
                        // long chain.
                        var position = start
                        while position < end {
                            carry &+= UInt64(digits[position] &- UInt8(ascii: "A")) &* powers[position - start]
                            position += 1
                        }
                        var limb = 0
                        while limb < used {
                            let value = UInt64(
                                littleEndian: limbs.loadUnaligned(fromByteOffset: limb &* 8, as: UInt64.self))
                            let (high, low) = value.multipliedFullWidth(by: multiplier)
                            let (sum, overflow) = low.addingReportingOverflow(carry)
                            limbs.storeBytes(of: sum.littleEndian, toByteOffset: limb &* 8, as: UInt64.self)
                            carry = high &+ (overflow ? 1 : 0)
                            limb += 1
                        }
                        if carry > 0 {
                            limbs.storeBytes(of: carry.littleEndian, toByteOffset: used &* 8, as: UInt64.self)
                            used += 1
                        }
                        end = start
                    }
                    // Without the number's leading (most significant) zero bytes: c, read big-endian, starts with
                    // the number as it stands (leading zero bytes of c included: they are the number's low zero
                    // bytes).
                    guard used > 0 else {
                        initialized = 0
                        return
                    }
                    let top = UInt64(
                        littleEndian: limbs.loadUnaligned(fromByteOffset: (used - 1) &* 8, as: UInt64.self))
                    initialized = (used - 1) * 8 + (64 - top.leadingZeroBitCount + 7) / 8
                }
            }
        }
    }

    /// 26^0 to 26^13 (26^13 < 2^64).
    private static let powersOf26: [UInt64] = (0...13).map { power in
        (0..<power).reduce(1) { product, _ in product * 26 }
    }

    /// The RSA input c for a key whose modulus has `byteCount` bytes: `block`, then zero bytes up to that length
    /// (the zero bytes that ended c are the number's most significant bytes, which it does not write); `nil`
    /// when the number has more bytes than that, so cannot be an input of that key.
    public func rsaInput(byteCount: Int) -> [UInt8]? {
        guard block.count <= byteCount else { return nil }
        return [UInt8](unsafeUninitializedCapacity: byteCount) { bytes, initialized in
            _ = bytes.initialize(fromContentsOf: block)
            bytes[block.count...].initialize(repeating: 0)
            initialized = byteCount
        }
    }

    /// The base-26 letters that carry the RSA input `c` (big-endian, any length): the inverse of `blockBytes` and
    /// `rsaInput(byteCount:)`, for building test tickets and fuzz seeds.
    public static func letters(forBlock c: [UInt8]) -> [UInt8] {
        // The number whose little-endian bytes are c as written: its most significant byte is c's last non-zero.
        var number = Array(c.reversed().drop { $0 == 0 })
        var digits: [UInt8] = []
        while !number.isEmpty {
            // Divide the big-endian number by 26; the remainder is the next (least significant) digit.
            var remainder = 0
            var quotient: [UInt8] = []
            quotient.reserveCapacity(number.count)
            for byte in number {
                let value = remainder << 8 | Int(byte)
                let digit = value / 26
                remainder = value % 26
                if !quotient.isEmpty || digit != 0 { quotient.append(UInt8(digit)) }
            }
            digits.append(UInt8(ascii: "A") + UInt8(remainder))
            number = quotient
        }
        // Least significant digit first: the last letter is the most significant.
        return digits
    }

    /// A byte for a message: the character when printable, else its number.
    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "\"\(Character(Unicode.Scalar(byte)))\"" : "byte \(byte)"
    }
}

/// PKCS#1 v1.5 padding as RSP6 issuers write it around the ticket.
public enum RSP6Padding: Sendable, Hashable, CustomStringConvertible {
    /// Block type 1: `00 01 FF…FF 00` (the signature form), what genuine tickets carry.
    case type1
    /// Block type 2: `00 02 <non-zero bytes> 00` (the encryption form), also seen on genuine tickets.
    case type2

    /// `type 1` or `type 2`.
    public var description: String {
        switch self {
        case .type1: "type 1"
        case .type2: "type 2"
        }
    }

    /// The ticket inside a recovered block m (the modulus's length, big-endian), and the padding it had; `nil`
    /// when m is not a well-formed PKCS#1 v1.5 block of type 1 or 2 with at least 8 padding bytes: the key did not
    /// make this block.
    public static func unpad(_ block: [UInt8]) -> (payload: ArraySlice<UInt8>, padding: RSP6Padding)? {
        guard block.count >= 11, block[0] == 0 else { return nil }
        let padding: RSP6Padding
        switch block[1] {
        case 1: padding = .type1
        case 2: padding = .type2
        default: return nil
        }
        var index = 2
        while index < block.count, block[index] != 0 {
            // Type 1 pads with FF only; type 2 with any byte but zero.
            if padding == .type1, block[index] != 0xFF { return nil }
            index += 1
        }
        // At least 8 bytes of padding, then the zero separator.
        guard index < block.count, index - 2 >= 8 else { return nil }
        return (block[(index + 1)...], padding)
    }
}
