import Synchronization

/// Whether the validator can reach the validation API now, and the client to reach it with.
///
/// The sync worker attaches its client while it runs and reports each round (a good one as soon as its key
/// bundle is accepted, before a key of it is stored); the online checker asks only while the link is
/// "connected": the last exchange succeeded, recently. A failed online check marks the link down, so that
/// scans do not each wait out a deadline while the vehicle is in a tunnel; the next good sync round brings it
/// up again. With several servers, a failure that moved the client to another server that is up leaves the
/// link connected: only when every server has failed is it down.
public final class ServerLink: Sendable {
    private struct State {
        var client: ValidationAPIClient?
        var lastSuccess: ContinuousClock.Instant?
        var down = true
    }

    private let state = Mutex(State())
    /// How long after the last good exchange the link still counts as connected.
    public let freshness: Duration

    /// Makes a link that counts as connected for `freshness` after each good exchange.
    public init(freshness: Duration) {
        self.freshness = freshness
    }

    /// Makes `client` available (the worker, once its HTTP client is up); nil when it stops.
    public func attach(_ client: ValidationAPIClient?) {
        state.withLock {
            $0.client = client
            if client == nil { $0.down = true }
        }
    }

    /// An exchange with the server succeeded.
    public func succeeded() {
        state.withLock {
            $0.lastSuccess = .now
            $0.down = false
        }
    }

    /// An exchange with the server failed: the link is down, unless the client has several servers and moved
    /// from the one that failed to one that is up (the next exchange goes there).
    public func failed() {
        state.withLock { state in
            if let servers = state.client?.servers, servers.hasFailedOver { return }
            state.down = true
        }
    }

    /// The client, when the link is connected.
    public var connectedClient: ValidationAPIClient? {
        state.withLock { state in
            guard !state.down, let client = state.client, let last = state.lastSuccess,
                last.duration(to: .now) <= freshness
            else { return nil }
            return client
        }
    }

    /// Whether the last exchange succeeded, recently.
    public var isConnected: Bool { connectedClient != nil }
}
