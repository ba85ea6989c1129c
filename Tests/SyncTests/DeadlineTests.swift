import AsyncHTTPClient
import Executors
import FareCore
import Foundation
import Logging
import Sync
import Synchronization
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

/// Every request's deadline holds for its head and its body; an online check that the server answers with a refusal
/// of the claim leaves the link up.
@Suite("deadlines and the server's refusals", .serialized, .timeLimit(.minutes(2)))
struct DeadlineTests {
    /// The thread the timing tests measure on, as the daemon's pipeline and the sync round run on their own; kept for
    /// the process's lifetime as theirs are.
    static let thread = ExecutorThread(name: "test.deadline")

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
            // On a thread of its own, as a sync round runs on its own: other tests that block the cooperative pool
            // do not delay the resumption measured here.
            let outcome = await Self.thread.run {
                () async -> (error: SyncError?, took: Duration) in
                let started = ContinuousClock.now
                do throws(SyncError) {
                    _ = try await client.firstUses(since: 0)
                    return (nil, started.duration(to: .now))
                } catch {
                    return (error, started.duration(to: .now))
                }
            }
            let error = try #require(outcome.error, "a page trickled over two minutes was accepted within 1 s")
            #expect(error.code == .timedOut, "\(error)")
            #expect(error.message.contains("did not send the first-use page within 1"), "\(error.message)")
            // The deadline and a margin for a machine under load; the body alone would take two minutes.
            #expect(outcome.took < .milliseconds(1500), "the request ended after \(outcome.took)")
        }
    }

    @Test("farecheck sync --timeout 3 against a server trickling its body ends at the deadline, timed out")
    func syncCommandTimesOut() throws {
        let server = try CannedHTTPServer { _ in .trickle(bodyBytes: 120, interval: .seconds(1)) }
        defer { server.stop() }
        let validator = Workbench()
        try "t".write(toFile: validator.path("device.token"), atomically: true, encoding: .utf8)
        let started = ContinuousClock.now
        let run = try validator.farecheck([
            "sync", "--url", server.baseURL, "--token-file", validator.path("device.token"), "--demo-anchor",
            "--db", validator.db, "--timeout", "3",
        ])
        let took = started.duration(to: .now)
        #expect(run.status != 0)
        #expect(run.stderr.contains("did not send the key bundle within 3"), "\(run.stderr)")
        // The deadline, and a margin for starting a process on a loaded machine (it took 51 s before).
        #expect(took < .seconds(6), "farecheck sync ended after \(took)")
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
            // On a thread of its own, as the daemon's pipeline runs its steps.
            let (review, took) = await Self.thread.run {
                () async -> (OnlineChecker.Review, Duration) in
                let started = ContinuousClock.now
                let review = await checker.review(
                    Self.offlineValid, payload: [1, 2, 3], firstUseOf: InspectionID.random())
                return (review, started.duration(to: .now))
            }
            #expect(review.decidedBy == .offline && review.verdict.kind == .valid)
            #expect(took < .milliseconds(850), "the verdict came after \(took)")
            // The server did not answer in time: later scans do not wait for it.
            #expect(!link.isConnected)
            #expect(server.requests.count == 1)
        }
    }

    @Test(
        "403 claim-refused and 429 too-many-claims: the offline verdict stands, the link stays up; a 503 takes it down"
    )
    func refusedClaimsLeaveTheLinkUp() async throws {
        let status = Mutex<(Int, String)>((403, "claim-refused"))
        let server = try CannedHTTPServer { _ in
            let (code, error) = status.withLock { $0 }
            let body = Array(
                #"{"error":"\#(error)","message":"The ticket is not a single-use ticket by this server's keys."}"#
                    .utf8)
            return .respond(
                status: code, headers: ["Content-Type": "application/json", "Retry-After": "30"], body: body)
        }
        defer { server.stop() }
        try await HTTPClient.withHTTPClient { http in
            let link = ServerLink(freshness: .seconds(60))
            link.attach(
                ValidationAPIClient(configuration: .init(baseURL: server.baseURL, token: "t"), http: http))
            link.succeeded()
            let checker = OnlineChecker(link: link, deadline: .seconds(5), logger: Logger(label: "test"))

            let refused = await checker.review(Self.offlineValid, payload: [1], firstUseOf: InspectionID.random())
            #expect(refused.decidedBy == .offline && refused.verdict.kind == .valid)
            #expect(link.isConnected, "a claim the server refused took the link down")

            status.withLock { $0 = (429, "too-many-claims") }
            let limited = await checker.review(Self.offlineValid, payload: [2], firstUseOf: InspectionID.random())
            #expect(limited.decidedBy == .offline && limited.verdict.kind == .valid)
            #expect(link.isConnected, "a device over its claim rate took the link down")
            #expect(server.requests.count == 2)

            // A server that cannot answer does take it down.
            status.withLock { $0 = (503, "unavailable") }
            let failed = await checker.review(Self.offlineValid, payload: [3], firstUseOf: InspectionID.random())
            #expect(failed.decidedBy == .offline)
            #expect(!link.isConnected)
        }
    }

    @Test("the client names a 403 or 422 claim-refused and a 429 too-many-claims with codes of their own")
    func claimRefusalCodes() async throws {
        let answered = Atomic<Int>(0)
        let server = try CannedHTTPServer { _ in
            let index = answered.add(1, ordering: .relaxed).oldValue
            let body = Array(
                (index < 2
                    ? #"{"error":"claim-refused","message":"No key of this server signed the ticket."}"#
                    : #"{"error":"too-many-claims","message":"Slow down."}"#).utf8)
            return .respond(
                status: [403, 422, 429][min(index, 2)],
                headers: ["Content-Type": "application/json", "Retry-After": "30"], body: body)
        }
        defer { server.stop() }
        try await HTTPClient.withHTTPClient { http in
            let client = ValidationAPIClient(configuration: .init(baseURL: server.baseURL, token: "t"), http: http)
            var errors: [SyncError] = []
            for _ in 0..<3 {
                let request = OnlineCheckRequest(
                    payload: [1], format: nil, issuer: nil, ticketID: nil, keyID: nil, claimFirstUse: true,
                    inspectionID: InspectionID.random())
                do throws(SyncError) {
                    _ = try await client.check(request, deadline: .seconds(5))
                } catch {
                    errors.append(error)
                }
            }
            #expect(errors.map(\.code) == [.claimRefused, .claimRefused, .tooManyClaims])
            #expect(errors.first?.message.contains("No key of this server signed the ticket.") == true)
            #expect(errors.last?.message.contains("for 30 s") == true, "\(errors)")
            // The server answered: another replica would say the same, so no server is left alone.
            #expect(!errors.contains { $0.failsOver })
        }
    }

    @Test("the reference server refuses a handheld's claim (403 claim-refused): the offline verdict, the link up")
    func handheldClaimAtTheReferenceServer() async throws {
        let bench = try SyncBench()
        let token = try bench.server.admin(["devices", "add", "hand-1", "--role", "handheld"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        _ = try await bench.round()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("9c", product: "single"))))
        let trust = StoreTrust(store: try bench.store())
        let offline = try TicketVerifier(keys: trust, revocations: trust).verify(payload)
        #expect(offline.kind == .valid)
        try await HTTPClient.withHTTPClient { http in
            let client = ValidationAPIClient(
                configuration: .init(baseURL: bench.server.baseURL, token: token), http: http)
            do throws(SyncError) {
                _ = try await client.check(
                    OnlineCheckRequest(payload: payload, claimFirstUse: true, inspectionID: InspectionID.random()),
                    deadline: .seconds(5))
                Issue.record("a handheld's claim was answered as a gate's")
            } catch {
                #expect(error.code == .claimRefused, "\(error)")
                #expect(error.message.contains("403 claim-refused"), "\(error.message)")
            }
            let link = ServerLink(freshness: .seconds(60))
            link.attach(client)
            link.succeeded()
            let checker = OnlineChecker(link: link, deadline: .seconds(5), logger: Logger(label: "test"))
            let review = await checker.review(offline, payload: payload, firstUseOf: InspectionID.random())
            #expect(review.decidedBy == .offline && review.verdict.kind == .valid)
            #expect(link.isConnected)
        }
    }
}
