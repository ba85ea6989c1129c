import Dispatch
import Foundation
import Synchronization

/// One thread of its own that runs Swift tasks' jobs in the order they come: the serial executor of an actor, and the
/// task executor of the non-isolated code a task runs with it as its preference (`run(_:)`).
///
/// For work that blocks (SQLite, `fsync`) and has a priority of its own to keep: such work never runs on Swift's
/// cooperative threads, which are as many as the cores and which every other task shares. An actor whose executor
/// this is, and the blocking calls it makes here, run on one thread: a hop between them is a call, not a wake-up of
/// another thread that, on a busy machine, can wait milliseconds for a core.
///
/// The thread is started by `init`, so it has its creator's scheduling policy (a thread inherits its creator's); it
/// ends when the executor is released and its queue is empty. docs/development.md, "Where work runs", says which work
/// runs on which of these.
public final class ExecutorThread: SerialExecutor, TaskExecutor, Sendable {
    /// The queue the thread serves; not the executor itself, so that the thread does not keep the executor alive.
    private final class Queue: Sendable {
        struct Waiting {
            var jobs: [UnownedJob] = []
            var next = 0
            var stopped = false
        }
        let waiting = Mutex(Waiting())
        let available = DispatchSemaphore(value: 0)

        func add(_ job: UnownedJob) {
            waiting.withLock { $0.jobs.append(job) }
            available.signal()
        }

        /// The next job, oldest first; `nil` once stopped with nothing left.
        func take() -> UnownedJob? {
            while true {
                available.wait()
                let next = waiting.withLock { waiting -> (job: UnownedJob?, stop: Bool) in
                    guard waiting.next < waiting.jobs.count else { return (nil, waiting.stopped) }
                    let job = waiting.jobs[waiting.next]
                    waiting.next += 1
                    // Taken jobs are dropped in one go once all are, rather than shifting the array for each one.
                    if waiting.next == waiting.jobs.count {
                        waiting.jobs.removeAll(keepingCapacity: true)
                        waiting.next = 0
                    }
                    return (job, false)
                }
                if let job = next.job { return job }
                if next.stop { return nil }
            }
        }
    }

    private let queue = Queue()

    /// Starts the thread, named `name` (the system keeps its first 15 characters), and returns once it runs.
    public init(name: String) {
        let queue = self.queue
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [unowned(unsafe) self] in
            // Named from inside, by the thread itself (see `ThreadName`): `ps` and `top` show it.
            ThreadName.nameCurrentThread(name)
            // The executor's own references, taken while `init` still holds it: a job runs isolated to it.
            let serial = self.asUnownedSerialExecutor()
            let task = self.asUnownedTaskExecutor()
            started.signal()
            while let job = queue.take() { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
        }
        thread.start()
        started.wait()
    }

    deinit {
        queue.waiting.withLock { $0.stopped = true }
        queue.available.signal()
    }

    /// Runs `body` with this thread as its task's executor: `body`'s non-isolated async calls and everything
    /// synchronous in them run on this thread.
    public func run<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await withTaskExecutorPreference(self, operation: body)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.add(UnownedJob(job))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
