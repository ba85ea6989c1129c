import DeviceSettings
import Foundation
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Finds the barcode scanners attached over USB, and the protocol to read each with, by walking sysfs.
///
/// Every hidraw node, USB serial port (`ttyACM*`) and input event node is followed up sysfs to the USB device
/// it belongs to; those whose vendor (Zebra 05e0, Honeywell 0c2e, Datalogic 05f9, Newland 1eab) or id
/// (from configuration) marks them as scanners are listed with a suggested protocol:
/// 05e0:1900 → SNAPI, a hidraw node whose report descriptor has a bar code scanner (page 0x8C) report →
/// HID POS, `ttyACM` → SSI or raw, an event node with keys → keyboard wedge.
///
/// The sysfs and `/dev` roots are parameters, so tests build a fake tree in a temporary directory.
public struct ScannerDiscovery: Sendable {
    /// Where sysfs is mounted, `/sys` on a running system.
    public var sysfsRoot: String
    /// Where device nodes are, `/dev` on a running system.
    public var deviceRoot: String
    /// The ids that mark a USB device as a scanner: the known vendors plus configured ids.
    public var scannerIDs: [USBDeviceID]
    /// Tells whether this process may open a node for reading and writing.
    public var access: @Sendable (String) -> NodeAccess

    /// Whether a device node can be opened.
    public enum NodeAccess: Sendable, Hashable {
        /// Read and write are permitted.
        case permitted
        /// The node exists but this user may not open it (udev rules, group membership).
        case denied
        /// The node does not exist (udev has not created it, or it lives elsewhere).
        case missing
    }

    /// Makes a discovery over the given roots.
    ///
    /// - Parameters:
    ///   - additionalIDs: Scanners of other vendors, or products to single out, e.g. from `--usb-id 1a86:e026`.
    ///   - access: How to test a node; the default asks the kernel (`access(2)` for read and write).
    public init(
        sysfsRoot: String = "/sys",
        deviceRoot: String = "/dev",
        additionalIDs: [USBDeviceID] = [],
        access: @escaping @Sendable (String) -> NodeAccess = ScannerDiscovery.systemAccess
    ) {
        self.sysfsRoot = sysfsRoot
        self.deviceRoot = deviceRoot
        self.scannerIDs = USBVendor.scannerVendors.map { USBDeviceID(vendor: $0) } + additionalIDs
        self.access = access
    }

    /// Asks the kernel whether this process may read and write `path`.
    public static let systemAccess: @Sendable (String) -> NodeAccess = { path in
        switch Result(catching: { () throws(Errno) in try systemCall { Glibc.access(path, R_OK | W_OK) } }) {
        case .success: return .permitted
        case .failure(let error): return error == .noSuchFileOrDirectory ? .missing : .denied
        }
    }

    /// Lists the attached scanners, with a reason a person can act on when none can be used.
    public func discover() -> ScannerDiscoveryResult {
        var scanners: [DiscoveredScanner] = []
        var otherUSB: Set<String> = []
        let classes: [(String, DiscoveredScanner.NodeKind)] = [
            ("hidraw", .hidraw), ("tty", .serial), ("input", .input),
        ]
        var sawClassDirectory = false
        for (className, kind) in classes {
            let classDirectory = sysfsRoot + "/class/" + className
            guard let entries = try? FileManager.default.contentsOfDirectory(atPath: classDirectory) else { continue }
            sawClassDirectory = true
            for entry in entries.sorted(by: Self.naturalOrder) {
                switch kind {
                case .serial where !entry.hasPrefix("ttyACM"): continue
                case .input where !entry.hasPrefix("event"): continue
                default: break
                }
                let nodeDirectory = classDirectory + "/" + entry
                guard let device = resolve(nodeDirectory + "/device"), let usb = usbDevice(above: device) else {
                    continue
                }
                guard scannerIDs.contains(where: { $0.matches(vendor: usb.vendorID, product: usb.productID) }) else {
                    otherUSB.insert(usb.label)
                    continue
                }
                guard let suggestion = suggest(kind: kind, usb: usb, nodeDirectory: nodeDirectory) else { continue }
                let node = deviceNode(nodeDirectory: nodeDirectory, fallback: kind == .input ? "input/" + entry : entry)
                scanners.append(
                    DiscoveredScanner(
                        node: node, kind: kind, protocols: suggestion, usb: usb, access: access(node))
                )
            }
        }
        return ScannerDiscoveryResult(
            scanners: scanners,
            explanation: explain(scanners: scanners, otherUSB: otherUSB.sorted(), sawSysfs: sawClassDirectory)
        )
    }

    // MARK: - Protocol suggestion

    private func suggest(kind: DiscoveredScanner.NodeKind, usb: USBDeviceInfo, nodeDirectory: String)
        -> [ScannerProtocolName]?
    {
        switch kind {
        case .serial:
            // SSI is Zebra's protocol; other vendors' CDC ports send raw, suffix-framed data by default.
            return usb.vendorID == USBVendor.zebra ? [.ssi, .raw] : [.raw, .ssi]
        case .hidraw:
            if USBDeviceID.zebraSNAPI.matches(vendor: usb.vendorID, product: usb.productID) { return [.snapi] }
            guard let bytes = FileManager.default.contents(atPath: nodeDirectory + "/device/report_descriptor"),
                let descriptor = try? HIDReportDescriptor(bytes: [UInt8](bytes))
            else { return nil }
            // A bar code scanner page anywhere means HID POS; a keyboard's hidraw node is read as a wedge
            // through its event node instead.
            return descriptor.fields.contains { field in
                field.collections.contains { $0.page == HIDPOSUsage.page }
                    || field.usages.contains { $0.page == HIDPOSUsage.page }
            } ? [.hidpos] : nil
        case .input:
            // Scanners often make a second event node (consumer or system control) that has no letter keys.
            return hasTypingKeys(nodeDirectory + "/device/capabilities/key") ? [.wedge] : nil
        }
    }

    /// Whether the input device's key bitmap holds the keys a scanner types with (A and Enter).
    private func hasTypingKeys(_ path: String) -> Bool {
        guard let text = readText(path) else { return false }
        // sysfs prints the bitmap as hex words, most significant first; a word is a C long (64 bits here).
        let words = text.split(separator: " ").reversed().map { UInt64($0, radix: 16) ?? 0 }
        func has(_ code: Int) -> Bool {
            let word = code / 64
            return word < words.count && words[word] & (1 << UInt64(code % 64)) != 0
        }
        return has(30) && has(Int(KeyCode.enter))
    }

    // MARK: - sysfs

    private func resolve(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Walks up from a device directory to the USB device (the directory with `idVendor` and `idProduct`).
    private func usbDevice(above start: String) -> USBDeviceInfo? {
        let root = resolve(sysfsRoot) ?? sysfsRoot
        var directory = start
        var interfaceNumber: Int?
        while directory.hasPrefix(root), directory.count > root.count {
            if interfaceNumber == nil, let number = readText(directory + "/bInterfaceNumber") {
                interfaceNumber = Int(number, radix: 16)
            }
            if let vendor = readText(directory + "/idVendor").flatMap({ UInt16($0, radix: 16) }),
                let product = readText(directory + "/idProduct").flatMap({ UInt16($0, radix: 16) })
            {
                return USBDeviceInfo(
                    vendorID: vendor,
                    productID: product,
                    manufacturer: readText(directory + "/manufacturer"),
                    product: readText(directory + "/product"),
                    serial: readText(directory + "/serial"),
                    port: (directory as NSString).lastPathComponent,
                    interfaceNumber: interfaceNumber
                )
            }
            directory = (directory as NSString).deletingLastPathComponent
        }
        return nil
    }

    /// The node's path from its `uevent` file's DEVNAME (e.g. `input/event5`), under ``deviceRoot``.
    private func deviceNode(nodeDirectory: String, fallback: String) -> String {
        let name =
            readText(nodeDirectory + "/uevent")?
            .split(separator: "\n")
            .first { $0.hasPrefix("DEVNAME=") }
            .map { String($0.dropFirst("DEVNAME=".count)) } ?? fallback
        return deviceRoot + "/" + name
    }

    private func readText(_ path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `hidraw2` before `hidraw10`.
    private static func naturalOrder(_ a: String, _ b: String) -> Bool {
        a.compare(b, options: .numeric) == .orderedAscending
    }

    // MARK: - Explanation

    private func explain(scanners: [DiscoveredScanner], otherUSB: [String], sawSysfs: Bool) -> String? {
        guard sawSysfs else {
            return "cannot read \(sysfsRoot)/class: scanner discovery needs Linux with sysfs mounted "
                + "(inside a container, mount /sys and pass the USB devices through)"
        }
        let vendors = USBVendor.scannerVendors.map { "\(USBVendor.name(of: $0) ?? "?") \(USBDeviceID(vendor: $0))" }
        guard !scanners.isEmpty else {
            var text =
                "no USB barcode scanners found: no hidraw, ttyACM or input node belongs to a USB device of "
                + vendors.joined(separator: ", ")
            if !otherUSB.isEmpty {
                text +=
                    "; other USB devices seen: \(otherUSB.prefix(6).joined(separator: ", "))"
                    + " (if one is a scanner, add its id with --usb-id VVVV:PPPP)"
            } else {
                text += "; plug a scanner in (check it with lsusb)"
            }
            return text
        }
        let usable = scanners.filter { $0.access == .permitted }
        guard usable.isEmpty else { return nil }
        let denied = scanners.filter { $0.access == .denied }.map(\.node)
        if !denied.isEmpty {
            let nodes = denied.joined(separator: ", ")
            return "found \(scanners.count) scanner node(s) but this user may not open them (\(nodes)): "
                + "install the udev rules as Udev/README.md says, add this user to the farecheck group, "
                + "log in again and replug the scanner"
        }
        return "found scanner(s) in sysfs but their nodes are missing under \(deviceRoot) "
            + "(\(scanners.map(\.node).joined(separator: ", "))): is udev running?"
    }
}

/// What ``ScannerDiscovery/discover()`` found.
public struct ScannerDiscoveryResult: Sendable, Hashable {
    /// The scanner nodes found, usable or not, in a stable order (hidraw, serial, input; by number).
    public var scanners: [DiscoveredScanner]
    /// Why no scanner can be used, worded so a person knows what to do; `nil` when at least one can.
    public var explanation: String?
}

/// The USB device a scanner node belongs to, as sysfs describes it.
public struct USBDeviceInfo: Sendable, Hashable {
    /// `idVendor`.
    public var vendorID: UInt16
    /// `idProduct`.
    public var productID: UInt16
    /// The manufacturer string, when the device has one.
    public var manufacturer: String?
    /// The product string.
    public var product: String?
    /// The serial number, which tells identical scanners apart (udev: `ATTRS{serial}`).
    public var serial: String?
    /// The USB port path, e.g. `1-2.4`: stable while the scanner stays in the same socket.
    public var port: String
    /// The interface the node belongs to, when sysfs says.
    public var interfaceNumber: Int?

    /// The ids as `vvvv:pppp`.
    public var id: USBDeviceID { USBDeviceID(vendor: vendorID, product: productID) }

    /// `vvvv:pppp Manufacturer Product` for listings.
    var label: String {
        ([id.description] + [manufacturer, product].compactMap { $0 }).joined(separator: " ")
    }
}

/// One scanner node found by ``ScannerDiscovery``.
public struct DiscoveredScanner: Sendable, Hashable {
    /// The kind of node.
    public enum NodeKind: String, Sendable, Hashable {
        /// `/dev/hidrawN`.
        case hidraw
        /// `/dev/ttyACMN`.
        case serial
        /// `/dev/input/eventN`.
        case input
    }

    /// The device node, e.g. `/dev/hidraw2`.
    public var node: String
    /// What kind of node it is.
    public var kind: NodeKind
    /// The protocols to read it with, the likeliest first.
    public var protocols: [ScannerProtocolName]
    /// The USB device it belongs to.
    public var usb: USBDeviceInfo
    /// Whether this process may open it.
    public var access: ScannerDiscovery.NodeAccess
}
