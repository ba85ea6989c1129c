import Logging
import Synchronization

/// The servers a validator syncs with, shared by every copy of its `ValidationAPIClient` (the sync round's and the
/// online checker's): a `ServerSelection` on the continuous clock, with each failover logged once.
public final class ServerPool: Sendable {
    private struct State {
        var selection: ServerSelection
        var random: any RandomNumberGenerator & Sendable
    }

    private let state: Mutex<State>
    private let logger: Logger

    /// Makes a pool of `urls` (at least one; the first is tried first).
    ///
    /// - Parameters:
    ///   - urls: The servers' base URLs.
    ///   - backoff: How long a failed server is left alone.
    ///   - logger: Where failovers are logged.
    ///   - random: The jitter's source (seeded in tests).
    public init(
        urls: [String], backoff: ServerSelection.Backoff = ServerSelection.Backoff(),
        logger: Logger = Logger(label: "farecheck.sync"),
        random: some RandomNumberGenerator & Sendable = SystemRandomNumberGenerator()
    ) {
        state = Mutex(State(selection: ServerSelection(urls: urls, backoff: backoff), random: random))
        self.logger = logger
    }

    /// The servers' base URLs, in the order configured.
    public var urls: [String] { state.withLock { $0.selection.servers.map(\.url) } }

    /// The base URL requests go to now.
    public var currentURL: String {
        state.withLock { $0.selection.servers[$0.selection.current].url }
    }

    /// The server to send a request to now (see `ServerSelection.choose(at:)`).
    func choose() -> (index: Int, url: String) {
        state.withLock { state in
            let index = state.selection.choose(at: .now)
            return (index, state.selection.servers[index].url)
        }
    }

    /// Server `index` answered.
    func answered(_ index: Int) {
        state.withLock { $0.selection.answered(index) }
    }

    /// Server `index` failed with `error`: it is left alone for its back-off, and the failover is logged.
    ///
    /// - Returns: Another server to retry the request on (the current one, if another request moved there
    ///   already), or nil when there is none (one server, or the one picked next is the one that failed).
    func failed(_ index: Int, _ error: SyncError) -> (index: Int, url: String)? {
        let (failure, urls) = state.withLock { state in
            var random = state.random
            defer { state.random = random }
            let failure = state.selection.failed(index, at: .now, using: &random)
            return (failure, state.selection.servers.map(\.url))
        }
        guard urls.count > 1 else { return nil }
        let next = urls[failure.next]
        if !failure.wasCurrent {
            // Another request failed over already, and logged it.
        } else if failure.allDown {
            let line =
                "sync: server \(urls[index]) unreachable (\(error.description)); all \(urls.count) servers are down, "
                + "next try on \(next)"
            logger.warning("\(line)")
        } else {
            logger.warning("sync: server \(urls[index]) unreachable (\(error.description)); using \(next)")
        }
        return failure.next == index ? nil : (failure.next, next)
    }

    /// Whether the pool moved away from a server that failed to one that is up (see
    /// `ServerSelection.hasFailedOver(at:)`).
    public var hasFailedOver: Bool {
        state.withLock { $0.selection.hasFailedOver(at: .now) }
    }
}

extension SyncError {
    /// Whether another server of the fleet may do better: the server could not be reached, did not answer in
    /// time, broke off, refused the TLS handshake or answered 5xx. An answer such as 401 or 400, a malformed or
    /// oversized body, or a document refused by its signature is what any replica would give: not failed over.
    public var failsOver: Bool {
        switch code {
        case .unreachable, .timedOut, .serverUnavailable, .tlsFailed: true
        default: false
        }
    }
}
