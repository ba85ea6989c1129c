import FareCore

/// How HID POS scanners name symbologies besides the AIM identifier (``AIMIdentifier``): vendor code ids.
public enum HIDPOSSymbology {
    /// The symbology of a one-byte symbology id read as an AIM code letter (`Q` QR, `z` Aztec, `d` Data Matrix,
    /// `L` PDF417), as Newland's HID POS reports carry it.
    public static func fromAIMCode(_ code: UInt8) -> Symbology? {
        guard let identifier = AIMIdentifier(prefixOf: [UInt8(ascii: "]"), code, UInt8(ascii: "0")]) else { return nil }
        return identifier.symbology == .other ? nil : identifier.symbology
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
