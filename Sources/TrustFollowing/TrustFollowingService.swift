import Foundation
import Logging
import ServiceLifecycle

/// When a source is next fetched: one period after a round (give or take its jitter), and after a failure sooner,
/// backing off from a minute and doubling up to the period, so that a publisher that is down is retried without
/// being hammered.
public struct TrustSchedule: Sendable, Equatable {
    /// The wait after a round of `source` that left it with `failures` failures in a row; `random` in 0..<1.
    public static func wait(after source: TrustSourceConfiguration, failures: Int, random: Double) -> Duration {
        let period = Double(source.period.components.seconds)
        let base: Double
        if failures > 0 {
            let backOff = 60 * pow(2, Double(min(failures - 1, 20)))
            base = min(period, backOff)
        } else {
            base = period
        }
        let spread = base * source.jitter * (random * 2 - 1)
        return .milliseconds(Int64(((base + spread) * 1000).rounded()))
    }
}

/// The worker that follows every configured source on its period, in the server's service group (and in a stand-alone
/// gate's, with a ``GateTrustSettler`` handing its house's changes to the validator's store): each source's
/// round runs when it is due, one at a time, until the group shuts down (a round under way ends with the shutdown's
/// cancellation, leaving the trust as it was).
public struct TrustFollowingService: Service {
    public let follower: TrustFollower
    public let configuration: TrustFollowingConfiguration
    /// The wait before the first round of each source (a server started with others should not fetch at once).
    public let initialDelay: Duration
    /// On a stand-alone gate: hands the house's changes to the validator's store, at start, after each round and
    /// every `settleEvery` (for what an operator decided in between).
    public let settler: GateTrustSettler?
    public let settleEvery: Duration

    public init(
        follower: TrustFollower, configuration: TrustFollowingConfiguration, initialDelay: Duration = .seconds(5),
        settler: GateTrustSettler? = nil, settleEvery: Duration = .seconds(60)
    ) {
        self.follower = follower
        self.configuration = configuration
        self.initialDelay = initialDelay
        self.settler = settler
        self.settleEvery = settleEvery
    }

    public func run() async throws {
        guard !configuration.sources.isEmpty else { return }
        // A graceful shutdown (SIGTERM to the daemon) ends the wait, or the round under way, as a cancellation does.
        await cancelWhenGracefulShutdown { await follow() }
    }

    private func follow() async {
        let clock = ContinuousClock()
        var due = Dictionary(
            configuration.sources.map { ($0.name, clock.now + initialDelay) }, uniquingKeysWith: { first, _ in first })
        var generator = SystemRandomNumberGenerator()
        let names = configuration.sources.map { "\($0.name) (\($0.kind.rawValue), every \($0.period))" }
        follower.logger.info(
            "following \(configuration.sources.count) trust source(s): \(names.joined(separator: ", "))")
        await settler?.settle()
        var settleAt = clock.now + settleEvery
        while !Task.isCancelled {
            guard let next = configuration.sources.min(by: { due[$0.name]! < due[$1.name]! }) else { return }
            if let settler, settleAt < due[next.name]! {
                do {
                    try await Task.sleep(until: settleAt, clock: clock)
                } catch {
                    return
                }
                await settler.settle()
                settleAt = clock.now + settleEvery
                continue
            }
            do {
                try await Task.sleep(until: due[next.name]!, clock: clock)
            } catch {
                return
            }
            let outcome = await follower.run(next)
            await settler?.settle()
            let failures =
                outcome.kind == .failed
                ? ((try? await follower.store.trustSourceStates().first { $0.name == next.name }?.failures) ?? 1)
                : 0
            let wait = TrustSchedule.wait(
                after: next, failures: failures, random: Double.random(in: 0..<1, using: &generator))
            due[next.name] = clock.now + wait
        }
    }
}
