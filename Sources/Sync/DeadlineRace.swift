import Synchronization

/// Runs a piece of work against a deadline and returns at the deadline at the latest, without waiting for the work
/// to wind down.
///
/// A request's head and body are both read within its deadline: async-http-client's own deadline covers the head
/// only, and a server that trickles its body one byte a second would hold a sync round or an online check for as
/// long as it likes. A task group would not do here: leaving it waits for the cancelled child, and a cancelled
/// request can take a while to unwind. So the work and a timer each run in a task of their own, the first to end
/// resumes the caller once, and the other is cancelled and left to end on its own.
enum DeadlineRace {
    /// `work`'s result, or `timedOut()` once `deadline` passes first (the work is then cancelled, not awaited).
    ///
    /// The work runs on the global executor, not the caller's task executor: it is I/O that waits on the HTTP
    /// client's event loop. When the calling task is cancelled, the work is cancelled and `stopped()` is returned at
    /// once.
    static func run<T: Sendable, Failure: Error & Sendable>(
        until deadline: ContinuousClock.Instant,
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
                let timer = Task {
                    // Cancelled when the work ended first: nothing to report.
                    guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                    race.finish(.failure(timedOut()))
                }
                race.hold(worker, timer)
            }
        } onCancel: {
            race.finish(.failure(stopped()))
        }
    }

    /// The shared state of one race: the caller's continuation, resumed once, and the two tasks to cancel.
    private final class Race<T: Sendable, Failure: Error & Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<Result<T, Failure>, Never>?
            var outcome: Result<T, Failure>?
            var tasks: [Task<Void, Never>] = []
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

        /// Keeps the two tasks, to cancel the loser; cancels both at once when the race already ended.
        func hold(_ worker: Task<Void, Never>, _ timer: Task<Void, Never>) {
            let ended = state.withLock { state in
                state.tasks = [worker, timer]
                return state.outcome != nil
            }
            if ended {
                worker.cancel()
                timer.cancel()
            }
        }

        /// Ends the race with `result` unless it has ended already: resumes the caller, cancels both tasks.
        func finish(_ result: Result<T, Failure>) {
            let (continuation, tasks) = state.withLock { state in
                guard state.outcome == nil else {
                    return (CheckedContinuation<Result<T, Failure>, Never>?.none, [Task<Void, Never>]())
                }
                state.outcome = result
                defer { state.continuation = nil }
                return (state.continuation, state.tasks)
            }
            for task in tasks { task.cancel() }
            continuation?.resume(returning: result)
        }
    }
}
