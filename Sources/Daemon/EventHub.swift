import Synchronization

/// Fans each verdict out to every live subscriber (unix socket clients, `/events` streams).
///
/// A subscriber that reads too slowly loses the oldest events past its buffer rather than slowing the
/// pipeline: the journal, not a socket, is the record. A new subscriber first receives the last event (if it
/// asks for it), so that a page opened after a scan shows it at once.
public final class EventHub: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<PublishedVerdict>.Continuation] = [:]
        var nextID = 0
        var last: PublishedVerdict?
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
    public var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Sends `event` to every subscriber; never waits.
    public func publish(_ event: PublishedVerdict) {
        let targets = state.withLock { state in
            state.last = event
            return Array(state.subscribers.values)
        }
        for continuation in targets { continuation.yield(event) }
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
        let targets = state.withLock { state in
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }
}
