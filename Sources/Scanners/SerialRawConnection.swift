import Foundation

/// A scanner on a serial line that sends its data as plain bytes, framed by a terminator or by silence.
///
/// This is the factory setting of most scanners' RS-232 and USB CDC modes. It has no feedback channel
/// (``signal(_:)`` does nothing) and cannot carry a payload that contains the terminator: see
/// ``RawFramingConfiguration``.
public actor SerialRawConnection: ScannerConnection {
    /// The device name in scans and logs.
    public nonisolated let device: String
    private let port: SerialPort
    private let log: @Sendable (String) -> Void
    private var framer: RawFramer
    private var ready: [ScanEvent] = []
    private var lastBytesAt = ContinuousClock.now
    private var closed = false

    /// Opens `path` with `settings` and frames its output with `framing`.
    public static func open(
        path: String,
        device: String? = nil,
        settings: SerialSettings = SerialSettings(),
        framing: RawFramingConfiguration = RawFramingConfiguration(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> SerialRawConnection {
        let port = try SerialPort.open(path: path, settings: settings)
        return SerialRawConnection(port: port, device: device ?? path, framing: framing, log: log)
    }

    /// Frames the output of a port that is already open and set up.
    public init(
        port: SerialPort,
        device: String,
        framing: RawFramingConfiguration = RawFramingConfiguration(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.port = port
        self.device = device
        self.log = log
        self.framer = RawFramer(device: device, configuration: framing)
    }

    /// Waits for the next scan: bytes up to the terminator, or up to a quiet line; `nil` when the line hung up
    /// between scans. A scan cut off by a hang-up is dropped, and the error says so.
    public func nextScan() async throws -> ScanEvent? {
        while ready.isEmpty {
            guard !closed else { return nil }
            let deadline =
                framer.pendingByteCount > 0 ? lastBytesAt + framer.configuration.interByteTimeout : nil
            let result: SerialPort.ReadResult
            do {
                result = try await port.read(until: deadline)
            } catch let error as ScannerConnectionError {
                if closed { return nil }
                throw withInFlight(error)
            }
            switch result {
            case .bytes(let bytes):
                lastBytesAt = .now
                ready += framer.append(bytes, at: Date())
            case .timedOut:
                if let scan = framer.lineWentQuiet(at: Date()) { ready.append(scan) }
            case .interrupted:
                break
            case .endOfFile:
                if closed { return nil }
                if framer.pendingByteCount > 0 {
                    let count = framer.discardPending()
                    throw ScannerConnectionError(
                        code: .deviceGone,
                        device: device,
                        message: "the line hung up; a scan in flight was dropped (\(count) bytes received)"
                    )
                }
                return nil
            }
            for line in framer.takeDropNotices() { log(line) }
        }
        return ready.removeFirst()
    }

    /// Does nothing: a raw link has no way to tell the scanner a verdict.
    public func signal(_ feedback: ScanFeedback) async {}

    /// Closes the port.
    public func close() async {
        guard !closed else { return }
        closed = true
        await port.close()
    }

    private func withInFlight(_ error: ScannerConnectionError) -> ScannerConnectionError {
        guard error.code == .deviceGone, framer.pendingByteCount > 0 else { return error }
        var error = error
        error.message += "; a scan in flight was dropped (\(framer.discardPending()) bytes received)"
        return error
    }
}
