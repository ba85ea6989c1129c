/// A device appearing or disappearing, as a uevent from the kernel or from udev.
///
/// udev (netlink group 2) sends its events after it has run its rules, so the node exists with its final
/// permissions and links; the kernel (group 1) sends them first, before any of that. Both carry
/// `KEY=value` properties separated by NUL bytes; udev's come after a binary header.
public struct HotplugEvent: Sendable, Hashable {
    /// What happened to the device.
    public enum Action: String, Sendable, Hashable {
        /// A device appeared; for udev events its node now exists with its permissions.
        case add
        /// A device went away.
        case remove
        /// A device's properties changed.
        case change
        /// A device was renamed or moved in the device tree.
        case move
        /// A device went online.
        case online
        /// A device went offline.
        case offline
        /// A driver took the device.
        case bind
        /// A driver let the device go.
        case unbind
        /// An action this module does not know.
        case other
    }

    /// Who sent the event.
    public enum Source: Sendable, Hashable {
        /// udev, after its rules ran.
        case udev
        /// The kernel, before udev.
        case kernel
    }

    /// What happened.
    public var action: Action
    /// The sysfs path below `/sys`, e.g. `/devices/pci0000:00/…/hidraw/hidraw0`.
    public var devicePath: String
    /// The subsystem, e.g. `hidraw`, `tty`, `input`, `usb`.
    public var subsystem: String?
    /// The device node, e.g. `/dev/hidraw0`; `nil` for devices without one (a USB interface).
    public var deviceNode: String?
    /// The USB ids, when the event carries them (udev's `ID_VENDOR_ID`/`ID_MODEL_ID`, or the kernel's
    /// `PRODUCT` for USB devices).
    public var usbID: USBDeviceID?
    /// Every property, as sent.
    public var properties: [String: String]
    /// Who sent it.
    public var source: Source

    /// The 8-byte prefix of udev's netlink messages.
    static let udevPrefix: [UInt8] = Array("libudev".utf8) + [0]
    /// udev's header magic, sent in network byte order.
    static let udevMagic: UInt32 = 0xFEED_CAFE

    /// Parses one netlink message; `nil` for a message that is neither udev's nor the kernel's format.
    ///
    /// - Parameter deviceRoot: Where device nodes are; the kernel's `DEVNAME` is relative to it.
    public static func parse(_ message: [UInt8], deviceRoot: String = "/dev") -> HotplugEvent? {
        let source: Source
        let body: ArraySlice<UInt8>
        if message.starts(with: udevPrefix) {
            // struct udev_monitor_netlink_header: prefix[8], magic (big-endian), header_size,
            // properties_off, properties_len (host order, little-endian here), then filter hashes.
            guard message.count >= 24, bigEndian(message, 8) == udevMagic else { return nil }
            let offset = Int(littleEndian(message, 16))
            let length = Int(littleEndian(message, 20))
            guard offset >= 24, length >= 0, offset <= message.count, length <= message.count - offset else {
                return nil
            }
            source = .udev
            body = message[offset..<offset + length]
        } else {
            // The kernel's format: "add@/devices/…" then the properties.
            guard let headerEnd = message.firstIndex(of: 0), message[..<headerEnd].contains(UInt8(ascii: "@")) else {
                return nil
            }
            source = .kernel
            body = message[(headerEnd + 1)...]
        }
        var properties: [String: String] = [:]
        for field in body.split(separator: 0) {
            guard let equals = field.firstIndex(of: UInt8(ascii: "=")) else { continue }
            let key = String(decoding: field[..<equals], as: UTF8.self)
            properties[key] = String(decoding: field[(equals + 1)...], as: UTF8.self)
        }
        guard let actionName = properties["ACTION"], let devicePath = properties["DEVPATH"] else { return nil }
        var node = properties["DEVNAME"]
        if let name = node, !name.hasPrefix("/") {
            node = deviceRoot + "/" + name
        }
        return HotplugEvent(
            action: Action(rawValue: actionName) ?? .other,
            devicePath: devicePath,
            subsystem: properties["SUBSYSTEM"],
            deviceNode: node,
            usbID: usbID(properties),
            properties: properties,
            source: source
        )
    }

    private static func usbID(_ properties: [String: String]) -> USBDeviceID? {
        if let vendor = properties["ID_VENDOR_ID"].flatMap({ UInt16($0, radix: 16) }) {
            return USBDeviceID(vendor: vendor, product: properties["ID_MODEL_ID"].flatMap { UInt16($0, radix: 16) })
        }
        // The kernel's USB events say PRODUCT=5e0/1900/100 (vendor/product/bcdDevice, hex without zeros).
        if let product = properties["PRODUCT"] {
            let parts = product.split(separator: "/")
            if parts.count >= 2, let vendor = UInt16(parts[0], radix: 16), let model = UInt16(parts[1], radix: 16) {
                return USBDeviceID(vendor: vendor, product: model)
            }
        }
        return nil
    }

    private static func bigEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 << 8 | UInt32(bytes[offset + $1]) }
    }

    private static func littleEndian(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }
}
