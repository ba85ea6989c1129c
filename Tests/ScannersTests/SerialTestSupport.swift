import Foundation
import ScannerSimulation
import Scanners
import Synchronization

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
