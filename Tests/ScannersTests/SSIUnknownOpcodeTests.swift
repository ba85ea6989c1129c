import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

/// A frame with an opcode farecheck does not know (a newer scanner's message) is a frame: answered CMD_NAK (bad
/// context), logged once, and never taken for noise that holds up or loses the next scan.
@Suite struct SSIUnknownOpcodeTests {
    /// An opcode the reference does not list; its data hides a false start of a long DECODE_DATA packet
    /// (`F0 F3 00 00`: LEN 240, a known opcode, the decoder's source), which a reader that skips the frame byte by
    /// byte as noise would wait on.
    private let unknown = SSIFrame(opcode: SSIOpcode(rawValue: 0x77), source: .decoder, data: [0xF0, 0xF3, 0x00, 0x00])

    @Test func theFramerTakesAWellFormedFrameWithAnUnknownOpcode() {
        let scan = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x2D, 0x41])
        var framer = SSIFramer()
        framer.append(unknown.encoded + scan.encoded)
        var found: [SSIFramer.Output] = []
        while let output = framer.next() { found.append(output) }
        #expect(found == [.frame(unknown), .frame(scan)])
    }

    @Test func theSessionAnswersBadContextLogsOnceAndTakesTheNextScan() {
        var session = SSISession(device: "tty")
        let scan = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x2D, 0x00, 0xFF])
        let actions =
            session.receive(unknown.encoded, at: Date()) + session.receive(unknown.encoded, at: Date())
            + session.receive(scan.encoded, at: Date())
        let badContext = SSIFrame.nak(.badContext).encoded
        #expect(sent(actions) == [badContext, badContext, SSIFrame.ack().encoded])
        let lines = actions.compactMap { if case .log(let line) = $0 { line } else { nil } }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("opcode 0x77") == true)
        let delivered = actions.compactMap { if case .deliver(let scan) = $0 { scan.payload } else { nil } }
        #expect(delivered == [[0x00, 0xFF]])
    }

    @Test func aScannerWaitingForTheAnswerToAnUnknownFrameGoesOnToTheNextScan() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = ScanCollector(device: "scanner") { log in
            try await SSIConnection.open(
                path: path, device: "scanner",
                configuration: SSIConfiguration(wakeUpDelay: .milliseconds(10), triggerMode: .presentation), log: log)
        }
        await collector.start()
        _ = try await scanner.awaitStartup()
        // The scanner sends the frame and waits for an answer before its scan, as it does with every frame.
        scanner.transmit(unknown)
        scanner.scan(Array("after".utf8))
        scanner.transmit(unknown)
        scanner.scan(Array("again".utf8))
        #expect(try await within(10, "a scan") { try await collector.next() }.payload == Array("after".utf8))
        #expect(try await within(10, "a scan") { try await collector.next() }.payload == Array("again".utf8))
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.isIdle })
        // Answered at once, never sent again (a scanner left without an answer resends twice, 2 s apart).
        #expect(scanner.answers == [.nak(.badContext), .ack(), .nak(.badContext), .ack()])
        #expect(scanner.retransmissions == 0)
        #expect(collector.logLines.all.filter { $0.contains("does not know") }.count == 1)
        #expect(!collector.logLines.all.contains { $0.contains("not SSI packets") })
        await collector.stop()
        scanner.stop()
    }
}
