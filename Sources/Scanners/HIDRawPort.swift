import CLinuxShims
import Executors
import SystemCalls
import SystemPackage

/// A `/dev/hidrawN` node: each `read()` returns one input report, report id first; each `write()` sends one
/// output report.
struct HIDRawPort: HIDReportPort {
    let fileDescriptor: FileDescriptor
    let name: String
    /// The report descriptor, `nil` when the node could not give it (a socket in tests).
    let descriptor: HIDReportDescriptor?
    /// The USB vendor id, `nil` when unknown.
    let vendorID: UInt16?

    /// The largest report a HID device can send (HID_MAX_BUFFER_SIZE), plus the report id.
    private static let maximumReport = 4097

    init(fileDescriptor: Int32, name: String, descriptor: HIDReportDescriptor?, vendorID: UInt16?) {
        self.fileDescriptor = FileDescriptor(rawValue: fileDescriptor)
        self.name = name
        self.descriptor = descriptor
        self.vendorID = vendorID
    }

    /// Opens the node and reads its descriptor and ids.
    static func open(path: String, writable: Bool) throws(ScannerConnectionError) -> HIDRawPort {
        let fd: FileDescriptor
        do {
            // Non-blocking, so a read after poll never hangs on a report another reader took.
            fd = try FileDescriptor.open(
                FilePath(path), writable ? .readWrite : .readOnly, options: [.closeOnExec, .nonBlocking])
        } catch {
            throw USBNodeError.opening(path, error as? Errno ?? .ioError, what: "a hidraw node")
        }
        var bus: UInt32 = 0
        var vendor: UInt16 = 0
        var product: UInt16 = 0
        do {
            _ = try systemCallReturningNegatedErrno { CLinuxShims_hidrawInfo(fd.rawValue, &bus, &vendor, &product) }
        } catch {
            try? fd.close()
            throw ScannerConnectionError(
                code: .misconfigured,
                device: path,
                message:
                    "\(path) is not a hidraw node; give a /dev/hidrawN path (`farecheck scanners list` shows them)",
                cause: error
            )
        }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let length =
            (try? systemCallReturningNegatedErrno {
                CLinuxShims_hidrawReportDescriptor(fd.rawValue, &bytes, UInt32(bytes.count))
            }) ?? 0
        // A descriptor that cannot be read or parsed leaves the vendor's common layout in charge.
        let descriptor = length > 0 ? try? HIDReportDescriptor(bytes: Array(bytes.prefix(Int(length)))) : nil
        return HIDRawPort(fileDescriptor: fd.rawValue, name: path, descriptor: descriptor, vendorID: vendor)
    }

    func readReport(on thread: DeviceThread) throws(ScannerConnectionError) -> HIDPortRead {
        let readiness: DeviceThread.Readiness
        do {
            readiness = try thread.wait(forReading: fileDescriptor, timeout: nil)
        } catch {
            throw USBNodeError.reading(name, error, dropped: nil)
        }
        switch readiness {
        case .stopped, .timedOut: return .nothing
        case .hangUp: return .end
        case .readable: break
        }
        var buffer = [UInt8](repeating: 0, count: Self.maximumReport)
        let count: Int
        do {
            count = try buffer.withUnsafeMutableBytes { try fileDescriptor.read(into: $0) }
        } catch let error as Errno where error == .resourceTemporarilyUnavailable {
            return .nothing
        } catch {
            throw USBNodeError.reading(name, error as? Errno ?? .ioError, dropped: nil)
        }
        guard count > 0 else { return .end }
        return .report(Array(buffer.prefix(count)))
    }

    func writeReport(_ report: [UInt8]) throws(ScannerConnectionError) {
        do {
            _ = try fileDescriptor.writeAll(report)
        } catch {
            throw ScannerConnectionError(
                code: .ioFailed, device: name, message: "writing an output report failed", cause: error as? Errno)
        }
    }

    func close() {
        try? fileDescriptor.close()
    }
}
