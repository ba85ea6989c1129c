import DeviceSettings
import Foundation

/// How farecheck talks SSI to a scanner: line settings, feedback, timeouts.
public struct SSIConfiguration: Sendable, Hashable {
    /// The serial line; SSI scanners ship at 9600 8N1.
    public var serial: SerialSettings
    /// The beep code for a valid ticket: 0x00, one short high beep (the scanner's own "good read" sound).
    public var goodBeep: UInt8
    /// The beep code for a rejected ticket: 0x0F, one long low beep, unlike any sound of a normal read.
    public var badBeep: UInt8
    /// The LEDs lit for a valid ticket, as the LED_ON mask: bit 0, the green decode LED; `nil` for none.
    public var goodLEDs: UInt8?
    /// The LEDs lit for a rejected ticket: bit 1, the red LED on models that have one (others ignore it).
    public var badLEDs: UInt8?
    /// How long a feedback LED stays lit before LED_OFF.
    public var ledDuration: Duration
    /// How long to wait for the scanner's ACK of a host command before going on without it.
    public var answerTimeout: Duration
    /// Silence in the middle of a packet after which its bytes are taken for noise (a scanner sends a packet
    /// in one go; 200 ms is 24 byte times even at 1200 baud).
    public var packetTimeout: Duration
    /// Silence between two packets of one scan after which the partial scan is dropped (the scanner resends a
    /// packet after 2 s, twice at most).
    public var reassemblyTimeout: Duration
    /// The wait between the wake-up byte and the first command (at least 10 ms).
    public var wakeUpDelay: Duration
    /// Sent with PARAM_SEND at start-up, as temporary settings (lost at power-off, so the scanner's stored
    /// configuration is never rewritten; they are sent again at every open).
    public var startupParameters: [SSIParameter]
    /// A larger reassembled scan is dropped.
    public var maximumScanSize: Int
    /// The trigger mode set at every open: FLUSH_QUEUE first (scans the scanner queued before this host took it
    /// over are not this passenger's), then the mode with the ``startupParameters`` in one PARAM_SEND, as the
    /// captured start-up of a real host does; in ``SSITriggerMode/host`` farecheck keeps a decode session open
    /// (START_SESSION after SCAN_ENABLE, again after every scan and every ``sessionRenewal``, STOP_SESSION at
    /// close). `nil` leaves the scanner's mode and queue as they are (and a scanner that another host left in host
    /// mode then never scans); the daemon and `farecheck scanners listen` always set one, `presentation` unless
    /// configured otherwise.
    public var triggerMode: SSITriggerMode?
    /// How often, in host trigger mode, START_SESSION is sent again: a scanner ends a session by itself after a
    /// decode or when its session timeout passes, and says nothing of the timeout, so a session is reopened
    /// before any scanner's timeout could leave it closed for long.
    public var sessionRenewal: Duration
    /// How scans of several packets are answered; by default learned from the first one (see ``SSIMultipacket``).
    public var multipacket: SSIMultipacket
    /// While the multipacket option is being learned: the silence after a packet with more to follow that shows
    /// the scanner waits for an ACK (option 1). A streaming scanner's next packet follows at once, or after its
    /// option 3 delay, which must be shorter than this to be recognised as streaming.
    public var multipacketGap: Duration

    /// Creates a configuration; see each property for its default.
    public init(
        serial: SerialSettings = SerialSettings(),
        goodBeep: UInt8 = 0x00,
        badBeep: UInt8 = 0x0F,
        goodLEDs: UInt8? = 0x01,
        badLEDs: UInt8? = 0x02,
        ledDuration: Duration = .milliseconds(800),
        answerTimeout: Duration = .seconds(1),
        packetTimeout: Duration = .milliseconds(200),
        reassemblyTimeout: Duration = .seconds(7),
        wakeUpDelay: Duration = .milliseconds(20),
        startupParameters: [SSIParameter] = [.packetedDecodeData, .ackNakHandshaking],
        maximumScanSize: Int = 64 * 1024,
        triggerMode: SSITriggerMode? = nil,
        sessionRenewal: Duration = .seconds(2),
        multipacket: SSIMultipacket = .detect,
        multipacketGap: Duration = .milliseconds(150)
    ) {
        self.serial = serial
        self.goodBeep = goodBeep
        self.badBeep = badBeep
        self.goodLEDs = goodLEDs
        self.badLEDs = badLEDs
        self.ledDuration = ledDuration
        self.answerTimeout = answerTimeout
        self.packetTimeout = packetTimeout
        self.reassemblyTimeout = reassemblyTimeout
        self.wakeUpDelay = wakeUpDelay
        self.startupParameters = startupParameters
        self.maximumScanSize = maximumScanSize
        self.triggerMode = triggerMode
        self.sessionRenewal = sessionRenewal
        self.multipacket = multipacket
        self.multipacketGap = multipacketGap
    }
}

/// A Zebra/Symbol SSI scanner on a serial line (RS-232 or USB CDC-ACM): binary-safe, with feedback.
///
/// Opening wakes the scanner (one 0x00 byte, then ``SSIConfiguration/wakeUpDelay``), flushes its queue and sets
/// its trigger mode when one is configured, switches it to packeted decode data with ACK/NAK handshaking
/// (PARAM_SEND 0xEE = 1, 0x9F = 1, 0x8A = the mode) and sends SCAN_ENABLE, then START_SESSION in host trigger
/// mode; closing sends STOP_SESSION (host mode) and SCAN_DISABLE. Scans arrive as DECODE_DATA packets,
/// acknowledged as the scanner's multipacket option wants and reassembled (see ``SSISession``).
/// ``signal(_:)`` sounds ``SSIConfiguration/goodBeep`` or ``SSIConfiguration/badBeep`` and lights an LED for
/// ``SSIConfiguration/ledDuration``.
///
/// Host commands and their answers travel through the same read loop as scans, so feedback is sent at once
/// but completed (acknowledged, resent once on NAK) while ``nextScan()`` is being awaited, as it always is in
/// a ``ScannerReader``.
public actor SSIConnection: ScannerConnection {
    /// The device name in scans and logs.
    public nonisolated let device: String
    private let port: SerialPort
    private let configuration: SSIConfiguration
    private let log: @Sendable (String) -> Void

    private var session: SSISession
    private var ready: [ScanEvent] = []
    private var closed = false
    private var lastBytesAt = ContinuousClock.now
    private var commandSentAt = ContinuousClock.now
    private var commandSerial = 0
    private var ledOff: (at: ContinuousClock.Instant, mask: UInt8)?
    /// In host trigger mode: when START_SESSION is next sent.
    private var nextSession: ContinuousClock.Instant?

    /// Opens `path`, sets the line up and runs the start-up commands.
    ///
    /// - Parameters:
    ///   - path: The tty, e.g. `/dev/ttyACM0` or a udev symlink under /dev/farecheck/.
    ///   - device: The name put in scans; the path if `nil`.
    ///   - configuration: Line settings, feedback and timeouts.
    ///   - log: Receives commands the scanner refused or left unanswered, noise on the line, dropped data.
    public static func open(
        path: String,
        device: String? = nil,
        configuration: SSIConfiguration = SSIConfiguration(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> SSIConnection {
        let port = try SerialPort.open(path: path, settings: configuration.serial)
        let connection = SSIConnection(port: port, device: device ?? path, configuration: configuration, log: log)
        do {
            try await connection.start()
        } catch {
            // SCAN_ENABLE may have gone out before the failure (or cancellation): leave the scanner disabled.
            await connection.close()
            throw error
        }
        return connection
    }

    /// Runs SSI over a port that is already open and set up (a pseudo-terminal in the benchmark); call
    /// ``start()`` before reading.
    public init(
        port: SerialPort,
        device: String,
        configuration: SSIConfiguration = SSIConfiguration(),
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.port = port
        self.device = device
        self.configuration = configuration
        self.log = log
        self.session = SSISession(
            device: device, maximumScanSize: configuration.maximumScanSize, multipacket: configuration.multipacket)
    }

    /// Wakes the scanner and sends the start-up commands, returning when each was answered or timed out.
    public func start() async throws {
        try await port.write([0x00])
        try await Task.sleep(for: configuration.wakeUpDelay)
        var parameters = configuration.startupParameters
        if let mode = configuration.triggerMode {
            try await perform(session.send(command: .flushQueue))
            parameters.append(.triggerMode(mode))
        }
        // Temporary, like the other start-up parameters: the scanner's stored configuration stays its owner's, and
        // the mode is set again at every open (a replug, a daemon restart). A scanner that reboots on a line that
        // stays open comes back in its stored mode until the next open.
        try await perform(session.send(command: .paramSend(parameters)))
        try await perform(session.send(command: .scanEnable))
        if configuration.triggerMode == .host { try await openSession() }
        while !session.commandsSettled {
            guard try await step() else {
                throw ScannerConnectionError(
                    code: .deviceGone,
                    device: device,
                    message: "the line hung up during start-up"
                )
            }
        }
    }

    /// Waits for the next complete DECODE_DATA message, acknowledging packets and running host commands on the
    /// way; `nil` when the line hung up with nothing in flight.
    public func nextScan() async throws -> ScanEvent? {
        while ready.isEmpty {
            guard !closed else { return nil }
            guard try await step() else {
                if let lost = session.inFlight {
                    throw ScannerConnectionError(
                        code: .deviceGone, device: device, message: "the line hung up; \(lost)")
                }
                return nil
            }
        }
        return ready.removeFirst()
    }

    /// Queues BEEP and LED_ON for the verdict (LED_OFF follows after ``SSIConfiguration/ledDuration``).
    public func signal(_ feedback: ScanFeedback) async {
        guard !closed else { return }
        let beep = feedback == .good ? configuration.goodBeep : configuration.badBeep
        let leds = feedback == .good ? configuration.goodLEDs : configuration.badLEDs
        var actions = session.send(command: .beep(beep))
        if let pending = ledOff, pending.mask != leds {
            // A new verdict replaces the previous one's light at once.
            actions += session.send(command: .ledOff(pending.mask))
            ledOff = nil
        }
        if let leds {
            actions += session.send(command: .ledOn(leds))
            ledOff = (ContinuousClock.now + configuration.ledDuration, leds)
        }
        do {
            try await perform(actions)
        } catch {
            // The read loop finds out about a dead line and reports it; feedback never throws.
            log("\(device): feedback not sent: \(error)")
        }
        // A nextScan() waiting in poll() must take the new answer timer and LED timer into account.
        port.interruptRead()
    }

    /// Sends STOP_SESSION (host trigger mode) and SCAN_DISABLE, and closes the port.
    public func close() async {
        guard !closed else { return }
        closed = true
        // Not waiting for the ACKs: the scanner stops either way, and an unplugged one never answers.
        if configuration.triggerMode == .host { try? await port.write(SSIFrame.stopSession.encoded) }
        try? await port.write(SSIFrame.scanDisable.encoded)
        await port.close()
    }

    /// Queues START_SESSION, unless one is already waiting, and schedules the next.
    private func openSession() async throws {
        nextSession = .now + configuration.sessionRenewal
        guard !session.hasPendingCommand(.startSession) else { return }
        try await perform(session.send(command: .startSession))
    }

    // MARK: - The read loop

    /// Waits for bytes or the next timer and handles them; `false` when the line hung up cleanly.
    private func step() async throws -> Bool {
        try await fireDueTimers()
        guard ready.isEmpty, !closed else { return true }
        let result: SerialPort.ReadResult
        do {
            result = try await port.read(until: nextDeadline())
        } catch let error as ScannerConnectionError {
            if closed { return true }
            throw withInFlight(error)
        }
        switch result {
        case .bytes(let bytes):
            lastBytesAt = .now
            try await perform(session.receive(bytes, at: Date()))
        case .timedOut, .interrupted:
            break
        case .endOfFile:
            return closed
        }
        return true
    }

    private func nextDeadline() -> ContinuousClock.Instant? {
        var deadlines: [ContinuousClock.Instant] = []
        if session.hasIncompletePacket { deadlines.append(lastBytesAt + configuration.packetTimeout) }
        if session.hasPartialScan { deadlines.append(lastBytesAt + configuration.reassemblyTimeout) }
        if session.outstandingCommand != nil { deadlines.append(commandSentAt + configuration.answerTimeout) }
        if session.holdsAnswer { deadlines.append(lastBytesAt + configuration.multipacketGap) }
        if let ledOff { deadlines.append(ledOff.at) }
        if let nextSession { deadlines.append(nextSession) }
        return deadlines.min()
    }

    private func fireDueTimers() async throws {
        let now = ContinuousClock.now
        if session.hasIncompletePacket, now >= lastBytesAt + configuration.packetTimeout {
            try await perform(session.lineWentQuiet(at: Date()))
        }
        if session.hasPartialScan, now >= lastBytesAt + configuration.reassemblyTimeout {
            try await perform(session.abandonPartialScan(reason: "its next packet did not come"))
        }
        if session.outstandingCommand != nil, now >= commandSentAt + configuration.answerTimeout {
            try await perform(session.commandTimedOut())
        }
        if session.holdsAnswer, now >= lastBytesAt + configuration.multipacketGap {
            try await perform(session.answerGapElapsed(at: Date()))
        }
        if let pending = ledOff, now >= pending.at {
            ledOff = nil
            try await perform(session.send(command: .ledOff(pending.mask)))
        }
        if let due = nextSession, now >= due { try await openSession() }
    }

    private func perform(_ actions: [SSISession.Action]) async throws {
        for action in actions {
            switch action {
            case .send(let bytes):
                do {
                    try await port.write(bytes)
                } catch let error as ScannerConnectionError {
                    throw withInFlight(error)
                }
            case .deliver(let scan):
                ready.append(scan)
            case .log(let line):
                log(line)
            }
        }
        if session.commandSerial != commandSerial {
            commandSerial = session.commandSerial
            commandSentAt = .now
        }
        // A decode ends a host-triggered session: open the next at once, for the next passenger.
        if configuration.triggerMode == .host, !closed, actions.contains(where: \.isDelivery) {
            try await openSession()
        }
    }

    /// Adds to a "device gone" error what was lost with the device, so that the one log line says it.
    private func withInFlight(_ error: ScannerConnectionError) -> ScannerConnectionError {
        guard error.code == .deviceGone, let lost = session.inFlight else { return error }
        var error = error
        error.message += "; \(lost)"
        return error
    }
}

extension SSISession.Action {
    fileprivate var isDelivery: Bool {
        if case .deliver = self { true } else { false }
    }
}
