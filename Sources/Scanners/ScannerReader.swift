import Synchronization

/// The scans of one scanner as an `AsyncSequence` that survives unplugging.
///
/// The reader opens the device through its `open` closure, yields every scan, and when the device vanishes
/// (end of file, EIO, ENXIO, ENODEV, the node disappears) it logs one line, reports
/// ``State/disconnected(reason:)``, waits ``reopenDelay`` and tries again until the device is back, without the
/// process restarting. It ends (returns `nil`) only when the iterating task is cancelled; it throws only for a
/// ``ScannerConnectionError`` that reopening cannot fix (`.misconfigured`).
///
/// A scan in flight when the device vanishes is dropped by the connection, which says so in the error the
/// reader logs: a scan is delivered whole or not at all.
///
/// ```swift
/// let reader = ScannerReader(device: "/dev/farecheck/scanner0", log: { print($0) }) {
///     try await SSIConnection.open(path: "/dev/farecheck/scanner0")
/// }
/// for try await scan in reader {
///     let verdict = verifier.verify(scan.payload)
///     await reader.signal(verdict.isValid ? .good : .bad)
/// }
/// ```
///
/// Iterate a reader once at a time: ``signal(_:)`` goes to the connection of the most recent iteration.
public struct ScannerReader: AsyncSequence, Sendable {
    /// Each element is one complete scan.
    public typealias Element = ScanEvent
    /// Only a `.misconfigured` error ends the sequence by throwing.
    public typealias Failure = any Error

    /// Whether the device is open, reported to `onStateChange` each time it changes (for metrics and status).
    public enum State: Sendable, Hashable {
        /// The device is open and set up; scans can arrive.
        case connected
        /// The device is not open; `reason` says why, as it was logged, and `problem` what kind of trouble it is.
        case disconnected(reason: String, problem: ScannerProblem)
    }

    /// The device name used in log lines, e.g. the configured path.
    public let device: String
    /// How long to wait after a failure or disconnection before opening the device again.
    public let reopenDelay: Duration
    /// Wakes the reader before `reopenDelay` when a device appears (hotplug); `nil` to wait the delay alone.
    public let reopenSignal: ReopenSignal?

    private let open: @Sendable () async throws -> any ScannerConnection
    private let log: @Sendable (String) -> Void
    private let onStateChange: @Sendable (State) -> Void
    private let latest: LatestSession

    /// Creates a reader; nothing is opened until iteration starts.
    ///
    /// - Parameters:
    ///   - device: The name used in log lines.
    ///   - reopenDelay: The wait between a disconnection (or a failed open) and the next attempt.
    ///   - reopenSignal: Cuts that wait short when a device appears (the daemon fires it on hotplug `add`).
    ///   - log: Receives one line per event worth a person's attention: connected, disconnected (with the
    ///     reason and any dropped scan), back again. Failed reopens are logged only when their reason changes,
    ///     and not while the node is simply absent after a disconnection.
    ///   - onStateChange: Receives each change between connected and disconnected.
    ///   - open: Opens and sets up the device, returning a ready connection. Called again on every reopen,
    ///     so it may resolve the path anew (a udev symlink under /dev/farecheck/ follows the scanner).
    public init(
        device: String,
        reopenDelay: Duration = .seconds(1),
        reopenSignal: ReopenSignal? = nil,
        log: @escaping @Sendable (String) -> Void = { _ in },
        onStateChange: @escaping @Sendable (State) -> Void = { _ in },
        open: @escaping @Sendable () async throws -> any ScannerConnection
    ) {
        self.device = device
        self.reopenDelay = reopenDelay
        self.reopenSignal = reopenSignal
        self.open = open
        self.log = log
        self.onStateChange = onStateChange
        self.latest = LatestSession()
    }

    /// Sends feedback for the last scan to the scanner, if it is connected; otherwise does nothing.
    public func signal(_ feedback: ScanFeedback) async {
        guard let connection = latest.session?.connection else { return }
        await connection.signal(feedback)
    }

    /// Starts an iteration: the device is opened on the first call to `next()`.
    public func makeAsyncIterator() -> Iterator {
        let session = Session()
        latest.session = session
        return Iterator(reader: self, session: session)
    }

    /// Opens, reads, and reopens the device; see ``ScannerReader``.
    public struct Iterator: AsyncIteratorProtocol, Sendable {
        private let reader: ScannerReader
        private let session: Session
        private var finished = false
        private var everConnected = false
        private var lastReportedState: State?
        private var lastOpenFailure: String?
        /// The reopen signal's generation before the last open attempt: a device that appears after it counts.
        private var signalGeneration = 0

        fileprivate init(reader: ScannerReader, session: Session) {
            self.reader = reader
            self.session = session
        }

        /// The next scan; `nil` once the task is cancelled (the device is closed first).
        public mutating func next() async throws -> ScanEvent? {
            try await next(isolation: nil)
        }

        /// The next scan, run on the caller's actor; `nil` once the task is cancelled (the device is closed
        /// first).
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws -> ScanEvent? {
            guard !finished else { return nil }
            while true {
                if Task.isCancelled {
                    await stop()
                    return nil
                }
                guard let connection = session.connection else {
                    signalGeneration = reader.reopenSignal?.generation ?? 0
                    do {
                        let connection = try await reader.open()
                        session.connection = connection
                        connected()
                        continue
                    } catch {
                        if Task.isCancelled || error is CancellationError {
                            await stop()
                            return nil
                        }
                        if let failure = error as? ScannerConnectionError, !failure.isRecoverable {
                            finished = true
                            report(.disconnected(reason: describe(error), problem: ScannerProblem(error)))
                            reader.log("\(reader.device): cannot use the scanner: \(describe(error))")
                            throw error
                        }
                        openFailed(error)
                    }
                    guard await pause() else {
                        await stop()
                        return nil
                    }
                    continue
                }
                do {
                    if let scan = try await connection.nextScan() {
                        return scan
                    }
                    await lost(connection, reason: "the device closed the connection", problem: .gone)
                } catch {
                    if Task.isCancelled || error is CancellationError {
                        await stop()
                        return nil
                    }
                    if let failure = error as? ScannerConnectionError, !failure.isRecoverable {
                        session.connection = nil
                        await connection.close()
                        finished = true
                        report(.disconnected(reason: describe(error), problem: ScannerProblem(error)))
                        reader.log("\(reader.device): cannot use the scanner: \(describe(error))")
                        throw error
                    }
                    await lost(connection, reason: describe(error), problem: ScannerProblem(error))
                }
                signalGeneration = reader.reopenSignal?.generation ?? 0
                guard await pause() else {
                    await stop()
                    return nil
                }
            }
        }

        private mutating func connected() {
            reader.log("\(reader.device): scanner \(everConnected ? "is back" : "connected")")
            everConnected = true
            lastOpenFailure = nil
            report(.connected)
        }

        private mutating func lost(
            _ connection: any ScannerConnection, reason: String, problem: ScannerProblem
        ) async {
            session.connection = nil
            await connection.close()
            reader.log("\(reader.device): scanner disconnected: \(reason); reopening every \(reader.reopenDelay)")
            // The reason was just logged; a first open failure that says the same thing is not news.
            lastOpenFailure = nil
            report(.disconnected(reason: reason, problem: problem))
        }

        private mutating func openFailed(_ error: any Error) {
            let reason = describe(error)
            // A missing scanner fails the same way every `reopenDelay`: log a reason only when it changes, and
            // not at all for the node's absence right after a disconnection, which that line already said.
            if reason != lastOpenFailure {
                let code = (error as? ScannerConnectionError)?.code
                let expectedAbsence =
                    everConnected && lastOpenFailure == nil
                    && (code == .deviceMissing || code == .deviceGone)
                if expectedAbsence {
                    // Said by the disconnection line.
                } else if everConnected || lastOpenFailure != nil {
                    reader.log("\(reader.device): scanner still unavailable: \(reason)")
                } else {
                    reader.log(
                        "\(reader.device): cannot open the scanner: \(reason); retrying every \(reader.reopenDelay)"
                    )
                }
                lastOpenFailure = reason
            }
            report(.disconnected(reason: reason, problem: ScannerProblem(error)))
        }

        private mutating func stop() async {
            finished = true
            if let connection = session.connection {
                session.connection = nil
                await connection.close()
                report(.disconnected(reason: "the reader stopped", problem: .stopped))
            }
        }

        private mutating func report(_ state: State) {
            // Metrics care about transitions; a new reason while disconnected is not one.
            switch (lastReportedState, state) {
            case (.connected?, .connected), (.disconnected?, .disconnected): return
            default: break
            }
            lastReportedState = state
            reader.onStateChange(state)
        }

        private func pause() async -> Bool {
            if let signal = reader.reopenSignal {
                return await signal.wait(after: signalGeneration, fallback: reader.reopenDelay)
            }
            do {
                try await Task.sleep(for: reader.reopenDelay)
                return true
            } catch {
                return false
            }
        }

        private func describe(_ error: any Error) -> String {
            guard let failure = error as? ScannerConnectionError else { return "\(error)" }
            if let cause = failure.cause { return "\(failure.message) (\(cause))" }
            return failure.message
        }
    }

    /// The connection of one iteration, readable from ``signal(_:)`` in other tasks.
    fileprivate final class Session: Sendable {
        private let current = Mutex<(any ScannerConnection)?>(nil)

        var connection: (any ScannerConnection)? {
            get { current.withLock { $0 } }
            set { current.withLock { $0 = newValue } }
        }
    }

    /// The most recent iteration's session, held weakly so that an abandoned iterator releases its device.
    fileprivate final class LatestSession: Sendable {
        private struct WeakSession {
            weak var session: Session?
        }
        private let latest = Mutex(WeakSession())

        var session: Session? {
            get { latest.withLock { $0.session } }
            set { latest.withLock { $0.session = newValue } }
        }
    }
}
