/// One open session with a scanner: scans come out, feedback goes in.
///
/// A connection is what a transport × protocol pair (SSI over a serial port, HID POS over hidraw, a keyboard
/// wedge over evdev, …) gives a ``ScannerReader``. It lives from the moment the device was opened and set up
/// until the device goes away or ``close()`` is called; it is never reopened. Reopening is the reader's job:
/// it calls its `open` closure again and gets a new connection.
///
/// Call ``nextScan()`` from one task at a time. ``signal(_:)`` and ``close()`` may be called from another task
/// while a ``nextScan()`` is waiting.
public protocol ScannerConnection: Sendable {
    /// Waits for the next complete scan.
    ///
    /// - Returns: The scan, or `nil` when the device went away cleanly (end of file, nothing in flight).
    /// - Throws: `CancellationError` when the calling task is cancelled; a ``ScannerConnectionError`` (or
    ///   another error) when the device failed or vanished in the middle of something. A scan that was only
    ///   partly received is never returned: it is dropped and the error says so.
    func nextScan() async throws -> ScanEvent?

    /// Tells the scanner the verdict on the last scan (a beep, an LED), where the protocol can.
    ///
    /// Protocols without feedback (raw serial, keyboard wedge) do nothing. Never throws: feedback that cannot
    /// be delivered is logged by the connection and does not stop reading.
    func signal(_ feedback: ScanFeedback) async

    /// Releases the device: tells the scanner to stop where the protocol has a command for it, then closes the
    /// node. Calling it twice, or after the device vanished, is harmless.
    func close() async
}
