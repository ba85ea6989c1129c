import Sync
import Testing

/// A generator with the same sequence for the same seed (SplitMix64), for jitter that tests can repeat.
struct RepeatableRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return value ^ (value >> 31)
    }
}

/// Which server a validator with several talks to: pure logic, the times and the randomness given.
@Suite("Server selection: sticky while healthy, back-off with jitter, failover")
struct ServerSelectionTests {
    static let urls = ["https://a.example.org", "https://b.example.org", "https://c.example.org"]
    /// A fixed point to count from: only differences of instants are used, never the clock's reading.
    static let start = ContinuousClock.Instant.now

    @Test("requests stay on the first server while it answers, whatever the time")
    func sticky() {
        var selection = ServerSelection(urls: Self.urls)
        var random = RepeatableRandom(seed: 1)
        for minute in 0..<30 {
            let now = Self.start + .seconds(60 * minute)
            #expect(selection.choose(at: now) == 0)
            selection.answered(0)
        }
        // After a failover, the second server keeps the requests even once the first one's back-off is over.
        let failure = selection.failed(0, at: Self.start, using: &random)
        #expect(failure.wasCurrent && failure.next == 1 && !failure.allDown)
        for minute in 0..<30 {
            let now = Self.start + .seconds(60 * minute)
            #expect(selection.choose(at: now) == 1)
            selection.answered(1)
        }
    }

    @Test("a failed server is left alone for a back-off doubling from 1 s to 5 minutes, each within ±20 %")
    func backoffDoublesWithJitter() {
        let nominal: [Duration] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300, 300].map { .seconds($0) }
        var spread: Set<Duration> = []
        for seed in UInt64(1)...50 {
            var selection = ServerSelection(urls: ["https://only.example.org"])
            var random = RepeatableRandom(seed: seed)
            for (failure, expected) in nominal.enumerated() {
                let now = Self.start + .seconds(1000 * failure)
                let outcome = selection.failed(0, at: now, using: &random)
                #expect(
                    outcome.backoff >= expected * 0.8 && outcome.backoff <= expected * 1.2, "failure \(failure + 1)")
                #expect(selection.servers[0].downUntil == now + outcome.backoff)
                #expect(outcome.allDown && outcome.next == 0)
                if failure == 0 { spread.insert(outcome.backoff) }
            }
        }
        #expect(spread.count > 40, "the jitter spreads a fleet's retries")
        // Without jitter, exactly the nominal back-off; an answer starts it again at 1 s.
        var exact = ServerSelection(
            urls: ["https://only.example.org"], backoff: ServerSelection.Backoff(jitter: 0))
        var random = RepeatableRandom(seed: 7)
        for expected in nominal {
            #expect(exact.failed(0, at: Self.start, using: &random).backoff == expected)
        }
        exact.answered(0)
        #expect(exact.servers[0].failures == 0 && exact.servers[0].downUntil == nil)
        #expect(exact.failed(0, at: Self.start, using: &random).backoff == .seconds(1))
    }

    @Test("a failure moves to the next server that is up, in the order configured, skipping those in back-off")
    func failsOverInOrder() {
        var selection = ServerSelection(urls: Self.urls, backoff: ServerSelection.Backoff(jitter: 0))
        var random = RepeatableRandom(seed: 2)
        #expect(selection.failed(0, at: Self.start, using: &random).next == 1)
        // b fails half a second later: a is still in its back-off, so c.
        let later = Self.start + .milliseconds(500)
        let second = selection.failed(1, at: later, using: &random)
        #expect(second.wasCurrent && second.next == 2 && !second.allDown)
        #expect(selection.choose(at: later) == 2)
        // A request still under way on a (sent before the failover) fails too: c stays the current one.
        let stale = selection.failed(0, at: later, using: &random)
        #expect(!stale.wasCurrent && stale.next == 2)
        #expect(selection.choose(at: later) == 2)
    }

    @Test("with every server in its back-off, the one whose back-off ends first is tried")
    func allDownPicksEarliest() {
        var selection = ServerSelection(urls: Self.urls, backoff: ServerSelection.Backoff(jitter: 0))
        var random = RepeatableRandom(seed: 3)
        // a: two failures (2 s), b: one (1 s), c: three (4 s), all at the start.
        _ = selection.failed(0, at: Self.start, using: &random)
        _ = selection.failed(0, at: Self.start, using: &random)
        _ = selection.failed(1, at: Self.start, using: &random)
        for _ in 0..<2 { _ = selection.failed(2, at: Self.start, using: &random) }
        let last = selection.failed(2, at: Self.start, using: &random)
        #expect(last.allDown && last.next == 1)
        #expect(selection.choose(at: Self.start + .milliseconds(100)) == 1)
        #expect(!selection.hasFailedOver(at: Self.start + .milliseconds(100)), "nowhere else to go")
        // Once b's back-off is over it is up again (and a, c still down): failed over, to b.
        #expect(selection.hasFailedOver(at: Self.start + .milliseconds(1500)))
    }

    @Test("only a server that cannot answer is failed over: 401, 400 or a refused signature are answers")
    func whatFailsOver() {
        let failsOver: [SyncError.Code] = [.unreachable, .timedOut, .serverUnavailable, .tlsFailed]
        let answers: [SyncError.Code] = [
            .unauthorized, .rejected, .refused, .malformedResponse, .bodyTooLarge, .wrongContentType, .store,
            .misconfigured,
        ]
        for code in failsOver { #expect(SyncError(code: code, message: "").failsOver, "\(code)") }
        for code in answers { #expect(!SyncError(code: code, message: "").failsOver, "\(code)") }
    }

    @Test("one server: a failure leaves it the one to try, and nothing was failed over to")
    func oneServer() {
        var selection = ServerSelection(urls: ["https://only.example.org"])
        var random = RepeatableRandom(seed: 4)
        let failure = selection.failed(0, at: Self.start, using: &random)
        #expect(failure.next == 0 && failure.allDown)
        #expect(selection.choose(at: Self.start) == 0)
        #expect(!selection.hasFailedOver(at: Self.start))
    }
}
