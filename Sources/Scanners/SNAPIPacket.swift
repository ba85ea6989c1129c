import FareCore

/// One packet of decode data from a Zebra scanner in SNAPI mode (USB 05e0:1900).
///
/// SNAPI sends decode data in input report 0x22 `[22, packetCount, packetIndex, length, type LE16, data…]`
/// or, for data that needs more than 255 packets, report 0x26
/// `[26, count BE16, index BE16, length, type LE16, data…]`. Packet indices count from 0.
public struct SNAPIPacket: Sendable, Hashable {
    /// Input report 0x22: one-byte packet count and index.
    public static let shortReportID: UInt8 = 0x22
    /// Input report 0x26: two-byte (big-endian) packet count and index, for large data.
    public static let longReportID: UInt8 = 0x26

    /// The report id the packet came in (0x22 or 0x26).
    public var reportID: UInt8
    /// How many packets the scan has.
    public var count: Int
    /// This packet's position, from 0.
    public var index: Int
    /// The code type, an SSI symbology code (0x1C QR, 0x2D Aztec, …).
    public var type: UInt16
    /// This packet's share of the payload.
    public var data: [UInt8]

    /// Makes a packet from its parts.
    public init(reportID: UInt8, count: Int, index: Int, type: UInt16, data: [UInt8]) {
        self.reportID = reportID
        self.count = count
        self.index = index
        self.type = type
        self.data = data
    }

    /// What reading a report as a SNAPI packet gave.
    public enum Parse: Sendable, Hashable {
        /// A well-formed decode-data packet.
        case packet(SNAPIPacket)
        /// A report of another id (status, attribute replies): not decode data.
        case notDecodeData
        /// A decode-data report that contradicts itself, with what is wrong.
        case malformed(String)
    }

    /// Reads one input report (report id first).
    public static func parse(_ report: [UInt8]) -> Parse {
        guard let id = report.first else { return .notDecodeData }
        let header: Int
        let count: Int
        let index: Int
        switch id {
        case shortReportID:
            header = 6
            guard report.count >= header else { return .malformed("report 0x22 is \(report.count) bytes long") }
            count = Int(report[1])
            index = Int(report[2])
        case longReportID:
            header = 8
            guard report.count >= header else { return .malformed("report 0x26 is \(report.count) bytes long") }
            count = Int(report[1]) << 8 | Int(report[2])
            index = Int(report[3]) << 8 | Int(report[4])
        default:
            return .notDecodeData
        }
        let length = Int(report[header - 3])
        let type = UInt16(report[header - 2]) | UInt16(report[header - 1]) << 8
        guard count >= 1 else { return .malformed("packet count is 0") }
        guard index < count else { return .malformed("packet index \(index) is beyond the count \(count)") }
        guard header + length <= report.count else {
            return .malformed("packet says \(length) data bytes but the report has room for \(report.count - header)")
        }
        return .packet(
            SNAPIPacket(
                reportID: id, count: count, index: index, type: type, data: Array(report[header..<header + length]))
        )
    }

    /// The symbology named by ``type`` (SSI codes: 0x1C QR, 0x2D Aztec, …; `.other` for the rest).
    public var symbology: Symbology { type <= 0xFF ? Symbology(ssiBarcodeType: UInt8(type)) : .other }
}

/// The output report that acknowledges a SNAPI decode-data packet, built in this one place.
///
/// The scanner resends a packet that is not acknowledged. The layout here is this project's reading of
/// SNAPI and has not been confirmed on a scanner: output report id 0x01, then the id of the report being
/// acknowledged, then its packet count and index in the same width as the packet (one byte each for
/// 0x22, two big-endian bytes each for 0x26), zero-padded to the output report length when one is known
/// (from the report descriptor). If a scanner keeps resending, this is the place to change.
public enum SNAPIAcknowledgement {
    /// The output report id used for acknowledgements.
    public static let reportID: UInt8 = 0x01

    /// The acknowledgement for `packet`, report id first, ready to write to hidraw or an interrupt OUT endpoint.
    ///
    /// - Parameter length: The device's output report length in bytes (report id included), when known.
    public static func report(for packet: SNAPIPacket, length: Int? = nil) -> [UInt8] {
        var bytes: [UInt8] = [reportID, packet.reportID]
        if packet.reportID == SNAPIPacket.longReportID {
            bytes += [UInt8(packet.count >> 8), UInt8(packet.count & 0xFF)]
            bytes += [UInt8(packet.index >> 8), UInt8(packet.index & 0xFF)]
        } else {
            bytes += [UInt8(packet.count), UInt8(packet.index)]
        }
        if let length, length > bytes.count {
            bytes += [UInt8](repeating: 0, count: length - bytes.count)
        }
        return bytes
    }
}
