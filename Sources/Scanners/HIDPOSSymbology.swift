import FareCore

/// How HID POS scanners name symbologies: AIM identifiers (ISO/IEC 15424) and vendor code ids.
public enum HIDPOSSymbology {
    /// The symbology of an AIM identifier such as `]Q1` (QR), `]z0` (Aztec), `]zC` (Aztec Rune), `]d1`
    /// (Data Matrix) or `]L2` (PDF417); `nil` when the bytes are not an AIM identifier.
    public static func fromAIM(_ identifier: some Collection<UInt8>) -> Symbology? {
        let bytes = Array(identifier)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "]") else { return nil }
        let modifier = bytes.count >= 3 ? bytes[2] : 0
        return fromAIMCode(bytes[1], modifier: modifier)
    }

    /// The symbology of an AIM code character (the letter after `]`) and its modifier.
    public static func fromAIMCode(_ code: UInt8, modifier: UInt8 = 0) -> Symbology? {
        switch code {
        case UInt8(ascii: "Q"): return .qr
        // `]zC` is the Aztec Rune; `]z0`…`]zB` are Aztec codes with or without GS1, ECI and structured append.
        case UInt8(ascii: "z"): return modifier == UInt8(ascii: "C") ? .aztecRune : .aztec
        case UInt8(ascii: "d"): return .dataMatrix
        case UInt8(ascii: "L"): return .pdf417
        default: return nil
        }
    }

    /// The symbology of a Honeywell code id (`s` QR, `z` Aztec, `w` Data Matrix, `r` PDF417), which
    /// Honeywell's HID POS reports carry beside the AIM identifier.
    public static func fromHoneywellCodeID(_ code: UInt8) -> Symbology? {
        switch code {
        case UInt8(ascii: "s"): return .qr
        case UInt8(ascii: "z"): return .aztec
        case UInt8(ascii: "w"): return .dataMatrix
        case UInt8(ascii: "r"), UInt8(ascii: "R"): return .pdf417
        default: return nil
        }
    }
}
