import DeviceSettings
import Foundation
import Scanners
import Synchronization

/// A Zebra SSI scanner simulated on a pseudo-terminal: the hardware's side of the line, for tests, benchmarks
/// and demos on machines with no scanner. Point a ``SSIConnection`` (or `farecheck daemon`) at ``devicePath``.
///
/// It behaves as a real decoder does on the wire: a thread of its own reads what the host writes and acknowledges
/// every host command (or refuses it with a NAK, when told to by ``refuse(_:with:)``). It can be driven two ways:
/// - by queueing scans (``scan(_:barcodeType:damaging:)``): it sends nothing until the host has enabled scanning
///   and, in host trigger mode, opened a decode session; it splits a long payload into DECODE_DATA packets and
///   sends them as its multipacket option says (``Multipacket``), answering a NAK resend, or a missing answer
///   after ``responseTimeout``, by sending again (twice at most), on its own (the daemon and the benchmarks);
/// - packet by packet from a test: ``send(_:)`` writes one packet and returns the host's ACK or NAK,
///   ``sendScan(_:type:chunk:)`` sends a scan answering NAKs with retransmissions, ``write(_:)`` writes any bytes
///   (noise, half packets), and ``nextCommand()`` hands over each host command once answered.
///
/// Its settings are what another host may have left in it: a ``triggerMode`` (PARAM_SEND 0x8A changes it; the
/// simulator counts writes with the permanent bit, which farecheck never makes), a multipacket option, and in
/// host trigger mode sessions that end after one decode, at STOP_SESSION, or after ``sessionTimeout``.
/// FLUSH_QUEUE discards decode data left queued from before (``leaveQueued(_:barcodeType:)``).
///
/// ``stop()`` is unplugging the scanner: its thread ends and the pseudo-terminal closes (the device vanishes).
public final class SimulatedSSIScanner: Sendable {
    /// How the simulated scanner sends a scan of several packets: its multipacket option.
    public enum Multipacket: Sendable, Hashable {
        /// Option 1: waits for the host's answer after every packet; NAK resend has it send that packet again.
        case option1
        /// Option 2: sends every packet without waiting, then waits for one answer: ACK, or NAK resend, which has
        /// it send the whole scan again.
        case option2
        /// Option 3: as option 2, with `interPacketDelay` between two packets.
        case option3(interPacketDelay: Duration)
    }

    /// Something the scanner sends on its own.
    private struct Outgoing {
        var packets: [SSIFrame]
        /// Packets whose first sending has a broken checksum (line damage).
        var damaged: Set<Int> = []
        /// Decode data (sent only while scanning is allowed), rather than a frame such as an event.
        var isScan = true
        /// Decode data queued before the host took the scanner over: FLUSH_QUEUE discards it.
        var stale = false
    }

    /// What the simulated scanner has seen and has still to send.
    private struct State {
        var queue: [Outgoing] = []
        var commands: [SSIOpcode] = []
        var refusals: [SSIOpcode: [SSINakCause]] = [:]
        var enabled = false
        var stopped = false
        var sentScans = 0
        var sentAt: [ContinuousClock.Instant] = []
        var triggerMode: SSITriggerMode
        var permanentWrites = 0
        var sessionOpenedAt: ContinuousClock.Instant?
        var sessionsStarted = 0
        var sessionsEnded = 0
        var answers: [SSIFrame] = []
        var answersDuringStreams = 0
        var retransmissions = 0
        var rounds = 0
        /// Something taken from the queue is being sent or waits for its answer.
        var transmitting = false

        /// Whether a queued scan may go out now.
        var scanning: Bool { enabled && (triggerMode != .host || sessionOpenedAt != nil) }

        mutating func endSession() {
            guard sessionOpenedAt != nil else { return }
            sessionOpenedAt = nil
            sessionsEnded += 1
        }
    }

    /// The sending of one ``Outgoing``, on the scanner's thread.
    private struct Transmission {
        var outgoing: Outgoing
        var streamed: Bool
        /// The packet to write next.
        var next = 0
        var awaitingAnswer = false
        var lastWrite = ContinuousClock.now
        var nextWrite = ContinuousClock.now
        /// Sendings again of the current packet (option 1) or scan (options 2 and 3).
        var resends = 0
        var damageDone: Set<Int> = []
        var counted = false
    }

    private let terminal: PseudoTerminal
    private let state: Mutex<State>
    /// Held for every write, so that a test's packets and the thread's answers never interleave.
    private let writeLock = Mutex(())
    private let finished = DispatchSemaphore(value: 0)
    private let commandStream: AsyncStream<SSIFrame>
    private let commandContinuation: AsyncStream<SSIFrame>.Continuation
    private let answerStream: AsyncStream<SSIFrame>
    private let answerContinuation: AsyncStream<SSIFrame>.Continuation

    /// How the scanner sends scans of several packets.
    public let multipacket: Multipacket
    /// In host trigger mode, how long a decode session stays open without a decode; `nil` for ever.
    public let sessionTimeout: Duration?
    /// How long the scanner waits for the host's answer before sending again (its "host serial response
    /// time-out"; 2 s is the factory setting).
    public let responseTimeout: Duration

    /// The node the host opens (the pseudo-terminal's replica).
    public var devicePath: String { terminal.replicaPath }

    /// Creates the pseudo-terminal and starts the scanner's thread, with the settings another host left: by
    /// default a presentation-mode scanner that waits for an ACK after each packet.
    public init(
        triggerMode: SSITriggerMode = .presentation, multipacket: Multipacket = .option1,
        sessionTimeout: Duration? = nil, responseTimeout: Duration = .seconds(2)
    ) throws(ScannerConnectionError) {
        terminal = try PseudoTerminal()
        state = Mutex(State(triggerMode: triggerMode))
        self.multipacket = multipacket
        self.sessionTimeout = sessionTimeout
        self.responseTimeout = responseTimeout
        (commandStream, commandContinuation) = AsyncStream.makeStream(of: SSIFrame.self)
        (answerStream, answerContinuation) = AsyncStream.makeStream(of: SSIFrame.self)
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "simulated SSI scanner"
        thread.start()
    }

    // MARK: Scans sent on its own

    /// Queues a scan of `payload`; it goes out as soon as scanning is allowed and earlier scans are sent.
    /// `barcodeType` is the SSI code of the symbology (0x2D Aztec, 0x1C QR); the packets numbered in `damaging`
    /// (from 0) arrive damaged the first time they are sent.
    public func scan(_ payload: [UInt8], barcodeType: UInt8 = 0x2D, damaging: Set<Int> = []) {
        let packets = Self.decodeDataPackets(payload, type: barcodeType)
        state.withLock { $0.queue.append(Outgoing(packets: packets, damaged: damaging)) }
    }

    /// Queues decode data as if it had waited in the scanner since before this host took it over (a scan no host
    /// read): FLUSH_QUEUE discards it; a host that does not flush receives it once scanning is enabled.
    public func leaveQueued(_ payload: [UInt8], barcodeType: UInt8 = 0x2D) {
        let packets = Self.decodeDataPackets(payload, type: barcodeType)
        state.withLock { $0.queue.append(Outgoing(packets: packets, stale: true)) }
    }

    /// Queues a frame the scanner sends on its own (an event, a newer model's message): it goes out in turn,
    /// waits for the host's answer and is sent again, twice at most, when none comes in ``responseTimeout``.
    public func transmit(_ frame: SSIFrame) {
        state.withLock { $0.queue.append(Outgoing(packets: [frame], isScan: false)) }
    }

    /// The host's commands received so far, in order (ACKs excluded).
    public var commands: [SSIOpcode] { state.withLock { $0.commands } }

    /// Whether the host has sent SCAN_ENABLE.
    public var isEnabled: Bool { state.withLock { $0.enabled } }

    /// The trigger mode now: the one it was created with until a PARAM_SEND sets parameter 0x8A.
    public var triggerMode: SSITriggerMode { state.withLock { $0.triggerMode } }

    /// PARAM_SENDs received with the permanent bit (which rewrite the scanner's stored configuration).
    public var permanentParameterWrites: Int { state.withLock { $0.permanentWrites } }

    /// Whether a decode session is open (START_SESSION received, and not yet ended).
    public var isInSession: Bool { state.withLock { $0.sessionOpenedAt != nil } }

    /// START_SESSIONs received.
    public var sessionsStarted: Int { state.withLock { $0.sessionsStarted } }

    /// Sessions ended: by a decode, STOP_SESSION or the ``sessionTimeout``.
    public var sessionsEnded: Int { state.withLock { $0.sessionsEnded } }

    /// The host's answers to what the scanner sent on its own (scans, ``transmit(_:)``), in order.
    public var answers: [SSIFrame] { state.withLock { $0.answers } }

    /// Answers that came while a scan was being streamed (options 2 and 3 expect one at the end only).
    public var answersDuringStreams: Int { state.withLock { $0.answersDuringStreams } }

    /// Packets (option 1) or whole scans (options 2 and 3) and frames sent again after a NAK or no answer.
    public var retransmissions: Int { state.withLock { $0.retransmissions } }

    /// Whether everything queued has been sent and answered (or given up on), and nothing waits for its turn.
    public var isIdle: Bool { state.withLock { $0.queue.isEmpty && !$0.transmitting } }

    /// How many times the thread has looked at the line and its queue: waiting for a few more rounds is waiting
    /// until it has had every chance to send what it would send.
    public var rounds: Int { state.withLock { $0.rounds } }

    /// When the last packet of each scan sent so far was written, in order (for latency measurements).
    public var sendTimes: [ContinuousClock.Instant] { state.withLock { $0.sentAt } }

    /// How many queued scans have been sent whole.
    public var sentScans: Int { state.withLock { $0.sentScans } }

    /// Waits until `condition` holds or `timeout` passes; returns whether it held.
    public func wait(timeout: Duration, until condition: (SimulatedSSIScanner) -> Bool) -> Bool {
        let giveUp = ContinuousClock.now + timeout
        while ContinuousClock.now < giveUp {
            if condition(self) { return true }
            usleep(2000)
        }
        return condition(self)
    }

    /// Waits, without holding a thread, until `condition` holds or `timeout` passes; returns whether it held.
    public func waitUntil(timeout: Duration, _ condition: (SimulatedSSIScanner) -> Bool) async -> Bool {
        let giveUp = ContinuousClock.now + timeout
        while ContinuousClock.now < giveUp {
            if condition(self) { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return condition(self)
    }

    // MARK: Packets sent by a test

    /// Answers the next host commands with `opcode` with these NAK causes, one per command, instead of an ACK.
    public func refuse(_ opcode: SSIOpcode, with causes: [SSINakCause]) {
        state.withLock { $0.refusals[opcode, default: []] += causes }
    }

    /// Writes bytes as the scanner, whatever they are (noise, half packets).
    public func write(_ bytes: [UInt8]) throws(ScannerConnectionError) {
        try writeLock.withLock { _ throws(ScannerConnectionError) in try terminal.write(bytes) }
    }

    /// Sends one packet and returns the host's answer to it (CMD_ACK or CMD_NAK).
    public func send(_ packet: [UInt8]) async throws -> SSIFrame {
        try write(packet)
        return try await within(10, "the host's ACK or NAK") { [self] in
            // One consumer at a time, so a fresh iterator over the same stream takes up where the last left off.
            var iterator = answerStream.makeAsyncIterator()
            guard let frame = await iterator.next() else { throw TimedOut(what: "an answer (simulator unplugged)") }
            return frame
        }
    }

    /// The host's next ACK or NAK that the scanner's thread did not take as the answer to its own sending (after
    /// ``write(_:)``).
    public func nextAnswer() async throws -> SSIFrame {
        try await within(10, "the host's ACK or NAK") { [self] in
            var iterator = answerStream.makeAsyncIterator()
            guard let frame = await iterator.next() else { throw TimedOut(what: "an answer (simulator unplugged)") }
            return frame
        }
    }

    /// Sends a scan the way a scanner does: DECODE_DATA packets of at most `chunk` data bytes, the
    /// continuation bit on all but the last, each sent again (retransmission bit set) when the host NAKs it.
    public func sendScan(_ payload: [UInt8], type: UInt8 = 0x2D, chunk: Int = 250) async throws {
        for packet in Self.decodeDataPackets(payload, type: type, chunk: chunk) {
            var frame = packet
            var answer = try await send(frame.encoded)
            while answer.opcode == .commandNak {
                frame.status.insert(.retransmission)
                answer = try await send(frame.encoded)
            }
        }
    }

    /// The DECODE_DATA packets of a scan: at most `chunk` payload bytes each (250, the most a packet carries
    /// beside the barcode type), the continuation bit on all but the last.
    public static func decodeDataPackets(_ payload: [UInt8], type: UInt8, chunk: Int = 250) -> [SSIFrame] {
        var packets: [SSIFrame] = []
        var offset = 0
        repeat {
            let end = min(offset + chunk, payload.count)
            let last = end == payload.count
            packets.append(
                SSIFrame(
                    opcode: .decodeData,
                    source: .decoder,
                    status: last ? [] : .continuation,
                    data: [type] + payload[offset..<end]
                )
            )
            offset = end
        } while offset < payload.count
        return packets
    }

    /// The next command the host sent (PARAM_SEND, SCAN_ENABLE, BEEP, LED_ON, …), already answered.
    public func nextCommand() async throws -> SSIFrame {
        try await within(10, "a host command") { [self] in
            var iterator = commandStream.makeAsyncIterator()
            guard let frame = await iterator.next() else { throw TimedOut(what: "a command (simulator unplugged)") }
            return frame
        }
    }

    /// Waits until the host has enabled scanning (the end of its start-up), returning the commands until then.
    public func awaitStartup() async throws -> [SSIFrame] {
        var commands: [SSIFrame] = []
        repeat {
            commands.append(try await nextCommand())
        } while commands.last?.opcode != .scanEnable
        return commands
    }

    // MARK: Unplugging

    /// Unplugs the scanner: the thread ends and the pseudo-terminal closes (the host sees the device vanish).
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        guard wasRunning else { return }
        finished.wait()
        terminal.close()
        commandContinuation.finish()
        answerContinuation.finish()
    }

    // MARK: The scanner's thread

    private func run() {
        var framer = SSIFramer(expecting: .host)
        var current: Transmission?
        while !state.withLock({ $0.stopped }) {
            let result: PseudoTerminal.ReadResult
            do {
                result = try terminal.read(timeout: .milliseconds(1))
            } catch {
                return
            }
            switch result {
            case .bytes(let bytes): framer.append(bytes)
            case .timedOut: break
            // Nobody has the line open: wait for the host to open it (again).
            case .replicaClosed: usleep(1000)
            }
            while let output = framer.next() {
                guard case .frame(let frame) = output else { continue }
                if frame.opcode == .commandAck || frame.opcode == .commandNak {
                    // The answer to the scanner's own sending is the thread's; any other goes to the test's send().
                    if var sending = current, sending.awaitingAnswer {
                        state.withLock { $0.answers.append(frame) }
                        current = answered(&sending, with: frame) ? nil : sending
                    } else if current?.streamed == true {
                        state.withLock {
                            $0.answers.append(frame)
                            $0.answersDuringStreams += 1
                        }
                    } else {
                        answerContinuation.yield(frame)
                    }
                    continue
                }
                obey(frame)
            }
            let now = ContinuousClock.now
            state.withLock { state in
                state.rounds += 1
                if let opened = state.sessionOpenedAt, let sessionTimeout, now - opened > sessionTimeout {
                    state.endSession()
                }
            }
            if var sending = current, sending.awaitingAnswer, now - sending.lastWrite > responseTimeout {
                // No answer: send again as on NAK resend (a host that vanished never answers; give up after two).
                current = answered(&sending, with: .nak(.resend)) ? nil : sending
            }
            if current == nil {
                current = state.withLock { state -> Transmission? in
                    guard let head = state.queue.first, !head.isScan || state.scanning else { return nil }
                    state.queue.removeFirst()
                    state.transmitting = true
                    // A decode ends a host-triggered session.
                    if head.isScan, state.triggerMode == .host { state.endSession() }
                    let streamed = head.isScan && head.packets.count > 1 && multipacket != .option1
                    return Transmission(outgoing: head, streamed: streamed)
                }
            }
            if var sending = current {
                do {
                    try writeDue(&sending)
                } catch {
                    return
                }
                current = sending
            }
            let busy = current != nil
            state.withLock { $0.transmitting = busy }
        }
    }

    /// Takes the host's answer to the current sending; returns whether the sending is over.
    private func answered(_ sending: inout Transmission, with answer: SSIFrame) -> Bool {
        sending.awaitingAnswer = false
        if answer.opcode == .commandAck {
            guard !sending.streamed else { return true }
            sending.next += 1
            sending.resends = 0
            return sending.next == sending.outgoing.packets.count
        }
        // NAK: only "resend" asks for it again, and twice at most; on any other cause the scanner drops it.
        guard answer.data.first == SSINakCause.resend.rawValue, sending.resends < 2 else { return true }
        sending.resends += 1
        if sending.streamed { sending.next = 0 }
        state.withLock { $0.retransmissions += 1 }
        return false
    }

    /// Writes what is due of the current sending: the next packet (option 1), or the packets of a stream.
    private func writeDue(_ sending: inout Transmission) throws(ScannerConnectionError) {
        let packets = sending.outgoing.packets
        while !sending.awaitingAnswer, sending.next < packets.count {
            let now = ContinuousClock.now
            guard now >= sending.nextWrite else { return }
            var frame = packets[sending.next]
            if sending.resends > 0 { frame.status.insert(.retransmission) }
            var bytes = frame.encoded
            if sending.outgoing.damaged.contains(sending.next), sending.damageDone.insert(sending.next).inserted {
                bytes[bytes.count - 1] ^= 0x5A
            }
            try write(bytes)
            let last = sending.next == packets.count - 1
            if last, sending.outgoing.isScan, !sending.counted {
                sending.counted = true
                state.withLock {
                    $0.sentScans += 1
                    $0.sentAt.append(now)
                }
            }
            sending.lastWrite = .now
            guard sending.streamed else {
                sending.awaitingAnswer = true
                return
            }
            sending.next += 1
            if sending.next == packets.count {
                sending.awaitingAnswer = true
            } else if case .option3(let delay) = multipacket {
                sending.nextWrite = .now + delay
            }
        }
    }

    /// Carries out a host command and answers it (ACK, or the NAK a test asked for).
    private func obey(_ frame: SSIFrame) {
        let refusal = state.withLock { state -> SSINakCause? in
            state.commands.append(frame.opcode)
            if var causes = state.refusals[frame.opcode], !causes.isEmpty {
                let cause = causes.removeFirst()
                state.refusals[frame.opcode] = causes
                return cause
            }
            switch frame.opcode {
            case .scanEnable: state.enabled = true
            case .scanDisable: state.enabled = false
            case .flushQueue: state.queue.removeAll { $0.stale }
            case .startSession:
                state.sessionOpenedAt = .now
                state.sessionsStarted += 1
            case .stopSession: state.endSession()
            case .paramSend:
                if frame.status.contains(.permanentChange) { state.permanentWrites += 1 }
                for (number, value) in Self.parameters(in: frame.data) where number == 0x8A {
                    if let mode = SSITriggerMode(parameterValue: value) { state.triggerMode = mode }
                }
            default: break
            }
            return nil
        }
        let answer = refusal.map { SSIFrame.nak($0, from: .decoder) } ?? SSIFrame.ack(from: .decoder)
        try? write(answer.encoded)
        commandContinuation.yield(frame)
    }

    /// The parameter settings of a PARAM_SEND's data: a beep code, then `nn vv` or `F0 nn vv` (256 + nn).
    private static func parameters(in data: [UInt8]) -> [(number: Int, value: UInt8)] {
        var settings: [(number: Int, value: UInt8)] = []
        var index = 1
        while index + 1 < data.count {
            if data[index] == 0xF0, index + 2 < data.count {
                settings.append((256 + Int(data[index + 1]), data[index + 2]))
                index += 3
            } else {
                settings.append((Int(data[index]), data[index + 1]))
                index += 2
            }
        }
        return settings
    }
}
