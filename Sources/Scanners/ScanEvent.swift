import FareCore
import Foundation

/// One scan as a scanner delivered it: the exact payload bytes, the symbology, where it came from and when.
///
/// Bytes stay bytes from the wire to the verifier: binary Aztec payloads (zlib) contain NUL and 0xFF.
public struct ScanEvent: Sendable, Hashable {
    /// The decoded data, exactly as the scanner sent it (after protocol framing is removed).
    public var payload: [UInt8]
    /// The symbology the scanner reported, `.other` when it did not say.
    public var symbology: Symbology
    /// The device it came from, e.g. `/dev/ttyACM0` or `/dev/hidraw2`.
    public var device: String
    /// The name the validator knows the source by: the scanner's configured name, else the device. What the
    /// inspection, the journal, the upload and the server call it.
    public var source: SourceName
    /// When the last byte of the scan arrived.
    public var receivedAt: Date

    public init(
        payload: [UInt8], symbology: Symbology, device: String, source: SourceName? = nil, receivedAt: Date = Date()
    ) {
        self.payload = payload
        self.symbology = symbology
        self.device = device
        self.source = source ?? SourceName(device)
        self.receivedAt = receivedAt
    }
}

/// What the host tells the scanner about a verdict: a good or bad beep and LED, where the protocol allows.
public enum ScanFeedback: Sendable, Hashable {
    case good
    case bad
}
