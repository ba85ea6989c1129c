import Presentation
import Synchronization

/// Fans each verdict out to every live subscriber (unix socket clients, `/events` streams).
///
/// A subscriber that reads too slowly loses the oldest events past its buffer rather than slowing the
/// pipeline: the journal, not a socket, is the record. A new subscriber first receives the last event (if it
/// asks for it), so that a page opened after a scan shows it at once.
public final class EventHub: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<PublishedVerdict>.Continuation] = [:]
        var followers: [Int: Follower] = [:]
        var nextID = 0
        var last: PublishedVerdict?
        var finished = false
    }

    /// A subscriber called on the publishing thread (``follow(_:finished:)``).
    private struct Follower {
        let deliver: @Sendable (PublishedVerdict) -> Void
        let finished: @Sendable () -> Void
    }

    private let state = Mutex(State())
    /// How many events a slow subscriber may fall behind before the oldest are dropped.
    public let bufferSize: Int

    public init(bufferSize: Int = 256) {
        self.bufferSize = bufferSize
    }

    /// The most recent event, if any.
    public var last: PublishedVerdict? { state.withLock { $0.last } }

    /// How many subscribers are connected now.
    public var subscriberCount: Int { state.withLock { $0.subscribers.count + $0.followers.count } }

    /// Sends `event` to every subscriber; never waits.
    public func publish(_ event: PublishedVerdict) {
        let (targets, followers) = state.withLock { state in
            state.last = event
            return (Array(state.subscribers.values), state.followers.isEmpty ? [] : Array(state.followers.values))
        }
        for follower in followers { follower.deliver(event) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Calls `deliver` with every event published from now on, on the thread that publishes it (the pipeline's),
    /// until the returned subscription is cancelled; then `finished` once, when the hub is finished (at shutdown).
    ///
    /// For a subscriber that can pass an event on without waiting (a socket write queued with its event loop): it
    /// gets each verdict without a task of its own being woken first. `deliver` must never block or wait.
    public func follow(
        _ deliver: @escaping @Sendable (PublishedVerdict) -> Void, finished: @escaping @Sendable () -> Void
    ) -> Subscription {
        let id = state.withLock { state -> Int? in
            guard !state.finished else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.followers[id] = Follower(deliver: deliver, finished: finished)
            return id
        }
        guard let id else {
            finished()
            return Subscription {}
        }
        return Subscription { [weak self] in self?.state.withLock { _ = $0.followers.removeValue(forKey: id) } }
    }

    /// A ``follow(_:finished:)`` registration; `cancel()` ends it: no event published after it returns is delivered.
    public final class Subscription: Sendable {
        private let end: Mutex<(@Sendable () -> Void)?>

        init(_ end: @escaping @Sendable () -> Void) { self.end = Mutex(end) }

        /// Stops the deliveries; only the first call counts.
        public func cancel() {
            let end = self.end.withLock { end in
                defer { end = nil }
                return end
            }
            end?()
        }

        deinit { cancel() }
    }

    /// A stream of the events published from now on, starting with the last one when `replayLast` is set.
    /// The stream ends when the hub is finished or the consumer stops iterating.
    public func subscribe(replayLast: Bool = true) -> AsyncStream<PublishedVerdict> {
        subscribe(replayingLastIf: { _ in replayLast })
    }

    /// A stream of the events published from now on, starting with the last one if `replay` accepts it (an
    /// inspector's stream replays only a verdict of the client's own session). `replay` runs under the hub's lock:
    /// no event is both replayed and delivered.
    public func subscribe(replayingLastIf replay: (PublishedVerdict) -> Bool) -> AsyncStream<PublishedVerdict> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: PublishedVerdict.self, bufferingPolicy: .bufferingNewest(bufferSize))
        let id = state.withLock { state in
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            if let last = state.last, replay(last) { continuation.yield(last) }
            return id
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription (at shutdown).
    public func finish() {
        let (targets, followers) = state.withLock { state in
            defer {
                state.subscribers.removeAll()
                state.followers.removeAll()
                state.finished = true
            }
            return (Array(state.subscribers.values), Array(state.followers.values))
        }
        for continuation in targets { continuation.finish() }
        for follower in followers { follower.finished() }
    }
}
