import FareCore
import Foundation
import Scanners
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A stand-in for a hidraw node: a `SOCK_SEQPACKET` socket pair keeps report boundaries, so each `read()`
/// returns one report as hidraw does, and what the connection writes (acknowledgements) can be read back.
private struct FakeHIDRaw {
    let device: Int32
    let scanner: Int32

    init() throws {
        var fds: [Int32] = [-1, -1]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds) == 0 else {
            throw POSIXError(.init(rawValue: errno) ?? .EIO)
        }
        device = fds[0]
        scanner = fds[1]
    }

    func send(_ report: [UInt8]) {
        let sent = report.withUnsafeBytes { Glibc.send(scanner, $0.baseAddress, $0.count, 0) }
        precondition(sent == report.count)
    }

    /// Reads what the host wrote, one output report per message, until `count` have come.
    func receive(_ count: Int) -> [[UInt8]] {
        var reports: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while reports.count < count {
            let length = buffer.withUnsafeMutableBytes { recv(scanner, $0.baseAddress, $0.count, 0) }
            guard length > 0 else { break }
            reports.append(Array(buffer.prefix(length)))
        }
        return reports
    }

    func unplug() { Glibc.close(scanner) }
}

@Suite struct HIDTransportTests {
    @Test func snapiThroughTheHIDRawCodePathAcknowledgesEveryPacket() async throws {
        let fake = try FakeHIDRaw()
        let connection = try HIDScannerConnection.reading(
            fileDescriptor: fake.device, device: "/dev/hidraw-test", descriptor: nil, vendorID: USBVendor.zebra,
            protocol: .snapi)
        let reports = try recordedReports("snapi-22-out-of-order.hidreports")
        for report in reports { fake.send(report.bytes) }

        let first = try await connection.nextScan()
        let second = try await connection.nextScan()
        #expect(first?.payload == (try Recordings.bytes("binary-ticket.bin")))
        #expect(first?.symbology == .aztec)
        #expect(first?.device == "/dev/hidraw-test")
        #expect(second?.payload == Array("HELLO-DM".utf8))
        let acknowledgements = fake.receive(reports.count)
        #expect(acknowledgements.count == reports.count)
        #expect(acknowledgements.first == [0x01, 0x22, 3, 0])

        fake.unplug()
        #expect(try await connection.nextScan() == nil)
        await connection.close()
    }

    @Test func unplugMidScanDropsItAndSaysSo() async throws {
        let fake = try FakeHIDRaw()
        let connection = try HIDScannerConnection.reading(
            fileDescriptor: fake.device, device: "/dev/hidraw-test", descriptor: nil, vendorID: USBVendor.honeywell,
            protocol: .hidPOS())
        let reports = try recordedReports("honeywell-binary-aztec.hidreports")
        fake.send(reports[0].bytes)
        fake.send(reports[1].bytes)
        fake.unplug()
        do {
            let scan = try await connection.nextScan()
            Issue.record("expected the device to be gone, got \(String(describing: scan))")
        } catch let error as ScannerConnectionError {
            #expect(error.code == .deviceGone)
            #expect(error.message == "the scanner went away; a scan in flight was dropped after 112 bytes")
        }
        await connection.close()
    }

    @Test func honeywellDescriptorDrivenLayoutThroughTheConnection() async throws {
        let fake = try FakeHIDRaw()
        let descriptor = try HIDReportDescriptor(bytes: Recordings.bytes("hidpos-honeywell.hiddescriptor"))
        let connection = try HIDScannerConnection.reading(
            fileDescriptor: fake.device, device: "/dev/hidraw-test", descriptor: descriptor, vendorID: nil,
            protocol: .hidPOS())
        for report in try recordedReports("honeywell-binary-aztec.hidreports") { fake.send(report.bytes) }
        let scan = try await connection.nextScan()
        #expect(scan?.payload == (try Recordings.bytes("binary-ticket.bin")))
        #expect(scan?.symbology == .aztec)
        await connection.close()
        fake.unplug()
    }

    @Test func closeWhileWaitingEndsTheSession() async throws {
        let fake = try FakeHIDRaw()
        let connection = try HIDScannerConnection.reading(
            fileDescriptor: fake.device, device: "/dev/hidraw-test", descriptor: nil, vendorID: nil, protocol: .hidPOS()
        )
        async let waiting = connection.nextScan()
        await connection.close()
        #expect(try await waiting == nil)
        fake.unplug()
    }

    @Test func missingHIDRawNodeSaysToPlugTheScannerIn() throws {
        #expect {
            try HIDScannerConnection.openHIDRaw(path: "/dev/hidraw-farecheck-missing", protocol: .snapi)
        } throws: { error in
            let failure = try #require(error as? ScannerConnectionError)
            // The inspector page says it as "not found (unplugged?)" in its language.
            return failure.code == .deviceMissing && failure.message.contains("is the scanner plugged in?")
                && ScannerProblem(error) == .missing
        }
    }

    @Test func aNodeThatIsNotHIDRawIsAConfigurationError() throws {
        #expect {
            try HIDScannerConnection.openHIDRaw(path: "/dev/null", protocol: .hidPOS())
        } throws: { error in
            let failure = try #require(error as? ScannerConnectionError)
            return failure.code == .misconfigured && failure.message.contains("is not a hidraw node")
        }
    }

    @Test func libusbOpenOfAnAbsentScannerIsAClearError() throws {
        #expect {
            try HIDScannerConnection.openUSB(id: .zebraSNAPI, protocol: .snapi)
        } throws: { error in
            let failure = try #require(error as? ScannerConnectionError)
            // Without a USB bus in the sandbox libusb itself may not start; either way the message says what.
            return (failure.code == .deviceMissing && failure.message.contains("no USB device 05e0:1900 is attached"))
                || (failure.code == .openFailed && failure.message == "libusb could not start")
        }
    }
}
