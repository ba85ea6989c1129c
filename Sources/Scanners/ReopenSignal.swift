import Synchronization

/// Wakes readers that wait to reopen an unplugged scanner, when a device appears (a hotplug `add` uevent).
///
/// A reader waits for the signal or for its fallback delay, whichever comes first: with hotplug events a
/// replugged scanner is reading again as soon as its node exists, without polling; where no netlink socket
/// can be had, the fallback delay alone brings it back.
public final class ReopenSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter = 0
    }
    private let state = Mutex(State())

    public init() {}

    /// Wakes every reader waiting now.
    public func fire() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// How many times the signal fired: a reader takes it before it tries to open, so that a device appearing
    /// between a failed open and the wait is not missed.
    public var generation: Int { state.withLock { $0.generation } }

    /// Waits until the signal fires after `generation` was read, or `fallback` passed; `false` when cancelled.
    public func wait(after generation: Int, fallback: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                do {
                    try await Task.sleep(for: fallback)
                    return true
                } catch {
                    return false
                }
            }
            group.addTask { [self] in
                await waitForFire(after: generation)
                return !Task.isCancelled
            }
            let first = await group.next() ?? false
            // The other task ends too: the sleep at once, the wait for the signal through its cancellation handler.
            group.cancelAll()
            return first
        }
    }

    private func waitForFire(after generation: Int) async {
        let id = state.withLock { state -> Int? in
            guard state.generation == generation else { return nil }
            let id = state.nextWaiter
            state.nextWaiter += 1
            return id
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard state.generation == generation else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }

    /// Fires for every device that appears (`add`) among `events`, until they end or the task is cancelled.
    public func follow(_ events: some AsyncSequence<HotplugEvent, Never>) async {
        for await event in events where event.action == .add {
            fire()
        }
    }
}
