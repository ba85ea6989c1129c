import Foundation
import Scanners
import Synchronization

/// A Zebra SSI scanner on the far side of a pseudo-terminal, for tests.
///
/// A thread of its own reads what the host writes, acknowledges each host command the way a scanner does
/// (unless told to refuse it) and passes the host's packets to the test: commands on ``commands``, the host's
/// ACKs and NAKs of the simulator's own packets through ``send(_:)``. Closing it is unplugging the scanner.
public final class SSISimulator: Sendable {
    public let terminal: PseudoTerminal
    /// The path a reader opens.
    public var path: String { terminal.replicaPath }

    private let commandStream: AsyncStream<SSIFrame>
    private let commandContinuation: AsyncStream<SSIFrame>.Continuation
    private let answerStream: AsyncStream<SSIFrame>
    private let answerContinuation: AsyncStream<SSIFrame>.Continuation
    private let refusals = Mutex<[SSIOpcode: [SSINakCause]]>([:])
    private let writeLock = Mutex(())
    private let stopped = Mutex(false)
    private let finished = Mutex(false)

    public init() throws {
        terminal = try PseudoTerminal()
        (commandStream, commandContinuation) = AsyncStream.makeStream(of: SSIFrame.self)
        (answerStream, answerContinuation) = AsyncStream.makeStream(of: SSIFrame.self)
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Unplugs the scanner: its thread stops and the pseudo-terminal closes.
    public func unplug() {
        stopped.withLock { $0 = true }
        while !finished.withLock({ $0 }) { usleep(1000) }
        terminal.close()
        commandContinuation.finish()
        answerContinuation.finish()
    }

    /// Answers the next host commands with `opcode` with these NAK causes, one per command, instead of an ACK.
    public func refuse(_ opcode: SSIOpcode, with causes: [SSINakCause]) {
        refusals.withLock { $0[opcode, default: []] += causes }
    }

    /// Writes bytes as the scanner, whatever they are (noise, half packets).
    public func write(_ bytes: [UInt8]) throws {
        try writeLock.withLock { _ in try terminal.write(bytes) }
    }

    /// Sends one packet and returns the host's answer to it (CMD_ACK or CMD_NAK).
    public func send(_ packet: [UInt8]) async throws -> SSIFrame {
        try write(packet)
        return try await nextAnswer()
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

    /// The DECODE_DATA packets of a scan.
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
            // One consumer at a time, so a fresh iterator over the same stream takes up where the last left off.
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

    private func nextAnswer() async throws -> SSIFrame {
        try await within(10, "the host's ACK or NAK") { [self] in
            var iterator = answerStream.makeAsyncIterator()
            guard let frame = await iterator.next() else { throw TimedOut(what: "an answer (simulator unplugged)") }
            return frame
        }
    }

    private func run() {
        var framer = SSIFramer(expecting: .host)
        defer { finished.withLock { $0 = true } }
        while !stopped.withLock({ $0 }) {
            let result: PseudoTerminal.ReadResult
            do {
                result = try terminal.read(timeout: .milliseconds(10))
            } catch {
                return
            }
            switch result {
            case .timedOut:
                continue
            case .replicaClosed:
                // Nobody has the line open: wait for the host to open it again.
                usleep(2000)
                continue
            case .bytes(let bytes):
                framer.append(bytes)
            }
            while let output = framer.next() {
                guard case .frame(let frame) = output else { continue }
                if frame.opcode == .commandAck || frame.opcode == .commandNak {
                    answerContinuation.yield(frame)
                    continue
                }
                let refusal = refusals.withLock { refusals -> SSINakCause? in
                    guard var causes = refusals[frame.opcode], !causes.isEmpty else { return nil }
                    let cause = causes.removeFirst()
                    refusals[frame.opcode] = causes
                    return cause
                }
                let answer = refusal.map { SSIFrame.nak($0, from: .decoder) } ?? SSIFrame.ack(from: .decoder)
                try? write(answer.encoded)
                commandContinuation.yield(frame)
            }
        }
    }
}
