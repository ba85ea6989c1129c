import Foundation
import Scanners
import Testing

/// A fake sysfs and /dev in a temporary directory, laid out as the kernel lays them out: class entries are
/// links into /devices, and each node's `device` link points at its parent device.
private final class FakeSystem {
    let root: URL
    var sys: String { root.path + "/sys" }
    var dev: String { root.path + "/dev" }
    private let usbBus = "devices/pci0000:00/0000:00:14.0/usb1"

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-sysfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(atPath: root.path + "/sys/class", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root.path + "/dev/input", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    func write(_ path: String, _ text: String) throws {
        try write(path, Data(text.utf8))
    }

    func write(_ path: String, _ data: Data) throws {
        let url = URL(fileURLWithPath: sys + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    func link(_ path: String, to destination: String) throws {
        let url = URL(fileURLWithPath: sys + "/" + path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: url.path, withDestinationPath: destination)
    }

    /// A USB device on port `port` with one interface; returns the interface's sysfs path.
    @discardableResult
    func usbDevice(port: String, vendor: String, product: String, manufacturer: String?, name: String?, serial: String?)
        throws -> String
    {
        let device = "\(usbBus)/\(port)"
        try write(device + "/idVendor", vendor + "\n")
        try write(device + "/idProduct", product + "\n")
        if let manufacturer { try write(device + "/manufacturer", manufacturer + "\n") }
        if let name { try write(device + "/product", name + "\n") }
        if let serial { try write(device + "/serial", serial + "\n") }
        try write(device + "/\(port):1.0/bInterfaceNumber", "00\n")
        return device + "/\(port):1.0"
    }

    func hidraw(_ name: String, interface: String, hidDevice: String, descriptor: [UInt8]?) throws {
        let hid = "\(interface)/\(hidDevice)"
        if let descriptor { try write(hid + "/report_descriptor", Data(descriptor)) }
        let node = "\(hid)/hidraw/\(name)"
        try write(node + "/uevent", "MAJOR=241\nMINOR=0\nDEVNAME=\(name)\n")
        try link(node + "/device", to: "../../../\(hidDevice)")
        try link("class/hidraw/\(name)", to: "../../\(node)")
        try makeNode(name)
    }

    func ttyACM(_ name: String, interface: String) throws {
        let node = "\(interface)/tty/\(name)"
        try write(node + "/uevent", "MAJOR=166\nMINOR=0\nDEVNAME=\(name)\n")
        try link(node + "/device", to: "../../../\((interface as NSString).lastPathComponent)")
        try link("class/tty/\(name)", to: "../../\(node)")
        try makeNode(name)
    }

    func event(_ name: String, interface: String, hidDevice: String, input: String, keys: String) throws {
        let inputDevice = "\(interface)/\(hidDevice)/input/\(input)"
        try write(inputDevice + "/capabilities/key", keys + "\n")
        let node = "\(inputDevice)/\(name)"
        try write(node + "/uevent", "MAJOR=13\nMINOR=64\nDEVNAME=input/\(name)\n")
        try link(node + "/device", to: "../../\(input)")
        try link("class/input/\(name)", to: "../../\(node)")
        try makeNode("input/\(name)")
    }

    func makeNode(_ name: String) throws {
        try Data().write(to: URL(fileURLWithPath: dev + "/" + name))
    }
}

/// The key bitmap of a full keyboard (KEY_ESC … KEY_KPDOT and more), as sysfs prints it.
private let keyboardKeys = "1000000000007 ff9f207ac14057ff febeffdfffefffff fffffffffffffffe"
/// A consumer-control node: a few media keys, no letters.
private let consumerKeys = "3f000003000000 0 0 0 0 0"

private func fakeSystem() throws -> FakeSystem {
    let system = try FakeSystem()
    let zebra = try system.usbDevice(
        port: "1-2", vendor: "05e0", product: "1900", manufacturer: "Zebra Technologies",
        name: "Symbol Bar Code Scanner",
        serial: "S/N:1A2B")
    try system.hidraw("hidraw3", interface: zebra, hidDevice: "0003:05E0:1900.0004", descriptor: nil)

    let honeywell = try system.usbDevice(
        port: "1-3", vendor: "0c2e", product: "0b87", manufacturer: "Honeywell Imaging & Mobility", name: "1950g",
        serial: "19123B4567")
    let descriptor = try Recordings.bytes("hidpos-honeywell.hiddescriptor")
    try system.hidraw("hidraw10", interface: honeywell, hidDevice: "0003:0C2E:0B87.0005", descriptor: descriptor)

    let datalogic = try system.usbDevice(
        port: "1-4", vendor: "05f9", product: "4204", manufacturer: "Datalogic", name: "Gryphon", serial: nil)
    try system.ttyACM("ttyACM0", interface: datalogic)

    let newland = try system.usbDevice(
        port: "1-5", vendor: "1eab", product: "1d03", manufacturer: "Newland", name: "NLS-HR32", serial: nil)
    try system.event(
        "event5", interface: newland, hidDevice: "0003:1EAB:1D03.0006", input: "input7", keys: keyboardKeys)
    try system.event(
        "event6", interface: newland, hidDevice: "0003:1EAB:1D03.0007", input: "input8", keys: consumerKeys)

    // Not scanners: a mouse's hidraw node and a built-in serial port.
    let mouse = try system.usbDevice(
        port: "1-1", vendor: "046d", product: "c077", manufacturer: "Logitech", name: "USB Optical Mouse", serial: nil)
    try system.hidraw("hidraw0", interface: mouse, hidDevice: "0003:046D:C077.0001", descriptor: [0x05, 0x01])
    try system.write("devices/platform/serial8250/tty/ttyS0/uevent", "DEVNAME=ttyS0\n")
    try system.link("class/tty/ttyS0", to: "../../devices/platform/serial8250/tty/ttyS0")
    return system
}

@Suite struct DiscoveryTests {
    @Test func findsEachScannerWithItsProtocol() throws {
        let system = try fakeSystem()
        let result = ScannerDiscovery(sysfsRoot: system.sys, deviceRoot: system.dev, access: { _ in .permitted })
            .discover()
        let found = result.scanners.map {
            "\($0.node.replacingOccurrences(of: system.dev, with: "/dev")) \($0.protocols.map(\.rawValue))"
        }
        #expect(
            found == [
                "/dev/hidraw3 [\"snapi\"]",
                "/dev/hidraw10 [\"hidpos\"]",
                "/dev/ttyACM0 [\"raw\", \"ssi\"]",
                "/dev/input/event5 [\"wedge\"]",
            ])
        #expect(result.explanation == nil)
        let zebra = try #require(result.scanners.first)
        #expect(zebra.usb.id == .zebraSNAPI)
        #expect(zebra.usb.manufacturer == "Zebra Technologies")
        #expect(zebra.usb.serial == "S/N:1A2B")
        #expect(zebra.usb.port == "1-2")
        #expect(zebra.usb.interfaceNumber == 0)
        #expect(zebra.kind == .hidraw)
    }

    @Test func permissionDeniedPointsAtTheUdevRules() throws {
        let system = try fakeSystem()
        let result = ScannerDiscovery(sysfsRoot: system.sys, deviceRoot: system.dev, access: { _ in .denied })
            .discover()
        #expect(result.scanners.count == 4)
        let explanation = try #require(result.explanation)
        #expect(explanation.hasPrefix("found 4 scanner node(s) but this user may not open them ("))
        #expect(explanation.contains("install the udev rules as Udev/README.md says"))
    }

    @Test func noScannerNamesWhatWasSeenAndHowToAddIt() throws {
        let system = try FakeSystem()
        let mouse = try system.usbDevice(
            port: "1-1", vendor: "046d", product: "c077", manufacturer: "Logitech", name: "USB Optical Mouse",
            serial: nil)
        try system.hidraw("hidraw0", interface: mouse, hidDevice: "0003:046D:C077.0001", descriptor: [0x05, 0x01])
        let result = ScannerDiscovery(sysfsRoot: system.sys, deviceRoot: system.dev).discover()
        #expect(result.scanners.isEmpty)
        #expect(
            result.explanation
                == "no USB barcode scanners found: no hidraw, ttyACM or input node belongs to a USB device of "
                + "Zebra 05e0, Honeywell 0c2e, Datalogic 05f9, Newland 1eab; other USB devices seen: "
                + "046d:c077 Logitech USB Optical Mouse (if one is a scanner, add its id with --usb-id VVVV:PPPP)")

        // Configured, the same device is listed (its hidraw node is not HID POS, its event node would be).
        try system.event(
            "event2", interface: mouse, hidDevice: "0003:046D:C077.0001", input: "input2", keys: keyboardKeys)
        let configured = ScannerDiscovery(
            sysfsRoot: system.sys, deviceRoot: system.dev, additionalIDs: [USBDeviceID("046d:c077")!]
        ).discover()
        #expect(configured.scanners.map(\.protocols) == [[.wedge]])
    }

    @Test func noSysfsSaysSo() {
        let result = ScannerDiscovery(sysfsRoot: "/nonexistent-farecheck-sys").discover()
        #expect(result.scanners.isEmpty)
        #expect(result.explanation?.contains("needs Linux with sysfs mounted") == true)
    }

    @Test func usbIDsParseAsLsusbPrintsThem() {
        #expect(USBDeviceID("05e0:1900") == .zebraSNAPI)
        #expect(USBDeviceID("05E0")?.product == nil)
        #expect(USBDeviceID("05e0:19000") == nil)
        #expect(USBDeviceID("zebra") == nil)
        #expect(USBDeviceID.zebraSNAPI.description == "05e0:1900")
    }
}
