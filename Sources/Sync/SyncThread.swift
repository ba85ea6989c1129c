import Dispatch
import Executors
import Foundation
import TrustStore

/// The thread every sync round of the daemon runs on: its store reads and writes, the decoding and signature checks of
/// what the server sent, the apply of revocation pages and the encoding of uploads. One thread for the process, at the
/// process's normal priority.
///
/// A sync of a million revocations takes seconds of CPU and disk on a gate whose two cores also serve scans. On a
/// thread of its own that work never holds one of Swift's cooperative threads (or Dispatch's), which the scans' tasks
/// need; and it gives way to this process's scans (`ScansInFlight`): between small pieces of its bulk work it waits
/// while a scan is in flight. It does not give way to other programs. It used to run in SCHED_IDLE, below every
/// thread of every program, and beside a program that kept both cores busy it got a few thousandths of the CPU: a
/// round that takes 0.2 s took 56 s, and a gate beside a runaway program would never have synced (issue 53).
///
/// A round runs here as its task's executor preference (`run(_:)`): its non-isolated async functions and their
/// synchronous calls run on this thread; network I/O waits on the HTTP client's event loop and resumes here.
public final class SyncThread: Sendable {
    /// The process's sync thread, started on first use.
    public static let shared = SyncThread()

    private let thread = ExecutorThread(name: "farecheck.sync")

    private init() {}

    /// Runs `body` with the sync thread as its task's executor: `body`'s non-isolated async calls and everything
    /// synchronous in them run on that thread.
    public func run<T, Failure: Error>(_ body: () async throws(Failure) -> T) async throws(Failure) -> T {
        try await thread.run(body)
    }
}
