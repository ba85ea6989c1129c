import CLinuxShims
import Dispatch
import Foundation
import Synchronization

/// The thread every sync round runs on: its store reads and writes, the decoding and signature checks of what the
/// server sent, the apply of revocation pages and the encoding of uploads. One thread for the process, in the
/// SCHED_IDLE policy and the idle I/O class.
///
/// A sync of a million revocations takes seconds of CPU and disk on a gate whose two cores also serve scans. Any
/// other thread that wakes (a scan's verdict) takes the CPU from this one at once, and a scheduler that keeps I/O
/// classes apart serves a verdict's journal write before this thread's writes. The policy is set once, when the
/// thread starts, because an unprivileged thread may lower its priority but never raise it back: sync work therefore
/// never runs on Swift's cooperative threads or on Dispatch's, which other work shares.
///
/// A round runs here as its task's executor preference (`run(_:)`): its non-isolated async functions and their
/// synchronous calls run on this thread; network I/O waits on the HTTP client's event loop and resumes here.
///
/// Beside it runs a second thread at the process's normal priority, for the few short writes of a round that take a
/// lock a scan also takes (`atNormalPriority(_:)`).
public final class SyncThread: Sendable {
    /// The process's sync thread, and its normal-priority companion, started on first use.
    public static let shared = SyncThread()

    /// What the thread could lower when it started (a seccomp filter may refuse either call with EPERM).
    public struct Lowering: Sendable, Equatable {
        /// The thread is in the SCHED_IDLE policy.
        public var cpu: Bool
        /// The thread's I/O is in the idle class.
        public var disk: Bool
    }

    /// The sync thread.
    private let idle: ExecutorThread
    /// What it lowered when it started.
    public let lowering: Lowering
    /// The thread at normal priority that `atNormalPriority(_:)` hands work to. Started here, by the caller of
    /// `init`, so that it never inherits the sync thread's policy, as a thread started from that one would.
    private let companion = ExecutorThread(name: "farecheck.marks")

    /// Starts both threads; returns once the sync thread has set its priorities.
    private init() {
        let lowered = Mutex(Lowering(cpu: false, disk: false))
        idle = ExecutorThread(name: "farecheck.sync") {
            let cpu = CLinuxShims_setThreadSchedulingIdle() == 0
            let disk = CLinuxShims_setThreadIOPriorityIdle() == 0
            lowered.withLock { $0 = Lowering(cpu: cpu, disk: disk) }
        }
        lowering = lowered.withLock { $0 }
    }

    /// Runs `body` with the sync thread as its task's executor: `body`'s non-isolated async calls and everything
    /// synchronous in them run on that thread.
    public func run<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await idle.run(body)
    }

    /// Runs `body` on the companion thread, at the process's normal priority, and comes back to the sync thread: for
    /// a round's short writes under a lock that a scan also takes (marking uploaded inspections sent, under the
    /// journal's writer lock). Done on the sync thread, such a write could be preempted while holding the lock, and
    /// the scan that waits for it would wait for as long as any other thread wants the CPU.
    public func atNormalPriority<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await companion.run(body)
    }
}
