import FareCore
import Foundation
import Testing

@testable import Scanners

/// Replays a recording through an assembler, as the hidraw transport does with each read().
private func replay(
    _ name: String,
    into assembler: inout some HIDReportAssembler
) throws -> (scans: [AssembledScan], dropped: [DroppedScan], replies: [[UInt8]], rejections: [String]) {
    var scans: [AssembledScan] = []
    var dropped: [DroppedScan] = []
    var replies: [[UInt8]] = []
    var rejections: [String] = []
    for report in try recordedReports(name) {
        let outcome = assembler.accept(report: report.bytes, at: report.time)
        scans += outcome.scan.map { [$0] } ?? []
        dropped += outcome.dropped.map { [$0] } ?? []
        replies += outcome.replies
        rejections += outcome.rejection.map { [$0] } ?? []
    }
    return (scans, dropped, replies, rejections)
}

/// The base45 FC1 text ticket in the recordings (`make-hid-recordings.py`).
private let fc1Ticket = Array(
    ("FC1:6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDEXWK G2EP4J0BGJLFX3R3VHXK.PJ:2DPF6R:5SVBHABVCNN95SWMPHQUHQN"
        + "%A0SOE+QQAB-HQ/HQ7IR.SQEEOK9SAI4- 7Y15KBPD34 QKHTS").utf8
)
/// The Honeywell recording sends the ticket's first 56 bytes as a one-report scan.
private let fc1Prefix = Array(fc1Ticket.prefix(56))

@Suite struct HIDPOSTests {
    @Test func honeywellBinaryTicketOverThreeReportsArrivesWhole() throws {
        var assembler = HIDPOSAssembler(layout: .honeywell)
        let result = try replay("honeywell-binary-aztec.hidreports", into: &assembler)
        let ticket = try Recordings.bytes("binary-ticket.bin")
        #expect(ticket.contains(0x00) && ticket.contains(0xFF))
        #expect(result.scans.map(\.payload) == [ticket, fc1Prefix])
        #expect(result.scans.map(\.symbology) == [.aztec, .qr])
        #expect(result.dropped.isEmpty)
    }

    @Test func newlandTextTicketOverThreeReports() throws {
        var assembler = HIDPOSAssembler(layout: HIDPOSReportLayout.fallback(vendorID: USBVendor.newland))
        let result = try replay("newland-qr.hidreports", into: &assembler)
        #expect(result.scans.count == 1)
        #expect(result.scans.first?.payload == fc1Ticket)
        #expect(result.scans.first?.symbology == .qr)
    }

    @Test func descriptorGivesTheHoneywellLayout() throws {
        let descriptor = try HIDReportDescriptor(bytes: Recordings.bytes("hidpos-honeywell.hiddescriptor"))
        #expect(descriptor.usesReportIDs)
        #expect(descriptor.reportIDs(of: .input) == [0x02])
        #expect(descriptor.reportLength(of: .input, reportID: 0x02) == 64)
        #expect(descriptor.reportLength(of: .output, reportID: 0x04) == 9)
        #expect(descriptor.reportLength(of: .output, reportID: 0xFD) == 64)
        let layout = try #require(HIDPOSReportLayout(descriptor: descriptor))
        #expect(layout == .honeywell)
    }

    @Test func descriptorLayoutReadsTheRecordedStream() throws {
        let descriptor = try HIDReportDescriptor(bytes: Recordings.bytes("hidpos-honeywell.hiddescriptor"))
        var assembler = HIDPOSAssembler(layout: try #require(HIDPOSReportLayout(descriptor: descriptor)))
        let result = try replay("honeywell-binary-aztec.hidreports", into: &assembler)
        #expect(result.scans.first?.payload == (try Recordings.bytes("binary-ticket.bin")))
    }

    @Test func keyboardDescriptorIsNotHIDPOS() throws {
        // A boot keyboard: modifiers, reserved byte, six key codes, LED output.
        let keyboard: [UInt8] = [
            0x05, 0x01, 0x09, 0x06, 0xA1, 0x01, 0x05, 0x07, 0x19, 0xE0, 0x29, 0xE7, 0x15, 0x00, 0x25, 0x01,
            0x75, 0x01, 0x95, 0x08, 0x81, 0x02, 0x95, 0x01, 0x75, 0x08, 0x81, 0x01, 0x95, 0x05, 0x75, 0x01,
            0x05, 0x08, 0x19, 0x01, 0x29, 0x05, 0x91, 0x02, 0x95, 0x01, 0x75, 0x03, 0x91, 0x01, 0x95, 0x06,
            0x75, 0x08, 0x15, 0x00, 0x25, 0x65, 0x05, 0x07, 0x19, 0x00, 0x29, 0x65, 0x81, 0x00, 0xC0,
        ]
        let descriptor = try HIDReportDescriptor(bytes: keyboard)
        #expect(!descriptor.usesReportIDs)
        #expect(descriptor.reportLength(of: .input, reportID: 0) == 8)
        #expect(descriptor.fields.first?.usages.first == HIDUsage(page: 0x07, id: 0xE0))
        #expect(HIDPOSReportLayout(descriptor: descriptor) == nil)
    }

    /// Two inputs on which `fuzz-hid-descriptor` took over 10 s each (debug, ASan) before reaching their
    /// truncated last item: field after field of thousands of values, usage range after usage range. A scanner
    /// (or anything plugged in as one) hands the daemon its descriptor when it is opened.
    @Test(arguments: [
        ("hid-descriptor-timeout-fuzzer.hiddescriptor", 1595), ("hid-descriptor-slow-fuzzer.hiddescriptor", 1339),
    ])
    func descriptorsTheFuzzerFoundSlowAreRefusedWithTheirReason(name: String, offset: Int) throws {
        let bytes = try FuzzRegressions.bytes(name)
        #expect(throws: HIDReportDescriptorError(offset: offset, message: "item data runs past the end")) {
            try HIDReportDescriptor(bytes: bytes)
        }
    }

    /// What made those inputs slow, bounded: a report longer than the kernel delivers (16384 bytes) is
    /// refused, and one main item collects at most 4096 usages however many ranges precede it.
    @Test func reportsBeyondTheKernelsLimitAreRefusedAndUsageRangesCapped() throws {
        // Report size 8, count 65535, input: 65535 bytes in one field.
        let huge: [UInt8] = [0x75, 0x08, 0x96, 0xFF, 0xFF, 0x81, 0x02]
        #expect(throws: HIDReportDescriptorError.self) { try HIDReportDescriptor(bytes: huge) }
        do {
            _ = try HIDReportDescriptor(bytes: huge)
        } catch {
            #expect(error.message == "the input report would be longer than 16384 bytes, the kernel's limit")
        }
        // Twenty ranges of 0–0xFFFF (each expanded to 1024 usages at most), then one 8-bit input value.
        let ranges = (0..<20).flatMap { _ in [0x19, 0x00, 0x2A, 0xFF, 0xFF] as [UInt8] }
        let descriptor = try HIDReportDescriptor(bytes: [0x05, 0x8C] + ranges + [0x75, 0x08, 0x95, 0x01, 0x81, 0x02])
        #expect(descriptor.fields.count == 1)
        #expect(descriptor.fields.first?.usages.count == 4096)
        #expect(descriptor.fields.first?.usages.last == HIDUsage(page: 0x8C, id: 1023))
    }

    @Test func truncatedDescriptorIsAnError() throws {
        let bytes = try Recordings.bytes("hidpos-honeywell.hiddescriptor")
        #expect(throws: HIDReportDescriptorError.self) {
            try HIDReportDescriptor(bytes: Array(bytes.dropLast(2)))
        }
    }

    @Test func continuationThatNeverComesIsDroppedNotDeliveredHalf() throws {
        var assembler = HIDPOSAssembler(layout: .honeywell)
        let reports = try recordedReports("honeywell-binary-aztec.hidreports")
        // The first two reports of the binary ticket, then the device goes away.
        for report in reports.prefix(2) {
            let outcome = assembler.accept(report: report.bytes, at: report.time)
            #expect(outcome.scan == nil)
        }
        let abandoned = assembler.abandon(reason: "the scanner was unplugged")
        let dropped = try #require(abandoned)
        #expect(dropped.receivedBytes == 112)
        #expect(dropped.description.contains("unplugged"))
        let again = assembler.abandon(reason: "again")
        #expect(again == nil)
    }

    @Test func staleContinuationIsDroppedAndTheNextScanStillArrives() throws {
        var assembler = HIDPOSAssembler(layout: .honeywell)
        let reports = try recordedReports("honeywell-binary-aztec.hidreports")
        _ = assembler.accept(report: reports[0].bytes, at: reports[0].time)
        // The QR report comes five seconds later: the Aztec scan's continuation was lost.
        let qr = reports.last!
        let outcome = assembler.accept(report: qr.bytes, at: reports[0].time + 5)
        #expect(outcome.dropped?.receivedBytes == 56)
        #expect(outcome.scan?.payload == fc1Prefix)
    }

    @Test func vendorSymbologyIDs() {
        #expect(HIDPOSSymbology.fromAIMCode(UInt8(ascii: "Q")) == .qr)
        #expect(HIDPOSSymbology.fromAIMCode(UInt8(ascii: "z")) == .aztec)
        #expect(HIDPOSSymbology.fromAIMCode(0) == nil)
        #expect(HIDPOSSymbology.fromHoneywellCodeID(UInt8(ascii: "w")) == .dataMatrix)
        #expect(HIDPOSSymbology.fromHoneywellCodeID(UInt8(ascii: "s")) == .qr)
    }

    @Test func eciEscapesAreUndoneWhenTheAIMIdentifierAnnouncesThem() {
        // A QR code with ECI output on (`]Q2`): an ECI designator, then data whose backslash is doubled.
        let data = Array("\\000026A\\\\B".utf8)
        var report = [UInt8](repeating: 0, count: 64)
        report[0] = 0x02
        report[1] = UInt8(data.count)
        report.replaceSubrange(2..<5, with: Array("]Q2".utf8))
        report.replaceSubrange(5..<5 + data.count, with: data)
        var assembler = HIDPOSAssembler(layout: .honeywell)
        let outcome = assembler.accept(report: report, at: Date())
        #expect(outcome.scan?.payload == Array("A\\B".utf8))
        #expect(outcome.scan?.symbology == .qr)
    }
}
