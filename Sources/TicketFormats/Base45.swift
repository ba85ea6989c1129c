/// Base45 (RFC 9285): bytes written in the 45 characters of QR's alphanumeric mode.
public enum Base45 {
    static let alphabet: [UInt8] = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)

    /// Character value for each ASCII byte, 0xFF where the byte is not in the alphabet.
    static let values: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, char) in alphabet.enumerated() { table[Int(char)] = UInt8(value) }
        return table
    }()

    /// The Base45 text of `bytes`, as ASCII bytes.
    public static func encode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count / 2 * 3 + 2)
        var iterator = bytes.makeIterator()
        while let first = iterator.next() {
            if let second = iterator.next() {
                var n = Int(first) * 256 + Int(second)
                for _ in 0..<3 {
                    out.append(alphabet[n % 45])
                    n /= 45
                }
            } else {
                var n = Int(first)
                for _ in 0..<2 {
                    out.append(alphabet[n % 45])
                    n /= 45
                }
            }
        }
        return out
    }

    /// Decodes Base45 text; every failure names the offset of the offending character.
    public static func decode(_ text: some Collection<UInt8>) throws(FormatError) -> [UInt8] {
        let decoded =
            text.withContiguousStorageIfAvailable { decode(buffer: $0) }
            ?? ContiguousArray(text).withUnsafeBufferPointer { decode(buffer: $0) }
        return try decoded.get()
    }

    /// One pass over contiguous bytes into an array of the exact size: this runs for every scanned QR ticket.
    private static func decode(buffer: UnsafeBufferPointer<UInt8>) -> Result<[UInt8], FormatError> {
        let count = buffer.count
        var failure: FormatError?
        let output = values.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: count / 3 * 2 + 1) { out, initialized in
                var index = 0
                var written = 0
                // Whole triples first, without per-character branching beyond the alphabet check.
                while index + 3 <= count {
                    let a = table[Int(buffer[index])]
                    let b = table[Int(buffer[index + 1])]
                    let c = table[Int(buffer[index + 2])]
                    guard a != 0xFF, b != 0xFF, c != 0xFF else {
                        let bad = a == 0xFF ? index : b == 0xFF ? index + 1 : index + 2
                        failure = Self.invalidCharacter(buffer[bad], at: bad)
                        initialized = written
                        return
                    }
                    let n = Int(a) + Int(b) * 45 + Int(c) * 2025
                    guard n <= 0xFFFF else {
                        failure = .malformed(
                            "base45 triple at offset \(index) encodes \(n), more than two bytes hold")
                        initialized = written
                        return
                    }
                    out[written] = UInt8(truncatingIfNeeded: n >> 8)
                    out[written + 1] = UInt8(truncatingIfNeeded: n)
                    written += 2
                    index += 3
                }
                switch count - index {
                case 0: break
                case 1:
                    failure = .malformed(
                        "base45 text has a dangling character at offset \(index) (length \(count) is 1 more than a multiple of 3)"
                    )
                default:
                    let a = table[Int(buffer[index])]
                    let b = table[Int(buffer[index + 1])]
                    if a == 0xFF || b == 0xFF {
                        let bad = a == 0xFF ? index : index + 1
                        failure = Self.invalidCharacter(buffer[bad], at: bad)
                    } else if Int(a) + Int(b) * 45 > 0xFF {
                        failure = .malformed(
                            "base45 pair at offset \(index) encodes \(Int(a) + Int(b) * 45), more than one byte holds")
                    } else {
                        out[written] = a &+ b &* 45
                        written += 1
                    }
                }
                initialized = written
            }
        }
        if let failure { return .failure(failure) }
        return .success(output)
    }

    private static func invalidCharacter(_ byte: UInt8, at offset: Int) -> FormatError {
        .malformed("base45 text has an invalid character 0x\(String(byte, radix: 16)) at offset \(offset)")
    }
}
