import DeviceSettings
import FareCore

/// The sender of an SSI packet.
public struct SSISource: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The scanner (the "decoder" in Zebra's documents): SRC 0x00.
    public static let decoder = SSISource(rawValue: 0x00)
    /// This program: SRC 0x04.
    public static let host = SSISource(rawValue: 0x04)

    /// A name for log lines.
    public var description: String {
        switch self {
        case .decoder: "decoder"
        case .host: "host"
        default: "source 0x" + hex(rawValue)
        }
    }
}

/// An SSI opcode, the second byte of every packet.
public struct SSIOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Asks for the scanner's software revision.
    public static let requestRevision = SSIOpcode(rawValue: 0xA3)
    /// The scanner's software revision.
    public static let replyRevision = SSIOpcode(rawValue: 0xA4)
    /// Turns the aiming pattern off.
    public static let aimOff = SSIOpcode(rawValue: 0xC4)
    /// Turns the aiming pattern on.
    public static let aimOn = SSIOpcode(rawValue: 0xC5)
    /// Sets parameters (host to scanner), or reports them (scanner to host, after PARAM_REQUEST).
    public static let paramSend = SSIOpcode(rawValue: 0xC6)
    /// Asks for parameter values.
    public static let paramRequest = SSIOpcode(rawValue: 0xC7)
    /// Restores the factory parameters.
    public static let paramDefaults = SSIOpcode(rawValue: 0xC8)
    /// Positive acknowledgement of a packet.
    public static let commandAck = SSIOpcode(rawValue: 0xD0)
    /// Negative acknowledgement of a packet; one data byte, an ``SSINakCause``.
    public static let commandNak = SSIOpcode(rawValue: 0xD1)
    /// Discards queued decode data.
    public static let flushQueue = SSIOpcode(rawValue: 0xD2)
    /// Asks for the commands the scanner supports.
    public static let capabilitiesRequest = SSIOpcode(rawValue: 0xD3)
    /// The commands the scanner supports.
    public static let capabilitiesReply = SSIOpcode(rawValue: 0xD4)
    /// Starts a decode session, as pulling the trigger does (START_SESSION; START_DECODE in older guides).
    public static let startDecode = SSIOpcode(rawValue: 0xE4)
    /// Ends a decode session (STOP_SESSION; STOP_DECODE in older guides).
    public static let stopDecode = SSIOpcode(rawValue: 0xE5)
    /// START_SESSION: opens a decode session, the only time a scanner in host trigger mode scans.
    public static let startSession = startDecode
    /// STOP_SESSION: closes the decode session.
    public static let stopSession = stopDecode
    /// Sounds a beep; one data byte, the beep code.
    public static let beep = SSIOpcode(rawValue: 0xE6)
    /// Turns LEDs on; one data byte, a bit mask of LEDs.
    public static let ledOn = SSIOpcode(rawValue: 0xE7)
    /// Turns LEDs off; one data byte, a bit mask of LEDs.
    public static let ledOff = SSIOpcode(rawValue: 0xE8)
    /// Allows scanning (the trigger works again).
    public static let scanEnable = SSIOpcode(rawValue: 0xE9)
    /// Prevents scanning.
    public static let scanDisable = SSIOpcode(rawValue: 0xEA)
    /// Puts the scanner to sleep.
    public static let sleep = SSIOpcode(rawValue: 0xEB)
    /// Decoded data: `TYPE DATA…`; long data spans packets with the continuation bit.
    public static let decodeData = SSIOpcode(rawValue: 0xF3)
    /// An event (decode, boot, parameter change); one data byte.
    public static let event = SSIOpcode(rawValue: 0xF6)

    /// Every opcode this implementation knows. A well-formed frame with another opcode is answered CMD_NAK (bad
    /// context) and logged, never taken for line noise (see ``SSIFramer``).
    public static let known: Set<SSIOpcode> = [
        .requestRevision, .replyRevision, .aimOff, .aimOn, .paramSend, .paramRequest, .paramDefaults,
        .commandAck, .commandNak, .flushQueue, .capabilitiesRequest, .capabilitiesReply, .startDecode, .stopDecode,
        .beep, .ledOn, .ledOff, .scanEnable, .scanDisable, .sleep, .decodeData, .event,
    ]

    /// A name for log lines.
    public var description: String {
        let names: [UInt8: String] = [
            0xA3: "REQUEST_REVISION", 0xA4: "REPLY_REVISION", 0xC4: "AIM_OFF", 0xC5: "AIM_ON", 0xC6: "PARAM_SEND",
            0xC7: "PARAM_REQUEST", 0xC8: "PARAM_DEFAULTS", 0xD0: "CMD_ACK", 0xD1: "CMD_NAK", 0xD2: "FLUSH_QUEUE",
            0xD3: "CAPABILITIES_REQUEST", 0xD4: "CAPABILITIES_REPLY", 0xE4: "START_SESSION", 0xE5: "STOP_SESSION",
            0xE6: "BEEP", 0xE7: "LED_ON", 0xE8: "LED_OFF", 0xE9: "SCAN_ENABLE", 0xEA: "SCAN_DISABLE", 0xEB: "SLEEP",
            0xF3: "DECODE_DATA", 0xF6: "EVENT",
        ]
        return names[rawValue] ?? "opcode 0x" + hex(rawValue)
    }
}

/// The STATUS byte of an SSI packet.
public struct SSIStatus: OptionSet, Hashable, Sendable {
    /// The byte on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Bit 0: this packet was sent before (after a NAK or a missing ACK).
    public static let retransmission = SSIStatus(rawValue: 0x01)
    /// Bit 1: more packets of the same message follow.
    public static let continuation = SSIStatus(rawValue: 0x02)
    /// Bit 3 (PARAM_SEND): store the parameters permanently rather than until the scanner powers off.
    public static let permanentChange = SSIStatus(rawValue: 0x08)

    /// Every bit the protocol defines; a byte with another bit set is not a STATUS byte.
    public static let defined: SSIStatus = [.retransmission, .continuation, .permanentChange]
}

/// The cause byte of a CMD_NAK.
public struct SSINakCause: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The byte on the wire.
    public let rawValue: UInt8
    /// Wraps a byte from the wire.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// The packet arrived damaged: send it again.
    public static let resend = SSINakCause(rawValue: 0x01)
    /// The command makes no sense in the receiver's current state.
    public static let badContext = SSINakCause(rawValue: 0x02)
    /// The receiver refuses the command (e.g. an unsupported parameter).
    public static let denied = SSINakCause(rawValue: 0x06)

    /// A name for log lines.
    public var description: String {
        switch self {
        case .resend: "resend"
        case .badContext: "bad context"
        case .denied: "denied"
        default: "cause 0x" + hex(rawValue)
        }
    }
}

/// A trigger mode as the SSI wire carries it: the value of parameter 0x8A.
extension SSITriggerMode {
    /// The value of parameter 0x8A.
    public var parameterValue: UInt8 {
        switch self {
        case .presentation: 0x07
        case .level: 0x00
        case .host: 0x08
        }
    }

    /// The mode a value of parameter 0x8A stands for; `nil` for a value not listed.
    public init?(parameterValue: UInt8) {
        guard let mode = Self.allCases.first(where: { $0.parameterValue == parameterValue }) else { return nil }
        self = mode
    }
}

/// One scanner parameter and the value to give it, as PARAM_SEND carries them.
public struct SSIParameter: Hashable, Sendable {
    /// The parameter number: 0...0xEF, or 256...495 (written with the 0xF0 prefix).
    public let number: UInt16
    /// The value.
    public let value: UInt8

    /// Creates a parameter setting; `number` must be in 0...0xEF or 256...495.
    public init(number: UInt16, value: UInt8) {
        precondition(number <= 0xEF || (256...495).contains(number), "SSI parameter \(number) has no encoding")
        self.number = number
        self.value = value
    }

    /// "Decode data packet format" (0xEE): 1 sends decoded data in DECODE_DATA packets, 0 as raw bytes.
    public static let packetedDecodeData = SSIParameter(number: 0xEE, value: 1)
    /// "ACK/NAK handshaking" (0x9F): 1 makes the scanner wait for the host's ACK and resend on NAK.
    public static let ackNakHandshaking = SSIParameter(number: 0x9F, value: 1)

    /// "Trigger mode" (0x8A): what makes the scanner scan.
    public static func triggerMode(_ mode: SSITriggerMode) -> SSIParameter {
        SSIParameter(number: 0x8A, value: mode.parameterValue)
    }

    /// The bytes in a PARAM_SEND: `nn vv`, or `F0 nn vv` for parameters 256...495.
    public var encoded: [UInt8] {
        if number <= 0xEF { return [UInt8(number), value] }
        return [0xF0, UInt8(number - 256), value]
    }
}

/// One SSI packet: `LEN OPCODE SRC STATUS DATA… CKHI CKLO`.
///
/// LEN counts every byte but the checksum (4...255); the checksum is the two's complement of the 16-bit sum of
/// LEN through the last data byte, high byte first.
public struct SSIFrame: Hashable, Sendable, CustomStringConvertible {
    /// The most data bytes one packet can carry (LEN is one byte and counts the four header bytes).
    public static let maximumDataCount = 255 - 4

    /// What the packet is.
    public var opcode: SSIOpcode
    /// Who sent it.
    public var source: SSISource
    /// Retransmission, continuation, permanent change.
    public var status: SSIStatus
    /// The payload after the four header bytes.
    public var data: [UInt8]

    /// Creates a packet; `data` must fit in one packet (``maximumDataCount`` bytes).
    public init(opcode: SSIOpcode, source: SSISource, status: SSIStatus = [], data: [UInt8] = []) {
        precondition(data.count <= Self.maximumDataCount, "an SSI packet carries at most 251 data bytes")
        self.opcode = opcode
        self.source = source
        self.status = status
        self.data = data
    }

    /// Decodes one complete packet, checksum included.
    public init(decoding bytes: [UInt8]) throws(SSIFrameError) {
        guard bytes.count >= 6 else {
            throw SSIFrameError(code: .tooShort, message: "a packet has at least 6 bytes, got \(bytes.count)")
        }
        let length = Int(bytes[0])
        guard length >= 4, bytes.count == length + 2 else {
            throw SSIFrameError(
                code: .badLength, message: "LEN \(length) does not match a packet of \(bytes.count) bytes")
        }
        let expected = Self.checksum(of: bytes[0..<length])
        let found = UInt16(bytes[length]) << 8 | UInt16(bytes[length + 1])
        guard expected == found else {
            throw SSIFrameError(code: .badChecksum, message: "checksum 0x\(hex(found)) should be 0x\(hex(expected))")
        }
        self.init(
            opcode: SSIOpcode(rawValue: bytes[1]),
            source: SSISource(rawValue: bytes[2]),
            status: SSIStatus(rawValue: bytes[3]),
            data: Array(bytes[4..<length])
        )
    }

    /// The two's complement of the 16-bit sum of `bytes` (LEN through the last data byte).
    public static func checksum(of bytes: some Collection<UInt8>) -> UInt16 {
        var sum: UInt16 = 0
        for byte in bytes { sum &+= UInt16(byte) }
        return ~sum &+ 1
    }

    /// The packet on the wire, checksum included.
    public var encoded: [UInt8] {
        var bytes: [UInt8] = [UInt8(4 + data.count), opcode.rawValue, source.rawValue, status.rawValue]
        bytes.append(contentsOf: data)
        let checksum = Self.checksum(of: bytes)
        bytes.append(UInt8(checksum >> 8))
        bytes.append(UInt8(checksum & 0xFF))
        return bytes
    }

    /// A name for log lines.
    public var description: String {
        "\(opcode) from \(source)" + (status.isEmpty ? "" : " status 0x\(hex(status.rawValue))")
            + (data.isEmpty ? "" : ", \(data.count) data bytes")
    }

    // MARK: Host commands

    /// CMD_ACK: the packet just received was accepted.
    public static func ack(from source: SSISource = .host) -> SSIFrame {
        SSIFrame(opcode: .commandAck, source: source)
    }

    /// CMD_NAK with a cause.
    public static func nak(_ cause: SSINakCause, from source: SSISource = .host) -> SSIFrame {
        SSIFrame(opcode: .commandNak, source: source, data: [cause.rawValue])
    }

    /// PARAM_SEND: set `parameters`, sounding `beepCode` (0xFF: silently); temporary unless `permanent`.
    public static func paramSend(_ parameters: [SSIParameter], beepCode: UInt8 = 0xFF, permanent: Bool = false)
        -> SSIFrame
    {
        SSIFrame(
            opcode: .paramSend,
            source: .host,
            status: permanent ? .permanentChange : [],
            data: [beepCode] + parameters.flatMap(\.encoded)
        )
    }

    /// BEEP with a beep code from the scanner's table (0x00 one short high beep, 0x0F one long low beep, …).
    public static func beep(_ code: UInt8) -> SSIFrame {
        SSIFrame(opcode: .beep, source: .host, data: [code])
    }

    /// LED_ON for the LEDs in `mask`.
    public static func ledOn(_ mask: UInt8) -> SSIFrame { SSIFrame(opcode: .ledOn, source: .host, data: [mask]) }

    /// LED_OFF for the LEDs in `mask`.
    public static func ledOff(_ mask: UInt8) -> SSIFrame { SSIFrame(opcode: .ledOff, source: .host, data: [mask]) }

    /// SCAN_ENABLE.
    public static let scanEnable = SSIFrame(opcode: .scanEnable, source: .host)
    /// SCAN_DISABLE.
    public static let scanDisable = SSIFrame(opcode: .scanDisable, source: .host)
    /// START_DECODE, the older name of START_SESSION.
    public static let startDecode = SSIFrame(opcode: .startDecode, source: .host)
    /// START_SESSION: `04 E4 04 00 FF 14`.
    public static let startSession = SSIFrame(opcode: .startSession, source: .host)
    /// STOP_SESSION: `04 E5 04 00 FF 13`.
    public static let stopSession = SSIFrame(opcode: .stopSession, source: .host)
    /// FLUSH_QUEUE: `04 D2 04 00 FF 26`.
    public static let flushQueue = SSIFrame(opcode: .flushQueue, source: .host)
}

/// Why bytes are not an SSI packet.
public typealias SSIFrameError = CodedError<SSIFrameFailure>

/// The domain of `SSIFrameError`: bytes that are not an SSI packet.
public enum SSIFrameFailure: ErrorDomain {
    /// The message, for a log line.
    public static func description(of error: SSIFrameError) -> String { "not an SSI packet: \(error.message)" }
}

extension ErrorCode where Domain == SSIFrameFailure {
    /// Fewer than the six bytes of an empty packet.
    public static var tooShort: Self { Self("too-short") }
    /// LEN is below 4 or disagrees with the number of bytes.
    public static var badLength: Self { Self("bad-length") }
    /// The checksum does not match: the packet was damaged on the line.
    public static var badChecksum: Self { Self("bad-checksum") }
}

extension Symbology {
    /// The symbology of an SSI DECODE_DATA (or SNAPI) barcode type code; `.other` for codes not listed.
    public init(ssiBarcodeType code: UInt8) {
        switch code {
        case 0x1C, 0xC2: self = .qr  // 0xC2 is GS1 QR: a QR code whose data follows GS1 rules.
        case 0x2C: self = .microQR
        case 0x2D: self = .aztec
        case 0x2E: self = .aztecRune
        case 0x1B: self = .dataMatrix
        case 0x11: self = .pdf417
        default: self = .other
        }
    }
}

/// Two hexadecimal digits per byte, for log lines.
private func hex(_ value: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(value >> 4)], digits[Int(value & 0x0F)]])
}

/// Four hexadecimal digits, for log lines.
private func hex(_ value: UInt16) -> String { hex(UInt8(value >> 8)) + hex(UInt8(value & 0xFF)) }
