import FareCore
import Foundation

/// Reassembles Zebra SNAPI decode data from packets that may come out of order, twice, or not at all.
///
/// Every well-formed packet is acknowledged (``SNAPIAcknowledgement``), duplicates included, since an
/// unacknowledged packet is resent. Packets are put together by index, so order does not matter; a
/// packet seen twice is used once. A scan with a packet missing is dropped with the missing indices
/// named, when the next scan starts, when no packet arrives within ``packetTimeout``, or when the device
/// goes away: it is never delivered with a hole in it.
public struct SNAPIAssembler: HIDReportAssembler {
    /// How long a scan may wait for its next packet before it is dropped, measured on report times.
    public var packetTimeout: TimeInterval
    /// How long after a scan completes an identical packet of it counts as a resend (its acknowledgement
    /// was lost) rather than a new scan of the same code.
    public var resendWindow: TimeInterval
    /// The output report length for acknowledgements, when the report descriptor gives one.
    public var acknowledgementLength: Int?

    private struct ScanKey: Hashable {
        var reportID: UInt8
        var count: Int
        var type: UInt16
    }

    private var key: ScanKey?
    private var packets: [Int: [UInt8]] = [:]
    private var lastPacketAt: Date?
    private var completed: (key: ScanKey, packets: [Int: [UInt8]], at: Date)?

    /// Makes an assembler.
    ///
    /// - Parameters:
    ///   - packetTimeout: The scanner sends packets back to back; one second covers a resend after a
    ///     lost acknowledgement.
    ///   - resendWindow: Scanners resend within a fraction of a second; a person re-presenting the same
    ///     ticket takes longer.
    public init(packetTimeout: TimeInterval = 1.0, resendWindow: TimeInterval = 0.5, acknowledgementLength: Int? = nil)
    {
        self.packetTimeout = packetTimeout
        self.resendWindow = resendWindow
        self.acknowledgementLength = acknowledgementLength
    }

    /// Takes one input report; see ``HIDReportAssembler/accept(report:at:)``.
    public mutating func accept(report: [UInt8], at time: Date) -> HIDReportOutcome {
        let packet: SNAPIPacket
        switch SNAPIPacket.parse(report) {
        case .notDecodeData: return HIDReportOutcome()
        case .malformed(let reason): return HIDReportOutcome(rejection: reason)
        case .packet(let parsed): packet = parsed
        }
        var outcome = HIDReportOutcome(replies: [
            SNAPIAcknowledgement.report(for: packet, length: acknowledgementLength)
        ])
        let packetKey = ScanKey(reportID: packet.reportID, count: packet.count, type: packet.type)

        if key != nil, let lastPacketAt, time.timeIntervalSince(lastPacketAt) > packetTimeout {
            outcome.dropped = abandon(reason: "no packet for \(Int(packetTimeout * 1000)) ms; \(missingDescription)")
        }
        if key == nil, let completed, completed.key == packetKey, completed.packets[packet.index] == packet.data,
            time.timeIntervalSince(completed.at) <= resendWindow
        {
            return outcome  // A resend of a packet of the scan just delivered: acknowledged, not delivered again.
        }
        if let key, key != packetKey || (packets[packet.index] != nil && packets[packet.index] != packet.data) {
            // A packet of another scan (or a different packet under an index already filled): the scan
            // in progress will not be completed.
            let why = key != packetKey ? "a new scan started" : "packet \(packet.index + 1) came again with other data"
            outcome.dropped = abandon(reason: "\(why); \(missingDescription)")
        }
        if packets[packet.index] != nil {
            lastPacketAt = time
            return outcome  // Duplicate of a packet already held.
        }
        if key == nil {
            key = packetKey
        }
        let size = packets.values.reduce(0) { $0 + $1.count } + packet.data.count
        guard size <= maximumAssembledPayload else {
            outcome.dropped = abandon(reason: "the scan grew past \(maximumAssembledPayload) bytes")
            return outcome
        }
        packets[packet.index] = packet.data
        lastPacketAt = time
        guard packets.count == packet.count else { return outcome }

        let payload = (0..<packet.count).flatMap { packets[$0]! }
        outcome.scan = AssembledScan(payload: payload, symbology: packet.symbology, completedAt: time)
        completed = (packetKey, packets, time)
        key = nil
        packets = [:]
        lastPacketAt = nil
        return outcome
    }

    /// Drops a scan with packets missing; see ``HIDReportAssembler/abandon(reason:)``.
    public mutating func abandon(reason: String) -> DroppedScan? {
        guard key != nil else { return nil }
        let dropped = DroppedScan(reason: reason, receivedBytes: packets.values.reduce(0) { $0 + $1.count })
        key = nil
        packets = [:]
        lastPacketAt = nil
        return dropped
    }

    /// Which packets of the scan in progress have not arrived, counted from 1 for people: `packet 3 of 5 missing`.
    private var missingDescription: String {
        guard let key else { return "" }
        let missing = (0..<key.count).filter { packets[$0] == nil }
        let shown = missing.prefix(8).map { String($0 + 1) }.joined(separator: ", ")
        let more = missing.count > 8 ? " and \(missing.count - 8) more" : ""
        let noun = missing.count == 1 ? "packet" : "packets"
        return "\(noun) \(shown)\(more) of \(key.count) missing"
    }
}
