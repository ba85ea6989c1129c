/// Quantities as people read them in messages and on pages: a duration rounded to what matters (`4.9 s`, not
/// `4.860164064717511 seconds`), a count with its noun in the right number (`1 key`, `2 keys`).
public enum ReadableText {
    /// A duration: `850 ms`, `4.9 s`, `42 s`, `3 min 05 s`, `2 h 10 min`, `3 d 4 h`; negative with a minus sign.
    public static func duration(milliseconds: Int64) -> String {
        if milliseconds < 0 { return "−" + duration(milliseconds: milliseconds == .min ? .max : -milliseconds) }
        if milliseconds < 1000 { return "\(milliseconds) ms" }
        if milliseconds < 10_000 {
            let tenths = (milliseconds + 50) / 100
            return tenths % 10 == 0 ? "\(tenths / 10) s" : "\(tenths / 10).\(tenths % 10) s"
        }
        let seconds = milliseconds / 1000
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min \(two(seconds % 60)) s" }
        if seconds < 86_400 { return "\(seconds / 3600) h \(two(seconds % 3600 / 60)) min" }
        return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
    }

    /// A duration given in seconds (see ``duration(milliseconds:)``).
    public static func duration(seconds: Double) -> String {
        guard seconds.isFinite else { return seconds > 0 ? "forever" : "−forever" }
        let milliseconds = (seconds * 1000).rounded()
        guard abs(milliseconds) < Double(Int64.max) else { return seconds > 0 ? "forever" : "−forever" }
        return duration(milliseconds: Int64(milliseconds))
    }

    /// A Swift `Duration` (see ``duration(milliseconds:)``).
    public static func duration(_ value: Duration) -> String {
        let (seconds, attoseconds) = value.components
        guard abs(seconds) < Int64.max / 1000 - 1 else { return seconds > 0 ? "forever" : "−forever" }
        return duration(milliseconds: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    /// `count` and its noun: `1 key`, `0 keys`, `2 entries` (`plural` when adding an `s` is wrong).
    public static func count(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
    }

    private static func two(_ number: Int64) -> String {
        number < 10 ? "0\(number)" : "\(number)"
    }
}
