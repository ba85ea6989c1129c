import Synchronization

/// Wakes the sync worker for a round on demand (`SyncWorker.requestSync()`); requests made while a round
/// runs are folded into one.
final class SyncTrigger: Sendable {
    private struct State {
        var pending = false
        var waiter: CheckedContinuation<Void, Never>?
        var waiterID: UInt64 = 0
        var cancelledID: UInt64?
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    /// Asks for a round: wakes the waiting worker, or makes its next wait return at once.
    func fire() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard let waiter = state.waiter else {
                state.pending = true
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns once fired (or at once if fired since the last wait), or when the task is cancelled.
    func wait() async {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.pending || state.cancelledID == id {
                        state.pending = false
                        return true
                    }
                    state.waiter = continuation
                    state.waiterID = id
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard state.waiterID == id, let waiter = state.waiter else {
                    state.cancelledID = id
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }
    }
}
