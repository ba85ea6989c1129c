/// The USB vendor ids of barcode scanner makers that farecheck looks for.
public enum USBVendor {
    /// Zebra / Symbol / Motorola: 1200 HID keyboard, 1701 CDC-ACM serial, 1900 SNAPI.
    public static let zebra: UInt16 = 0x05E0
    /// Honeywell / Metrologic.
    public static let honeywell: UInt16 = 0x0C2E
    /// Datalogic: 2206 keyboard, 4204 RS-232 emulation.
    public static let datalogic: UInt16 = 0x05F9
    /// Newland: xx03 keyboard, xx06 CDC, xx10 HID POS.
    public static let newland: UInt16 = 0x1EAB

    /// The vendors looked for by default.
    public static let scannerVendors: [UInt16] = [zebra, honeywell, datalogic, newland]

    /// The maker's name for a vendor id, for listings.
    public static func name(of vendor: UInt16) -> String? {
        switch vendor {
        case zebra: "Zebra"
        case honeywell: "Honeywell"
        case datalogic: "Datalogic"
        case newland: "Newland"
        default: nil
        }
    }
}

/// A USB vendor and, optionally, product id, as in `05e0:1900`.
public struct USBDeviceID: Sendable, Hashable, CustomStringConvertible {
    /// The vendor id.
    public var vendor: UInt16
    /// The product id; `nil` matches every product of the vendor.
    public var product: UInt16?

    /// Makes an id; leave `product` out to match a whole vendor.
    public init(vendor: UInt16, product: UInt16? = nil) {
        self.vendor = vendor
        self.product = product
    }

    /// Parses `05e0` or `05e0:1900` (hex, as `lsusb` prints ids); `nil` for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let vendor = UInt16(parts[0], radix: 16), parts[0].count <= 4 else { return nil }
        self.vendor = vendor
        if parts.count == 2 {
            guard let product = UInt16(parts[1], radix: 16), parts[1].count <= 4 else { return nil }
            self.product = product
        }
    }

    /// Zebra's SNAPI interface, 05e0:1900.
    public static let zebraSNAPI = USBDeviceID(vendor: USBVendor.zebra, product: 0x1900)

    /// Whether a device with these ids is matched.
    public func matches(vendor: UInt16, product: UInt16) -> Bool {
        self.vendor == vendor && (self.product == nil || self.product == product)
    }

    /// `vvvv` or `vvvv:pppp` in lowercase hex.
    public var description: String {
        let hex = { (value: UInt16) in
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 4 - digits.count) + digits
        }
        guard let product else { return hex(vendor) }
        return hex(vendor) + ":" + hex(product)
    }
}
