/// A HID report descriptor, parsed into the fields of each report.
///
/// Scanners describe their reports in this descriptor (read from `/dev/hidrawN` with `HIDIOCGRDESC`, from
/// sysfs' `report_descriptor`, or from a USB control request). Reading the offsets from it, instead of
/// hard-coding one vendor's layout, is what lets one parser serve several vendors' HID POS scanners.
///
/// Only what a report parser needs is kept: each main item (input, output, feature) becomes a
/// ``HIDReportField`` with its report id, bit offset, size, count, usages and the collections around it.
public struct HIDReportDescriptor: Sendable, Hashable {
    /// Every input, output and feature field, in descriptor order.
    public var fields: [HIDReportField]
    /// Whether the device numbers its reports, so that each report starts with its report id byte.
    public var usesReportIDs: Bool

    /// Parses descriptor bytes.
    ///
    /// - Throws: ``HIDReportDescriptorError`` when an item runs past the end, collections do not balance,
    ///   or a global item is out of range; the bytes then did not come from a working HID device.
    public init(bytes: [UInt8]) throws(HIDReportDescriptorError) {
        var parser = HIDDescriptorParser()
        try parser.parse(bytes)
        fields = parser.fields
        usesReportIDs = parser.usesReportIDs
    }

    /// The fields of one report, in the order they appear in it.
    public func fields(of kind: HIDReportKind, reportID: UInt8) -> [HIDReportField] {
        fields.filter { $0.kind == kind && $0.reportID == reportID }
    }

    /// The report ids (0 when reports are not numbered) that have fields of this kind.
    public func reportIDs(of kind: HIDReportKind) -> [UInt8] {
        var seen: [UInt8] = []
        for field in fields where field.kind == kind && !seen.contains(field.reportID) {
            seen.append(field.reportID)
        }
        return seen
    }

    /// The length in bytes of a report as it is read or written through hidraw: the report id byte (when
    /// reports are numbered) and the fields, rounded up to whole bytes.
    public func reportLength(of kind: HIDReportKind, reportID: UInt8) -> Int {
        let bits = fields(of: kind, reportID: reportID).map { $0.bitOffset + $0.bitLength }.max() ?? 0
        return (usesReportIDs ? 1 : 0) + (bits + 7) / 8
    }
}

/// Which way a report goes: from the device (input), to it (output), or both on request (feature).
public enum HIDReportKind: Sendable, Hashable {
    case input
    case output
    case feature
}

/// A usage: a page (such as 0x8C, bar code scanner) and an id within it (such as 0xFE, decoded data).
public struct HIDUsage: Sendable, Hashable, CustomStringConvertible {
    /// The usage page, e.g. 0x8C for bar code scanners.
    public var page: UInt16
    /// The usage id within the page.
    public var id: UInt16

    /// Makes a usage from its page and id.
    public init(page: UInt16, id: UInt16) {
        self.page = page
        self.id = id
    }

    /// Page and id in hex, e.g. `8c:00fe`.
    public var description: String {
        String(page, radix: 16) + ":" + String(id, radix: 16)
    }

    /// Whether the page is in the vendor-defined range (0xFF00–0xFFFF).
    public var isVendorDefined: Bool { page >= 0xFF00 }
}

/// One main item of a report descriptor: `count` values of `bitSize` bits each, at `bitOffset`.
public struct HIDReportField: Sendable, Hashable {
    /// Input, output or feature.
    public var kind: HIDReportKind
    /// The report id this field belongs to, 0 when reports are not numbered.
    public var reportID: UInt8
    /// Where the field starts, in bits after the report id byte.
    public var bitOffset: Int
    /// The size of one value, in bits.
    public var bitSize: Int
    /// How many values the field holds.
    public var count: Int
    /// The usages of the values, in order; the last one repeats for the remaining values, as the HID
    /// specification says. Empty for constant padding.
    public var usages: [HIDUsage]
    /// The main item's flags (bit 0 constant, bit 1 variable, bit 8 buffered bytes, …).
    public var flags: UInt32
    /// The usages of the collections around the field, outermost first.
    public var collections: [HIDUsage]

    /// The length of the whole field, in bits.
    public var bitLength: Int { bitSize * count }
    /// Whether the field is constant padding rather than data.
    public var isConstant: Bool { flags & 0x01 != 0 }

    /// The usage of the value at `index` (the last usage repeats), or `nil` when the field has none.
    public func usage(at index: Int) -> HIDUsage? {
        guard !usages.isEmpty else { return nil }
        return usages[min(index, usages.count - 1)]
    }

    /// The byte offset of the field in a report as hidraw returns it (the report id byte counted), or
    /// `nil` when the field does not start on a byte boundary.
    public func byteOffset(numbered: Bool) -> Int? {
        guard bitOffset % 8 == 0 else { return nil }
        return bitOffset / 8 + (numbered ? 1 : 0)
    }
}

/// A report descriptor that cannot be parsed.
public struct HIDReportDescriptorError: Error, Hashable, CustomStringConvertible {
    /// Where in the descriptor (a byte offset) parsing stopped.
    public var offset: Int
    /// What was wrong there.
    public var message: String

    /// Makes an error from its parts.
    public init(offset: Int, message: String) {
        self.offset = offset
        self.message = message
    }

    /// The message with its offset.
    public var description: String { "HID report descriptor, byte \(offset): \(message)" }
}

/// The item-by-item state machine of HID 1.11 section 6.2.2: global items persist, local items reset after
/// each main item, and each report id keeps its own running bit offset per report kind.
struct HIDDescriptorParser {
    private struct Globals {
        var usagePage: UInt16 = 0
        var reportSize = 0
        var reportCount = 0
        var reportID: UInt8 = 0
    }

    private var globals = Globals()
    private var globalStack: [Globals] = []
    private var localUsages: [HIDUsage] = []
    private var usageMinimum: UInt32?
    private var collections: [HIDUsage] = []
    private var offsets: [ReportKey: Int] = [:]
    private(set) var fields: [HIDReportField] = []
    private(set) var usesReportIDs = false

    private struct ReportKey: Hashable {
        var kind: HIDReportKind
        var id: UInt8
    }

    // A descriptor lists usage ranges such as 0x00–0xFF for keyboard arrays; expanding larger ranges
    // would only cost memory, since the last usage repeats anyway.
    private static let maximumExpandedRange: UInt32 = 1024
    /// The most usages one main item collects: more than any report has values, so any further ones could
    /// only repeat. A descriptor of a few kilobytes listing range after range would otherwise gather
    /// hundreds of thousands.
    private static let maximumLocalUsages = 4096
    /// The longest report, in bits: the kernel's own limit (`HID_MAX_BUFFER_SIZE`, 16384 bytes). A longer
    /// report cannot be delivered, and a descriptor declaring one is refused rather than walked.
    static let maximumReportBits = 16_384 * 8

    mutating func parse(_ bytes: [UInt8]) throws(HIDReportDescriptorError) {
        var index = 0
        while index < bytes.count {
            let prefix = bytes[index]
            if prefix == 0xFE {
                // Long item: no defined long items exist, so skip its data.
                guard index + 2 < bytes.count else {
                    throw HIDReportDescriptorError(offset: index, message: "long item header runs past the end")
                }
                let size = Int(bytes[index + 1])
                index += 3 + size
                guard index <= bytes.count else {
                    throw HIDReportDescriptorError(offset: index, message: "long item data runs past the end")
                }
                continue
            }
            let sizeCode = Int(prefix & 0x03)
            let size = sizeCode == 3 ? 4 : sizeCode
            let type = (prefix >> 2) & 0x03
            let tag = prefix >> 4
            guard index + 1 + size <= bytes.count else {
                throw HIDReportDescriptorError(offset: index, message: "item data runs past the end")
            }
            var value: UInt32 = 0
            for byte in 0..<size {
                value |= UInt32(bytes[index + 1 + byte]) << (8 * byte)
            }
            switch type {
            case 0: try main(tag: tag, value: value, at: index)
            case 1: try global(tag: tag, value: value, size: size, at: index)
            case 2: local(tag: tag, value: value, size: size)
            default: break  // Reserved item type: ignored, as the specification asks.
            }
            index += 1 + size
        }
        guard collections.isEmpty else {
            throw HIDReportDescriptorError(
                offset: bytes.count, message: "\(collections.count) collection(s) not closed")
        }
    }

    private func extendedUsage(_ value: UInt32, size: Int) -> HIDUsage {
        // A four-byte usage carries its own page in the high half.
        if size == 4 {
            return HIDUsage(page: UInt16(value >> 16), id: UInt16(value & 0xFFFF))
        }
        return HIDUsage(page: globals.usagePage, id: UInt16(value & 0xFFFF))
    }

    private mutating func main(tag: UInt8, value: UInt32, at offset: Int) throws(HIDReportDescriptorError) {
        switch tag {
        case 0x8, 0x9, 0xB:
            let kind: HIDReportKind = tag == 0x8 ? .input : (tag == 0x9 ? .output : .feature)
            let key = ReportKey(kind: kind, id: globals.reportID)
            let start = offsets[key, default: 0]
            let field = HIDReportField(
                kind: kind,
                reportID: globals.reportID,
                bitOffset: start,
                bitSize: globals.reportSize,
                count: globals.reportCount,
                usages: localUsages,
                flags: value,
                collections: collections
            )
            guard start + field.bitLength <= Self.maximumReportBits else {
                throw HIDReportDescriptorError(
                    offset: offset,
                    message:
                        "the \(kind) report\(globals.reportID == 0 ? "" : " \(globals.reportID)") would be longer than \(Self.maximumReportBits / 8) bytes, the kernel's limit"
                )
            }
            fields.append(field)
            offsets[key] = start + field.bitLength
        case 0xA:
            collections.append(localUsages.first ?? HIDUsage(page: globals.usagePage, id: 0))
        case 0xC:
            guard !collections.isEmpty else {
                throw HIDReportDescriptorError(offset: offset, message: "end collection without a collection")
            }
            collections.removeLast()
        default:
            break
        }
        localUsages = []
        usageMinimum = nil
    }

    private mutating func global(tag: UInt8, value: UInt32, size: Int, at offset: Int) throws(HIDReportDescriptorError)
    {
        switch tag {
        case 0x0: globals.usagePage = UInt16(truncatingIfNeeded: value)
        case 0x7:
            guard value <= 256 else {
                throw HIDReportDescriptorError(offset: offset, message: "report size \(value) bits is not plausible")
            }
            globals.reportSize = Int(value)
        case 0x8:
            guard value >= 1 && value <= 255 else {
                throw HIDReportDescriptorError(offset: offset, message: "report id \(value) is out of range 1–255")
            }
            globals.reportID = UInt8(value)
            usesReportIDs = true
        case 0x9:
            guard value <= 65_535 else {
                throw HIDReportDescriptorError(offset: offset, message: "report count \(value) is not plausible")
            }
            globals.reportCount = Int(value)
        case 0xA: globalStack.append(globals)
        case 0xB:
            guard let saved = globalStack.popLast() else {
                throw HIDReportDescriptorError(offset: offset, message: "pop without push")
            }
            globals = saved
        default:
            break  // Logical/physical ranges, units: not needed to locate bytes.
        }
    }

    private mutating func local(tag: UInt8, value: UInt32, size: Int) {
        switch tag {
        case 0x0:
            guard localUsages.count < Self.maximumLocalUsages else { return }
            localUsages.append(extendedUsage(value, size: size))
        case 0x1: usageMinimum = value
        case 0x2:
            guard let minimum = usageMinimum else { return }
            let low = minimum & 0xFFFF
            let high = value & 0xFFFF
            guard low <= high else { return }
            let page = size == 4 ? UInt16(value >> 16) : globals.usagePage
            let room = UInt32(max(0, Self.maximumLocalUsages - localUsages.count))
            guard room > 0 else {
                usageMinimum = nil
                return
            }
            let last = min(high, low + min(Self.maximumExpandedRange, room) - 1)
            for id in low...last {
                localUsages.append(HIDUsage(page: page, id: UInt16(id)))
            }
            usageMinimum = nil
        default:
            break  // Designators, strings, delimiters: not needed to locate bytes.
        }
    }
}
