import Foundation
import Scanners
import Synchronization

/// Fails a test that would otherwise hang forever; no test asserts how long anything takes.
struct TimedOut: Error, CustomStringConvertible {
    var what: String
    var description: String { "gave up waiting for \(what)" }
}

/// Runs `operation`, throwing ``TimedOut`` if it has not finished after `seconds` (a guard against hangs).
func within<T: Sendable>(
    _ seconds: Double = 10,
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut(what: what) }
        return value
    }
}

/// A thread-safe list that callbacks append to.
final class Recorder<Element: Sendable>: Sendable {
    private let items = Mutex<[Element]>([])
    func append(_ item: Element) { items.withLock { $0.append(item) } }
    var all: [Element] { items.withLock { $0 } }
}

/// Reads a ``ScannerReader`` in a task of its own, as the daemon does, and hands the scans to the test.
actor ScanCollector {
    nonisolated let reader: ScannerReader
    nonisolated let logLines = Recorder<String>()
    nonisolated let states = Recorder<ScannerReader.State>()
    private var scans: AsyncThrowingStream<ScanEvent, any Error>.Iterator
    private var task: Task<Void, Never>?

    init(
        device: String,
        reopenDelay: Duration = .milliseconds(20),
        open: @escaping @Sendable (_ log: @escaping @Sendable (String) -> Void) async throws -> any ScannerConnection
    ) {
        let logLines = self.logLines
        let states = self.states
        // The connection logs to the same place as the reader, as the daemon's would.
        let log: @Sendable (String) -> Void = { logLines.append($0) }
        reader = ScannerReader(
            device: device,
            reopenDelay: reopenDelay,
            log: log,
            onStateChange: { states.append($0) },
            open: { try await open(log) }
        )
        let (stream, _) = AsyncThrowingStream.makeStream(of: ScanEvent.self)
        scans = stream.makeAsyncIterator()
    }

    /// Starts reading.
    func start() {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ScanEvent.self)
        scans = stream.makeAsyncIterator()
        let reader = self.reader
        task = Task {
            do {
                for try await scan in reader { continuation.yield(scan) }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
    }

    /// The next scan the reader delivered.
    func next() async throws -> ScanEvent {
        var iterator = scans
        defer { scans = iterator }
        guard let scan = try await iterator.next(isolation: self) else {
            throw TimedOut(what: "a scan (the reader ended)")
        }
        return scan
    }

    /// Cancels the reader and waits for it to close the device.
    func stop() async {
        task?.cancel()
        await task?.value
        task = nil
    }
}
