import Foundation
import Scanners
import Synchronization

/// A Zebra SSI scanner simulated on a pseudo-terminal: the hardware's side of the line, for tests, benchmarks
/// and demos on machines with no scanner. Point a ``SSIConnection`` (or `farecheck daemon`) at ``devicePath``.
///
/// It behaves as a real decoder does on the wire: a thread of its own reads what the host writes and acknowledges
/// every host command (or refuses it with a NAK, when told to by ``refuse(_:with:)``). It can be driven two ways:
/// - by queueing scans (``scan(_:barcodeType:)``): it sends nothing until the host has enabled scanning, splits a
///   long payload into DECODE_DATA packets and sends each next packet only after the host has acknowledged the
///   previous one, on its own (the daemon and the benchmarks);
/// - packet by packet from a test: ``send(_:)`` writes one packet and returns the host's ACK or NAK,
///   ``sendScan(_:type:chunk:)`` sends a scan answering NAKs with retransmissions, ``write(_:)`` writes any bytes
///   (noise, half packets), and ``nextCommand()`` hands over each host command once answered.
///
/// ``stop()`` is unplugging the scanner: its thread ends and the pseudo-terminal closes (the device vanishes).
public final class SimulatedSSIScanner: Sendable {
    /// What the simulated scanner has seen and has still to send.
    private struct State {
        var queue: [[[UInt8]]] = []
        var commands: [SSIOpcode] = []
        var refusals: [SSIOpcode: [SSINakCause]] = [:]
        var enabled = false
        var stopped = false
        var sentScans = 0
        var sentAt: [ContinuousClock.Instant] = []
    }

    private let terminal: PseudoTerminal
    private let state = Mutex(State())
    /// Held for every write, so that a test's packets and the thread's answers never interleave.
    private let writeLock = Mutex(())
    private let finished = DispatchSemaphore(value: 0)
    private let commandStream: AsyncStream<SSIFrame>
    private let commandContinuation: AsyncStream<SSIFrame>.Continuation
    private let answerStream: AsyncStream<SSIFrame>
    private let answerContinuation: AsyncStream<SSIFrame>.Continuation

    /// The node the host opens (the pseudo-terminal's replica).
    public var devicePath: String { terminal.replicaPath }

    /// Creates the pseudo-terminal and starts the scanner's thread.
    public init() throws(ScannerConnectionError) {
        terminal = try PseudoTerminal()
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

    /// Queues a scan of `payload`; it goes out as soon as scanning is enabled and earlier scans are sent.
    /// `barcodeType` is the SSI code of the symbology (0x2D Aztec, 0x1C QR).
    public func scan(_ payload: [UInt8], barcodeType: UInt8 = 0x2D) {
        let packets = Self.decodeDataPackets(payload, type: barcodeType).map(\.encoded)
        state.withLock { $0.queue.append(packets) }
    }

    /// The host's commands received so far, in order (ACKs excluded).
    public var commands: [SSIOpcode] { state.withLock { $0.commands } }

    /// Whether the host has sent SCAN_ENABLE.
    public var isEnabled: Bool { state.withLock { $0.enabled } }

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
        var sending: [[UInt8]] = []
        var awaitingAck = false
        var sentAt = ContinuousClock.now
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
                    // The answer to a queued scan's packet is the thread's; any other goes to the test's send().
                    if awaitingAck {
                        if frame.opcode == .commandAck { awaitingAck = false }
                    } else {
                        answerContinuation.yield(frame)
                    }
                    continue
                }
                let refusal = state.withLock { state -> SSINakCause? in
                    state.commands.append(frame.opcode)
                    if frame.opcode == .scanEnable { state.enabled = true }
                    if frame.opcode == .scanDisable { state.enabled = false }
                    guard var causes = state.refusals[frame.opcode], !causes.isEmpty else { return nil }
                    let cause = causes.removeFirst()
                    state.refusals[frame.opcode] = causes
                    return cause
                }
                let answer = refusal.map { SSIFrame.nak($0, from: .decoder) } ?? SSIFrame.ack(from: .decoder)
                try? write(answer.encoded)
                commandContinuation.yield(frame)
            }
            // A host that vanished (killed, unplugged) never acknowledges: like a real decoder, give up on the
            // packet after a while and go on.
            if awaitingAck, ContinuousClock.now - sentAt > .seconds(2) { awaitingAck = false }
            guard !awaitingAck else { continue }
            if sending.isEmpty {
                sending = state.withLock { state in
                    guard state.enabled, !state.queue.isEmpty else { return [] }
                    return state.queue.removeFirst()
                }
            }
            if !sending.isEmpty {
                let packet = sending.removeFirst()
                let now = ContinuousClock.now
                do {
                    try write(packet)
                } catch {
                    return
                }
                awaitingAck = true
                sentAt = .now
                if sending.isEmpty {
                    state.withLock {
                        $0.sentScans += 1
                        $0.sentAt.append(now)
                    }
                }
            }
        }
    }
}
