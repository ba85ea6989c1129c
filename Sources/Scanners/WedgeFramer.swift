import FareCore
import Foundation

/// Turns a keyboard-wedge scanner's key events into scans: the pure half of the evdev transport.
///
/// A wedge scanner types its data. This framer tracks Shift, Caps Lock, AltGr and Control, maps each key
/// press to a character through a ``KeyboardLayout``, and ends a scan at its suffix key (Enter by default)
/// or when the next key comes later than ``interKeyTimeout`` after the previous one. Gaps are measured on
/// the events' own timestamps, so a recorded stream is framed exactly as it was live; the transport calls
/// ``finishIdleScan()`` when no key has come for the timeout.
///
/// A wedge carries **text payloads only**: a scanner cannot type NUL or arbitrary bytes, so binary tickets
/// (UIC 918.3, zlib-compressed Aztec codes) cannot pass through it. Use it for text tickets such as base45
/// FC1 QR codes; use HID POS, SNAPI or SSI for binary ones. The payload is the typed text in UTF-8.
public struct WedgeFramer: Sendable {
    /// The layout the scanner is set to.
    public var layout: KeyboardLayout
    /// The keys that end a scan (not part of the payload); empty to frame by the timeout alone.
    public var suffixKeys: Set<UInt16>
    /// The longest gap between two keys of one scan. Scanners type a key every 1–10 ms; people and
    /// pauses between scans are far slower.
    public var interKeyTimeout: Duration
    /// Whether a leading AIM identifier (`]Q1`, when the scanner is set to send one) is removed from the
    /// payload and used for the symbology (and ECI escapes undone when it announces them).
    public var stripsAIMIdentifier: Bool

    private var modifiers: KeyboardModifiers = []
    private var shiftKeysDown: Set<UInt16> = []
    private var controlKeysDown: Set<UInt16> = []
    private var text = ""
    private var unmapped: [UInt16] = []
    private var pendingDeadKey: Character?
    private var lastKeyAt: Int64?
    private var lastKeyDate: Date?

    /// Makes a framer.
    ///
    /// - Parameters:
    ///   - layout: The layout configured on the scanner.
    ///   - suffixKeys: Enter and keypad Enter by default, the factory suffix of most scanners.
    ///   - interKeyTimeout: 50 ms: ten times a scanner's slowest key rate, well below a person's.
    ///   - stripsAIMIdentifier: Off by default, since most wedge scanners send no AIM identifier.
    public init(
        layout: KeyboardLayout = .us,
        suffixKeys: Set<UInt16> = [KeyCode.enter, KeyCode.keypadEnter],
        interKeyTimeout: Duration = .milliseconds(50),
        stripsAIMIdentifier: Bool = false
    ) {
        self.layout = layout
        self.suffixKeys = suffixKeys
        self.interKeyTimeout = interKeyTimeout
        self.stripsAIMIdentifier = stripsAIMIdentifier
    }

    /// What an event led to.
    public enum Outcome: Sendable, Hashable {
        /// A complete scan.
        case scan(AssembledScan)
        /// A scan that had keys the layout cannot type; delivering it would deliver wrong text.
        case dropped(DroppedScan)
    }

    /// Whether a scan is being typed.
    public var isScanInProgress: Bool { !text.isEmpty || !unmapped.isEmpty || pendingDeadKey != nil }

    /// The timeout in microseconds.
    private var timeoutMicroseconds: Int64 {
        let (seconds, attoseconds) = interKeyTimeout.components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Takes one event; returns the scans it ended (at most two: one by the timeout before this key, one
    /// by this key's suffix).
    public mutating func accept(_ event: InputEvent) -> [Outcome] {
        guard event.type == InputEvent.EventType.key, event.value != InputEvent.KeyValue.autoRepeat else {
            return []  // Synchronization and misc events carry no keys; repeats are the kernel's, not the scanner's.
        }
        var outcomes: [Outcome] = []
        let now = event.timestampMicroseconds
        // Saturating: the timestamps come from the stream, and two far-apart ones must not trap the reader.
        if let lastKeyAt, Self.saturating(now.subtractingReportingOverflow(lastKeyAt)) > timeoutMicroseconds,
            isScanInProgress
        {
            if let outcome = finishIdleScan() { outcomes.append(outcome) }
        }
        lastKeyAt = now
        lastKeyDate = event.timestamp

        let pressed = event.value == InputEvent.KeyValue.press
        switch event.code {
        case KeyCode.leftShift, KeyCode.rightShift:
            if pressed { shiftKeysDown.insert(event.code) } else { shiftKeysDown.remove(event.code) }
            set(.shift, !shiftKeysDown.isEmpty)
            return outcomes
        case KeyCode.leftControl, KeyCode.rightControl:
            if pressed { controlKeysDown.insert(event.code) } else { controlKeysDown.remove(event.code) }
            set(.control, !controlKeysDown.isEmpty)
            return outcomes
        case KeyCode.rightAlt:
            set(.altGr, pressed)
            return outcomes
        case KeyCode.capsLock:
            if pressed { modifiers.formSymmetricDifference(.capsLock) }
            return outcomes
        case KeyCode.leftAlt, KeyCode.leftMeta, KeyCode.rightMeta, KeyCode.numLock:
            return outcomes
        default:
            break
        }
        guard pressed else { return outcomes }
        if suffixKeys.contains(event.code) {
            if isScanInProgress, let outcome = finish() { outcomes.append(outcome) }
            return outcomes
        }
        type(event.code)
        return outcomes
    }

    /// Ends the scan being typed because no key came within the timeout (or the stream ended).
    ///
    /// - Returns: The scan, a drop, or `nil` when nothing was being typed.
    public mutating func finishIdleScan() -> Outcome? {
        guard isScanInProgress else { return nil }
        return finish()
    }

    /// Throws away the scan being typed (the device vanished), saying why.
    public mutating func abandon(reason: String) -> DroppedScan? {
        guard isScanInProgress else { return nil }
        let dropped = DroppedScan(reason: reason, receivedBytes: text.utf8.count)
        clearScan()
        return dropped
    }

    /// When the scan being typed ends by the timeout if no other key comes, in event-timestamp
    /// microseconds; `nil` when nothing is being typed.
    public var idleDeadlineMicroseconds: Int64? {
        guard isScanInProgress, let lastKeyAt else { return nil }
        return Self.saturating(lastKeyAt.addingReportingOverflow(timeoutMicroseconds))
    }

    /// The result of an `Int64` operation on stream timestamps, pinned to the nearest bound when it overflowed
    /// (an overflowing result wrapped around, so its sign is the opposite of the true one).
    private static func saturating(_ result: (partialValue: Int64, overflow: Bool)) -> Int64 {
        guard result.overflow else { return result.partialValue }
        return result.partialValue < 0 ? .max : .min
    }

    private mutating func set(_ flag: KeyboardModifiers, _ on: Bool) {
        if on { modifiers.insert(flag) } else { modifiers.remove(flag) }
    }

    private mutating func type(_ code: UInt16) {
        if layout.isDeadKey(code, modifiers: modifiers) {
            if let dead = pendingDeadKey { text.append(dead) }
            pendingDeadKey = layout.character(forKeyCode: code, modifiers: modifiers)
            return
        }
        guard let character = layout.character(forKeyCode: code, modifiers: modifiers) else {
            unmapped.append(code)
            return
        }
        if let dead = pendingDeadKey {
            pendingDeadKey = nil
            // Dead key then space types the accent alone; before anything else both characters are kept
            // (tickets hold no accented letters to compose).
            text.append(dead)
            if code == KeyCode.space { return }
        }
        text.append(character)
    }

    private mutating func finish() -> Outcome? {
        if let dead = pendingDeadKey {
            text.append(dead)
        }
        defer { clearScan() }
        guard unmapped.isEmpty else {
            let codes = unmapped.prefix(5).map(String.init).joined(separator: ", ")
            return .dropped(
                DroppedScan(
                    reason: "key code(s) \(codes) type nothing in the \(layout.name) layout; "
                        + "set the wedge layout to the one configured on the scanner",
                    receivedBytes: text.utf8.count
                )
            )
        }
        var payload = Array(text.utf8)
        var symbology = Symbology.other
        if stripsAIMIdentifier, let aim = AIMIdentifier(prefixOf: payload) {
            symbology = aim.symbology
            payload.removeFirst(3)
            if aim.announcesECI { payload = AIMIdentifier.removingECIEscapes(payload) }
        }
        guard !payload.isEmpty else { return nil }
        return .scan(AssembledScan(payload: payload, symbology: symbology, completedAt: lastKeyDate ?? Date()))
    }

    private mutating func clearScan() {
        text = ""
        unmapped = []
        pendingDeadKey = nil
    }
}
