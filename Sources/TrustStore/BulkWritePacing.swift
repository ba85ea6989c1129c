import CLinuxShims
import Foundation
import GRDB
import SystemCalls
import SystemPackage

/// How a sync page's writes reach the disk: in steps of `stepBytes`, each written back and waited for, with the disk
/// left alone for a while after each.
///
/// A revocation page of 50,000 random ids rewrites most of the revocation tree: tens of megabytes for the log, then
/// as much again for the store file when the log is copied into it (a checkpoint). Left to SQLite and the kernel,
/// each of those is one `fsync` of everything at once, and a verdict's journal `fdatasync` waits behind it in the
/// disk's queue (20 ms instead of 0.3 ms on a virtual disk, issue 27). Paced, the page never has more than one step
/// in the disk's queue, and the queue is empty `pauseRatio` of the time the step took after each step; the page is
/// still committed in one transaction, so a verdict sees it whole or not at all.
public struct BulkWritePacing: Sendable, Equatable {
    /// The bytes written back at a time: what a verdict's journal write may find ahead of it in the disk's queue.
    public var stepBytes: Int
    /// The pause after each step, as a share of the time the step took: 1 leaves the disk idle as long as the step
    /// kept it busy (a duty cycle of one half), so that a slower disk gets longer pauses.
    public var pauseRatio: Double

    /// Makes a pacing; `stepBytes` is at least one 16 KiB page, `pauseRatio` at least 0.
    public init(stepBytes: Int = 256 << 10, pauseRatio: Double = 1) {
        self.stepBytes = max(16 << 10, stepBytes)
        self.pauseRatio = max(0, pauseRatio)
    }

    /// Steps of 256 KiB, each followed by as long a pause.
    public static let standard = BulkWritePacing()
}

/// The paced write-back of one file (see ``BulkWritePacing``).
struct PacedWriteBack {
    var pacing: BulkWritePacing

    /// A step that took less than this wrote nothing (its range was clean): no pause after it.
    private static let cleanStep = Duration.microseconds(30)

    /// Writes back every dirty page of the file at `path`, one step of the file at a time, each waited for and
    /// followed by its pause; then `fdatasync`, which finds little left to write and makes the file durable.
    /// A missing file has nothing to write.
    ///
    /// The file is opened anew (read-only): write-back is of the file's pages, whichever descriptor wrote them.
    func flush(_ path: String) throws(Errno) {
        let descriptor: Int32
        do {
            descriptor = try systemCall { open(path, O_RDONLY | O_CLOEXEC) }
        } catch  where error == .noSuchFileOrDirectory {
            return
        }
        defer { close(descriptor) }
        var status = stat()
        _ = try systemCall { fstat(descriptor, &status) }
        let size = Int64(status.st_size)
        let step = Int64(pacing.stepBytes)
        var offset: Int64 = 0
        while offset < size {
            ScansInFlight.shared.giveWay()
            let started = ContinuousClock.now
            _ = try systemCallReturningNegatedErrno { CLinuxShims_writeBackRange(descriptor, offset, step) }
            let took = started.duration(to: .now)
            if took > Self.cleanStep, pacing.pauseRatio > 0 {
                Self.pause(took * pacing.pauseRatio)
            }
            offset += step
        }
        _ = try systemCall { fdatasync(descriptor) }
    }

    /// Blocks the calling thread for `duration`, resumed after a signal (`nanosleep`); for `ScansInFlight` too.
    static func pause(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        var request = timespec(tv_sec: Int(seconds), tv_nsec: Int(attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1, errno == EINTR { request = remaining }
    }
}

extension TrustStore {
    /// Copies the log of a page just committed (unsynced, the automatic checkpoint off) into the store file, both
    /// written back at `pacing`'s pace.
    ///
    /// In this order, so that a power cut leaves a store SQLite can recover: the log is made durable first (its frames
    /// are what recovery replays); then the frames are copied into the file with `synchronous = OFF`, which leaves the
    /// file's `fsync` to this function, written back in steps and synced; all the while a read transaction begun
    /// after the commit holds the log's last frame, so that no writer (of this process or another) starts the log
    /// over, writing on frames the file does not yet hold on disk.
    ///
    /// Nothing is thrown: the page is committed whatever happens here (as when SQLite checkpoints in a commit, whose
    /// failure the commit does not report). A copy that fails (a full disk cannot grow the file) leaves the frames in
    /// the log, for the next checkpoint.
    func checkpointPaced(_ pacing: BulkWritePacing) {
        let writeBack = PacedWriteBack(pacing: pacing)
        do {
            try writeBack.flush(path + "-wal")
        } catch {
            // The log is not known to be on disk: the copy is left to SQLite's next checkpoint, which syncs the log
            // before it writes the file.
            return
        }
        let pool = self.pool
        let path = self.path
        try? pool.read { db in
            // The transaction's snapshot (and its mark in the log) is taken by its first read.
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM meta")
            try pool.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = OFF")
                defer { try? db.execute(sql: "PRAGMA synchronous = FULL") }
                _ = try db.checkpoint(.passive)
            }
            try writeBack.flush(path)
        }
    }

    /// Runs `body` with the calling thread's disk I/O in the idle class (restored afterwards): a scheduler that keeps
    /// classes apart (bfq; mq-deadline since Linux 5.14, up to its `prio_aging_expire`) serves a verdict's journal
    /// write first. Not every scheduler does (none, kyber): the pacing is what bounds the queue whatever the scheduler.
    static func withIdleIOPriority<T, Failure: Error>(_ body: () throws(Failure) -> T) throws(Failure) -> T {
        let previous = CLinuxShims_threadIOPriority()
        let lowered = previous >= 0 && CLinuxShims_setThreadIOPriorityIdle() == 0
        defer { if lowered { _ = CLinuxShims_setThreadIOPriority(previous) } }
        return try body()
    }
}
