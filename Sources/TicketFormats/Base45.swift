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
        let chars = ContiguousArray(text)
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 3 * 2 + 1)
        // One pass over contiguous bytes: this runs for every scanned QR ticket.
        let failure: FormatError? = chars.withUnsafeBufferPointer { buffer -> FormatError? in
            let table = values
            var index = 0
            while index < buffer.count {
                let width = min(3, buffer.count - index)
                guard width >= 2 else {
                    return .malformed(
                        "base45 text has a dangling character at offset \(index) (length \(buffer.count) is 1 more than a multiple of 3)"
                    )
                }
                var n = 0
                var factor = 1
                for k in 0..<width {
                    let value = table[Int(buffer[index + k])]
                    guard value != 0xFF else {
                        return .malformed(
                            "base45 text has an invalid character 0x\(String(buffer[index + k], radix: 16)) at offset \(index + k)"
                        )
                    }
                    n += Int(value) * factor
                    factor *= 45
                }
                if width == 3 {
                    guard n <= 0xFFFF else {
                        return .malformed("base45 triple at offset \(index) encodes \(n), more than two bytes hold")
                    }
                    out.append(UInt8(n >> 8))
                    out.append(UInt8(n & 0xFF))
                } else {
                    guard n <= 0xFF else {
                        return .malformed("base45 pair at offset \(index) encodes \(n), more than one byte holds")
                    }
                    out.append(UInt8(n))
                }
                index += width
            }
            return nil
        }
        if let failure { throw failure }
        return out
    }
}
