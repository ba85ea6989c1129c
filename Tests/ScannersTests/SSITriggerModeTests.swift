import DeviceSettings
import FareCore
import Foundation
import ScannerSimulation
import Scanners
import Testing

/// A scanner that another host left in another trigger mode: farecheck sets the configured one at every connect,
/// after FLUSH_QUEUE, and in host mode keeps a decode session open. A simulated scanner on a pseudo-terminal that
/// really enforces its mode, the real serial port, session and reader.
@Suite struct SSITriggerModeTests {
    private static func configuration(_ mode: SSITriggerMode?) -> SSIConfiguration {
        var configuration = SSIConfiguration(ledDuration: .milliseconds(30), wakeUpDelay: .milliseconds(10))
        configuration.triggerMode = mode
        // Quick renewal, so that a test of a session the scanner ended by itself does not wait the default.
        configuration.sessionRenewal = .milliseconds(50)
        return configuration
    }

    private func collector(_ scanner: SimulatedSSIScanner, mode: SSITriggerMode?) async -> ScanCollector {
        let path = scanner.devicePath
        let configuration = Self.configuration(mode)
        let collector = ScanCollector(device: "scanner") { log in
            try await SSIConnection.open(path: path, device: "scanner", configuration: configuration, log: log)
        }
        await collector.start()
        return collector
    }

    private func nextScan(_ collector: ScanCollector) async throws -> ScanEvent {
        try await within(10, "a scan") { try await collector.next() }
    }

    @Test func theCapturedStartupFramesEncodeAsTheReferenceBytes() {
        #expect(SSIFrame.flushQueue.encoded == [0x04, 0xD2, 0x04, 0x00, 0xFF, 0x26])
        #expect(SSIFrame.startSession.encoded == [0x04, 0xE4, 0x04, 0x00, 0xFF, 0x14])
        #expect(SSIFrame.stopSession.encoded == [0x04, 0xE5, 0x04, 0x00, 0xFF, 0x13])
        #expect(SSIParameter.triggerMode(.level).encoded == [0x8A, 0x00])
        #expect(SSIParameter.triggerMode(.presentation).encoded == [0x8A, 0x07])
        #expect(SSIParameter.triggerMode(.host).encoded == [0x8A, 0x08])
        #expect(SSITriggerMode(parameterValue: 0x08) == .host)
        #expect(SSITriggerMode(parameterValue: 0x05) == nil)
    }

    @Test func presentationIsSetAtConnectSoThatAScannerLeftInHostModeScans() async throws {
        let scanner = try SimulatedSSIScanner(triggerMode: .host)
        let collector = await collector(scanner, mode: .presentation)
        let commands = try await scanner.awaitStartup()
        // FLUSH_QUEUE first, then one temporary PARAM_SEND (no beep, packeted, ACK/NAK, 0x8A = 0x07), SCAN_ENABLE.
        #expect(
            commands.map(\.encoded) == [
                [0x04, 0xD2, 0x04, 0x00, 0xFF, 0x26],
                [0x0B, 0xC6, 0x04, 0x00, 0xFF, 0xEE, 0x01, 0x9F, 0x01, 0x8A, 0x07, 0xFC, 0x0C],
                [0x04, 0xE9, 0x04, 0x00, 0xFF, 0x0F],
            ])
        #expect(scanner.triggerMode == .presentation)
        #expect(scanner.permanentParameterWrites == 0)
        scanner.scan(Array("presented".utf8))
        #expect(try await nextScan(collector).payload == Array("presented".utf8))
        #expect(scanner.sessionsStarted == 0)
        await collector.stop()
        scanner.stop()
    }

    @Test(arguments: SSITriggerMode.allCases)
    func eachConfiguredModeIsWhatTheScannerEndsUpIn(mode: SSITriggerMode) async throws {
        // Left in another mode than the one configured.
        let scanner = try SimulatedSSIScanner(triggerMode: mode == .host ? .presentation : .host)
        let collector = await collector(scanner, mode: mode)
        let commands = try await scanner.awaitStartup()
        #expect(commands.first == .flushQueue)
        let parameters = try #require(commands.first { $0.opcode == .paramSend })
        #expect(Array(parameters.data.suffix(2)) == [0x8A, mode.parameterValue])
        #expect(!parameters.status.contains(.permanentChange))
        #expect(scanner.triggerMode == mode)
        scanner.scan([0x00, 0xFF, 0x41])
        #expect(try await nextScan(collector).payload == [0x00, 0xFF, 0x41])
        await collector.stop()
        scanner.stop()
    }

    @Test func hostModeOpensASessionAfterEnablingAndAgainAfterEveryScan() async throws {
        let scanner = try SimulatedSSIScanner(triggerMode: .presentation)
        let collector = await collector(scanner, mode: .host)
        _ = try await scanner.awaitStartup()
        #expect(try await scanner.nextCommand() == .startSession)
        #expect(scanner.triggerMode == .host)
        // Each decode ends the scanner's session: the second and third scans come only because farecheck opened a
        // new one.
        for payload in ["first", "second", "third"].map({ Array($0.utf8) }) {
            scanner.scan(payload)
            #expect(try await nextScan(collector).payload == payload)
        }
        #expect(scanner.sessionsEnded >= 3 && scanner.sessionsStarted >= 3)
        await collector.stop()
        // An orderly close ends the session, then disables scanning.
        let closed = await scanner.waitUntil(timeout: .seconds(10)) {
            $0.commands.suffix(2) == [.stopSession, .scanDisable]
        }
        #expect(closed)
        #expect(!scanner.isInSession)
        scanner.stop()
    }

    @Test func hostModeReopensASessionTheScannerEndedByItsTimeout() async throws {
        let scanner = try SimulatedSSIScanner(triggerMode: .host, sessionTimeout: .milliseconds(20))
        let collector = await collector(scanner, mode: .host)
        _ = try await scanner.awaitStartup()
        // The scanner ends the session by itself, saying nothing; farecheck opens another.
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.sessionsEnded >= 1 })
        let ended = scanner.sessionsEnded
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.sessionsStarted > ended })
        scanner.scan(Array("after a timeout".utf8))
        #expect(try await nextScan(collector).payload == Array("after a timeout".utf8))
        await collector.stop()
        scanner.stop()
    }

    @Test func aScannerLeftInHostModeNeverScansWithoutTheStartupSequence() async throws {
        let scanner = try SimulatedSSIScanner(triggerMode: .host)
        // The start-up of earlier versions: no FLUSH_QUEUE, no trigger mode, no session.
        let old = await collector(scanner, mode: nil)
        let commands = try await scanner.awaitStartup()
        #expect(commands.map(\.opcode) == [.paramSend, .scanEnable])
        scanner.scan(Array("waiting".utf8))
        // Enabled, but in host mode with no session: however long the scanner's thread looks, it sends nothing.
        let rounds = scanner.rounds
        #expect(await scanner.waitUntil(timeout: .seconds(10)) { $0.rounds > rounds + 20 })
        #expect(scanner.isEnabled && !scanner.isInSession)
        #expect(scanner.sentScans == 0)
        await old.stop()

        // The same scanner, the same ticket still in front of it: the trigger mode set at connect makes it scan.
        let fixed = await collector(scanner, mode: .presentation)
        #expect(try await nextScan(fixed).payload == Array("waiting".utf8))
        await fixed.stop()
        scanner.stop()
    }

    @Test func decodeDataLeftQueuedFromBeforeIsFlushedNotInspected() async throws {
        // Without FLUSH_QUEUE the simulated scanner hands a host what it queued before: the stale scan arrives.
        let unflushed = try SimulatedSSIScanner()
        unflushed.leaveQueued(Array("stale".utf8))
        let old = await collector(unflushed, mode: nil)
        #expect(try await nextScan(old).payload == Array("stale".utf8))
        await old.stop()
        unflushed.stop()

        let scanner = try SimulatedSSIScanner()
        scanner.leaveQueued(Array("stale".utf8))
        let collector = await collector(scanner, mode: .presentation)
        let commands = try await scanner.awaitStartup()
        #expect(commands.first == .flushQueue)
        scanner.scan(Array("fresh".utf8))
        #expect(try await nextScan(collector).payload == Array("fresh".utf8))
        await collector.stop()
        scanner.stop()
    }
}
