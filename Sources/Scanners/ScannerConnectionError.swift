/// Why a scanner connection could not be opened or stopped working.
///
/// The ``code`` tells a ``ScannerReader`` what to do: every code but ``Code/misconfigured`` means "wait and
/// reopen", because an unplugged scanner, a node that udev has not created yet or given permissions to yet,
/// and a scanner that talks nonsense for a moment all fix themselves without the process restarting.
public struct ScannerConnectionError: Error, Sendable, CustomStringConvertible {
    /// A category of failure; extensible, compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        /// The stable name of the code, for logs and metrics.
        public let name: String

        /// Creates a code; connections outside this module may add their own.
        public init(_ name: String) { self.name = name }

        /// The device node does not exist (yet), e.g. the scanner is unplugged.
        public static let deviceMissing = Code("device-missing")
        /// The node exists but this process may not open it (udev rules, group membership).
        public static let permissionDenied = Code("permission-denied")
        /// Another process holds the device exclusively.
        public static let deviceBusy = Code("device-busy")
        /// Opening or setting up the device failed for another reason.
        public static let openFailed = Code("open-failed")
        /// The device vanished while open: end of file, EIO, ENXIO, ENODEV, a hangup.
        public static let deviceGone = Code("device-gone")
        /// Reading from or writing to the device failed.
        public static let ioFailed = Code("io-failed")
        /// The scanner answered in a way the protocol does not allow and the session cannot continue.
        public static let protocolViolation = Code("protocol-violation")
        /// The configuration cannot work (an unsupported baud rate, an impossible parameter): reopening
        /// will not help, so a ``ScannerReader`` stops and throws this error.
        public static let misconfigured = Code("misconfigured")

        /// The stable name.
        public var description: String { name }
    }

    /// What kind of failure this is.
    public var code: Code
    /// The device path or name, as configured.
    public var device: String
    /// What happened and what to do about it, for a person reading the log.
    public var message: String
    /// The underlying error (an `Errno`, usually), if any.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    public init(code: Code, device: String, message: String, cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.device = device
        self.message = message
        self.cause = cause
    }

    /// Whether waiting and reopening the device may help.
    public var isRecoverable: Bool { code != .misconfigured }

    /// The device, the message and the cause, for a log line.
    public var description: String {
        var text = "\(device): \(message)"
        if let cause { text += " (\(cause))" }
        return text
    }
}
