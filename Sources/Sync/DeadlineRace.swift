import NIOCore
import Synchronization

/// Runs a piece of work against a deadline and returns at the deadline at the latest, without waiting for the work
/// to wind down.
///
/// A request's head and body are both read within its deadline: async-http-client's own deadline covers the head
/// only, and a server that trickles its body one byte a second would hold a sync round or an online check for as
/// long as it likes. A task group would not do here: leaving it waits for the cancelled child, and a cancelled
/// request can take a while to unwind. So the work runs in a task of its own against a timer on an event loop, the
/// first to end resumes the caller once, and the other is cancelled and left to end on its own. The timer is the
/// event loop's, not a sleeping task's, so that a busy cooperative pool cannot hold the deadline back.
enum DeadlineRace {
    /// `work`'s result, or `timedOut()` once `deadline` passes first on `eventLoop`'s clock (the work is then
    /// cancelled, not awaited).
    ///
    /// The work runs on the global executor, not the caller's task executor (an unstructured task does not inherit
    /// it): keep it to I/O that waits on the HTTP client's event loop, and copy, decode and store what it returns in
    /// the caller. When the calling task is cancelled, the work is cancelled and `stopped()` is returned at once.
    static func run<T: Sendable, Failure: Error & Sendable>(
        until deadline: NIODeadline, on eventLoop: any EventLoop,
        timedOut: @escaping @Sendable () -> Failure,
        stopped: @escaping @Sendable () -> Failure,
        work: @escaping @Sendable () async -> Result<T, Failure>
    ) async -> Result<T, Failure> {
        let race = Race<T, Failure>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                race.start(continuation)
                let worker = Task {
                    let result = await work()
                    race.finish(result)
                }
                let timer = eventLoop.scheduleTask(deadline: deadline) { race.finish(.failure(timedOut())) }
                race.hold(cancelling: [{ worker.cancel() }, { timer.cancel() }])
            }
        } onCancel: {
            race.finish(.failure(stopped()))
        }
    }

    /// The shared state of one race: the caller's continuation, resumed once, and how to cancel the work and the
    /// timer.
    private final class Race<T: Sendable, Failure: Error & Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<T, Failure>, Never>?
            var outcome: Result<T, Failure>?
            var cancellers: [@Sendable () -> Void] = []
        }

        private let state = Mutex(State())

        /// Keeps the caller's continuation; resumes it at once when the race already ended (the caller was
        /// cancelled before it got here).
        func start(_ continuation: CheckedContinuation<Result<T, Failure>, Never>) {
            let ended: Result<T, Failure>? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }

        /// Keeps how to cancel the work and the timer, to cancel the loser; cancels both at once when the race
        /// already ended.
        func hold(cancelling cancellers: [@Sendable () -> Void]) {
            let ended = state.withLock { state in
                state.cancellers = cancellers
                return state.outcome != nil
            }
            if ended { for cancel in cancellers { cancel() } }
        }

        /// Ends the race with `result` unless it has ended already: resumes the caller, cancels the work and the
        /// timer.
        func finish(_ result: Result<T, Failure>) {
            let (continuation, cancellers) = state.withLock { state in
                guard state.outcome == nil else {
                    return (CheckedContinuation<Result<T, Failure>, Never>?.none, [@Sendable () -> Void]())
                }
                state.outcome = result
                defer { state.continuation = nil }
                return (state.continuation, state.cancellers)
            }
            continuation?.resume(returning: result)
            for cancel in cancellers { cancel() }
        }
    }
}
