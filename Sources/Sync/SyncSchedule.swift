/// When the next sync round runs: the interval with jitter after a success, exponential back-off after
/// failures. A small value type, so the worker's retry state is plain data that tests can step through.
public struct SyncSchedule: Sendable, Equatable {
    /// The time between two good rounds.
    public var interval: Duration
    /// The fraction of the delay that is randomised either way (0.1: ±10 %), so a fleet does not sync in step.
    public var jitter: Double
    /// The wait after the first failure; doubled after each further failure.
    public var firstRetry: Duration
    /// The longest wait after failures.
    public var maximumRetry: Duration
    /// Failures since the last good round.
    public private(set) var consecutiveFailures = 0

    /// Makes a schedule.
    ///
    /// - Parameters:
    ///   - interval: The time between two good rounds.
    ///   - jitter: The randomised fraction of each delay (0 to 0.5).
    ///   - firstRetry: The wait after the first failure (default: 5 s, or the interval if shorter).
    ///   - maximumRetry: The cap of the back-off (default: 15 minutes, or the interval if longer).
    public init(interval: Duration, jitter: Double = 0.1, firstRetry: Duration? = nil, maximumRetry: Duration? = nil) {
        self.interval = interval
        self.jitter = min(max(jitter, 0), 0.5)
        self.firstRetry = firstRetry ?? min(.seconds(5), interval)
        self.maximumRetry = maximumRetry ?? max(.seconds(15 * 60), interval)
    }

    /// A round succeeded: the failures are forgotten; returns the wait until the next round.
    public mutating func succeeded(using random: inout some RandomNumberGenerator) -> Duration {
        consecutiveFailures = 0
        return jittered(interval, using: &random)
    }

    /// A round failed: returns the back-off until the next try (doubling, capped).
    public mutating func failed(using random: inout some RandomNumberGenerator) -> Duration {
        consecutiveFailures += 1
        var delay = firstRetry
        for _ in 1..<min(consecutiveFailures, 32) where delay < maximumRetry { delay *= 2 }
        return jittered(min(delay, maximumRetry), using: &random)
    }

    /// The back-off the next failure would get, without jitter (for logs and tests).
    public var nominalRetry: Duration {
        var delay = firstRetry
        for _ in 0..<min(consecutiveFailures, 32) where delay < maximumRetry { delay *= 2 }
        return min(delay, maximumRetry)
    }

    private func jittered(_ delay: Duration, using random: inout some RandomNumberGenerator) -> Duration {
        guard jitter > 0 else { return delay }
        return delay * Double.random(in: (1 - jitter)...(1 + jitter), using: &random)
    }
}
