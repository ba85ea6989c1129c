import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

/// The three multipacket options of the SSI guide: an ACK per packet (1); every packet streamed and one answer
/// for the whole scan, a NAK asking for all of it again (2); the same with a pause between packets (3).
@Suite struct SSIMultipacketTests {
    private let ack = SSIFrame.ack().encoded
    private let nakResend = SSIFrame.nak(.resend).encoded

    private func payload(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) } + [0x00, 0xFF]
    }

    private func damaged(_ packet: SSIFrame) -> [UInt8] {
        var bytes = packet.encoded
        bytes[bytes.count - 1] ^= 0x5A
        return bytes
    }

    private func retransmitted(_ packets: [SSIFrame]) -> [SSIFrame] {
        packets.map { packet in
            var again = packet
            again.status.insert(.retransmission)
            return again
        }
    }

    // MARK: The session, bytes in and out

    @Test func unknownAtFirstAScannerThatWaitsAfterThePacketIsTakenForOption1() {
        let scan = payload(600)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .detect)
        // The first answer is held: the scanner's next move says which option it is set to.
        #expect(sent(session.receive(packets[0].encoded, at: Date())).isEmpty)
        #expect(session.holdsAnswer)
        // Nothing more comes: it waits for an ACK after each packet.
        #expect(sent(session.answerGapElapsed(at: Date())) == [ack])
        #expect(session.multipacket == .acknowledgeEachPacket)
        var delivered: [ScanEvent] = []
        for packet in packets.dropFirst() {
            let actions = session.receive(packet.encoded, at: Date())
            #expect(sent(actions) == [ack])
            delivered += scans(actions)
        }
        #expect(delivered.map(\.payload) == [scan])
    }

    @Test func unknownAtFirstAScannerThatSendsThePacketsWithoutWaitingIsAnsweredOnceAtTheEnd() {
        let scan = payload(2048)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x1C)
        var session = SSISession(device: "tty", multipacket: .detect)
        var actions: [SSISession.Action] = []
        for packet in packets { actions += session.receive(packet.encoded, at: Date()) }
        #expect(sent(actions) == [ack])
        #expect(scans(actions).map(\.payload) == [scan])
        #expect(session.multipacket == .streamed)
        #expect(!session.holdsAnswer)
        #expect(logs(actions).filter { $0.contains("streams scans of several packets") }.count == 1)
    }

    @Test func aStreamedScanThatLostAPacketIsAskedForWholeAgainAndDeliveredOnce() {
        let scan = payload(1000)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .streamed)
        var actions: [SSISession.Action] = []
        for (index, packet) in packets.enumerated() {
            actions += session.receive(index == 2 ? damaged(packet) : packet.encoded, at: Date())
        }
        // One answer, at the end: NAK resend for the whole scan; nothing delivered with a hole in it.
        #expect(sent(actions) == [nakResend])
        #expect(scans(actions).isEmpty)
        actions = []
        for packet in retransmitted(packets) { actions += session.receive(packet.encoded, at: Date()) }
        #expect(sent(actions) == [ack])
        #expect(scans(actions).map(\.payload) == [scan])
    }

    @Test func aStreamedScanWhoseLastPacketIsDamagedIsNakedWhenTheLineGoesQuiet() {
        let scan = payload(700)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .streamed)
        var actions: [SSISession.Action] = []
        for packet in packets.dropLast() { actions += session.receive(packet.encoded, at: Date()) }
        actions += session.receive(damaged(packets[packets.count - 1]), at: Date())
        // More packets could follow a damaged one; the quiet after it says it was the last.
        #expect(sent(actions).isEmpty)
        #expect(sent(session.answerGapElapsed(at: Date())) == [nakResend])
        actions = []
        for packet in retransmitted(packets) { actions += session.receive(packet.encoded, at: Date()) }
        #expect(scans(actions).map(\.payload) == [scan])
    }

    @Test func aStreamedScanSentAgainAfterItsAckWasLostIsAcknowledgedButNotDeliveredTwice() {
        let scan = payload(400)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .streamed)
        var actions: [SSISession.Action] = []
        for packet in packets { actions += session.receive(packet.encoded, at: Date()) }
        #expect(scans(actions).map(\.payload) == [scan])
        actions = []
        for packet in retransmitted(packets) { actions += session.receive(packet.encoded, at: Date()) }
        #expect(sent(actions) == [ack])
        #expect(scans(actions).isEmpty)
        // The same ticket presented again (no retransmission bit) is a new scan.
        actions = []
        for packet in packets { actions += session.receive(packet.encoded, at: Date()) }
        #expect(scans(actions).map(\.payload) == [scan])
    }

    @Test func aLostFirstPacketOfAStreamedScanIsFoundWhileTheOptionIsStillUnknown() {
        let scan = payload(900)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .detect)
        var actions = session.receive(damaged(packets[0]), at: Date())
        for packet in packets.dropFirst() { actions += session.receive(packet.encoded, at: Date()) }
        #expect(sent(actions) == [nakResend])
        #expect(scans(actions).isEmpty)
        #expect(session.multipacket == .streamed)
        actions = []
        for packet in retransmitted(packets) { actions += session.receive(packet.encoded, at: Date()) }
        #expect(scans(actions).map(\.payload) == [scan])
    }

    @Test func lineNoiseBeforeTheFirstPacketDoesNotCostAnOption1ScannerItsScan() {
        let scan = payload(600)
        let packets = SimulatedSSIScanner.decodeDataPackets(scan, type: 0x2D)
        var session = SSISession(device: "tty", multipacket: .detect)
        // A burst that looks like a damaged packet, then the scanner's first packet, then it waits.
        let noise = damaged(SSIFrame(opcode: .event, source: .decoder, data: [0x01]))
        var actions = session.receive(noise, at: Date())
        actions += session.receive(packets[0].encoded, at: Date())
        #expect(sent(actions).isEmpty)
        #expect(sent(session.answerGapElapsed(at: Date())) == [ack])
        #expect(session.multipacket == .acknowledgeEachPacket)
        actions = []
        for packet in packets.dropFirst() { actions += session.receive(packet.encoded, at: Date()) }
        #expect(scans(actions).map(\.payload) == [scan])
    }

    // MARK: End to end, a simulated scanner on a pseudo-terminal

    private func collector(_ scanner: SimulatedSSIScanner) async -> ScanCollector {
        let path = scanner.devicePath
        let collector = ScanCollector(device: "scanner") { log in
            // The production defaults: the multipacket option is learned, the trigger mode set.
            try await SSIConnection.open(
                path: path, device: "scanner",
                configuration: SSIConfiguration(wakeUpDelay: .milliseconds(10), triggerMode: .presentation), log: log)
        }
        await collector.start()
        return collector
    }

    private func nextScan(_ collector: ScanCollector) async throws -> ScanEvent {
        try await within(10, "a scan") { try await collector.next() }
    }

    @Test(arguments: [
        SimulatedSSIScanner.Multipacket.option1, .option2, .option3(interPacketDelay: .milliseconds(5)),
    ])
    func longScansArriveIntactAndOnceUnderEveryOption(option: SimulatedSSIScanner.Multipacket) async throws {
        let scanner = try SimulatedSSIScanner(multipacket: option)
        let collector = await collector(scanner)
        _ = try await scanner.awaitStartup()
        let scans = [payload(2048), payload(300), [0x51]]
        for scan in scans { scanner.scan(scan) }
        for scan in scans { #expect(try await nextScan(collector).payload == scan) }
        // The host hands a scan on as it sends the last answer: wait for the scanner to have taken it.
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isIdle })
        #expect(scanner.retransmissions == 0)
        if option == .option1 {
            // An ACK for every packet: 9 + 2 + 1.
            #expect(scanner.answers.count == 12)
        } else {
            // One answer per scan, none while a scan was streaming.
            #expect(scanner.answers == [.ack(), .ack(), .ack()])
            #expect(scanner.answersDuringStreams == 0)
        }
        #expect(scanner.answers.allSatisfy { $0 == .ack() })
        await collector.stop()
        scanner.stop()
    }

    @Test func aNakUnderOption2HasTheWholeScanSentAgainAndDeliveredOnce() async throws {
        let scanner = try SimulatedSSIScanner(multipacket: .option2)
        let collector = await collector(scanner)
        _ = try await scanner.awaitStartup()
        let first = payload(1500)
        scanner.scan(first, damaging: [3])
        scanner.scan(Array("next".utf8))
        #expect(try await nextScan(collector).payload == first)
        // The next scan delivered is the next one sent: the first was not delivered twice, nor half.
        #expect(try await nextScan(collector).payload == Array("next".utf8))
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isIdle })
        #expect(scanner.answers == [.nak(.resend), .ack(), .ack()])
        #expect(scanner.retransmissions == 1)
        #expect(scanner.answersDuringStreams == 0)
        await collector.stop()
        scanner.stop()
    }

    @Test func aNakUnderOption1HasThePacketSentAgain() async throws {
        let scanner = try SimulatedSSIScanner(multipacket: .option1)
        let collector = await collector(scanner)
        _ = try await scanner.awaitStartup()
        let first = payload(800)
        scanner.scan(first, damaging: [2])
        #expect(try await nextScan(collector).payload == first)
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isIdle })
        // Packets 0 and 1 acknowledged, packet 2 refused and then acknowledged, then packet 3.
        #expect(scanner.answers == [.ack(), .ack(), .nak(.resend), .ack(), .ack()])
        #expect(scanner.retransmissions == 1)
        await collector.stop()
        scanner.stop()
    }
}
