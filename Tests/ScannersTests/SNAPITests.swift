import FareCore
import Foundation
import Testing

@testable import Scanners

@Suite struct SNAPITests {
    @Test func outOfOrderDuplicateAndMissingPackets() throws {
        var assembler = SNAPIAssembler()
        var scans: [AssembledScan] = []
        var dropped: [DroppedScan] = []
        var acknowledgements = 0
        let reports = try recordedReports("snapi-22-out-of-order.hidreports")
        for report in reports {
            let outcome = assembler.accept(report: report.bytes, at: report.time)
            scans += outcome.scan.map { [$0] } ?? []
            dropped += outcome.dropped.map { [$0] } ?? []
            acknowledgements += outcome.replies.count
        }
        // Scan A (out of order, one packet resent) arrives once and whole; scan B lost a packet and is
        // dropped, naming it; scan C arrives once although its packet was resent.
        #expect(scans.map(\.payload) == [try Recordings.bytes("binary-ticket.bin"), Array("HELLO-DM".utf8)])
        #expect(scans.map(\.symbology) == [.aztec, .dataMatrix])
        #expect(dropped.map(\.reason) == ["a new scan started; packet 2 of 3 missing"])
        #expect(acknowledgements == reports.count)
    }

    @Test func largeDataInReport0x26() throws {
        var assembler = SNAPIAssembler()
        var scans: [AssembledScan] = []
        for report in try recordedReports("snapi-26-large.hidreports") {
            let outcome = assembler.accept(report: report.bytes, at: report.time)
            #expect(outcome.dropped == nil)
            scans += outcome.scan.map { [$0] } ?? []
        }
        #expect(scans.count == 1)
        #expect(scans.first?.payload == (try Recordings.bytes("snapi-26-payload.bin")))
        #expect(scans.first?.symbology == .qr)
    }

    @Test func acknowledgementLayout() throws {
        let reports = try recordedReports("snapi-22-out-of-order.hidreports")
        var assembler = SNAPIAssembler(acknowledgementLength: 8)
        let outcome = assembler.accept(report: reports[1].bytes, at: reports[1].time)
        #expect(outcome.replies == [[0x01, 0x22, 3, 2, 0, 0, 0, 0]])

        let large = SNAPIPacket(reportID: 0x26, count: 300, index: 258, type: 0x1C, data: [])
        #expect(SNAPIAcknowledgement.report(for: large) == [0x01, 0x26, 0x01, 0x2C, 0x01, 0x02])
    }

    @Test func packetThatNeverComesIsDroppedAfterTheTimeout() throws {
        let reports = try recordedReports("snapi-22-out-of-order.hidreports")
        var assembler = SNAPIAssembler()
        _ = assembler.accept(report: reports[0].bytes, at: reports[0].time)
        let late = assembler.accept(report: reports[3].bytes, at: reports[0].time + 3)
        #expect(late.dropped?.reason == "no packet for 1000 ms; packets 2, 3 of 3 missing")
        #expect(late.scan == nil)
    }

    @Test func malformedPacketsAreRejectedWithAReason() {
        var assembler = SNAPIAssembler()
        let beyond = assembler.accept(report: [0x22, 2, 2, 1, 0x1C, 0, 0x41], at: Date())
        #expect(beyond.rejection == "packet index 2 is beyond the count 2")
        #expect(beyond.replies.isEmpty)
        let long = assembler.accept(report: [0x22, 1, 0, 9, 0x1C, 0, 0x41], at: Date())
        #expect(long.rejection == "packet says 9 data bytes but the report has room for 1")
        let status = assembler.accept(report: [0x21, 0, 0], at: Date())
        #expect(status == HIDReportOutcome())
    }

    @Test func codeTypesAreSSICodes() {
        func symbology(_ type: UInt16) -> Symbology {
            SNAPIPacket(reportID: 0x22, count: 1, index: 0, type: type, data: []).symbology
        }
        #expect(symbology(28) == .qr)
        #expect(symbology(45) == .aztec)
        #expect(symbology(0x1B) == .dataMatrix)
        #expect(symbology(0x11) == .pdf417)
        #expect(symbology(0x011C) == .other)
    }
}
