import Daemon
import FareCore
import Foundation
import Synchronization
import Testing

/// The hub's followers (`EventHub.follow`): the unix socket's clients get each verdict from the pipeline's thread.
@Suite("EventHub followers")
struct EventHubTests {
    @Test("a follower gets every event on the publishing thread, in order, until it cancels; it is counted meanwhile")
    func followerDeliveredInPlace() throws {
        let hub = EventHub()
        let received = Mutex<[(id: InspectionID, thread: pthread_t)]>([])
        let subscription = hub.follow { verdict in
            received.withLock { $0.append((verdict.event.id, pthread_self())) }
        } finished: {
        }
        #expect(hub.subscriberCount == 1)
        let events = (0..<3).map { _ in EndpointBench.event(.valid, reason: "The ticket is genuine and valid now.") }
        for event in events { hub.publish(event) }
        // Delivered before `publish` returned, on this thread.
        let delivered = received.withLock { $0 }
        #expect(delivered.map(\.id) == events.map(\.event.id))
        #expect(delivered.allSatisfy { pthread_equal($0.thread, pthread_self()) != 0 })

        subscription.cancel()
        #expect(hub.subscriberCount == 0)
        hub.publish(EndpointBench.event(.expired, reason: "The ticket expired."))
        #expect(received.withLock { $0.count } == 3)
    }

    @Test("finishing the hub tells each follower once, stops deliveries, and tells a late follower at once")
    func finishEndsFollowers() {
        let hub = EventHub()
        let finished = Atomic<Int>(0)
        let delivered = Atomic<Int>(0)
        let subscription = hub.follow { _ in
            delivered.add(1, ordering: .relaxed)
        } finished: {
            finished.add(1, ordering: .relaxed)
        }
        hub.finish()
        #expect(finished.load(ordering: .relaxed) == 1)
        hub.publish(EndpointBench.event(.valid, reason: "The ticket is genuine and valid now."))
        #expect(delivered.load(ordering: .relaxed) == 0)
        subscription.cancel()
        #expect(finished.load(ordering: .relaxed) == 1)

        let late = hub.follow { _ in
            delivered.add(1, ordering: .relaxed)
        } finished: {
            finished.add(1, ordering: .relaxed)
        }
        #expect(finished.load(ordering: .relaxed) == 2)
        #expect(hub.subscriberCount == 0)
        late.cancel()
    }
}
