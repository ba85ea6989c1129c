import Executors
import Foundation
import Testing

/// `ExecutorThread`: the daemon's pipeline actor and its blocking steps share one thread, so that a step is a call,
/// not a wake-up of another thread. These check that an actor on it and a task preferring it land on that thread,
/// in order, and that the thread ends once its executor is released.
@Suite("A thread of its own as an executor", .timeLimit(.minutes(1)))
struct ExecutorThreadTests {
    actor Recorder {
        nonisolated let thread: ExecutorThread
        nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }
        var seen: [Int] = []

        init(thread: ExecutorThread) { self.thread = thread }

        /// The thread's id here, then in a non-isolated call the task makes with the thread as its preference.
        func record(_ value: Int) async -> (isolated: pthread_t, nonisolated: pthread_t) {
            seen.append(value)
            let isolated = pthread_self()
            let other = await withTaskExecutorPreference(thread) { await Self.here() }
            return (isolated, other)
        }

        nonisolated static func here() async -> pthread_t { pthread_self() }
    }

    /// The running thread's name (a synchronous call: `Thread.current` is not for async code).
    static func threadName() -> String? { Thread.current.name }

    @Test("an actor on it and the non-isolated calls of a task preferring it run on that one thread, in order")
    func oneThread() async throws {
        let thread = ExecutorThread(name: "farecheck.test")
        let threadID = await thread.run { () async -> pthread_t in pthread_self() }
        let name = await thread.run { () async -> String? in Self.threadName() }
        #expect(name == "farecheck.test")
        #expect(threadID != pthread_self())
        let recorder = Recorder(thread: thread)
        for value in 0..<100 {
            let ids = await recorder.record(value)
            #expect(ids.isolated == threadID && ids.nonisolated == threadID)
        }
        #expect(await recorder.seen == Array(0..<100))
    }

    @Test("the thread ends once its executor is released")
    func ends() async throws {
        // Linux keeps 15 characters of a thread's name.
        let name = "fc-ends-\(getpid() % 10_000)"
        func running() -> Bool {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.contains { task in
                (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                    .trimmingCharacters(in: .whitespacesAndNewlines) == name
            }
        }
        var thread: ExecutorThread? = ExecutorThread(name: name)
        #expect(await thread!.run { () async -> String? in Self.threadName() } == name)
        #expect(running())
        thread = nil
        let deadline = ContinuousClock.now + .seconds(5)
        while running(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!running())
    }
}
