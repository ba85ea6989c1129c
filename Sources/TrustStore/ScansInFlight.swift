import Foundation
import Synchronization

/// The scans this process is answering right now, and the bulk work that gives way to them.
///
/// A sync round (a million revocations is seconds of CPU and disk) runs at the process's normal priority, so that it
/// keeps its share of the machine beside any other program; it yields to this process's own scans instead. The
/// daemon's pipeline counts each scan from its arrival until its verdict is journaled and delivered (`track(_:)`).
/// A round's bulk work calls `giveWay()` between small pieces of it (every ``rowsBetweenTurns`` rows of a revocation
/// page, each paced write-back step, each page and upload batch): while a scan is in flight the calling thread waits,
/// at most ``longestTurn`` at a time, so that scans coming back to back slow a sync down but never stop it.
///
/// One for the process (`shared`): the sync thread is one for the process too.
public final class ScansInFlight: Sendable {
    /// The process's scans.
    public static let shared = ScansInFlight()

    /// Rows of a revocation page written between two turns: about a millisecond of work.
    public static let rowsBetweenTurns = 1024
    /// The longest one turn waits for the scans in flight.
    public static let longestTurn = Duration.milliseconds(50)
    /// How often a waiting turn looks again.
    private static let look = Duration.microseconds(250)

    private let inFlight = Atomic<Int>(0)
    private let turnsWaited = Atomic<Int>(0)

    private init() {}

    /// Scans being answered now.
    public var count: Int { inFlight.load(ordering: .acquiring) }

    /// Turns that found a scan in flight and waited for it, since the process started.
    public var turnsGiven: Int { turnsWaited.load(ordering: .relaxed) }

    /// Counts a scan in flight while `body` runs (its arrival to its delivered verdict).
    public func track<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async -> T) async -> T {
        inFlight.add(1, ordering: .releasing)
        defer { inFlight.subtract(1, ordering: .releasing) }
        return await body()
    }

    /// Blocks the calling thread while a scan is in flight, for at most `longest`; returns at once when none is.
    /// For bulk work on a thread of its own (the sync thread), between two small pieces of it.
    ///
    /// - Returns: Whether it waited.
    @discardableResult
    public func giveWay(longest: Duration = ScansInFlight.longestTurn) -> Bool {
        guard count > 0 else { return false }
        turnsWaited.add(1, ordering: .relaxed)
        let deadline = ContinuousClock.now + longest
        while count > 0, ContinuousClock.now < deadline { PacedWriteBack.pause(Self.look) }
        return true
    }

    /// `giveWay()` after every ``rowsBetweenTurns`` rows of bulk work: call it with each row's index.
    public func giveWay(atRow index: Int) {
        if index % Self.rowsBetweenTurns == Self.rowsBetweenTurns - 1 { giveWay() }
    }
}
