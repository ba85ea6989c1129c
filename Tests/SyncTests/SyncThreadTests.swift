import CLinuxShims
import Sync
import Testing

/// A sync round runs on `SyncThread`: a thread in the idle CPU policy and the idle I/O class, so that on a gate's two
/// cores a large sync never keeps a scan's verdict waiting. These check that the round's work really lands there,
/// also after it awaited, and that the caller's thread keeps its priority.
@Suite("The sync thread", .timeLimit(.minutes(1)))
struct SyncThreadTests {
    /// What the thread running this is: in SCHED_IDLE, and its I/O class (ioprio's top bits).
    static func here() -> (idle: Int32, ioClass: Int32) {
        (CLinuxShims_threadSchedulingIsIdle(), CLinuxShims_threadIOPriority() >> 13)
    }

    @Test("work handed to the sync thread runs in the idle CPU policy and I/O class, before and after an await")
    func lowered() async throws {
        #expect(SyncThread.shared.lowering.cpu && SyncThread.shared.lowering.disk)
        let (before, after) = await SyncThread.shared.run { () async -> ((Int32, Int32), (Int32, Int32)) in
            let before = Self.here()
            // Resumed after a wait elsewhere (a timer here, the HTTP client's event loop in a round): still here.
            try? await Task.sleep(for: .milliseconds(5))
            return (before, Self.here())
        }
        // 1: SCHED_IDLE; 3: IOPRIO_CLASS_IDLE.
        #expect(before == (1, 3))
        #expect(after == (1, 3))
    }

    @Test("work a round hands to normal priority runs outside the idle policy and class, then the round goes on idle")
    func normalPriorityCompanion() async throws {
        let (inside, after) = await SyncThread.shared.run { () async -> ((Int32, Int32), (Int32, Int32)) in
            let inside = await SyncThread.shared.atNormalPriority { () async -> (Int32, Int32) in Self.here() }
            return (inside, Self.here())
        }
        // The companion: SCHED_OTHER, and not the idle I/O class (its creator's, none set: 0).
        #expect(inside.0 == 0)
        #expect(inside.1 != 3)
        #expect(after == (1, 3))
    }

    @Test("the caller's own thread is not lowered, and a failure comes back as thrown")
    func callerUntouched() async throws {
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await SyncThread.shared.run { () async throws(Refused) in throw Refused() }
        }
        #expect(Self.here().idle == 0)
    }
}
