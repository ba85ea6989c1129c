import CLibUSB
import Executors

/// An error code from libusb-1.0, with its name (`LIBUSB_ERROR_NO_DEVICE`), as a cause in connection errors.
public struct LibUSBError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The negative `libusb_error` value.
    public var code: Int32

    /// Wraps a libusb return value.
    public init(code: Int32) { self.code = code }

    /// libusb's name for the code.
    public var description: String { String(cString: libusb_error_name(code)) }
}

/// A USB HID scanner opened through libusb: interrupt IN transfers bring reports, interrupt OUT (or a
/// SET_REPORT control request when the interface has no OUT endpoint) sends them.
///
/// Used for scanners that have no hidraw node. While the session lasts the kernel's driver is detached
/// from the interface; ``close()`` gives the interface back and re-attaches it.
// The libusb handles are made on the opening task and then used only by the device thread, which the
// thread start orders after them; libusb itself is thread-safe for one handle used from one thread.
final class USBInterruptPort: HIDReportPort, @unchecked Sendable {
    let name: String
    let descriptor: HIDReportDescriptor?
    private let context: OpaquePointer
    private let handle: OpaquePointer
    private let interface: Int32
    private let inEndpoint: UInt8
    private let outEndpoint: UInt8?
    private let packetSize: Int32
    private let reattach: Bool

    /// How long one interrupt IN transfer waits, which bounds how long ``close()`` waits for the thread.
    private static let readTimeoutMilliseconds: UInt32 = 100

    private init(
        name: String, descriptor: HIDReportDescriptor?, context: OpaquePointer, handle: OpaquePointer, interface: Int32,
        inEndpoint: UInt8, outEndpoint: UInt8?, packetSize: Int32, reattach: Bool
    ) {
        self.name = name
        self.descriptor = descriptor
        self.context = context
        self.handle = handle
        self.interface = interface
        self.inEndpoint = inEndpoint
        self.outEndpoint = outEndpoint
        self.packetSize = packetSize
        self.reattach = reattach
    }

    /// Finds, opens and claims the device's HID interface.
    static func open(id: USBDeviceID, serial: String?, interface: Int) throws(ScannerConnectionError)
        -> USBInterruptPort
    {
        let name = "usb:\(id)" + (serial.map { "/\($0)" } ?? "")
        var contextPointer: OpaquePointer?
        let initialized = libusb_init(&contextPointer)
        guard initialized == 0, let context = contextPointer else {
            throw ScannerConnectionError(
                code: .openFailed, device: name, message: "libusb could not start",
                cause: LibUSBError(code: initialized))
        }
        var opened: OpaquePointer?
        var device: OpaquePointer?
        var lastOpenError: Int32 = 0
        var list: UnsafeMutablePointer<OpaquePointer?>?
        let count = libusb_get_device_list(context, &list)
        if count > 0, let list {
            for index in 0..<Int(count) {
                guard let candidate = list[index] else { continue }
                var info = libusb_device_descriptor()
                guard libusb_get_device_descriptor(candidate, &info) == 0,
                    id.matches(vendor: info.idVendor, product: info.idProduct)
                else { continue }
                var handle: OpaquePointer?
                let result = libusb_open(candidate, &handle)
                guard result == 0, let handle else {
                    lastOpenError = result
                    continue
                }
                if let serial, serialNumber(handle, index: info.iSerialNumber) != serial {
                    libusb_close(handle)
                    continue
                }
                opened = handle
                device = candidate
                libusb_ref_device(candidate)
                break
            }
        }
        if let list { libusb_free_device_list(list, 1) }
        guard let handle = opened, let device else {
            libusb_exit(context)
            if lastOpenError == LIBUSB_ERROR_ACCESS.rawValue {
                throw ScannerConnectionError(
                    code: .permissionDenied,
                    device: name,
                    message: "no permission to open USB device \(id): install the udev rules in Udev/ "
                        + "(see Udev/README.md) and add this user to the farecheck group",
                    cause: LibUSBError(code: lastOpenError)
                )
            }
            throw ScannerConnectionError(
                code: .deviceMissing,
                device: name,
                message: "no USB device \(id)\(serial.map { " with serial \($0)" } ?? "") is attached: is the scanner "
                    + "plugged in? `farecheck scanners list` shows what is attached",
                cause: lastOpenError == 0 ? nil : LibUSBError(code: lastOpenError)
            )
        }
        defer { libusb_unref_device(device) }
        func fail(_ message: String, _ code: Int32, detached: Bool = false) -> ScannerConnectionError {
            if detached { libusb_attach_kernel_driver(handle, Int32(interface)) }
            libusb_close(handle)
            libusb_exit(context)
            let busy = code == LIBUSB_ERROR_BUSY.rawValue
            return ScannerConnectionError(
                code: busy ? .deviceBusy : .openFailed,
                device: name,
                message: busy ? "\(message): another program holds the interface" : message,
                cause: LibUSBError(code: code)
            )
        }
        guard let endpoints = interruptEndpoints(device, interface: interface) else {
            throw fail(
                "USB device \(id) has no interrupt IN endpoint on interface \(interface)",
                LIBUSB_ERROR_NOT_FOUND.rawValue)
        }
        let iface = Int32(interface)
        var detached = false
        if libusb_kernel_driver_active(handle, iface) == 1 {
            let result = libusb_detach_kernel_driver(handle, iface)
            guard result == 0 else { throw fail("cannot detach the kernel driver from USB device \(id)", result) }
            detached = true
        }
        let claimed = libusb_claim_interface(handle, iface)
        guard claimed == 0 else {
            throw fail("cannot claim interface \(interface) of USB device \(id)", claimed, detached: detached)
        }
        return USBInterruptPort(
            name: name,
            descriptor: reportDescriptor(handle, interface: interface),
            context: context,
            handle: handle,
            interface: iface,
            inEndpoint: endpoints.in,
            outEndpoint: endpoints.out,
            packetSize: max(64, endpoints.packetSize),
            reattach: detached
        )
    }

    private static func serialNumber(_ handle: OpaquePointer, index: UInt8) -> String? {
        guard index != 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 256)
        let length = libusb_get_string_descriptor_ascii(handle, index, &buffer, Int32(buffer.count))
        guard length > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(length)), as: UTF8.self)
    }

    /// The interface's interrupt endpoints, from the active configuration descriptor.
    private static func interruptEndpoints(_ device: OpaquePointer, interface: Int) -> (
        in: UInt8, out: UInt8?, packetSize: Int32
    )? {
        var configPointer: UnsafeMutablePointer<libusb_config_descriptor>?
        guard libusb_get_active_config_descriptor(device, &configPointer) == 0, let config = configPointer else {
            return nil
        }
        defer { libusb_free_config_descriptor(config) }
        guard interface < Int(config.pointee.bNumInterfaces), let interfaces = config.pointee.interface,
            interfaces[interface].num_altsetting > 0, let setting = interfaces[interface].altsetting
        else { return nil }
        var input: (UInt8, Int32)?
        var output: UInt8?
        let interruptType = UInt8(LIBUSB_TRANSFER_TYPE_INTERRUPT.rawValue)
        for index in 0..<Int(setting.pointee.bNumEndpoints) {
            guard let endpoint = setting.pointee.endpoint?[index] else { continue }
            guard endpoint.bmAttributes & 0x03 == interruptType else { continue }
            if endpoint.bEndpointAddress & 0x80 != 0 {
                input = input ?? (endpoint.bEndpointAddress, Int32(endpoint.wMaxPacketSize))
            } else {
                output = output ?? endpoint.bEndpointAddress
            }
        }
        guard let input else { return nil }
        return (input.0, output, input.1)
    }

    /// The HID report descriptor, by the class-specific GET_DESCRIPTOR request (type 0x22).
    private static func reportDescriptor(_ handle: OpaquePointer, interface: Int) -> HIDReportDescriptor? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let length = libusb_control_transfer(
            handle, 0x81, UInt8(LIBUSB_REQUEST_GET_DESCRIPTOR.rawValue), 0x2200, UInt16(interface), &buffer,
            UInt16(buffer.count), 1000)
        guard length > 0 else { return nil }
        return try? HIDReportDescriptor(bytes: Array(buffer.prefix(Int(length))))
    }

    func readReport(on thread: DeviceThread) throws(ScannerConnectionError) -> HIDPortRead {
        guard !thread.isStopRequested else { return .nothing }
        var buffer = [UInt8](repeating: 0, count: Int(packetSize))
        var transferred: Int32 = 0
        let result = libusb_interrupt_transfer(
            handle, inEndpoint, &buffer, packetSize, &transferred, Self.readTimeoutMilliseconds)
        if result == LIBUSB_ERROR_TIMEOUT.rawValue || result == LIBUSB_ERROR_INTERRUPTED.rawValue {
            return transferred > 0 ? .report(Array(buffer.prefix(Int(transferred)))) : .nothing
        }
        guard result == 0 else {
            let gone = result == LIBUSB_ERROR_NO_DEVICE.rawValue || result == LIBUSB_ERROR_IO.rawValue
            throw ScannerConnectionError(
                code: gone ? .deviceGone : .ioFailed,
                device: name,
                message: gone ? "the scanner went away" : "an interrupt IN transfer failed",
                cause: LibUSBError(code: result)
            )
        }
        return transferred > 0 ? .report(Array(buffer.prefix(Int(transferred)))) : .nothing
    }

    func writeReport(_ report: [UInt8]) throws(ScannerConnectionError) {
        var bytes = report
        let result: Int32
        if let outEndpoint {
            var transferred: Int32 = 0
            result = libusb_interrupt_transfer(handle, outEndpoint, &bytes, Int32(bytes.count), &transferred, 1000)
        } else {
            // No OUT endpoint: HID class SET_REPORT (output report type 2) over the control pipe.
            let value = UInt16(0x02) << 8 | UInt16(report.first ?? 0)
            let sent = libusb_control_transfer(
                handle, 0x21, 0x09, value, UInt16(interface), &bytes, UInt16(bytes.count), 1000)
            result = sent < 0 ? sent : 0
        }
        guard result == 0 else {
            throw ScannerConnectionError(
                code: .ioFailed, device: name, message: "sending an output report failed",
                cause: LibUSBError(code: result))
        }
    }

    func close() {
        libusb_release_interface(handle, interface)
        if reattach {
            // Give the scanner back to the kernel, so it works as before once farecheck stops.
            libusb_attach_kernel_driver(handle, interface)
        }
        libusb_close(handle)
        libusb_exit(context)
    }
}
