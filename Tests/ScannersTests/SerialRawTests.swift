import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

/// Raw serial scanners end to end: bytes written on a pseudo-terminal, scans out of the reader.
@Suite struct SerialRawTests {
    private func collector(_ terminal: PseudoTerminal, _ framing: RawFramingConfiguration) async -> ScanCollector {
        let path = terminal.replicaPath
        let collector = ScanCollector(device: "raw") { log in
            try SerialRawConnection.open(path: path, device: "raw", framing: framing, log: log)
        }
        await collector.start()
        return collector
    }

    private func nextScan(_ collector: ScanCollector) async throws -> ScanEvent {
        try await within(10, "a scan") { try await collector.next() }
    }

    /// Waits until the reader has the line open, so that nothing written is flushed by its set-up.
    private func awaitConnected(_ collector: ScanCollector) async throws {
        _ = try await within(10, "the reader to connect") {
            while !collector.states.all.contains(.connected) { try await Task.sleep(for: .milliseconds(2)) }
            return true
        }
    }

    @Test func crlfTerminatedScansArriveWithoutTheTerminator() async throws {
        let terminal = try PseudoTerminal()
        let collector = await collector(terminal, RawFramingConfiguration(terminator: .crlf))
        try await awaitConnected(collector)
        try terminal.write(Array("HC1:NCFOXN%TS3DH\r\nsecond\r\n".utf8))
        #expect(try await nextScan(collector).payload == Array("HC1:NCFOXN%TS3DH".utf8))
        #expect(try await nextScan(collector).payload == Array("second".utf8))
        await collector.stop()
        terminal.close()
    }

    @Test func aScanWithoutTerminatorEndsWhenTheLineGoesQuiet() async throws {
        let terminal = try PseudoTerminal()
        let collector = await collector(terminal, RawFramingConfiguration(terminator: .none))
        try await awaitConnected(collector)
        let payload: [UInt8] = [0x78, 0x9C, 0x00, 0xFF, 0x0D, 0x0A]
        try terminal.write(payload)
        #expect(try await nextScan(collector).payload == payload)
        await collector.stop()
        terminal.close()
    }

    @Test func aimIdentifiersAndECIEscapesAreUndone() async throws {
        let terminal = try PseudoTerminal()
        let collector = await collector(terminal, RawFramingConfiguration(terminator: .cr, aimIdentifiers: true))
        try await awaitConnected(collector)
        try terminal.write(Array("]z3\\000026AB\\\\C\r]Q1plain\r".utf8))
        let aztec = try await nextScan(collector)
        #expect(aztec.payload == Array("AB\\C".utf8))
        #expect(aztec.symbology == .aztec)
        let qr = try await nextScan(collector)
        #expect(qr.payload == Array("plain".utf8))
        #expect(qr.symbology == .qr)
        await collector.stop()
        terminal.close()
    }

    @Test func aScanCutOffByUnpluggingIsDroppedNotDelivered() async throws {
        let terminal = try PseudoTerminal()
        let collector = await collector(terminal, RawFramingConfiguration(terminator: .crlf))
        try await awaitConnected(collector)
        try terminal.write(Array("whole\r\nhal".utf8))
        #expect(try await nextScan(collector).payload == Array("whole".utf8))
        terminal.close()
        _ = try await within(10, "the disconnection") {
            while !collector.logLines.all.contains(where: { $0.contains("dropped") }) {
                try await Task.sleep(for: .milliseconds(2))
            }
            return true
        }
        await collector.stop()
    }
}
