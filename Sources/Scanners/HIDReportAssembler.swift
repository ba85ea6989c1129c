import FareCore
import Foundation

/// A payload and symbology assembled from one or more reports, before the transport adds the device name.
public struct AssembledScan: Sendable, Hashable {
    /// The decoded data, exactly as the scanner sent it.
    public var payload: [UInt8]
    /// The symbology the scanner reported, `.other` when it did not say.
    public var symbology: Symbology
    /// When the report that completed the scan arrived.
    public var completedAt: Date

    /// Makes a scan from its parts.
    public init(payload: [UInt8], symbology: Symbology, completedAt: Date) {
        self.payload = payload
        self.symbology = symbology
        self.completedAt = completedAt
    }
}

/// A scan that was thrown away rather than delivered in part, and why.
///
/// A half payload would fail verification in a way that hides the real cause (a flaky cable, a scanner
/// unplugged mid-scan), so assemblers drop it and say so; the reader logs the reason.
public struct DroppedScan: Sendable, Hashable, CustomStringConvertible {
    /// Why the scan was dropped, in words for a log line.
    public var reason: String
    /// How many payload bytes had arrived before it was dropped.
    public var receivedBytes: Int

    /// Makes a dropped-scan record.
    public init(reason: String, receivedBytes: Int) {
        self.reason = reason
        self.receivedBytes = receivedBytes
    }

    /// The reason with the byte count.
    public var description: String { "scan dropped after \(receivedBytes) bytes: \(reason)" }
}

/// What one input report led to: a finished scan, a dropped one, output reports to send back, or nothing.
public struct HIDReportOutcome: Sendable, Hashable {
    /// The scan this report completed.
    public var scan: AssembledScan?
    /// A scan in progress that this report showed to be broken (a missing packet, a stale continuation).
    public var dropped: DroppedScan?
    /// Output reports to write to the device, report id first (SNAPI packet acknowledgements).
    public var replies: [[UInt8]]
    /// Why the report was not used, when it was malformed; `nil` for reports that are simply not scan data.
    public var rejection: String?

    /// Makes an outcome; everything defaults to "nothing happened".
    public init(
        scan: AssembledScan? = nil,
        dropped: DroppedScan? = nil,
        replies: [[UInt8]] = [],
        rejection: String? = nil
    ) {
        self.scan = scan
        self.dropped = dropped
        self.replies = replies
        self.rejection = rejection
    }
}

/// Turns a device's input reports, one at a time, into scans: the pure half of a HID scanner transport.
///
/// The same assembler is fed by `/dev/hidrawN` reads, libusb interrupt transfers and recorded report
/// streams in tests, so what is tested is what runs.
public protocol HIDReportAssembler: Sendable {
    /// Takes one input report (report id first, as hidraw returns it) that arrived at `time`.
    mutating func accept(report: [UInt8], at time: Date) -> HIDReportOutcome
    /// Throws away a scan in progress (the device vanished or the session closes), saying why.
    ///
    /// - Returns: The dropped scan, or `nil` when nothing was in progress.
    mutating func abandon(reason: String) -> DroppedScan?
}

/// Assembled scans must not grow without bound when a device misbehaves (a continuation bit stuck on).
let maximumAssembledPayload = 64 * 1024
