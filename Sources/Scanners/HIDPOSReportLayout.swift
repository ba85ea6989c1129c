import FareCore

/// Where the parts of a HID POS scanned-data report sit: length, symbology, data and continuation flag.
///
/// Offsets count the report id byte, as `/dev/hidrawN` returns reports. The layout comes from the report
/// descriptor where the device describes its usages (``init(descriptor:)``); otherwise one of the common
/// 64-byte layouts is used (``honeywell``, ``newland``, ``fallback(vendorID:)``).
public struct HIDPOSReportLayout: Sendable, Hashable {
    /// The report id of scanned-data reports; `nil` takes reports of any id.
    public var reportID: UInt8?
    /// The byte holding the number of data bytes in this report; `nil` when the report does not say, in
    /// which case trailing NUL bytes are taken as padding (which cuts binary payloads that end in NUL).
    public var lengthOffset: Int?
    /// Where a three-byte AIM identifier (`]Q1`) or HID POS symbology identifiers 1–3 start.
    public var symbologyIdentifierOffset: Int?
    /// Where a one-byte vendor symbology id sits (Newland), read as an AIM code letter.
    public var symbologyByteOffset: Int?
    /// Where Honeywell's code id sits (a letter such as `s` for QR), used when the AIM identifier is absent.
    public var vendorCodeOffset: Int?
    /// Where the decoded data starts.
    public var dataOffset: Int
    /// How many data bytes one report can carry.
    public var dataCapacity: Int
    /// The byte holding the "more reports follow" flag.
    public var continuationOffset: Int
    /// The bit of that byte that is set when more reports follow.
    public var continuationMask: UInt8

    /// Makes a layout from explicit offsets.
    public init(
        reportID: UInt8?,
        lengthOffset: Int?,
        symbologyIdentifierOffset: Int?,
        symbologyByteOffset: Int?,
        vendorCodeOffset: Int?,
        dataOffset: Int,
        dataCapacity: Int,
        continuationOffset: Int,
        continuationMask: UInt8
    ) {
        self.reportID = reportID
        self.lengthOffset = lengthOffset
        self.symbologyIdentifierOffset = symbologyIdentifierOffset
        self.symbologyByteOffset = symbologyByteOffset
        self.vendorCodeOffset = vendorCodeOffset
        self.dataOffset = dataOffset
        self.dataCapacity = dataCapacity
        self.continuationOffset = continuationOffset
        self.continuationMask = continuationMask
    }

    /// Honeywell's 64-byte layout, report id 0x02: [1] length, [2..4] AIM id, [5..60] data, [61..62] code id,
    /// [63] bit 0 = more reports follow.
    public static let honeywell = HIDPOSReportLayout(
        reportID: 0x02,
        lengthOffset: 1,
        symbologyIdentifierOffset: 2,
        symbologyByteOffset: nil,
        vendorCodeOffset: 61,
        dataOffset: 5,
        dataCapacity: 56,
        continuationOffset: 63,
        continuationMask: 0x01
    )

    /// Newland's 64-byte layout: [1] length, [2..57] data, [62] symbology id, [63] bit 0 = continued.
    ///
    /// The report id is not fixed across models, so reports of any id are taken.
    public static let newland = HIDPOSReportLayout(
        reportID: nil,
        lengthOffset: 1,
        symbologyIdentifierOffset: nil,
        symbologyByteOffset: 62,
        vendorCodeOffset: nil,
        dataOffset: 2,
        dataCapacity: 56,
        continuationOffset: 63,
        continuationMask: 0x01
    )

    /// The common layout for a vendor when the descriptor does not describe one: Newland's for 1eab,
    /// Honeywell's (the most widely copied) for everything else.
    public static func fallback(vendorID: UInt16?) -> HIDPOSReportLayout {
        vendorID == USBVendor.newland ? .newland : .honeywell
    }

    /// The layout a report descriptor describes, or `nil` when it has no bar code scanner (page 0x8C)
    /// input report with byte-aligned decoded data (usage 0xFE) and a continuation flag (usage 0xFF).
    public init?(descriptor: HIDReportDescriptor) {
        let numbered = descriptor.usesReportIDs
        guard
            let dataField = descriptor.fields.first(where: {
                $0.kind == .input && $0.usage(at: 0) == HIDPOSUsage.decodedData && $0.bitSize == 8
            }),
            let dataOffset = dataField.byteOffset(numbered: numbered)
        else { return nil }
        let report = descriptor.fields(of: .input, reportID: dataField.reportID)

        // Each value of a field may carry its own usage (three symbology ids in one field of count 3).
        var continuation: (offset: Int, mask: UInt8)?
        var identifierOffsets: [Int] = []
        var lengthOffset: Int?
        var vendorCodeOffset: Int?
        // Only 1-bit flags and byte fields are looked at below: others (a count of 65535 zero-bit values, say)
        // are skipped whole rather than walked value by value.
        for field in report where !field.isConstant && (field.bitSize == 1 || field.bitSize == 8) {
            for index in 0..<field.count {
                let bit = field.bitOffset + index * field.bitSize
                let byte = bit / 8 + (numbered ? 1 : 0)
                guard let usage = field.usage(at: index) else { continue }
                if usage == HIDPOSUsage.decodeDataContinued, field.bitSize == 1 {
                    continuation = (byte, UInt8(1) << UInt8(bit % 8))
                } else if HIDPOSUsage.symbologyIdentifiers.contains(usage), field.bitSize == 8, bit % 8 == 0 {
                    identifierOffsets.append(byte)
                } else if field.bitSize == 8, bit % 8 == 0, usage != HIDPOSUsage.decodedData {
                    // Vendors describe the data length (before the data) and their own code id (after it)
                    // with usages outside HID POS's data usages; position tells them apart.
                    if byte < dataOffset, field.count == 1, lengthOffset == nil {
                        lengthOffset = byte
                    } else if byte >= dataOffset + dataField.count, usage.isVendorDefined, vendorCodeOffset == nil {
                        vendorCodeOffset = byte
                    }
                }
            }
        }
        guard let continuation else { return nil }
        identifierOffsets.sort()
        let threeInARow =
            identifierOffsets.count >= 3 && identifierOffsets[1] == identifierOffsets[0] + 1
            && identifierOffsets[2] == identifierOffsets[0] + 2
        self.init(
            reportID: numbered ? dataField.reportID : nil,
            lengthOffset: lengthOffset,
            symbologyIdentifierOffset: threeInARow ? identifierOffsets[0] : nil,
            symbologyByteOffset: threeInARow ? nil : identifierOffsets.first,
            vendorCodeOffset: vendorCodeOffset,
            dataOffset: dataOffset,
            dataCapacity: dataField.count,
            continuationOffset: continuation.offset,
            continuationMask: continuation.mask
        )
    }

    /// The smallest report this layout can read.
    var minimumReportLength: Int {
        max(dataOffset, continuationOffset + 1)
    }

    /// Reads one report, or `nil` when it is not a scanned-data report of this layout.
    func parse(_ report: [UInt8]) -> HIDPOSReport? {
        guard report.count >= minimumReportLength else { return nil }
        if let reportID, report[0] != reportID { return nil }
        let available = max(0, min(dataCapacity, report.count - dataOffset))
        var length: Int
        if let lengthOffset, lengthOffset < report.count {
            length = min(Int(report[lengthOffset]), available)
        } else {
            length = available
            while length > 0 && report[dataOffset + length - 1] == 0 { length -= 1 }
        }
        return HIDPOSReport(
            data: Array(report[dataOffset..<dataOffset + length]),
            symbology: symbology(of: report),
            aim: aimIdentifier(of: report),
            continues: report[continuationOffset] & continuationMask != 0,
            declaredLength: lengthOffset.flatMap { $0 < report.count ? Int(report[$0]) : nil },
            capacity: available
        )
    }

    private func aimIdentifier(of report: [UInt8]) -> AIMIdentifier? {
        guard let offset = symbologyIdentifierOffset, offset + 3 <= report.count else { return nil }
        return AIMIdentifier(prefixOf: report[offset..<offset + 3])
    }

    private func symbology(of report: [UInt8]) -> Symbology? {
        if let symbology = aimIdentifier(of: report)?.symbology, symbology != .other {
            return symbology
        }
        if let offset = vendorCodeOffset, offset < report.count,
            let symbology = HIDPOSSymbology.fromHoneywellCodeID(report[offset])
        {
            return symbology
        }
        if let offset = symbologyByteOffset, offset < report.count,
            let symbology = HIDPOSSymbology.fromAIMCode(report[offset])
        {
            return symbology
        }
        return nil
    }
}

/// One scanned-data report, read.
struct HIDPOSReport: Hashable {
    var data: [UInt8]
    var symbology: Symbology?
    var aim: AIMIdentifier?
    var continues: Bool
    var declaredLength: Int?
    var capacity: Int
}

/// The usages of the bar code scanner page (0x8C) that locate scan data.
public enum HIDPOSUsage {
    /// Usage page 0x8C, bar code scanner.
    public static let page: UInt16 = 0x8C
    /// 0x02, a bar code scanner (the application collection).
    public static let barCodeScanner = HIDUsage(page: page, id: 0x02)
    /// 0x12, the scanned data report.
    public static let scannedDataReport = HIDUsage(page: page, id: 0x12)
    /// 0xFB–0xFD, symbology identifiers 1–3.
    public static let symbologyIdentifiers: Set<HIDUsage> = [
        HIDUsage(page: page, id: 0xFB), HIDUsage(page: page, id: 0xFC), HIDUsage(page: page, id: 0xFD),
    ]
    /// 0xFE, decoded data.
    public static let decodedData = HIDUsage(page: page, id: 0xFE)
    /// 0xFF, decode data continued: more reports of this scan follow.
    public static let decodeDataContinued = HIDUsage(page: page, id: 0xFF)
}
