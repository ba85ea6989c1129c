import FareCore
import Foundation
import Scanners
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A pipe fed with `input_event` records: for read() it behaves like an evdev node.
private func pipeOf(_ bytes: [UInt8]) throws -> Int32 {
    var fds: [Int32] = [-1, -1]
    guard pipe(&fds) == 0 else { throw POSIXError(.EIO) }
    // Written from another thread: a recording can be larger than the pipe's buffer.
    let writer = fds[1]
    Thread {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            guard written > 0 else { break }
            offset += written
        }
        close(writer)
    }.start()
    return fds[0]
}

private let fc1Ticket =
    "FC1:6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDEXWK G2EP4J0BGJLFX3R3VHXK.PJ:2DPF6R:5SVBHABVCNN95SWMPHQUHQN"
    + "%A0SOE+QQAB-HQ/HQ7IR.SQEEOK9SAI4- 7Y15KBPD34 QKHTS"

@Suite struct WedgeConnectionTests {
    @Test func recordedStreamThroughAPipe() async throws {
        let fd = try pipeOf(try Recordings.bytes("wedge-de.inputevents"))
        let connection = try WedgeConnection.reading(
            fileDescriptor: fd, device: "/dev/input/event-test", framer: WedgeFramer(layout: .german))
        let first = try await connection.nextScan()
        let second = try await connection.nextScan()
        #expect(first.map { String(decoding: $0.payload, as: UTF8.self) } == fc1Ticket)
        #expect(second.map { String(decoding: $0.payload, as: UTF8.self) } == "yZ-Grüße@öä{\\}&=#'")
        #expect(first?.device == "/dev/input/event-test")
        #expect(try await connection.nextScan() == nil)
        await connection.close()
    }

    @Test func readerReopensAfterTheScannerVanishesMidScan() async throws {
        let us = try Recordings.bytes("wedge-us.inputevents")
        // The first session ends in the middle of the ticket (the scanner is unplugged); the second plays
        // the whole stream.
        let sessions = Mutex<[[UInt8]]>([Array(us.prefix(InputEvent.size * 300)), us])
        let lines = Mutex<[String]>([])
        let reader = ScannerReader(
            device: "/dev/input/event-test",
            reopenDelay: .milliseconds(10),
            log: { line in lines.withLock { $0.append(line) } },
            open: {
                guard let stream = sessions.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else {
                    throw ScannerConnectionError(
                        code: .deviceMissing, device: "/dev/input/event-test", message: "unplugged")
                }
                return try WedgeConnection.reading(fileDescriptor: try pipeOf(stream), device: "/dev/input/event-test")
            }
        )
        var payloads: [String] = []
        for try await scan in reader {
            payloads.append(String(decoding: scan.payload, as: UTF8.self))
            if payloads.count == 2 { break }
        }
        #expect(payloads == [fc1Ticket, "HELLOyz"])
        let log = lines.withLock { $0 }
        #expect(log.contains { $0.contains("a scan in flight was dropped after") })
        #expect(log.contains { $0.contains("is back") })
    }

    @Test func aNodeThatIsNotAnEventNodeIsAConfigurationError() throws {
        #expect {
            try WedgeConnection.open(path: "/dev/null")
        } throws: { error in
            let failure = try #require(error as? ScannerConnectionError)
            return failure.code == .misconfigured && failure.message.contains("not an input event node")
        }
    }
}
