import CLinuxShims
import FareCore
import Foundation
import Sync
import TestSupport
import Testing
import TrustStore
import ValidationAPI

/// A sync round of the daemon runs on `SyncThread`, at the process's normal priority, and gives way to the process's
/// own scans (`ScansInFlight`): a large sync never keeps a verdict waiting, and a busy machine never stops a sync.
@Suite("The sync thread", .timeLimit(.minutes(1)))
struct SyncThreadTests {
    let bench = Workbench()

    /// A page of `count` revoked tickets after cursor 0.
    static func page(_ count: Int) -> RevocationDelta {
        RevocationDelta(
            from: 0, next: 1, full: true,
            addedTickets: (0..<count).map {
                RevokedTicket(
                    issuer: "demo-transit", ticketID: TicketID(withUnsafeBytes(of: UInt32($0).bigEndian, Array.init)),
                    reason: nil, revokedAt: Date(timeIntervalSince1970: 1_795_336_200))
            })
    }

    @Test("work handed to the sync thread runs at normal priority (not SCHED_IDLE), there before and after an await")
    func normalPriority() async throws {
        let (before, after) = await SyncThread.shared.run { () async -> (Int32, Int32) in
            let before = CLinuxShims_threadSchedulingIsIdle()
            // Resumed after a wait elsewhere (a timer here, the HTTP client's event loop in a round): still here.
            try? await Task.sleep(for: .milliseconds(5))
            return (before, CLinuxShims_threadSchedulingIsIdle())
        }
        #expect(before == 0)
        #expect(after == 0)
    }

    @Test("a revocation page applied while a scan is in flight gives way to it between pieces, and still commits whole")
    func pageGivesWayToAScan() async throws {
        let store = try TrustStore(path: bench.db)
        let scanDone = AsyncStream<Void>.makeStream()
        let scanStarted = AsyncStream<Void>.makeStream()
        // A scan in flight, as the daemon's pipeline counts one, until the page is applied.
        let scan = Task {
            await ScansInFlight.shared.track {
                scanStarted.continuation.yield()
                for await _ in scanDone.stream { break }
            }
        }
        for await _ in scanStarted.stream { break }
        let turnsBefore = ScansInFlight.shared.turnsGiven
        let counts = try await SyncThread.shared.run { () async throws(StoreError) in
            try SyncRound.apply(Self.page(5_000), to: store)
        }
        let turns = ScansInFlight.shared.turnsGiven - turnsBefore
        scanDone.continuation.yield()
        await scan.value
        // 5,000 rows: a turn after each 1,024, then one per write-back step of the log and of the file.
        #expect(turns >= 5_000 / ScansInFlight.rowsBetweenTurns)
        #expect(counts.added == 5_000)
        #expect(try store.ticketRevocations().count == 5_000)
        #expect(ScansInFlight.shared.count == 0)
    }

    @Test("with no scan in flight a page never waits, and the caller's thread is not touched")
    func noScanNoWait() async throws {
        let store = try TrustStore(path: bench.db)
        let turnsBefore = ScansInFlight.shared.turnsGiven
        let counts = try await SyncThread.shared.run { () async throws(StoreError) in
            try SyncRound.apply(Self.page(3_000), to: store)
        }
        #expect(counts.added == 3_000)
        #expect(ScansInFlight.shared.turnsGiven == turnsBefore)
        #expect(try store.ticketRevocations().count == 3_000)
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await SyncThread.shared.run { () async throws(Refused) in throw Refused() }
        }
        #expect(CLinuxShims_threadSchedulingIsIdle() == 0)
    }
}
