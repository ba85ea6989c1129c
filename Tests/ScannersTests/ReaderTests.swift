import Foundation
import ScannerSimulation
import Scanners
import Synchronization
import Testing

/// A scanner connection that plays a script: the stand-in for a device in tests of the reader's own logic.
/// (The serial tests use a real pseudo-terminal instead.)
private actor ScriptedConnection: ScannerConnection {
    enum Step: Sendable {
        case scan([UInt8])
        case end
        case fail(ScannerConnectionError)
    }

    private var steps: [Step]
    private(set) var feedback: [ScanFeedback] = []
    private(set) var closed = false

    init(_ steps: [Step]) { self.steps = steps }

    func nextScan() async throws -> ScanEvent? {
        guard !steps.isEmpty else {
            // An idle scanner: nothing until the task is cancelled.
            try await Task.sleep(for: .seconds(3600))
            return nil
        }
        switch steps.removeFirst() {
        case .scan(let payload): return ScanEvent(payload: payload, symbology: .qr, device: "scripted")
        case .end: return nil
        case .fail(let error): throw error
        }
    }

    func signal(_ feedback: ScanFeedback) async { self.feedback.append(feedback) }
    func close() async { closed = true }
}

/// Hands out connections and open failures in order, the way a scanner that is unplugged and plugged back
/// would.
private final class ScriptedDevice: Sendable {
    enum Opening: Sendable {
        case connection(ScriptedConnection)
        case failure(ScannerConnectionError)
    }

    private let openings: Mutex<[Opening]>
    let logLines = Mutex<[String]>([])
    let states = Mutex<[ScannerReader.State]>([])

    init(_ openings: [Opening]) { self.openings = Mutex(openings) }

    func open() async throws -> any ScannerConnection {
        let next = openings.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        switch next {
        case .connection(let connection)?: return connection
        case .failure(let error)?: throw error
        case nil: throw ScannerConnectionError(code: .deviceMissing, device: "scripted", message: "unplugged")
        }
    }

    func reader() -> ScannerReader {
        ScannerReader(
            device: "scripted",
            reopenDelay: .milliseconds(1),
            log: { line in self.logLines.withLock { $0.append(line) } },
            onStateChange: { state in self.states.withLock { $0.append(state) } },
            open: { try await self.open() }
        )
    }
}

private func gone(_ message: String) -> ScannerConnectionError {
    ScannerConnectionError(code: .deviceGone, device: "scripted", message: message)
}

@Suite struct ReaderTests {
    @Test func scansContinueAfterTheScannerIsUnpluggedAndPluggedBack() async throws {
        let missing = ScannerConnectionError(code: .deviceMissing, device: "scripted", message: "no such node")
        let device = ScriptedDevice([
            .connection(ScriptedConnection([.scan([1]), .fail(gone("EIO; a scan in flight was dropped"))])),
            .failure(missing), .failure(missing), .failure(missing),
            .connection(ScriptedConnection([.scan([2]), .end])),
            .connection(ScriptedConnection([.scan([3])])),
        ])
        let reader = device.reader()
        var payloads: [[UInt8]] = []
        for try await scan in reader {
            payloads.append(scan.payload)
            if payloads.count == 3 { break }
        }
        #expect(payloads == [[1], [2], [3]])
        let states = device.states.withLock { $0 }
        #expect(states.count == 5)
        #expect(states.first == .connected)
        #expect(states.last == .connected)
        let lines = device.logLines.withLock { $0 }
        // One line when the scanner is connected, one per disconnection with its reason (and what was lost), one
        // when it is back; the reopen attempts in between, failing because it is unplugged, are not news.
        #expect(lines.count == 5)
        #expect(lines.filter { $0.contains("disconnected") }.count == 2)
        #expect(lines.contains { $0.contains("a scan in flight was dropped") })
        #expect(!lines.contains { $0.contains("no such node") })
        #expect(lines.filter { $0.contains("is back") }.count == 2)
    }

    @Test func aScannerThatCannotBeOpenedYetIsRetriedUntilItAppears() async throws {
        let denied = ScannerConnectionError(code: .permissionDenied, device: "scripted", message: "permission denied")
        let device = ScriptedDevice([.failure(denied), .failure(denied), .connection(ScriptedConnection([.scan([7])]))])
        var iterator = device.reader().makeAsyncIterator()
        #expect(try await iterator.next()?.payload == [7])
        #expect(device.logLines.withLock { $0 }.filter { $0.contains("permission denied") }.count == 1)
        // What the page and /healthz say while it cannot be opened: the kind of trouble, and the device's words.
        #expect(
            device.states.withLock { $0 }.first
                == .disconnected(reason: "permission denied", problem: .permissionDenied))
    }

    @Test func aMisconfiguredScannerStopsTheReaderWithTheError() async throws {
        let wrongBaud = ScannerConnectionError(code: .misconfigured, device: "scripted", message: "baud 1234")
        let device = ScriptedDevice([.failure(wrongBaud)])
        var iterator = device.reader().makeAsyncIterator()
        await #expect(throws: ScannerConnectionError.self) { _ = try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }

    @Test func cancellingTheConsumerClosesTheDevice() async throws {
        let connection = ScriptedConnection([.scan([1])])
        let device = ScriptedDevice([.connection(connection)])
        let reader = device.reader()
        let (delivered, deliveredContinuation) = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            var count = 0
            for try await _ in reader {
                count += 1
                deliveredContinuation.yield(count)
            }
            return count
        }
        // The consumer ends only through cancellation, as a daemon's reader does on shutdown.
        var deliveries = delivered.makeAsyncIterator()
        #expect(await deliveries.next() == 1)
        consumer.cancel()
        #expect(try await consumer.value == 1)
        #expect(await connection.closed)
        #expect(device.states.withLock { $0.last } == .disconnected(reason: "the reader stopped", problem: .stopped))
    }

    @Test func feedbackGoesToTheConnectedScanner() async throws {
        let connection = ScriptedConnection([.scan([1]), .scan([2])])
        let device = ScriptedDevice([.connection(connection)])
        let reader = device.reader()
        var iterator = reader.makeAsyncIterator()
        _ = try await iterator.next()
        await reader.signal(.good)
        _ = try await iterator.next()
        await reader.signal(.bad)
        #expect(await connection.feedback == [.good, .bad])
    }
}

/// A replugged scanner is reopened when its uevent comes, not on a timer: the recorded uevents of a hidraw
/// scanner being unplugged and plugged back, through `ReopenSignal.follow`, as the daemon's hotplug service
/// feeds it.
@Suite struct HotplugReopenTests {
    @Test func aRecordedAddUeventReopensTheScannerAtOnce() async throws {
        let plugged = Mutex(true)
        let opens = Mutex(0)
        let signal = ReopenSignal()
        let reader = ScannerReader(
            device: "replugged",
            // Without the uevent the reader would wait a minute: a reopen within the test's wait is the event's.
            reopenDelay: .seconds(60), reopenSignal: signal,
            open: {
                let attempt = opens.withLock { count in
                    count += 1
                    return count
                }
                guard plugged.withLock({ $0 }) else {
                    throw ScannerConnectionError(code: .deviceMissing, device: "replugged", message: "no such node")
                }
                return attempt == 1 ? ScriptedConnection([.scan([1]), .end]) : ScriptedConnection([.scan([2])])
            })
        let (events, feed) = AsyncStream.makeStream(of: HotplugEvent.self)
        let follower = Task { await signal.follow(events) }
        let (scans, sink) = AsyncStream.makeStream(of: (payload: [UInt8], at: ContinuousClock.Instant).self)
        let reading = Task {
            for try await scan in reader { sink.yield((scan.payload, .now)) }
        }
        defer {
            reading.cancel()
            follower.cancel()
        }
        var received = scans.makeAsyncIterator()
        let first = try await within(10, "the first scan") { [scans] in
            var iterator = scans.makeAsyncIterator()
            return await iterator.next()?.payload
        }
        _ = received
        #expect(first == [1])
        // The scanner's connection ended after its scan: unplugged. The remove event wakes nobody.
        plugged.withLock { $0 = false }
        feed.yield(try #require(HotplugEvent.parse(Recordings.bytes("uevent-udev-hidraw-remove.bin"))))
        try await Task.sleep(for: .milliseconds(50))
        #expect(opens.withLock { $0 } == 1)
        // Plugged back: the add event reopens it.
        plugged.withLock { $0 = true }
        let added = ContinuousClock.now
        feed.yield(try #require(HotplugEvent.parse(Recordings.bytes("uevent-udev-hidraw-add.bin"))))
        let second = try await within(10, "the scan after the replug") { [scans] in
            var iterator = scans.makeAsyncIterator()
            return await iterator.next()
        }
        received = scans.makeAsyncIterator()
        #expect(second?.payload == [2])
        #expect(opens.withLock { $0 } == 2)
        // Measured, not asserted: the figure docs/benchmarks.md reports for reopening on a uevent.
        if let second { print("hotplug: reading again \(added.duration(to: second.at)) after the add uevent") }
    }
}
