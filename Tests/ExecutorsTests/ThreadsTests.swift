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
        // Each readiness the loop saw, as it saw it; the loop goes on once this side has done its part.
        let seen = AsyncStream<DeviceThread.Readiness>.makeStream()
        let next = DispatchSemaphore(value: 0)
        let thread = try DeviceThread.start(name: "test device") { thread in
            func wait(_ timeout: Duration?) {
                seen.continuation.yield((try? thread.wait(forReading: pipe.readEnd, timeout: timeout)) ?? .stopped)
            }
            wait(.milliseconds(10))
            next.wait()
            wait(nil)
            var buffer = [UInt8](repeating: 0, count: 8)
            _ = try? buffer.withUnsafeMutableBytes { try pipe.readEnd.read(into: $0) }
            next.wait()
            wait(nil)
            seen.continuation.finish()
        }
        var readiness: [DeviceThread.Readiness] = []
        for await one in seen.stream {
            readiness.append(one)
            switch readiness.count {
            case 1: _ = try pipe.writeEnd.writeAll([1, 2, 3])
            case 2: try pipe.writeEnd.close()
            default: break
            }
            next.signal()
        }
        await thread.stop()
        #expect(readiness == [.timedOut, .readable, .hangUp])
    }

    @Test("a dedicated thread is named for ps, and finished() returns once its loop has")
    func dedicatedThread() async throws {
        let name = Mutex<String?>(nil)
        let go = DispatchSemaphore(value: 0)
        let thread = DedicatedThread.start(name: "test camera") {
            go.wait()
            // The name the system shows (`ps -L`, `top`): this thread's comm.
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = comm?.trimmingCharacters(in: .newlines) }
        }
        #expect(!thread.isFinished)
        go.signal()
        await thread.finished()
        #expect(thread.isFinished)
        #expect(name.withLock { $0 } == "test camera")
    }

    /// What the calls given to a queue saw, shared with the tasks that give them.
    final class Tally: Sendable {
        let ran = Mutex<Set<Int>>([])
        let running = Mutex<(now: Int, most: Int)>((0, 0))
    }

    @Test("calls given to a blocking queue at once run one at a time, each of them, off the caller's thread")
    func blockingQueueOneAtATime() async throws {
        let queue = BlockingQueue(label: "test.blocking")
        let tally = Tally()
        let caller = pthread_self()
        await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    await queue.run {
                        tally.running.withLock { $0 = ($0.now + 1, max($0.most, $0.now + 1)) }
                        tally.ran.withLock { _ = $0.insert(index) }
                        usleep(500)
                        tally.running.withLock { $0.now -= 1 }
                        return pthread_equal(pthread_self(), caller) == 0
                    }
                }
            }
            for await offCaller in group { #expect(offCaller) }
        }
        #expect(tally.ran.withLock { $0 } == Set(0..<20))
        #expect(tally.running.withLock { $0.most } == 1)
    }
}
