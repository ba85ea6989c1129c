/// Which characters a keyboard-wedge scanner's key codes stand for.
///
/// A wedge scanner "types" its data as key codes, which name positions on a keyboard, not characters: the
/// scanner picks positions for the layout it is set to, and the host must read them with the same layout.
/// A scanner set to German that types "z" sends the key code of the US "y" position. Set the layout here to
/// the one configured on the scanner (US is most scanners' default).
public struct KeyboardLayout: Sendable, Hashable, CustomStringConvertible {
    /// The layout's short name, as given on the command line (`us`, `de`).
    public var name: String
    private var keys: [UInt16: Key]

    /// What one key position types.
    struct Key: Sendable, Hashable {
        var plain: Character
        var shifted: Character?
        var altGr: Character?
        /// Dead keys (German ^ and ´) type nothing until the next key; a space after them types them alone.
        var isDead = false

        /// Caps Lock shifts letters only (including ü, ö, ä), not digits or punctuation.
        var capsLockShifts: Bool {
            guard plain.isLetter, let shifted else { return false }
            return String(plain).uppercased() == String(shifted)
        }
    }

    /// A layout from its name and its keys.
    init(name: String, keys: [UInt16: Key]) {
        self.name = name
        self.keys = keys
    }

    /// The name.
    public var description: String { name }

    /// The layouts this module knows, by name.
    public static let all: [KeyboardLayout] = [.us, .german]

    /// A layout by name: `us`, or `de` / `german`; `nil` for others.
    public static func named(_ name: String) -> KeyboardLayout? {
        switch name.lowercased() {
        case "us", "en-us", "en_us": .us
        case "de", "german", "de-de", "de_de", "qwertz": .german
        default: nil
        }
    }

    /// The character a key press types with the given modifiers, or `nil` when the key types nothing
    /// in this layout (function keys, modifiers, keys the layout lacks).
    public func character(forKeyCode code: UInt16, modifiers: KeyboardModifiers) -> Character? {
        guard let key = keys[code] else { return nil }
        if modifiers.contains(.altGr) {
            return key.altGr
        }
        var shift = modifiers.contains(.shift)
        if modifiers.contains(.capsLock) && key.capsLockShifts {
            shift.toggle()
        }
        if modifiers.contains(.control), key.plain.isASCII, key.plain.isLetter, let ascii = key.plain.asciiValue {
            // Ctrl+letter types the control character (Ctrl+M is CR), as a terminal does.
            return Character(Unicode.Scalar(ascii & 0x1F))
        }
        return shift ? (key.shifted ?? key.plain) : key.plain
    }

    /// Whether the key is a dead key (it types its character only together with the next key).
    public func isDeadKey(_ code: UInt16, modifiers: KeyboardModifiers) -> Bool {
        guard let key = keys[code], key.isDead else { return false }
        return !modifiers.contains(.altGr)
    }

    /// The US layout (the default of most scanners).
    public static let us = KeyboardLayout(name: "us", keys: usKeys)

    /// The German layout (QWERTZ): y and z swapped, ß ü ö ä, other shifted digits (Shift+7 is /), AltGr for
    /// @ { [ ] } \ ~ | €, and dead ^ and ´.
    public static let german = KeyboardLayout(name: "de", keys: germanKeys)
}

/// The modifier state that decides which character a key types.
public struct KeyboardModifiers: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: UInt8
    /// Makes modifiers from raw bits.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Either Shift key is down.
    public static let shift = KeyboardModifiers(rawValue: 1 << 0)
    /// Caps Lock is on.
    public static let capsLock = KeyboardModifiers(rawValue: 1 << 1)
    /// AltGr (the right Alt key) is down.
    public static let altGr = KeyboardModifiers(rawValue: 1 << 2)
    /// Either Control key is down.
    public static let control = KeyboardModifiers(rawValue: 1 << 3)
}

/// Linux key codes (linux/input-event-codes.h) that framing and modifier tracking need by name.
public enum KeyCode {
    /// KEY_ENTER, the usual scan suffix.
    public static let enter: UInt16 = 28
    /// KEY_KPENTER.
    public static let keypadEnter: UInt16 = 96
    /// KEY_TAB, another common suffix.
    public static let tab: UInt16 = 15
    /// KEY_LEFTSHIFT.
    public static let leftShift: UInt16 = 42
    /// KEY_RIGHTSHIFT.
    public static let rightShift: UInt16 = 54
    /// KEY_CAPSLOCK.
    public static let capsLock: UInt16 = 58
    /// KEY_LEFTCTRL.
    public static let leftControl: UInt16 = 29
    /// KEY_RIGHTCTRL.
    public static let rightControl: UInt16 = 97
    /// KEY_LEFTALT.
    public static let leftAlt: UInt16 = 56
    /// KEY_RIGHTALT, AltGr on European layouts.
    public static let rightAlt: UInt16 = 100
    /// KEY_LEFTMETA.
    public static let leftMeta: UInt16 = 125
    /// KEY_RIGHTMETA.
    public static let rightMeta: UInt16 = 126
    /// KEY_NUMLOCK.
    public static let numLock: UInt16 = 69
    /// KEY_SPACE.
    public static let space: UInt16 = 57
}

private typealias Key = KeyboardLayout.Key

private func row(_ start: UInt16, _ plain: String, _ shifted: String) -> [UInt16: Key] {
    var keys: [UInt16: Key] = [:]
    for (offset, (p, s)) in zip(plain, shifted).enumerated() {
        keys[start + UInt16(offset)] = Key(plain: p, shifted: s)
    }
    return keys
}

/// Keys that type the same in both layouts: space, tab and the keypad (scanners assume Num Lock on).
private let commonKeys: [UInt16: Key] = [
    KeyCode.space: Key(plain: " ", shifted: " "),
    KeyCode.tab: Key(plain: "\t", shifted: "\t"),
    55: Key(plain: "*"), 98: Key(plain: "/"), 74: Key(plain: "-"), 78: Key(plain: "+"),
    71: Key(plain: "7"), 72: Key(plain: "8"), 73: Key(plain: "9"),
    75: Key(plain: "4"), 76: Key(plain: "5"), 77: Key(plain: "6"),
    79: Key(plain: "1"), 80: Key(plain: "2"), 81: Key(plain: "3"), 82: Key(plain: "0"),
]

private let usKeys: [UInt16: Key] =
    commonKeys
    .merging(row(2, "1234567890-=", "!@#$%^&*()_+")) { $1 }
    .merging(row(16, "qwertyuiop[]", "QWERTYUIOP{}")) { $1 }
    .merging(row(30, "asdfghjkl;'`", "ASDFGHJKL:\"~")) { $1 }
    .merging(row(43, "\\zxcvbnm,./", "|ZXCVBNM<>?")) { $1 }
    .merging([83: Key(plain: ".")]) { $1 }

private let germanKeys: [UInt16: Key] = {
    var keys =
        commonKeys
        .merging(row(2, "1234567890ß", "!\"§$%&/()=?")) { $1 }
        .merging(row(16, "qwertzuiopü+", "QWERTZUIOPÜ*")) { $1 }
        .merging(row(30, "asdfghjklöä", "ASDFGHJKLÖÄ")) { $1 }
        .merging(row(43, "#yxcvbnm,.-", "'YXCVBNM;:_")) { $1 }
    keys[13] = Key(plain: "´", shifted: "`", isDead: true)
    keys[41] = Key(plain: "^", shifted: "°", isDead: true)
    keys[86] = Key(plain: "<", shifted: ">", altGr: "|")
    keys[83] = Key(plain: ",")  // The keypad's decimal key types a comma in German.
    let altGr: [UInt16: Character] = [
        3: "²", 4: "³", 8: "{", 9: "[", 10: "]", 11: "}", 12: "\\", 16: "@", 18: "€", 27: "~", 50: "µ",
    ]
    for (code, character) in altGr {
        keys[code]?.altGr = character
    }
    return keys
}()
