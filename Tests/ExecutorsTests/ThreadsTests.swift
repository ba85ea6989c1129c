import Executors
import Foundation
import Synchronization
import SystemPackage
import Testing

/// The threads a device, a camera and blocking calls run on: a stop reaches a loop that waits on a device at once
/// (a scanner unplugged or the daemon stopping never waits for the next byte), and a stopped loop is known finished.
@Suite("Device threads and blocking queues", .timeLimit(.minutes(1)))
struct ThreadsTests {
    @Test("a device thread waiting on a silent descriptor stops at once; stop() returns once its loop has returned")
    func stopCutsAPollShort() async throws {
        let silent = try FileDescriptor.pipe()
        defer {
            try? silent.readEnd.close()
            try? silent.writeEnd.close()
        }
        let seen = Mutex<[DeviceThread.Readiness]>([])
        let looped = Mutex(false)
        let thread = try DeviceThread.start(name: "test device") { thread in
            while !thread.isStopRequested {
                // No timeout: only the stop can end this wait.
                let readiness = (try? thread.wait(forReading: silent.readEnd, timeout: nil)) ?? .hangUp
                seen.withLock { $0.append(readiness) }
            }
            looped.withLock { $0 = true }
        }
        await thread.stop()
        #expect(looped.withLock { $0 })
        #expect(seen.withLock { $0 }.allSatisfy { $0 == .stopped })
    }

    @Test("a device thread sees bytes as readable, a closed writer as a hang-up, and a quiet one as a timeout")
    func readiness() async throws {
        let pipe = try FileDescriptor.pipe()
        defer { try? pipe.readEnd.close() }
        let result = Mutex<[DeviceThread.Readiness]>([])
        let written = DispatchSemaphore(value: 0)
        let closed = DispatchSemaphore(value: 0)
        let thread = try DeviceThread.start(name: "test device") { thread in
            func wait(_ timeout: Duration?) {
                let readiness = (try? thread.wait(forReading: pipe.readEnd, timeout: timeout)) ?? .stopped
                result.withLock { $0.append(readiness) }
            }
            wait(.milliseconds(10))
            written.wait()
            wait(nil)
            var buffer = [UInt8](repeating: 0, count: 8)
            _ = try? buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
            closed.wait()
            wait(nil)
        }
        _ = try pipe.writeEnd.writeAll([1, 2, 3])
        written.signal()
        try pipe.writeEnd.close()
        closed.signal()
        await thread.stop()
        #expect(result.withLock { $0 } == [.timedOut, .readable, .hangUp])
    }

    @Test("a dedicated thread is named for ps, and finished() returns once its loop has")
    func dedicatedThread() async throws {
        let name = Mutex<String?>(nil)
        let go = DispatchSemaphore(value: 0)
        let thread = DedicatedThread.start(name: "test camera") {
            go.wait()
            var buffer = [CChar](repeating: 0, count: 16)
            pthread_getname_np(pthread_self(), &buffer, buffer.count)
            name.withLock { $0 = String(cString: buffer) }
        }
        #expect(!thread.isFinished)
        go.signal()
        await thread.finished()
        #expect(thread.isFinished)
        #expect(name.withLock { $0 } == "test camera")
    }

    @Test("calls given to a blocking queue at once run one at a time, each of them, off the caller's thread")
    func blockingQueueOneAtATime() async throws {
        let queue = BlockingQueue(label: "test.blocking")
        let ran = Mutex<Set<Int>>([])
        let overlapping = Atomic<Int>(0)
        let mostAtOnce = Mutex(0)
        let caller = pthread_self()
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    await queue.run {
                        let now = overlapping.add(1, ordering: .relaxed).newValue
                        mostAtOnce.withLock { $0 = max($0, now) }
                        ran.withLock { _ = $0.insert(index) }
                        usleep(500)
                        overlapping.subtract(1, ordering: .relaxed)
                        return pthread_equal(pthread_self(), caller) == 0
                    }
                }
            }
            for await offCaller in group { #expect(offCaller) }
        }
        #expect(ran.withLock { $0 } == Set(0..<20))
        #expect(mostAtOnce.withLock { $0 } == 1)
    }
}
