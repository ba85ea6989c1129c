import FareCore
import Foundation

/// How a scanner sends a scan that spans several DECODE_DATA packets: its "multipacket option".
public enum SSIMultipacket: Hashable, Sendable {
    /// Option 1, the factory setting: the scanner waits for the host's ACK, or NAK resend, after every packet.
    case acknowledgeEachPacket
    /// Options 2 and 3: the scanner sends every packet without waiting (in option 3 with a pause between them)
    /// and waits for one answer at the end: ACK, or NAK resend, which has it send the whole scan again.
    case streamed
    /// Not known yet: learned from the first scan that spans packets. The answer to a packet with more to follow
    /// is held back; if the next packet comes anyway the scanner streams, and if the line stays quiet (the
    /// caller says so with ``SSISession/answerGapElapsed(at:)``) it is waiting for an ACK, sent then.
    case detect
}

/// The host's side of an SSI conversation, without I/O: bytes in, packets to send and scans out.
///
/// It acknowledges every good packet from the scanner (CMD_ACK), asks for a damaged one again (CMD_NAK, cause
/// resend), reassembles DECODE_DATA that spans several packets, recognises a packet the scanner sent twice
/// because an ACK was lost, and keeps host commands (BEEP, LED, PARAM_SEND, …) one at a time in flight,
/// resending once on NAK resend and giving up with a log line on any other NAK.
///
/// A scan of several packets is answered as the scanner's multipacket option wants (see ``SSIMultipacket``):
/// packet by packet, or once for the whole scan, with a damaged packet asking for the whole scan again. A frame
/// with an opcode this implementation does not know is answered CMD_NAK (bad context), the answer to a message
/// the receiver does not understand, which does not ask the scanner to send it again; it is logged once per
/// opcode, and the scans after it arrive as usual.
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

    /// How the scanner sends scans of several packets, as far as is known.
    public private(set) var multipacket: SSIMultipacket

    private var framer = SSIFramer(expecting: .decoder)
    private var message: PartialMessage?
    /// An answer not yet sent, until the next packet shows that the scanner does not wait for it, or the line
    /// stays quiet and it does.
    private var held: HeldAnswer?
    /// While the multipacket option is unknown: a damaged packet was followed by a good one that did not wait
    /// for the NAK, so a packet of the scan in progress may be lost.
    private var lostPacketSuspected = false
    /// The last scan delivered, to recognise it sent again whole after the ACK for it was lost (streamed scans).
    private var lastDelivered: DeliveredScan?
    /// Log lines said once per connection (an unknown opcode, a refused command), by topic.
    private var loggedOnce: Set<String> = []
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
        /// A packet of this streamed scan was damaged: the whole scan is asked for again at its end.
        var damaged = false
        /// Its first packet carried the retransmission bit after an ACK (not a NAK): the scanner is sending a scan
        /// again whose ACK it missed.
        var repeatsAcknowledgedScan = false
    }

    private enum HeldAnswer {
        case ack
        case nakResend
    }

    private struct DeliveredScan: Equatable {
        var barcodeType: UInt8
        var payload: [UInt8]
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

    /// Creates a session for `device`; `multipacket` is how scans of several packets are answered (option 1, the
    /// factory setting, unless told otherwise; ``SSIMultipacket/detect`` needs a caller with a clock).
    public init(
        device: String, maximumScanSize: Int = 64 * 1024, multipacket: SSIMultipacket = .acknowledgeEachPacket
    ) {
        self.device = device
        self.maximumScanSize = maximumScanSize
        self.multipacket = multipacket
    }

    /// Whether an answer is held back until the next packet comes or ``answerGapElapsed(at:)`` is called.
    public var holdsAnswer: Bool { held != nil }

    /// The host command sent and not yet answered, if any.
    public var outstandingCommand: SSIFrame? { outstanding?.frame }

    /// Whether a command with `opcode` is queued or waiting for its answer.
    public func hasPendingCommand(_ opcode: SSIOpcode) -> Bool {
        outstanding?.frame.opcode == opcode || commandQueue.contains { $0.opcode == opcode }
    }

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

    /// Nothing came for the time a streaming scanner leaves between packets since an answer was held back: the
    /// scanner is waiting for it. A held ACK is sent (the scanner waits after each packet: option 1); a held NAK
    /// is sent (the damaged packet was the scan's last).
    public mutating func answerGapElapsed(at now: Date) -> [Action] {
        guard let answer = held else { return [] }
        held = nil
        var actions: [Action] = []
        switch answer {
        case .ack:
            // The scanner stopped after a packet with more to follow: it waits for an ACK after each packet.
            lostPacketSuspected = false
            if multipacket == .streamed {
                logOnce(
                    "option 1",
                    "\(device): the scanner waits for an ACK after each packet after all (multipacket option 1)",
                    into: &actions)
                if message?.damaged == true {
                    // The lost packet will not come again packet by packet: never deliver a scan with a hole.
                    message = nil
                    discardingMessage = true
                    actions.append(.log("\(device): dropped a scan that lost a packet; scan it again"))
                }
            }
            multipacket = .acknowledgeEachPacket
            actions.append(.send(SSIFrame.ack().encoded))
            lastAnswerWasNak = false
        case .nakResend:
            askForResend(into: &actions)
        }
        return actions
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
                packetDamaged(into: &actions)
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
        case .decodeData:
            break
        default:
            guard SSIOpcode.known.contains(frame.opcode) else {
                // Bad context is the answer to a message the receiver does not understand; unlike resend it does
                // not ask for the frame again, so the scanner, which waits for an answer, goes on with its next.
                actions.append(.send(SSIFrame.nak(.badContext).encoded))
                logOnce(
                    "opcode \(frame.opcode.rawValue)",
                    "\(device): the scanner sent \(frame.opcode), which farecheck does not know; answered CMD_NAK "
                        + "(bad context) and went on (logged once per connection)",
                    into: &actions)
                return
            }
        }
        if frame.opcode == .decodeData, let answer = held {
            held = nil
            switch answer {
            case .ack:
                // The scanner sent this packet without waiting for the ACK of the one before: it streams.
                learnStreamed(into: &actions)
                if lostPacketSuspected { markDamaged() }
                lostPacketSuspected = false
            case .nakResend where multipacket == .streamed:
                markDamaged()
            case .nakResend:
                // A damaged packet, then this one without waiting for the NAK: a streaming scanner that lost a
                // packet, or line noise before the packet of a scanner that waits. Its next packet, or the
                // quiet after this one, tells which.
                lostPacketSuspected = true
            }
        }
        let packet = AcceptedPacket(frame)
        let streamed = frame.opcode == .decodeData && multipacket == .streamed
        if !streamed, frame.status.contains(.retransmission), !lastAnswerWasNak, packet == lastAccepted {
            // Our ACK was lost and the scanner sent the packet again: acknowledge, do not use it twice.
            actions.append(.send(SSIFrame.ack().encoded))
            return
        }
        lastAccepted = packet
        guard frame.opcode == .decodeData else {
            actions.append(.send(SSIFrame.ack().encoded))
            lastAnswerWasNak = false
            naksInARow = 0
            return
        }
        let answeredNakBefore = lastAnswerWasNak
        let more = frame.status.contains(.continuation)
        if more, multipacket != .acknowledgeEachPacket {
            // Streamed: no answer until the scan's end. Not known yet: held until the line says which.
            held = .ack
        } else if !more, message?.damaged == true || lostPacketSuspected {
            // A packet of this scan may have been lost: the scanner sends the whole scan again (one that waits
            // after each packet sends this one again, and it is taken then).
            lostPacketSuspected = false
            message = nil
            askForResend(into: &actions)
            return
        } else {
            actions.append(.send(SSIFrame.ack().encoded))
            lastAnswerWasNak = false
        }
        naksInARow = 0
        guard let barcodeType = frame.data.first else {
            actions.append(.log("\(device): ignored a DECODE_DATA packet without a barcode type"))
            return
        }
        if discardingMessage {
            discardingMessage = more
            return
        }
        var current =
            message
            ?? PartialMessage(
                barcodeType: barcodeType, payload: [], packets: 0,
                repeatsAcknowledgedScan: frame.status.contains(.retransmission) && !answeredNakBefore)
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
            return
        }
        message = nil
        let delivered = DeliveredScan(barcodeType: current.barcodeType, payload: current.payload)
        if multipacket == .streamed, current.repeatsAcknowledgedScan, delivered == lastDelivered {
            // Our ACK for the whole scan was lost and the scanner sent it all again: acknowledged, not used twice.
            return
        }
        lastDelivered = delivered
        let scan = ScanEvent(
            payload: current.payload,
            symbology: Symbology(ssiBarcodeType: current.barcodeType),
            device: device,
            receivedAt: receivedAt
        )
        actions.append(.deliver(scan))
    }

    /// A packet failed its checksum.
    private mutating func packetDamaged(into actions: inout [Action]) {
        switch multipacket {
        case .acknowledgeEachPacket:
            askForResend(into: &actions)
        case .detect:
            if held == .ack {
                // The scanner sent another packet without waiting for the ACK of the one before: it streams.
                learnStreamed(into: &actions)
                if lostPacketSuspected { markDamaged() }
                lostPacketSuspected = false
                markDamaged()
            }
            held = .nakResend
        case .streamed:
            // More packets may follow: the NAK goes at the scan's end, or when the line stays quiet.
            markDamaged()
            held = .nakResend
        }
    }

    private mutating func learnStreamed(into actions: inout [Action]) {
        guard multipacket != .streamed else { return }
        multipacket = .streamed
        logOnce(
            "streamed",
            "\(device): the scanner streams scans of several packets (multipacket option 2 or 3); answering each "
                + "scan once, at its end",
            into: &actions)
    }

    /// A streamed scan lost a packet; its remaining packets are taken only to find its end.
    private mutating func markDamaged() {
        if message == nil { message = PartialMessage(barcodeType: 0, payload: [], packets: 0) }
        message?.damaged = true
    }

    /// Sends CMD_NAK resend: for a packet (option 1), or for a whole streamed scan.
    private mutating func askForResend(into actions: inout [Action]) {
        actions.append(.send(SSIFrame.nak(.resend).encoded))
        lastAnswerWasNak = true
        naksInARow += 1
        if multipacket == .streamed {
            // The whole scan comes again, from its first packet.
            message = nil
            discardingMessage = false
        }
        // The scanner resends at most twice; after a third failure it has given up on the message, and its next
        // packet starts a new one.
        if naksInARow >= 3 {
            actions += abandonPartialScan(reason: "the scanner could not get a packet through")
        }
    }

    private mutating func logOnce(_ topic: String, _ line: String, into actions: inout [Action]) {
        guard loggedOnce.insert(topic).inserted else { return }
        actions.append(.log(line))
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
        var actions: [Action] = []
        // Once per command: a scanner that leaves one unanswered leaves it unanswered every time (a renewed
        // START_SESSION every few seconds must not fill a gate's log).
        logOnce(
            "unanswered \(outstanding.frame.opcode.rawValue)",
            "\(device): the scanner did not answer \(outstanding.frame.opcode) (logged once per connection)",
            into: &actions)
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
        logOnce(
            "refused \(pending.frame.opcode.rawValue) \(cause.rawValue)",
            "\(device): the scanner refused \(pending.frame.opcode) (\(why)); going on without it "
                + "(logged once per connection)",
            into: &actions)
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
