/// A protocol farecheck can read a scanner node with, by its command-line name.
public enum ScannerProtocolName: String, Sendable, Hashable, CaseIterable {
    /// Zebra SSI over a serial port.
    case ssi
    /// Raw, suffix-framed data over a serial port.
    case raw
    /// HID POS over hidraw or libusb.
    case hidpos
    /// Zebra SNAPI over hidraw or libusb.
    case snapi
    /// Keyboard wedge over an input event node.
    case wedge
}

/// What makes an SSI scanner scan: its "trigger mode" (parameter 0x8A).
///
/// A PARAM_SEND with the permanent bit writes it into the scanner, so a scanner arrives in whatever mode its last
/// host left it; farecheck sets the configured one at every connect. The parameter's values are the SSI driver's
/// (`parameterValue` in Scanners).
public enum SSITriggerMode: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// Scans whatever is shown to it, with no trigger pulled (0x07): what a gate wants.
    case presentation
    /// Scans while its trigger button is held (0x00): a handheld.
    case level
    /// Scans only inside a session the host opens with START_SESSION and closes with STOP_SESSION (0x08).
    case host

    /// The name used in the configuration (`presentation`, `level`, `host`).
    public var description: String { rawValue }
}
