import FareCore
import Foundation

/// The host's side of an SSI conversation, without I/O: bytes in, packets to send and scans out.
///
/// It acknowledges every good packet from the scanner (CMD_ACK), asks for a damaged one again (CMD_NAK, cause
/// resend), reassembles DECODE_DATA that spans several packets, recognises a packet the scanner sent twice
/// because an ACK was lost, and keeps host commands (BEEP, LED, PARAM_SEND, …) one at a time in flight,
/// resending once on NAK resend and giving up with a log line on any other NAK.
///
/// ``SSIConnection`` drives it with a serial port and a clock; tests drive it with byte arrays.
public struct SSISession: Sendable {
    /// Something the session wants done.
    public enum Action: Sendable, Hashable {
        /// Write these bytes to the scanner.
        case send([UInt8])
        /// A complete scan.
        case deliver(ScanEvent)
        /// A line for the log.
        case log(String)
    }

    /// The device name put in scans and log lines.
    public let device: String
    /// A reassembled scan larger than this is dropped (a scanner gone mad must not exhaust memory).
    public let maximumScanSize: Int

    private var framer = SSIFramer(expecting: .decoder)
    private var message: PartialMessage?
    /// Packets of an oversized message are acknowledged and thrown away until its last packet.
    private var discardingMessage = false
    private var lastAccepted: AcceptedPacket?
    /// Whether the last answer to the scanner was a NAK: then a retransmission is the packet we asked for,
    /// not a copy of the one accepted before it.
    private var lastAnswerWasNak = false
    private var naksInARow = 0

    private var commandQueue: [SSIFrame] = []
    private var outstanding: (frame: SSIFrame, resent: Bool)?
    /// Changes every time a command is written, so that the connection can restart its answer timer.
    public private(set) var commandSerial = 0

    private struct PartialMessage {
        var barcodeType: UInt8
        var payload: [UInt8]
        var packets: Int
    }

    private struct AcceptedPacket: Equatable {
        var opcode: SSIOpcode
        var status: SSIStatus
        var data: [UInt8]

        init(_ frame: SSIFrame) {
            opcode = frame.opcode
            status = frame.status.subtracting(.retransmission)
            data = frame.data
        }
    }

    /// Creates a session for `device`.
    public init(device: String, maximumScanSize: Int = 64 * 1024) {
        self.device = device
        self.maximumScanSize = maximumScanSize
    }

    /// The host command sent and not yet answered, if any.
    public var outstandingCommand: SSIFrame? { outstanding?.frame }

    /// Whether every command queued has been answered (or given up on).
    public var commandsSettled: Bool { outstanding == nil && commandQueue.isEmpty }

    /// Whether bytes of a packet have arrived and the rest has not (or they are noise).
    public var hasIncompletePacket: Bool { framer.bufferedByteCount > 0 }

    /// Whether part of a multipacket scan has been accepted and the rest has not arrived.
    public var hasPartialScan: Bool { message != nil }

    /// What would be lost if the line died now: part of a scan, or part of a packet; `nil` if nothing.
    public var inFlight: String? {
        if let message {
            return "a scan in flight was dropped (\(message.payload.count) bytes in \(message.packets) packets "
                + "received, the rest never came)"
        }
        if framer.bufferedByteCount > 0 {
            return "\(framer.bufferedByteCount) bytes of an incomplete packet were dropped"
        }
        return nil
    }

    // MARK: Input

    /// Takes bytes from the line; `receivedAt` becomes the time of scans completed by them.
    public mutating func receive(_ bytes: some Sequence<UInt8>, at receivedAt: Date) -> [Action] {
        framer.append(bytes)
        return drain(receivedAt: receivedAt)
    }

    /// The line has been quiet for a packet's time: an incomplete packet will not be completed.
    public mutating func lineWentQuiet(at now: Date) -> [Action] {
        framer.lineWentQuiet()
        return drain(receivedAt: now)
    }

    /// Gives up on a scan whose remaining packets stopped coming.
    public mutating func abandonPartialScan(reason: String) -> [Action] {
        guard let message else { return [] }
        self.message = nil
        return [.log("\(device): dropped a partial scan of \(message.payload.count) bytes: \(reason)")]
    }

    private mutating func drain(receivedAt: Date) -> [Action] {
        var actions: [Action] = []
        var noise = 0
        while let output = framer.next() {
            switch output {
            case .frame(let frame):
                handle(frame, receivedAt: receivedAt, into: &actions)
            case .corrupt(let nakWanted):
                guard nakWanted else { continue }
                actions.append(.send(SSIFrame.nak(.resend).encoded))
                lastAnswerWasNak = true
                naksInARow += 1
                // The scanner resends a packet at most twice; after a third failure it has given up on the
                // message, and its next packet starts a new one.
                if naksInARow >= 3 {
                    actions += abandonPartialScan(reason: "the scanner could not get a packet through")
                }
            case .discarded(let count):
                noise += count
            }
        }
        if noise > 0 {
            actions.append(
                .log("\(device): skipped \(noise) bytes that are not SSI packets (is the scanner set to packeted SSI?)")
            )
        }
        return actions
    }

    private mutating func handle(_ frame: SSIFrame, receivedAt: Date, into actions: inout [Action]) {
        switch frame.opcode {
        case .commandAck, .commandNak:
            commandAnswered(frame, into: &actions)
            return
        default:
            break
        }
        let packet = AcceptedPacket(frame)
        if frame.status.contains(.retransmission), !lastAnswerWasNak, packet == lastAccepted {
            // Our ACK was lost and the scanner sent the packet again: acknowledge, do not use it twice.
            actions.append(.send(SSIFrame.ack().encoded))
            return
        }
        actions.append(.send(SSIFrame.ack().encoded))
        lastAccepted = packet
        lastAnswerWasNak = false
        naksInARow = 0
        guard frame.opcode == .decodeData else { return }
        guard let barcodeType = frame.data.first else {
            actions.append(.log("\(device): ignored a DECODE_DATA packet without a barcode type"))
            return
        }
        let more = frame.status.contains(.continuation)
        if discardingMessage {
            discardingMessage = more
            return
        }
        var current = message ?? PartialMessage(barcodeType: barcodeType, payload: [], packets: 0)
        current.payload.append(contentsOf: frame.data.dropFirst())
        current.packets += 1
        guard current.payload.count <= maximumScanSize else {
            message = nil
            discardingMessage = more
            actions.append(.log("\(device): dropped a scan larger than \(maximumScanSize) bytes"))
            return
        }
        if more {
            message = current
        } else {
            message = nil
            let scan = ScanEvent(
                payload: current.payload,
                symbology: Symbology(ssiBarcodeType: current.barcodeType),
                device: device,
                receivedAt: receivedAt
            )
            actions.append(.deliver(scan))
        }
    }

    // MARK: Host commands

    /// Queues a host command; it is written when the commands before it have been answered.
    public mutating func send(command: SSIFrame) -> [Action] {
        commandQueue.append(command)
        var actions: [Action] = []
        if outstanding == nil { sendNextCommand(into: &actions) }
        return actions
    }

    /// The scanner did not answer the outstanding command in time: give up on it and go on with the next.
    public mutating func commandTimedOut() -> [Action] {
        guard let outstanding else { return [] }
        self.outstanding = nil
        var actions: [Action] = [.log("\(device): the scanner did not answer \(outstanding.frame.opcode)")]
        sendNextCommand(into: &actions)
        return actions
    }

    private mutating func commandAnswered(_ answer: SSIFrame, into actions: inout [Action]) {
        // An answer with nothing outstanding is a late one for a command already given up on.
        guard let pending = outstanding else { return }
        if answer.opcode == .commandAck {
            outstanding = nil
            sendNextCommand(into: &actions)
            return
        }
        let cause = answer.data.first.map(SSINakCause.init(rawValue:)) ?? .resend
        if cause == .resend, !pending.resent {
            var again = pending.frame
            again.status.insert(.retransmission)
            outstanding = (again, true)
            commandSerial += 1
            actions.append(.send(again.encoded))
            return
        }
        outstanding = nil
        let why = cause == .resend ? "resend, again" : cause.description
        actions.append(.log("\(device): the scanner refused \(pending.frame.opcode) (\(why)); going on without it"))
        sendNextCommand(into: &actions)
    }

    private mutating func sendNextCommand(into actions: inout [Action]) {
        guard outstanding == nil, !commandQueue.isEmpty else { return }
        let frame = commandQueue.removeFirst()
        outstanding = (frame, false)
        commandSerial += 1
        actions.append(.send(frame.encoded))
    }
}
