#if canImport(Glibc)
    import Glibc
#endif

/// How a serial line is set up: speed, character format, flow control.
///
/// The default is what scanners ship with: 9600 baud, 8 data bits, no parity, 1 stop bit (8N1), no flow
/// control. The port is always put in raw mode (no echo, no line editing, no CR/LF translation), because
/// scanner data is bytes, not lines of text.
public struct SerialSettings: Sendable, Hashable {
    /// Parity bit.
    public enum Parity: String, Sendable, Hashable, CaseIterable {
        case none, even, odd
    }

    /// Flow control.
    public enum FlowControl: String, Sendable, Hashable, CaseIterable {
        /// No flow control: the scanner's few hundred bytes never overrun a Linux tty buffer.
        case none
        /// RTS/CTS lines, for scanners configured to use them.
        case hardware
        /// XON/XOFF bytes in the data stream: unusable with binary payloads, which contain 0x11 and 0x13.
        case software
    }

    /// The line speeds this platform can set, in bits per second.
    public static let supportedBaudRates: [Int] = baudConstants.keys.sorted()

    /// Bits per second: one of ``supportedBaudRates`` (1200...115200, and 230400).
    public var baudRate: Int
    /// Data bits per character, 5...8.
    public var dataBits: Int
    /// Parity bit.
    public var parity: Parity
    /// Stop bits, 1 or 2.
    public var stopBits: Int
    /// Flow control.
    public var flowControl: FlowControl
    /// Takes the tty exclusively (TIOCEXCL), so that a second reader cannot steal half the bytes of a scan.
    public var exclusive: Bool

    /// Creates settings; the defaults are 9600 8N1 without flow control, exclusive.
    public init(
        baudRate: Int = 9600,
        dataBits: Int = 8,
        parity: Parity = .none,
        stopBits: Int = 1,
        flowControl: FlowControl = .none,
        exclusive: Bool = true
    ) {
        self.baudRate = baudRate
        self.dataBits = dataBits
        self.parity = parity
        self.stopBits = stopBits
        self.flowControl = flowControl
        self.exclusive = exclusive
    }

    /// How long one byte takes on the wire at these settings (start bit, data, parity, stop bits).
    public var byteDuration: Duration {
        let bits = 1 + dataBits + (parity == .none ? 0 : 1) + stopBits
        return .nanoseconds(Int64(bits) * 1_000_000_000 / Int64(max(baudRate, 1)))
    }

    /// Checks that the settings can be applied, naming `device` in the error.
    public func validate(device: String) throws(ScannerConnectionError) {
        guard Self.baudConstants[baudRate] != nil else {
            let rates = Self.supportedBaudRates.map(String.init).joined(separator: ", ")
            throw ScannerConnectionError(
                code: .misconfigured,
                device: device,
                message: "baud rate \(baudRate) is not supported; use one of \(rates) and set the scanner to match"
            )
        }
        guard (5...8).contains(dataBits) else {
            throw ScannerConnectionError(
                code: .misconfigured,
                device: device,
                message: "\(dataBits) data bits is not possible; use 5 to 8 (scanners use 8, or 7 with parity)"
            )
        }
        guard stopBits == 1 || stopBits == 2 else {
            throw ScannerConnectionError(
                code: .misconfigured,
                device: device,
                message: "\(stopBits) stop bits is not possible; use 1 or 2"
            )
        }
    }

    /// Puts `attributes` in raw mode with these settings; call ``validate(device:)`` first.
    public func apply(to attributes: inout termios) {
        cfmakeraw(&attributes)
        let speed = Self.baudConstants[baudRate] ?? speed_t(B9600)
        cfsetispeed(&attributes, speed)
        cfsetospeed(&attributes, speed)

        var control = attributes.c_cflag
        control &= ~tcflag_t(CSIZE | PARENB | PARODD | CSTOPB)
        control &= ~tcflag_t(CRTSCTS)
        control |= tcflag_t(Self.sizeFlag(dataBits))
        switch parity {
        case .none: break
        case .even: control |= tcflag_t(PARENB)
        case .odd: control |= tcflag_t(PARENB | PARODD)
        }
        if stopBits == 2 { control |= tcflag_t(CSTOPB) }
        if flowControl == .hardware { control |= tcflag_t(CRTSCTS) }
        // CLOCAL: a scanner does not drive DCD, and without it reads would wait for a carrier forever.
        control |= tcflag_t(CLOCAL | CREAD)
        attributes.c_cflag = control

        var input = attributes.c_iflag
        // No INPCK: the kernel would only turn a byte with a parity error into NUL; SSI's checksum catches the
        // damaged packet instead and asks for it again.
        input &= ~tcflag_t(IXON | IXOFF | IXANY | INPCK)
        if flowControl == .software { input |= tcflag_t(IXON | IXOFF) }
        attributes.c_iflag = input
    }

    private static func sizeFlag(_ bits: Int) -> Int32 {
        switch bits {
        case 5: CS5
        case 6: CS6
        case 7: CS7
        default: CS8
        }
    }

    private static let baudConstants: [Int: speed_t] = [
        1200: speed_t(B1200), 2400: speed_t(B2400), 4800: speed_t(B4800), 9600: speed_t(B9600),
        19200: speed_t(B19200), 38400: speed_t(B38400), 57600: speed_t(B57600), 115_200: speed_t(B115200),
        230_400: speed_t(B230400),
    ]
}
