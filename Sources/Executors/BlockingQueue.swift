import Dispatch

/// A serial queue for blocking calls made from async code off the verdict path: the journal's checkpoints, PIN
/// derivations, a serial port's reads and writes. Such a call never holds a thread of Swift's cooperative pool (as
/// many threads as cores, which every task shares); the calls given to one queue run one at a time, in order.
///
/// For blocking work on the verdict path, or work that must keep one thread across awaits, use an ``ExecutorThread``.
public final class BlockingQueue: Sendable {
    private let queue: DispatchQueue

    /// A queue named `label` (in a debugger's thread list), at `qos`.
    public init(label: String, qos: DispatchQoS = .userInitiated) {
        queue = DispatchQueue(label: label, qos: qos)
    }

    /// Runs `body` on the queue, after every call given before it, and returns its result.
    ///
    /// It runs on the caller's actor (`nonsending`): the queue's reply resumes the caller directly, without a hop
    /// through the global executor (half the latency of a serial scanner's read).
    nonisolated(nonsending) public func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: body()) }
        }
    }
}
