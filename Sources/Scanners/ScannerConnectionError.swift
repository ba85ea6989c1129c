import FareCore

/// Why a scanner connection could not be opened or stopped working.
///
/// The ``code`` tells a ``ScannerReader`` what to do: every code but `misconfigured` means "wait and reopen",
/// because an unplugged scanner, a node that udev has not created yet or given permissions to yet, and a scanner
/// that talks nonsense for a moment all fix themselves without the process restarting.
public typealias ScannerConnectionError = CodedError<ScannerConnectionFailure>

/// The domain of `ScannerConnectionError`: scanner connections that could not be opened or stopped working.
public enum ScannerConnectionFailure: ErrorDomain {
    /// What a scanner connection error says besides its code, message and cause.
    public struct Details: Hashable, Sendable {
        /// The device path or name, as configured.
        public var device: String
    }

    /// The device, the message and the cause, for a log line.
    public static func description(of error: ScannerConnectionError) -> String {
        var text = "\(error.device): \(error.message)"
        if let cause = error.cause { text += " (\(cause))" }
        return text
    }
}

extension ErrorCode where Domain == ScannerConnectionFailure {
    /// The device node does not exist (yet), e.g. the scanner is unplugged.
    public static var deviceMissing: Self { Self("device-missing") }
    /// The node exists but this process may not open it (udev rules, group membership).
    public static var permissionDenied: Self { Self("permission-denied") }
    /// Another process holds the device exclusively.
    public static var deviceBusy: Self { Self("device-busy") }
    /// Opening or setting up the device failed for another reason.
    public static var openFailed: Self { Self("open-failed") }
    /// The device vanished while open: end of file, EIO, ENXIO, ENODEV, a hangup.
    public static var deviceGone: Self { Self("device-gone") }
    /// Reading from or writing to the device failed.
    public static var ioFailed: Self { Self("io-failed") }
    /// The scanner answered in a way the protocol does not allow and the session cannot continue.
    public static var protocolViolation: Self { Self("protocol-violation") }
    /// The configuration cannot work (an unsupported baud rate, an impossible parameter): reopening will not help,
    /// so a ``ScannerReader`` stops and throws this error.
    public static var misconfigured: Self { Self("misconfigured") }
}

extension CodedError where Domain == ScannerConnectionFailure {
    /// Creates an error about `device` (its path or name, as configured); `cause` is the underlying error (an
    /// `Errno`, usually), if any.
    public init(code: Code, device: String, message: String, cause: (any Error)? = nil) {
        self.init(code: code, message: message, details: ScannerConnectionFailure.Details(device: device), cause: cause)
    }

    /// Whether waiting and reopening the device may help.
    public var isRecoverable: Bool { code != .misconfigured }
}

/// Why a scanner is not connected, as an inspector is told it (the page says it in its language; the log and
/// `/healthz` keep the device's own words beside it).
public enum ScannerProblem: String, Sendable, Codable, CaseIterable {
    /// The daemon has not tried to open it yet.
    case notOpened = "not-opened"
    /// Its device node does not exist: unplugged, or not yet made by udev.
    case missing = "device-missing"
    /// It went away while open: unplugged, or the connection was closed.
    case gone = "device-gone"
    /// The daemon may not open it (udev rules, group membership).
    case permissionDenied = "permission-denied"
    /// Another program holds it.
    case busy = "device-busy"
    /// Its settings cannot work; the daemon stopped trying.
    case misconfigured
    /// It failed otherwise (opening, reading, or talking nonsense); the daemon keeps trying.
    case failing
    /// Its reader stopped (the daemon is shutting down).
    case stopped

    /// The problem an error of opening or reading a scanner is.
    public init(_ error: any Error) {
        guard let failure = error as? ScannerConnectionError else {
            self = .failing
            return
        }
        switch failure.code {
        case .deviceMissing: self = .missing
        case .deviceGone: self = .gone
        case .permissionDenied: self = .permissionDenied
        case .deviceBusy: self = .busy
        case .misconfigured: self = .misconfigured
        default: self = .failing
        }
    }
}
