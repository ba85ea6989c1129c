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
