/// Which of a fleet's servers (replicas of `farecheck-server` on one database) the validator talks to: the
/// current one while it answers, the next healthy one after it fails.
///
/// Plain data with the times and the randomness passed in, so that tests step through it without a network or a
/// clock. A server that fails (unreachable, timed out, 5xx: see `SyncError.failsOver`) is down for a back-off that
/// doubles with each failure in a row, from `Backoff.first` to `Backoff.maximum`, each randomised by
/// ±`Backoff.jitter` so that a fleet does not come back in step; an answer of any kind brings it up again.
public struct ServerSelection: Sendable, Equatable {
    /// How long a failed server is left alone.
    public struct Backoff: Sendable, Equatable {
        /// The back-off after one failure.
        public var first: Duration
        /// The longest back-off, however many failures in a row.
        public var maximum: Duration
        /// The fraction of each back-off that is randomised either way (0.2: ±20 %).
        public var jitter: Double

        /// Makes a back-off: by default 1 s doubling to 5 minutes, ±20 %.
        public init(first: Duration = .seconds(1), maximum: Duration = .seconds(300), jitter: Double = 0.2) {
            self.first = first
            self.maximum = max(maximum, first)
            self.jitter = min(max(jitter, 0), 0.5)
        }

        /// The back-off after `failures` failures in a row, without jitter.
        public func nominal(afterFailures failures: Int) -> Duration {
            var delay = first
            for _ in 1..<max(1, min(failures, 64)) where delay < maximum { delay *= 2 }
            return min(delay, maximum)
        }
    }

    /// One server and how it has fared.
    public struct Server: Sendable, Equatable {
        /// Its base URL.
        public let url: String
        /// Failures in a row since it last answered.
        public fileprivate(set) var failures = 0
        /// Until when it is left alone; nil while it is up.
        public fileprivate(set) var downUntil: ContinuousClock.Instant?

        /// Whether it is in its back-off at `now`.
        public func isDown(at now: ContinuousClock.Instant) -> Bool {
            downUntil.map { now < $0 } ?? false
        }
    }

    /// What became of a failure.
    public struct Failure: Sendable, Equatable {
        /// The server that failed.
        public var failed: Int
        /// How long it is left alone.
        public var backoff: Duration
        /// The server requests go to now: another one, or the same one when it is the only one.
        public var next: Int
        /// Whether the failed server was the current one (so that requests moved from it).
        public var wasCurrent: Bool
        /// Whether every server is in its back-off now (`next` is the one whose back-off ends first).
        public var allDown: Bool
    }

    /// The servers, in the order configured.
    public private(set) var servers: [Server]
    /// The server requests go to.
    public private(set) var current = 0
    /// How long failed servers are left alone.
    public let backoff: Backoff

    /// Makes a selection that starts with the first of `urls` (at least one).
    public init(urls: [String], backoff: Backoff = Backoff()) {
        precondition(!urls.isEmpty, "a server selection needs a server")
        servers = urls.map { Server(url: $0) }
        self.backoff = backoff
    }

    /// The server to send a request to at `now`: the current one unless it is in its back-off, else the next one
    /// (in the order configured) that is not, else the one whose back-off ends first; it becomes the current one.
    public mutating func choose(at now: ContinuousClock.Instant) -> Int {
        guard servers[current].isDown(at: now) else { return current }
        for step in 1..<servers.count {
            let index = (current + step) % servers.count
            if !servers[index].isDown(at: now) {
                current = index
                return index
            }
        }
        current = servers.indices.min { servers[$0].downUntil! < servers[$1].downUntil! } ?? current
        return current
    }

    /// Server `index` answered (whatever it said): it is up, and the current one.
    public mutating func answered(_ index: Int) {
        servers[index].failures = 0
        servers[index].downUntil = nil
        current = index
    }

    /// Server `index` failed at `now` (unreachable, timed out, 5xx): it is left alone for its back-off, and if it was
    /// the current one, requests move to the next server `choose(at:)` picks.
    public mutating func failed(
        _ index: Int, at now: ContinuousClock.Instant, using random: inout some RandomNumberGenerator
    ) -> Failure {
        servers[index].failures += 1
        var delay = backoff.nominal(afterFailures: servers[index].failures)
        if backoff.jitter > 0 {
            delay = delay * Double.random(in: (1 - backoff.jitter)...(1 + backoff.jitter), using: &random)
        }
        servers[index].downUntil = now + delay
        let wasCurrent = index == current
        let next = choose(at: now)
        return Failure(
            failed: index, backoff: delay, next: next, wasCurrent: wasCurrent,
            allDown: servers.allSatisfy { $0.isDown(at: now) })
    }

    /// Whether requests can go elsewhere than the servers that failed: some server is in its back-off at `now`, and
    /// another is not.
    public func hasFailedOver(at now: ContinuousClock.Instant) -> Bool {
        servers.contains { $0.isDown(at: now) } && servers.contains { !$0.isDown(at: now) }
    }
}
