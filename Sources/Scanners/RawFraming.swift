import FareCore
import Foundation

/// How scans are cut out of a raw serial byte stream and what is stripped from them.
///
/// A raw link has no length field: a scan ends at its terminator (suffix) or when the line goes quiet for
/// ``interByteTimeout``. It is binary-safe except for the terminator itself: a payload that contains the
/// terminator bytes is cut in two, so binary tickets (zlib inside Aztec) need SSI, or a raw link with
/// ``Terminator/none`` and timeout framing only.
public struct RawFramingConfiguration: Sendable, Hashable {
    /// What ends a scan.
    public enum Terminator: Sendable, Hashable {
        /// CR, LF or CRLF, whichever the scanner sends: each CR or LF ends a scan, and empty scans are skipped.
        case lineEnd
        /// Exactly these bytes (e.g. `[0x0D]`, `[0x0D, 0x0A]`, `[0x03]` ETX).
        case bytes([UInt8])
        /// No terminator: only silence ends a scan.
        case none

        /// CR alone.
        public static let cr = Terminator.bytes([0x0D])
        /// LF alone.
        public static let lf = Terminator.bytes([0x0A])
        /// CR then LF.
        public static let crlf = Terminator.bytes([0x0D, 0x0A])
    }

    /// When to undo ECI escaping (`\nnnnnn` designators, doubled backslashes).
    public enum ECIUnescaping: String, Sendable, Hashable, CaseIterable {
        /// Never: the data is passed on as it came.
        case never
        /// When the AIM identifier announces ECI (needs ``RawFramingConfiguration/aimIdentifiers``).
        case whenAnnounced
        /// Always: for scanners set to ECI output without AIM identifiers.
        case always
    }

    /// What ends a scan.
    public var terminator: Terminator
    /// Silence that ends a scan without its terminator (50 ms: several byte times at any usual speed, short
    /// beside the time between two scans).
    public var interByteTimeout: Duration
    /// Whether the scanner sends an AIM symbology identifier first; it is stripped and mapped to a symbology.
    public var aimIdentifiers: Bool
    /// When to undo ECI escaping.
    public var eciUnescaping: ECIUnescaping
    /// A longer scan is dropped (a scanner stuck sending must not exhaust memory).
    public var maximumScanSize: Int

    /// Creates a configuration; the defaults are any line end, 50 ms, no AIM identifiers, ECI undone when
    /// announced.
    public init(
        terminator: Terminator = .lineEnd,
        interByteTimeout: Duration = .milliseconds(50),
        aimIdentifiers: Bool = false,
        eciUnescaping: ECIUnescaping = .whenAnnounced,
        maximumScanSize: Int = 64 * 1024
    ) {
        self.terminator = terminator
        self.interByteTimeout = interByteTimeout
        self.aimIdentifiers = aimIdentifiers
        self.eciUnescaping = eciUnescaping
        self.maximumScanSize = maximumScanSize
    }
}

/// Cuts raw scanner output into scans: terminator or silence, then AIM identifier and ECI escapes. Pure.
///
/// Feed bytes with ``append(_:at:)``; call ``lineWentQuiet(at:)`` when nothing came for the configured
/// inter-byte timeout. Each call returns the scans it completed.
public struct RawFramer: Sendable {
    /// The rules applied.
    public let configuration: RawFramingConfiguration
    /// The device name put in scans.
    public let device: String

    private var pending: [UInt8] = []
    private var oversized = false
    private var dropped: [String] = []

    /// Creates a framer.
    public init(device: String, configuration: RawFramingConfiguration = RawFramingConfiguration()) {
        self.device = device
        self.configuration = configuration
    }

    /// The bytes of a scan begun and not yet ended.
    public var pendingByteCount: Int { pending.count }

    /// Log lines about scans dropped for their size since the last call; reading them clears them.
    public mutating func takeDropNotices() -> [String] {
        defer { dropped.removeAll() }
        return dropped
    }

    /// Adds bytes from the line and returns the scans their terminators completed.
    public mutating func append(_ bytes: some Sequence<UInt8>, at receivedAt: Date) -> [ScanEvent] {
        var scans: [ScanEvent] = []
        for byte in bytes {
            pending.append(byte)
            if let terminatorLength = endsWithTerminator() {
                pending.removeLast(terminatorLength)
                if let scan = finish(at: receivedAt) { scans.append(scan) }
            } else if pending.count > configuration.maximumScanSize {
                oversized = true
                pending.removeAll(keepingCapacity: true)
            }
        }
        return scans
    }

    /// The line was quiet for the inter-byte timeout: what was received so far is a scan.
    public mutating func lineWentQuiet(at now: Date) -> ScanEvent? {
        finish(at: now)
    }

    /// Forgets a scan begun (the line died); returns how many bytes were dropped.
    public mutating func discardPending() -> Int {
        defer {
            pending.removeAll()
            oversized = false
        }
        return pending.count
    }

    private func endsWithTerminator() -> Int? {
        switch configuration.terminator {
        case .lineEnd:
            return pending.last == 0x0D || pending.last == 0x0A ? 1 : nil
        case .bytes(let terminator):
            guard !terminator.isEmpty, pending.count >= terminator.count else { return nil }
            return pending.suffix(terminator.count).elementsEqual(terminator) ? terminator.count : nil
        case .none:
            return nil
        }
    }

    private mutating func finish(at receivedAt: Date) -> ScanEvent? {
        var data = pending
        pending.removeAll(keepingCapacity: true)
        if oversized {
            oversized = false
            dropped.append("\(device): dropped a scan longer than \(configuration.maximumScanSize) bytes")
            return nil
        }
        // CRLF under `.lineEnd` ends a scan at CR and leaves an empty one at LF.
        guard !data.isEmpty else { return nil }
        var symbology = Symbology.other
        var announcesECI = false
        if configuration.aimIdentifiers, let identifier = AIMIdentifier(prefixOf: data) {
            symbology = identifier.symbology
            announcesECI = identifier.announcesECI
            data.removeFirst(3)
        }
        switch configuration.eciUnescaping {
        case .always: data = AIMIdentifier.removingECIEscapes(data)
        case .whenAnnounced where announcesECI: data = AIMIdentifier.removingECIEscapes(data)
        default: break
        }
        return ScanEvent(payload: data, symbology: symbology, device: device, receivedAt: receivedAt)
    }
}
