import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

/// SSI end to end: a simulated scanner on a pseudo-terminal, the real serial port, session and reader.
@Suite struct SerialSSITests {
    /// Quick timers, so that a test that exercises them does not wait the production defaults.
    private static let configuration = SSIConfiguration(ledDuration: .milliseconds(30), wakeUpDelay: .milliseconds(10))

    private func collector(for path: @escaping @Sendable () -> String) async -> ScanCollector {
        let collector = ScanCollector(device: "scanner") { log in
            try await SSIConnection.open(path: path(), device: "scanner", configuration: Self.configuration, log: log)
        }
        await collector.start()
        return collector
    }

    private func nextScan(_ collector: ScanCollector) async throws -> ScanEvent {
        try await within(10, "a scan") { try await collector.next() }
    }

    @Test func startupWakesTheScannerAndSwitchesOnPacketsHandshakingAndScanning() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        let commands = try await scanner.awaitStartup()
        #expect(
            commands.map(\.encoded) == [
                [0x09, 0xC6, 0x04, 0x00, 0xFF, 0xEE, 0x01, 0x9F, 0x01, 0xFC, 0x9F],
                [0x04, 0xE9, 0x04, 0x00, 0xFF, 0x0F],
            ])
        await collector.stop()
        // Closing sends SCAN_DISABLE.
        #expect(try await scanner.nextCommand() == .scanDisable)
        scanner.stop()
    }

    @Test func binaryPayloadsWithNulAnd0xFFArriveExactly() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        _ = try await scanner.awaitStartup()
        let payloads: [[UInt8]] = [
            [0x00],
            [0xFF, 0x00, 0xFF, 0x0D, 0x0A, 0x5C, 0x04, 0xD0],
            Array(0...255),
        ]
        for payload in payloads {
            try await scanner.sendScan(payload, type: 0x2D)
            let scan = try await nextScan(collector)
            #expect(scan.payload == payload)
            #expect(scan.symbology == .aztec)
            #expect(scan.device == "scanner")
        }
        await collector.stop()
        scanner.stop()
    }

    @Test func aTwoKiBScanInNinePacketsArrivesWholeAndOnce() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        _ = try await scanner.awaitStartup()
        var generator = SystemRandomNumberGenerator()
        let payload = (0..<2048).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try await scanner.sendScan(payload, type: 0x1C)
        try await scanner.sendScan([0x51], type: 0x1B)
        let first = try await nextScan(collector)
        #expect(first.payload == payload)
        #expect(first.symbology == .qr)
        // The next scan is the next one sent: nothing of the first was delivered twice.
        let second = try await nextScan(collector)
        #expect(second.payload == [0x51])
        #expect(second.symbology == .dataMatrix)
        await collector.stop()
        scanner.stop()
    }

    @Test func aPacketWithABadChecksumIsNakedAndTakenWhenResent() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        _ = try await scanner.awaitStartup()
        var packet = SSIFrame(opcode: .decodeData, source: .decoder, data: [0x2D, 0x00, 0xFF, 0x42])
        var damaged = packet.encoded
        damaged[damaged.count - 2] ^= 0x80
        let answer = try await scanner.send(damaged)
        #expect(answer == .nak(.resend))
        packet.status.insert(.retransmission)
        #expect(try await scanner.send(packet.encoded) == .ack())
        #expect(try await nextScan(collector).payload == [0x00, 0xFF, 0x42])
        try await scanner.sendScan([0x43])
        #expect(try await nextScan(collector).payload == [0x43])
        await collector.stop()
        scanner.stop()
    }

    @Test func lineNoiseBetweenPacketsIsSkipped() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        _ = try await scanner.awaitStartup()
        try scanner.write([0x00, 0xFF, 0x13, 0x02, 0x41])
        try await scanner.sendScan([0x01, 0x02])
        try scanner.write([0x7E, 0x00, 0x00, 0x13])
        try await scanner.sendScan([0x03])
        #expect(try await nextScan(collector).payload == [0x01, 0x02])
        #expect(try await nextScan(collector).payload == [0x03])
        #expect(collector.logLines.all.contains { $0.contains("not SSI packets") })
        await collector.stop()
        scanner.stop()
    }

    @Test func goodAndBadVerdictsBeepAndLightTheScanner() async throws {
        let scanner = try SimulatedSSIScanner()
        let path = scanner.devicePath
        let collector = await collector { path }
        _ = try await scanner.awaitStartup()
        try await scanner.sendScan(Array("ok".utf8))
        _ = try await nextScan(collector)
        await collector.reader.signal(.good)
        #expect(try await scanner.nextCommand() == .beep(0x00))
        #expect(try await scanner.nextCommand() == .ledOn(0x01))
        #expect(try await scanner.nextCommand() == .ledOff(0x01))

        try await scanner.sendScan(Array("forged".utf8))
        _ = try await nextScan(collector)
        // The scanner refuses the first BEEP once (resend): the host sends it again.
        scanner.refuse(.beep, with: [.resend])
        await collector.reader.signal(.bad)
        #expect(try await scanner.nextCommand() == .beep(0x0F))
        var again = SSIFrame.beep(0x0F)
        again.status.insert(.retransmission)
        #expect(try await scanner.nextCommand() == again)
        #expect(try await scanner.nextCommand() == .ledOn(0x02))
        #expect(try await scanner.nextCommand() == .ledOff(0x02))
        await collector.stop()
        scanner.stop()
    }

    @Test func aScannerUnpluggedMidPacketComesBackAndOnlyWholeScansArrive() async throws {
        // The reader opens a udev-style symlink; "plugging in" a new scanner re-points it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("scanner0").path
        func point(to target: String) throws {
            let temporary = link + ".new"
            try? FileManager.default.removeItem(atPath: temporary)
            try FileManager.default.createSymbolicLink(atPath: temporary, withDestinationPath: target)
            guard rename(temporary, link) == 0 else { throw TimedOut(what: "rename of the symlink") }
        }

        let first = try SimulatedSSIScanner()
        try point(to: first.devicePath)
        let collector = await collector { link }
        _ = try await first.awaitStartup()
        try await first.sendScan(Array("before".utf8))
        #expect(try await nextScan(collector).payload == Array("before".utf8))

        // A two-packet scan: the first packet gets through, then the cable is pulled mid-way through the second.
        let packets = SimulatedSSIScanner.decodeDataPackets(Array(repeating: 0xAA, count: 400), type: 0x2D)
        #expect(try await first.send(packets[0].encoded) == .ack())
        try first.write(Array(packets[1].encoded.prefix(60)))
        first.stop()

        let second = try SimulatedSSIScanner()
        try point(to: second.devicePath)
        _ = try await second.awaitStartup()
        try await second.sendScan(Array("after".utf8))
        let scan = try await nextScan(collector)
        #expect(scan.payload == Array("after".utf8))

        #expect(collector.states.all.prefix(3).map(\.isConnected) == [true, false, true])
        #expect(collector.logLines.all.contains { $0.contains("disconnected") && $0.contains("dropped") })
        await collector.stop()
        second.stop()
    }
}

extension ScannerReader.State {
    var isConnected: Bool { self == .connected }
}
