import AsyncHTTPClient
import FareCore
import Foundation
import Logging
import Sync
import Testing
import ValidationAPI

/// Every request's deadline holds for its head and its body.
@Suite("deadlines", .serialized, .timeLimit(.minutes(2)))
struct DeadlineTests {
    /// A `valid` verdict as the offline check gives it, for the online checker to review.
    static let offlineValid = Verdict(
        kind: .valid, reason: "Valid ticket.", signature: .valid, format: .fc1, issuer: "demo-transit",
        inspectedAt: Date())

    @Test("a server that sends the head at once and then trickles the body: the sync request fails as timed out")
    func tricklingBodyTimesOut() async throws {
        let server = try CannedHTTPServer { _ in .trickle(bodyBytes: 120, interval: .seconds(1)) }
        defer { server.stop() }
        try await HTTPClient.withHTTPClient { http in
            let client = ValidationAPIClient(
                configuration: .init(baseURL: server.baseURL, token: "t", requestTimeout: .seconds(1)), http: http)
            let started = ContinuousClock.now
            do throws(SyncError) {
                _ = try await client.firstUses(since: 0)
                Issue.record("a page trickled over two minutes was accepted within a 1 s deadline")
            } catch {
                let took = started.duration(to: .now)
                #expect(error.code == .timedOut, "\(error)")
                #expect(error.message.contains("did not send the first-use page within 1"), "\(error.message)")
                // The deadline and a margin for a machine under load; the body alone would take two minutes.
                #expect(took < .milliseconds(1500), "the request ended after \(took)")
            }
        }
    }

    @Test("an online check with an 800 ms deadline against a trickling server: offline verdict within 850 ms")
    func onlineCheckWithinDeadline() async throws {
        let server = try CannedHTTPServer { _ in .trickle(bodyBytes: 120, interval: .seconds(1)) }
        defer { server.stop() }
        try await HTTPClient.withHTTPClient { http in
            let link = ServerLink(freshness: .seconds(60))
            link.attach(
                ValidationAPIClient(configuration: .init(baseURL: server.baseURL, token: "t"), http: http))
            link.succeeded()
            let checker = OnlineChecker(link: link, deadline: .milliseconds(800), logger: Logger(label: "test"))
            let started = ContinuousClock.now
            let review = await checker.review(
                Self.offlineValid, payload: [1, 2, 3], firstUseOf: Inspection.newID())
            let took = started.duration(to: .now)
            #expect(review.decidedBy == .offline && review.verdict.kind == .valid)
            #expect(took < .milliseconds(850), "the verdict came after \(took)")
            // The server did not answer in time: later scans do not wait for it.
            #expect(!link.isConnected)
            #expect(server.requests.count == 1)
        }
    }
}
