import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

@Suite struct SSISessionTests {
    private let ack = SSIFrame.ack().encoded
    private let nakResend = SSIFrame.nak(.resend).encoded

    @Test func aMultipacketScanOf2KiBIsReassembledInOrderAndEachPacketAcknowledged() {
        var generator = SystemRandomNumberGenerator()
        let payload = (0..<2048).map { _ in UInt8.random(in: 0...255, using: &generator) } + [0x00, 0xFF]
        let packets = SimulatedSSIScanner.decodeDataPackets(payload, type: 0x2D)
        #expect(packets.count == 9)
        var session = SSISession(device: "tty")
        var delivered: [ScanEvent] = []
        for packet in packets {
            let actions = session.receive(packet.encoded, at: Date())
            #expect(sent(actions) == [ack])
            delivered += scans(actions)
        }
        #expect(delivered.map(\.payload) == [payload])
        #expect(delivered.first?.symbology == .aztec)
        #expect(delivered.first?.device == "tty")
    }

    @Test func aRetransmissionOfAnAcceptedPacketIsAcknowledgedButNotUsedTwice() {
        let packets = SimulatedSSIScanner.decodeDataPackets(Array(0...255), type: 0x1C)
        var session = SSISession(device: "tty")
        var delivered: [ScanEvent] = []
        for packet in packets {
            delivered += scans(session.receive(packet.encoded, at: Date()))
            // Our ACK was lost: the scanner sends the packet again with the retransmission bit.
            var again = packet
            again.status.insert(.retransmission)
            let actions = session.receive(again.encoded, at: Date())
            #expect(sent(actions) == [ack])
            delivered += scans(actions)
        }
        #expect(delivered.map(\.payload) == [Array(0...255)])
    }

    @Test func aDamagedPacketIsNakedAndItsResendAccepted() {
        let packet = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x1B, 0x00, 0xFF, 0x00])
        var damaged = packet.encoded
        damaged[damaged.count - 1] ^= 0xFF
        var session = SSISession(device: "tty")
        let first = session.receive(damaged, at: Date())
        #expect(sent(first) == [nakResend])
        #expect(scans(first).isEmpty)
        var resent = packet
        resent.status.insert(.retransmission)
        let second = session.receive(resent.encoded, at: Date())
        #expect(sent(second) == [ack])
        #expect(scans(second).map(\.payload) == [[0x00, 0xFF, 0x00]])
        #expect(scans(second).map(\.symbology) == [.dataMatrix])
    }

    @Test func aResendIdenticalToThePreviousPacketIsStillTakenAfterANak() {
        // Two packets with the same bytes: after a NAK, the retransmission is the second one, not a copy.
        let chunk = [UInt8](repeating: 0x00, count: 250)
        let packets = SimulatedSSIScanner.decodeDataPackets(chunk + chunk, type: 0x2D)
        var session = SSISession(device: "tty")
        _ = session.receive(packets[0].encoded, at: Date())
        var damaged = packets[1].encoded
        damaged[20] ^= 0x01
        #expect(sent(session.receive(damaged, at: Date())) == [nakResend])
        var resent = packets[1]
        resent.status.insert(.retransmission)
        #expect(scans(session.receive(resent.encoded, at: Date())).map(\.payload) == [chunk + chunk])
    }

    @Test func aScanTheScannerGaveUpOnIsNotGluedToTheNextOne() {
        let first = SimulatedSSIScanner.decodeDataPackets(Array(repeating: 0x41, count: 300), type: 0x1C)
        var session = SSISession(device: "tty")
        _ = session.receive(first[0].encoded, at: Date())
        var damaged = first[1].encoded
        damaged[8] ^= 0x10
        // The packet fails three times: the scanner has given up on that scan.
        var actions: [SSISession.Action] = []
        for _ in 0..<3 { actions += session.receive(damaged, at: Date()) }
        #expect(logs(actions).contains { $0.contains("dropped a partial scan") })
        let next = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x1C, 0x42])
        #expect(scans(session.receive(next.encoded, at: Date())).map(\.payload) == [[0x42]])
    }

    @Test func commandsGoOneAtATimeAndARefusedOneIsResentOnce() {
        var session = SSISession(device: "tty")
        #expect(sent(session.send(command: .beep(0x00))) == [SSIFrame.beep(0x00).encoded])
        // The LED command waits for the BEEP to be answered.
        #expect(sent(session.send(command: .ledOn(0x01))).isEmpty)
        var resent = SSIFrame.beep(0x00)
        resent.status.insert(.retransmission)
        let nak = SSIFrame.nak(.resend, from: .decoder).encoded
        #expect(sent(session.receive(nak, at: Date())) == [resent.encoded])
        // A second NAK: give up on the BEEP with a log line and go on with the LED.
        let second = session.receive(nak, at: Date())
        #expect(logs(second).contains { $0.contains("refused BEEP") })
        #expect(sent(second) == [SSIFrame.ledOn(0x01).encoded])
        #expect(sent(session.receive(SSIFrame.ack(from: .decoder).encoded, at: Date())).isEmpty)
        #expect(session.commandsSettled)
    }

    @Test func aDeniedCommandIsGivenUpAtOnce() {
        var session = SSISession(device: "tty")
        _ = session.send(command: .paramSend([.packetedDecodeData]))
        let actions = session.receive(SSIFrame.nak(.denied, from: .decoder).encoded, at: Date())
        #expect(sent(actions).isEmpty)
        #expect(logs(actions).contains { $0.contains("refused PARAM_SEND (denied)") })
        #expect(session.commandsSettled)
    }

    @Test func somethingInFlightIsReportedForTheLogWhenTheLineDies() {
        var session = SSISession(device: "tty")
        #expect(session.inFlight == nil)
        let packets = SimulatedSSIScanner.decodeDataPackets(Array(repeating: 7, count: 400), type: 0x2D)
        _ = session.receive(packets[0].encoded, at: Date())
        #expect(session.inFlight?.contains("a scan in flight was dropped") == true)
    }
}
