import FareCore

/// An AIM symbology identifier (ISO/IEC 15424) that a scanner may send before the data: `]` + code + modifier.
///
/// `]Q1` QR (model 2), `]Q2` QR with ECI, `]Q3`…`]Q6` GS1/FNC1 variants; `]z0` Aztec (`]z1`, `]z2` FNC1
/// variants, +3 with ECI, `]zC` Aztec Rune); `]d1` Data Matrix (`]d4`…`]d6` with ECI); `]L2` PDF417 (`]L1`
/// with ECI).
public struct AIMIdentifier: Hashable, Sendable, CustomStringConvertible {
    /// The code character, e.g. `Q` (0x51).
    public let code: UInt8
    /// The modifier character, e.g. `1` (0x31).
    public let modifier: UInt8

    /// Reads an identifier from the first three bytes of `bytes`, or `nil` if they are not one.
    public init?(prefixOf bytes: some Collection<UInt8>) {
        var iterator = bytes.makeIterator()
        guard iterator.next() == UInt8(ascii: "]"),
            let code = iterator.next(), Self.isLetter(code),
            let modifier = iterator.next(), Self.isLetter(modifier) || Self.isDigit(modifier)
        else { return nil }
        self.code = code
        self.modifier = modifier
    }

    /// The symbology the identifier names, `.other` for symbologies farecheck does not verify.
    public var symbology: Symbology {
        switch code {
        case UInt8(ascii: "Q"): .qr  // Micro QR has no identifier of its own.
        case UInt8(ascii: "z"): modifier == UInt8(ascii: "C") ? .aztecRune : .aztec
        case UInt8(ascii: "d"): .dataMatrix
        case UInt8(ascii: "L"): .pdf417
        default: .other
        }
    }

    /// Whether the modifier says the data uses the ECI protocol: `\nnnnnn` escapes and doubled backslashes.
    public var announcesECI: Bool {
        switch code {
        case UInt8(ascii: "Q"): Array("246".utf8).contains(modifier)
        // Aztec: 3...5 are 0...2 with ECI; 9...B are the structured-append forms with ECI.
        case UInt8(ascii: "z"): Array("3459AB".utf8).contains(modifier)
        case UInt8(ascii: "d"): Array("456".utf8).contains(modifier)
        case UInt8(ascii: "L"): modifier == UInt8(ascii: "1")
        default: false
        }
    }

    /// The identifier as sent, e.g. `]Q1`.
    public var description: String { String(decoding: [UInt8(ascii: "]"), code, modifier], as: UTF8.self) }

    /// Undoes the ECI protocol's escaping: removes each `\nnnnnn` ECI designator and turns `\\` back into `\`.
    ///
    /// The designators are dropped, not applied: the bytes stay as the symbol encoded them (farecheck's
    /// payloads are binary or ASCII, never re-encoded). A backslash followed by anything else is kept.
    public static func removingECIEscapes(_ bytes: [UInt8]) -> [UInt8] {
        let backslash = UInt8(ascii: "\\")
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            guard byte == backslash else {
                output.append(byte)
                index += 1
                continue
            }
            if index + 1 < bytes.count, bytes[index + 1] == backslash {
                output.append(backslash)
                index += 2
            } else if index + 6 < bytes.count, bytes[(index + 1)...(index + 6)].allSatisfy(isDigit) {
                index += 7
            } else {
                output.append(byte)
                index += 1
            }
        }
        return output
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) }
}
