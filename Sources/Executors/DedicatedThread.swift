import Foundation
import Synchronization

/// A named thread of its own that runs one blocking loop to its end: a camera's capture, a device's reads
/// (``DeviceThread`` is one with a stop signal that cuts a `poll` short).
///
/// The loop decides when it ends (a stop flag it looks at, a device gone); `finished()` waits for that, so that whoever
/// stopped it knows the device is released when it returns.
public final class DedicatedThread: Sendable {
    private let state = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    private init() {}

    /// Starts `body` on a new thread named `name` (the system keeps its first 15 characters: `ps -L`, `top`).
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> DedicatedThread {
        let dedicated = DedicatedThread()
        let thread = Thread {
            // Named from inside, by the thread itself (see `ThreadName`).
            ThreadName.nameCurrentThread(name)
            body()
            let waiters = dedicated.state.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.start()
        return dedicated
    }

    /// Whether the loop has returned.
    public var isFinished: Bool { state.withLock { $0.done } }

    /// Returns once the loop has returned (at once if it has).
    public func finished() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}
