import Executors
import FareCore
import Foundation

/// Which protocol a HID scanner speaks.
public enum HIDScannerProtocol: Sendable, Hashable {
    /// HID POS (usage page 0x8C). `layout` overrides what the report descriptor says; leave it `nil` to read
    /// the layout from the descriptor, falling back to the common layout for the vendor.
    case hidPOS(layout: HIDPOSReportLayout? = nil)
    /// Zebra SNAPI (05e0:1900): decode data in reports 0x22 / 0x26, each packet acknowledged.
    case snapi

    /// The assembler for a device with this descriptor (when it could be read) and vendor.
    public func makeAssembler(descriptor: HIDReportDescriptor?, vendorID: UInt16?) -> any HIDReportAssembler {
        switch self {
        case .hidPOS(let layout):
            let chosen =
                layout ?? descriptor.flatMap(HIDPOSReportLayout.init(descriptor:)) ?? .fallback(vendorID: vendorID)
            return HIDPOSAssembler(layout: chosen)
        case .snapi:
            let length = descriptor?.reportLength(of: .output, reportID: SNAPIAcknowledgement.reportID)
            return SNAPIAssembler(acknowledgementLength: length.flatMap { $0 > 1 ? $0 : nil })
        }
    }
}

/// Where a HID connection's reports come from and acknowledgements go: a hidraw node or a libusb handle.
///
/// Implementations are thin: they move whole reports, and everything else happens in the assembler.
protocol HIDReportPort: Sendable {
    /// The device's name for scan events and log lines.
    var name: String { get }
    /// Waits for the next input report (report id first), for at most about 100 ms.
    ///
    /// - Throws: ``ScannerConnectionError`` when the device failed or vanished with an error.
    func readReport(on thread: DeviceThread) throws(ScannerConnectionError) -> HIDPortRead
    /// Sends an output report (report id first).
    func writeReport(_ report: [UInt8]) throws(ScannerConnectionError)
    /// Releases the device. Called once, on the device thread, when the loop ends.
    func close()
}

/// What one wait for a report gave.
enum HIDPortRead {
    /// An input report, report id first.
    case report([UInt8])
    /// Nothing yet, or the thread is stopping.
    case nothing
    /// The device hung up or the stream ended (end of file).
    case end
}

/// A scanner session over USB HID: HID POS or Zebra SNAPI, through `/dev/hidrawN` or libusb.
///
/// A thread of its own reads each report as it arrives, feeds it to the protocol's ``HIDReportAssembler``,
/// writes the acknowledgements the assembler asks for at once (so the scanner does not resend while a
/// verdict is being worked out), and queues complete scans for ``nextScan()``. A scan that is dropped (a
/// missing SNAPI packet, a continuation that never came) is logged with the reason; a scan in flight when
/// the device vanishes is dropped and the error ``nextScan()`` throws says so.
///
/// ``signal(_:)`` does nothing: neither HID POS nor SNAPI defines a portable beep or LED report.
public final class HIDScannerConnection: ScannerConnection {
    private let mailbox: ScanMailbox
    private let thread: DeviceThread
    /// The device name used in scan events, e.g. `/dev/hidraw2` or `usb:05e0:1900`.
    public let device: String

    private init(device: String, mailbox: ScanMailbox, thread: DeviceThread) {
        self.device = device
        self.mailbox = mailbox
        self.thread = thread
    }

    /// Opens a hidraw node (`/dev/hidrawN` or a udev link to one) and starts reading.
    ///
    /// The report descriptor and USB ids are read from the node (`HIDIOCGRDESC`, `HIDIOCGRAWINFO`) to pick
    /// the report layout.
    ///
    /// - Parameter log: Receives a line for each scan dropped or report rejected while the device stays.
    /// - Throws: ``ScannerConnectionError`` when the node is missing, not permitted, or not a hidraw node.
    public static func openHIDRaw(
        path: String,
        protocol scannerProtocol: HIDScannerProtocol,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> HIDScannerConnection {
        let port = try HIDRawPort.open(path: path, writable: scannerProtocol == .snapi)
        let assembler = scannerProtocol.makeAssembler(descriptor: port.descriptor, vendorID: port.vendorID)
        return try start(port: port, assembler: assembler, log: log)
    }

    /// Reads reports from a descriptor that is already open, one report per `read()`: a hidraw node opened
    /// elsewhere, or in tests a `SOCK_SEQPACKET` socket that keeps report boundaries as hidraw does.
    ///
    /// The connection owns the descriptor from now on and closes it when the session ends.
    public static func reading(
        fileDescriptor: Int32,
        device: String,
        descriptor: HIDReportDescriptor?,
        vendorID: UInt16?,
        protocol scannerProtocol: HIDScannerProtocol,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> HIDScannerConnection {
        let port = HIDRawPort(fileDescriptor: fileDescriptor, name: device, descriptor: descriptor, vendorID: vendorID)
        let assembler = scannerProtocol.makeAssembler(descriptor: descriptor, vendorID: vendorID)
        return try start(port: port, assembler: assembler, log: log)
    }

    /// Opens a USB HID scanner through libusb, for devices that have no hidraw node (or whose node this
    /// process may not use): the kernel driver is detached while the session lasts and re-attached after.
    ///
    /// - Parameters:
    ///   - id: The vendor and product to open; the first match is used.
    ///   - serial: When several scanners share ids, the serial number (`iSerialNumber`) of the one to open.
    ///   - interface: The HID interface number, 0 for single-interface scanners.
    public static func openUSB(
        id: USBDeviceID,
        serial: String? = nil,
        interface: Int = 0,
        protocol scannerProtocol: HIDScannerProtocol,
        log: @escaping @Sendable (String) -> Void = { _ in }
    ) throws(ScannerConnectionError) -> HIDScannerConnection {
        let port = try USBInterruptPort.open(id: id, serial: serial, interface: interface)
        let assembler = scannerProtocol.makeAssembler(descriptor: port.descriptor, vendorID: id.vendor)
        return try start(port: port, assembler: assembler, log: log)
    }

    private static func start(
        port: some HIDReportPort,
        assembler: any HIDReportAssembler,
        log: @escaping @Sendable (String) -> Void
    ) throws(ScannerConnectionError) -> HIDScannerConnection {
        let mailbox = ScanMailbox()
        let name = port.name
        let thread: DeviceThread
        do {
            thread = try DeviceThread.start(name: "farecheck \(name)") { thread in
                run(port: port, assembler: assembler, mailbox: mailbox, thread: thread, log: log)
            }
        } catch {
            port.close()
            throw ScannerConnectionError(
                code: .openFailed, device: name, message: "cannot start a reader thread for \(name)", cause: error)
        }
        return HIDScannerConnection(device: name, mailbox: mailbox, thread: thread)
    }

    /// The device loop: read a report, assemble, acknowledge, deliver; until the device goes or stop().
    private static func run(
        port: some HIDReportPort,
        assembler: any HIDReportAssembler,
        mailbox: ScanMailbox,
        thread: DeviceThread,
        log: @Sendable (String) -> Void
    ) {
        var assembler = assembler
        defer { port.close() }
        while !thread.isStopRequested {
            let read: HIDPortRead
            do {
                read = try port.readReport(on: thread)
            } catch {
                let dropped = assembler.abandon(reason: "the scanner went away")
                var failure = error
                if let dropped, error.code == .deviceGone || error.code == .ioFailed {
                    failure.message += USBNodeError.droppedNote(dropped)
                }
                mailbox.finish(failure: failure)
                return
            }
            let report: [UInt8]
            switch read {
            case .nothing: continue
            case .report(let bytes): report = bytes
            case .end:
                // Gone with nothing in flight is a clean end; with a scan half received, the reader must hear why.
                let dropped = assembler.abandon(reason: "the scanner went away")
                mailbox.finish(failure: dropped.map { USBNodeError.hungUp(port.name, dropped: $0) })
                return
            }
            let outcome = assembler.accept(report: report, at: Date())
            for reply in outcome.replies {
                do {
                    try port.writeReport(reply)
                } catch {
                    // The next read tells whether the device is gone; a lost acknowledgement only means a resend.
                    log("\(port.name): could not acknowledge a packet: \(error)")
                }
            }
            if let rejection = outcome.rejection {
                log("\(port.name): report ignored: \(rejection)")
            }
            if let dropped = outcome.dropped {
                log("\(port.name): \(dropped)")
            }
            if let scan = outcome.scan {
                mailbox.post(
                    ScanEvent(
                        payload: scan.payload, symbology: scan.symbology, device: port.name,
                        receivedAt: scan.completedAt)
                )
            }
        }
        if let dropped = assembler.abandon(reason: "the session was closed") {
            log("\(port.name): \(dropped)")
        }
        mailbox.finish()
    }

    /// Waits for the next complete scan; see ``ScannerConnection/nextScan()``.
    public func nextScan() async throws -> ScanEvent? {
        try await mailbox.next()
    }

    /// Does nothing: HID POS and SNAPI have no portable beep or LED report.
    public func signal(_ feedback: ScanFeedback) async {}

    /// Stops the reader thread and releases the device (re-attaching the kernel driver after libusb).
    public func close() async {
        await thread.stop()
    }
}
