import Scanners
import Foundation
import Synchronization

/// A Zebra SSI scanner simulated on a pseudo-terminal: the hardware's side of the line, for tests, benchmarks
/// and demos on machines with no scanner.
///
/// It behaves as a real decoder does on the wire: it acknowledges every host command, sends nothing until the
/// host has enabled scanning, splits a long payload into DECODE_DATA packets and sends each next packet only
/// after the host has acknowledged the previous one. Point a ``SSIConnection`` (or `farecheck daemon`) at
/// ``devicePath``.
public final class SimulatedSSIScanner: Sendable {
    /// What the simulated scanner has seen and has still to send.
    private struct State {
        var queue: [[[UInt8]]] = []
        var commands: [SSIOpcode] = []
        var enabled = false
        var stopped = false
        var sentScans = 0
        var sentAt: [ContinuousClock.Instant] = []
    }

    private let terminal: PseudoTerminal
    private let state = Mutex(State())
    private let finished = DispatchSemaphore(value: 0)

    /// The node the host opens (the pseudo-terminal's replica).
    public var devicePath: String { terminal.replicaPath }

    /// Creates the pseudo-terminal and starts the scanner's thread.
    public init() throws(ScannerConnectionError) {
        terminal = try PseudoTerminal()
        let thread = Thread { [self] in
            run()
            finished.signal()
        }
        thread.name = "simulated SSI scanner"
        thread.start()
    }

    /// Queues a scan of `payload`; it goes out as soon as scanning is enabled and earlier scans are sent.
    /// `barcodeType` is the SSI code of the symbology (0x2D Aztec, 0x1C QR).
    public func scan(_ payload: [UInt8], barcodeType: UInt8 = 0x2D) {
        let chunk = SSIFrame.maximumDataCount - 1
        let packets = stride(from: 0, to: max(payload.count, 1), by: chunk).map { start in
            let end = min(start + chunk, payload.count)
            return SSIFrame(
                opcode: .decodeData, source: .decoder, status: end < payload.count ? .continuation : [],
                data: [barcodeType] + payload[start..<end]
            ).encoded
        }
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

    /// Unplugs the scanner: the thread ends and the pseudo-terminal closes (the host sees the device vanish).
    public func stop() {
        let wasRunning = state.withLock { state in
            defer { state.stopped = true }
            return !state.stopped
        }
        if wasRunning {
            finished.wait()
            terminal.close()
        }
    }

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
            case .replicaClosed: usleep(1000)
            }
            while let output = framer.next() {
                guard case .frame(let frame) = output else { continue }
                if frame.opcode == .commandAck {
                    awaitingAck = false
                    continue
                }
                if frame.opcode == .commandNak { continue }
                state.withLock { state in
                    state.commands.append(frame.opcode)
                    if frame.opcode == .scanEnable { state.enabled = true }
                    if frame.opcode == .scanDisable { state.enabled = false }
                }
                try? terminal.write(SSIFrame.ack(from: .decoder).encoded)
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
                    try terminal.write(packet)
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
