import Foundation

/// One `struct input_event` record from an evdev node (`/dev/input/eventN`).
///
/// On 64-bit Linux a record is 24 bytes, little-endian: `struct timeval` (seconds, microseconds: 8 bytes
/// each), `type` (u16), `code` (u16), `value` (s32). The kernel stamps each event with the time the key
/// moved, which is what lets a recorded stream be framed exactly as it was live.
public struct InputEvent: Sendable, Hashable {
    /// The size of one record on 64-bit Linux (checked against the kernel header in CLinuxShims).
    public static let size = 24

    /// Event types (`EV_*` in linux/input-event-codes.h).
    public enum EventType {
        /// EV_SYN: the end of a batch of events.
        public static let synchronization: UInt16 = 0x00
        /// EV_KEY: a key or button changed.
        public static let key: UInt16 = 0x01
        /// EV_MSC: miscellaneous, e.g. the HID usage of the key that follows.
        public static let miscellaneous: UInt16 = 0x04
    }

    /// EV_KEY values.
    public enum KeyValue {
        /// The key went up.
        public static let release: Int32 = 0
        /// The key went down.
        public static let press: Int32 = 1
        /// The kernel's auto-repeat while the key is held (never a new character from a scanner).
        public static let autoRepeat: Int32 = 2
    }

    /// Seconds of the event's timestamp (CLOCK_REALTIME unless the node was switched to another clock).
    public var seconds: Int64
    /// Microseconds within the second.
    public var microseconds: Int64
    /// The event type, e.g. ``EventType/key``.
    public var type: UInt16
    /// The key code for key events (`KEY_A` = 30, …): a position on the keyboard, not a character.
    public var code: UInt16
    /// For key events: 1 press, 0 release, 2 repeat.
    public var value: Int32

    /// Makes an event from its fields.
    public init(seconds: Int64, microseconds: Int64, type: UInt16, code: UInt16, value: Int32) {
        self.seconds = seconds
        self.microseconds = microseconds
        self.type = type
        self.code = code
        self.value = value
    }

    /// Reads one 24-byte record; `nil` when fewer than 24 bytes are given.
    public init?(record: some Collection<UInt8>) {
        let bytes = Array(record.prefix(Self.size))
        guard bytes.count == Self.size else { return nil }
        func little<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            var value: T = 0
            for index in 0..<(T.bitWidth / 8) {
                value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index)
            }
            return value
        }
        seconds = little(0, Int64.self)
        microseconds = little(8, Int64.self)
        type = little(16, UInt16.self)
        code = little(18, UInt16.self)
        value = little(20, Int32.self)
    }

    /// The 24-byte record, as the kernel writes it (for recording streams and feeding pipes in tests).
    public var record: [UInt8] {
        func little<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
            (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
        }
        return little(seconds) + little(microseconds) + little(type) + little(code) + little(value)
    }

    /// The timestamp in microseconds since the epoch, exact, for measuring gaps between keys.
    ///
    /// Exact for every time a clock gives; the fields come from a byte stream, so a time beyond ±292 000 years
    /// (only in a corrupt or forged stream) saturates to `Int64.min` or `.max` rather than trapping.
    public var timestampMicroseconds: Int64 {
        let (scaled, scaleOverflow) = seconds.multipliedReportingOverflow(by: 1_000_000)
        guard !scaleOverflow else { return seconds < 0 ? .min : .max }
        let (sum, sumOverflow) = scaled.addingReportingOverflow(microseconds)
        guard !sumOverflow else { return microseconds < 0 ? .min : .max }
        return sum
    }

    /// The timestamp as a `Date`.
    public var timestamp: Date {
        Date(timeIntervalSince1970: TimeInterval(seconds) + TimeInterval(microseconds) / 1_000_000)
    }
}

/// Cuts a byte stream into `input_event` records, keeping a partial record until the rest arrives.
///
/// An evdev node returns whole records, but a pipe or a file (a recorded stream) may split them anywhere.
public struct InputEventDecoder: Sendable {
    private var partial: [UInt8] = []

    /// Makes an empty decoder.
    public init() {}

    /// The complete records in `bytes` (after any partial record left from the previous call).
    public mutating func decode(_ bytes: some Collection<UInt8>) -> [InputEvent] {
        partial += bytes
        let whole = partial.count / InputEvent.size * InputEvent.size
        var events: [InputEvent] = []
        events.reserveCapacity(whole / InputEvent.size)
        var offset = 0
        while offset < whole {
            if let event = InputEvent(record: partial[offset..<offset + InputEvent.size]) {
                events.append(event)
            }
            offset += InputEvent.size
        }
        partial.removeFirst(whole)
        return events
    }

    /// How many bytes of an incomplete record are waiting.
    public var pendingBytes: Int { partial.count }
}
