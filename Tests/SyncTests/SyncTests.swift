import AsyncHTTPClient
import FareCore
import Foundation
import Logging
import Signatures
import Sync
import Synchronization
import TestSupport
import Testing
import TrustStore
import ValidationAPI
import Verification

@Suite("Sync with the reference server", .serialized, .timeLimit(.minutes(5)))
struct SyncTests {
    @Test(
        "a key published on the server verifies after one sync; a ticket revoked there verifies revoked after the next")
    func keysAndRevocations() async throws {
        let bench = try SyncBench()
        let es256Ticket = try bench.ticket("a1")
        let eddsaTicket = try bench.ticket("b2", key: SyncBench.eddsaKey)
        #expect(try bench.verdict(es256Ticket) == "unknown-key")

        let first = try bench.syncCommand()
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.text.contains("bundle 1 applied: 1 added"), "\(first.text)")
        #expect(try bench.verdict(es256Ticket) == "valid")
        #expect(try bench.verdict(eddsaTicket) == "unknown-key")

        // The agency adds a key and publishes: usable after one sync.
        try bench.server.publishKey(SyncBench.eddsaPublic)
        let second = try bench.syncCommand()
        #expect(second.text.contains("bundle 2 applied: 1 added, 1 updated, 0 removed"), "\(second.text)")
        #expect(try bench.verdict(eddsaTicket) == "valid")

        // Revoked on the server: revoked here after the next sync, with the server's reason.
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "a1", "--reason", "refunded"])
        let third = try bench.syncCommand()
        #expect(third.text.contains("revocations: 1 added"), "\(third.text)")
        #expect(third.text.contains("keys: unchanged (bundle 2)"))
        #expect(try bench.verdict(es256Ticket) == "revoked")
        #expect(try bench.verdict(eddsaTicket) == "valid")

        // Lifted on the server: valid again after the next sync.
        try bench.server.admin(["unrevoke", "--issuer", "demo-transit", "--ticket-id", "a1"])
        let fourth = try bench.syncCommand()
        #expect(fourth.text.contains("1 removed"), "\(fourth.text)")
        #expect(try bench.verdict(es256Ticket) == "valid")
    }

    @Test("inspection records arrive exactly once across a server restart in the middle of an upload")
    func inspectionsExactlyOnce() async throws {
        let bench = try SyncBench()
        let ids = try bench.journalInspections(5)
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        // The server stores the batch, but its acknowledgement never arrives.
        proxy.set(.dropResponse, forPathsStartingWith: APIPath.inspections)
        let broken = try await bench.failedRound(url: proxy.baseURL)
        #expect(broken.code == .unreachable, "\(broken)")
        #expect(try bench.store().inspectionJournal.unsentInspectionCount() == 5)
        #expect(try bench.server.inspections().count == 5)

        bench.server.stop()
        try bench.server.start()
        proxy.setUpstream(bench.server.baseURL)
        proxy.set(.none, forPathsStartingWith: APIPath.inspections)
        let report = try await bench.round(url: proxy.baseURL)
        #expect(report.inspectionsUploaded == 5)
        #expect(try bench.store().inspectionJournal.unsentInspectionCount() == 0)
        let listed = try bench.server.inspections().compactMap { $0["id"] as? String }
        #expect(listed.sorted() == ids.map(\.rawValue).sorted())

        // Nothing goes twice once acknowledged.
        #expect(try await bench.round(url: proxy.baseURL).inspectionsUploaded == 0)
        #expect(try bench.server.inspections().count == 5)
    }

    @Test("a tampered bundle, an older bundle replayed and a bundle of an unknown anchor are refused, store unchanged")
    func bundleRefusals() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)

        // Altered in transit: the signature no longer verifies; nothing applied, not even to an empty store.
        let empty = try bench.trustState()
        proxy.set(.tamperPayload, forPathsStartingWith: APIPath.keys)
        let tampered = try await bench.failedRound(url: proxy.baseURL)
        #expect(tampered.code == .refused && tampered.bundleError?.code == .badSignature, "\(tampered)")
        #expect(try bench.trustState() == empty)
        proxy.set(.none, forPathsStartingWith: APIPath.keys)

        // Bundle 1 recorded, then bundle 2 applied; bundle 1 replayed is a rollback.
        let bundle1 = try await bench.server.fetch(APIPath.keys, token: bench.token)
        _ = try await bench.round()
        try bench.server.publishKey(SyncBench.eddsaPublic)
        _ = try await bench.round()
        let holding2 = try bench.trustState()
        #expect(holding2.bundleSequence == 2 && holding2.keys.count == 2)
        proxy.set(.replay(bundle1), forPathsStartingWith: APIPath.keys)
        let rollback = try await bench.failedRound(url: proxy.baseURL)
        #expect(rollback.code == .refused && rollback.bundleError?.code == .rollback, "\(rollback)")
        #expect(try bench.trustState() == holding2)
        proxy.set(.none, forPathsStartingWith: APIPath.keys)

        // Published with an anchor this validator does not pin.
        let rogue = try PrivateKey.generate(.ecP256)
        try rogue.pemPKCS8.write(toFile: bench.server.directory + "/rogue.key", atomically: true, encoding: .utf8)
        try bench.server.admin(["keys", "remove", "--issuer", "demo-transit", "--kid", "a6615e0f615889bb"])
        try bench.server.admin(["keys", "publish", "--anchor-key", bench.server.directory + "/rogue.key"])
        let unknown = try await bench.failedRound()
        #expect(unknown.code == .refused && unknown.bundleError?.code == .unknownAnchor, "\(unknown)")
        #expect(try bench.trustState() == holding2)
        // The command line says so and exits 2.
        let command = try bench.syncCommand()
        #expect(command.status == 2)
        #expect(command.stderr.contains("does not pin"), "\(command.stderr)")
        #expect(try bench.trustState() == holding2)
    }

    @Test("a refused bundle's log line gives the round's message and code, then the refusal's as its cause")
    func refusalLogLine() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        proxy.set(.tamperPayload, forPathsStartingWith: APIPath.keys)
        let tampered = try await bench.failedRound(url: proxy.baseURL)
        let refusal = try #require(tampered.bundleError)
        #expect(
            tampered.description == "\(tampered.message) [refused] (cause: \(refusal.message) [bad-signature])")
    }

    @Test("an unknown or revoked device gets 401: a clear error, the store unchanged")
    func unauthorized() async throws {
        let bench = try SyncBench()
        let before = try bench.trustState()
        let unknown = try await bench.failedRound(token: "not-the-token")
        #expect(unknown.code == .unauthorized)
        #expect(unknown.message.contains("unknown or revoked"), "\(unknown.message)")
        #expect(try bench.trustState() == before)

        try bench.server.admin(["devices", "revoke", "validator-1"])
        let revoked = try await bench.failedRound()
        #expect(revoked.code == .unauthorized)
        #expect(try bench.trustState() == before)
        let command = try bench.syncCommand()
        #expect(command.status == 2 && command.stderr.contains("unknown or revoked"), "\(command.stderr)")
    }

    @Test("500s, cut, corrupted and truncated bodies, huge bodies, a wrong content type and a slow server: refused")
    func faults() async throws {
        let bench = try SyncBench()
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "c3"])
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        let before = try bench.trustState()
        let cases: [(FaultProxy.Fault, String, Set<SyncError.Code>)] = [
            (.serverError, APIPath.keys, [.serverUnavailable]),
            (.cutBody, APIPath.keys, [.unreachable]),
            (.corrupt, APIPath.keys, [.malformedResponse, .refused]),
            (.truncate, APIPath.keys, [.malformedResponse]),
            (.oversize(2 << 20), APIPath.keys, [.bodyTooLarge]),
            (.wrongContentType, APIPath.keys, [.wrongContentType]),
            (.delay(4), APIPath.keys, [.timedOut]),
            (.cutBody, APIPath.revocations, [.unreachable]),
            (.truncate, APIPath.revocations, [.malformedResponse]),
            (.tamperPayload, APIPath.revocations, [.refused]),
        ]
        var keysApplied = false
        for (fault, path, codes) in cases {
            proxy.set(fault, forPathsStartingWith: path)
            let error = try await bench.failedRound(url: proxy.baseURL, timeout: .seconds(1), maximumBodyBytes: 1 << 20)
            #expect(codes.contains(error.code), "\(fault) on \(path): \(error)")
            #expect(!error.message.isEmpty)
            proxy.set(.none, forPathsStartingWith: path)
            let state = try bench.trustState()
            if path == APIPath.keys {
                #expect(state == before, "\(fault) changed the store")
            } else {
                // The keys step before it went through; no revocation was applied from the broken delta.
                keysApplied = true
                #expect(state.revokedTickets.isEmpty && state.cursor == 0, "\(fault) changed the revocations")
            }
        }
        #expect(keysApplied)
        let report = try await bench.round(url: proxy.baseURL)
        #expect(report.revocationsAdded == 1)
        #expect(try bench.trustState().revokedTickets == ["demo-transit/c3"])
    }

    @Test("the worker backs off while the server fails, then syncs once it behaves, and on demand")
    func workerBacksOff() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        proxy.set(.serverError)
        let outcomes = Outcomes()
        let link = ServerLink(freshness: .seconds(60))
        let worker = SyncWorker(
            configuration: SyncWorker.Configuration(
                client: ValidationAPIClient.Configuration(baseURL: proxy.baseURL, token: bench.token),
                anchors: [.demo],
                schedule: SyncSchedule(
                    interval: .seconds(3600), jitter: 0, firstRetry: .milliseconds(50), maximumRetry: .milliseconds(400)
                )),
            store: try bench.store(), link: link, logger: Logger(label: "test"), observer: outcomes.append)
        let task = Task { try await worker.run() }
        defer { task.cancel() }

        #expect(await outcomes.wait { $0.failures.count >= 5 })
        let failures = outcomes.snapshot.failures
        #expect(failures.allSatisfy { $0.error.code == .serverUnavailable })
        // Doubling from 50 ms, capped at 400 ms.
        #expect(
            failures.prefix(5).map(\.retryIn) == [
                .milliseconds(50), .milliseconds(100), .milliseconds(200),
                .milliseconds(400), .milliseconds(400),
            ])
        #expect(try bench.trustState().keys.isEmpty)
        #expect(!link.isConnected)
        #expect(worker.lastSuccessfulSync == nil)

        proxy.set(.none)
        #expect(await outcomes.wait { $0.reports.count >= 1 })
        #expect(try bench.trustState().keys.count == 1)
        #expect(link.isConnected)
        #expect(worker.lastSuccessfulSync != nil)

        // The next round is an hour away; asked for, it runs now.
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "d4"])
        worker.requestSync()
        #expect(await outcomes.wait { $0.reports.count >= 2 })
        #expect(try bench.trustState().revokedTickets == ["demo-transit/d4"])
    }

    @Test("a round deletes from the journal what the server acknowledged before the horizon; the rest stays")
    func journalRetention() async throws {
        let bench = try SyncBench()
        let now = Date().timeIntervalSince1970
        // Three inspections from 200 days ago (a gate offline for long, or a journal from before the setting), one
        // from a minute ago.
        let old = try (0..<3).map { index in
            try InspectionConflictTests.journal(
                UUID().uuidString, kind: .valid, at: now - 200 * 86400 + Double(index), in: bench.validator.db)
        }
        let recent = try InspectionConflictTests.journal(
            UUID().uuidString, kind: .valid, at: now - 60, in: bench.validator.db)
        let report = try await bench.round(journalRetention: 90 * 86400)
        // Sent first, then deleted: the server holds all four, the journal the recent one.
        #expect(report.inspectionsUploaded == 4 && report.inspectionsPruned == 3, "\(report.summary)")
        #expect(report.summary.contains("3 acknowledged inspections pruned from the journal"))
        #expect(try bench.store().inspectionJournal.allInspections().map(\.id) == [recent.id])
        let held = try bench.server.admin(["inspections", "list", "--json"])
        for record in old + [recent] { #expect(held.contains(record.id.rawValue)) }
        // Without a retention (journal_keep_days = 0), nothing is deleted.
        _ = try InspectionConflictTests.journal(
            UUID().uuidString, kind: .valid, at: now - 300 * 86400, in: bench.validator.db)
        let keeping = try await bench.round()
        #expect(keeping.inspectionsUploaded == 1 && keeping.inspectionsPruned == 0)
        #expect(try bench.store().inspectionJournal.allInspections().count == 2)
    }

    @Test("online checks are on before a round's first key is in the store, not only once the round ends")
    func linkUpBeforeKeysLand() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        // The round's later steps are slow: its keys are stored seconds before it ends.
        proxy.set(.delay(2), forPathsStartingWith: APIPath.revocations)
        let outcomes = Outcomes()
        let link = ServerLink(freshness: .seconds(60))
        let worker = SyncWorker(
            configuration: SyncWorker.Configuration(
                client: ValidationAPIClient.Configuration(baseURL: proxy.baseURL, token: bench.token),
                anchors: [.demo], schedule: SyncSchedule(interval: .seconds(3600), jitter: 0)),
            store: try bench.store(), link: link, logger: Logger(label: "test"), observer: outcomes.append)
        let task = Task { try await worker.run() }
        defer { task.cancel() }

        var keys = 0
        for _ in 0..<200 where keys == 0 {
            try await Task.sleep(for: .milliseconds(10))
            keys = try bench.trustState().keys.count
        }
        #expect(keys == 1)
        // A single-use ticket scanned now, with the new key, has its first use claimed online.
        #expect(outcomes.snapshot.reports.isEmpty, "the round ended before the test looked")
        #expect(link.isConnected)
        #expect(await outcomes.wait { $0.reports.count == 1 })
        #expect(link.isConnected)
    }

    @Test(
        "online check: a ticket revoked on the server is revoked online; a server too slow leaves the offline verdict")
    func onlineCheck() async throws {
        let bench = try SyncBench()
        _ = try await bench.round()
        let payload = Array(try Data(contentsOf: URL(fileURLWithPath: try bench.ticket("e5"))))
        let store = try bench.store()
        let trust = StoreTrust(store: store)
        let offline = try TicketVerifier(keys: trust, revocations: trust).verify(payload)
        #expect(offline.kind == .valid)
        try bench.server.admin(["revoke", "--issuer", "demo-transit", "--ticket-id", "e5", "--reason", "refunded"])
        let proxy = try FaultProxy(upstream: bench.server.baseURL)

        try await HTTPClient.withHTTPClient { http in
            let link = ServerLink(freshness: .seconds(60))
            link.attach(
                ValidationAPIClient(
                    configuration: .init(baseURL: proxy.baseURL, token: bench.token), http: http))
            let checker = OnlineChecker(link: link, deadline: .milliseconds(800), logger: Logger(label: "test"))

            // Not connected yet (no exchange has succeeded): not asked.
            #expect(await checker.review(offline, payload: payload).decidedBy == .offline)

            link.succeeded()
            let online = await checker.review(offline, payload: payload)
            #expect(online.verdict.kind == .revoked)
            #expect(online.decidedBy == .online)
            #expect(online.verdict.reason.contains("refunded"))
            // The server's sentence comes with its template and values, so the page can say it in German or
            // French: the ticket, its issuer, and the stated reason as a clause.
            #expect(online.verdict.explanation.template == "The ticket {0} of {1} is revoked{2}.")
            #expect(online.verdict.reason == "The ticket e5 of demo-transit is revoked: refunded.")

            // The server answers later than the deadline: the offline verdict stands, and later scans do not wait.
            proxy.set(.delay(3), forPathsStartingWith: APIPath.check)
            let slow = await checker.review(offline, payload: payload)
            #expect(slow.verdict.kind == .valid && slow.decidedBy == .offline)
            #expect(!link.isConnected)
        }
    }
}

/// What a worker reported, in order, collected for a test to wait on.
final class Outcomes: Sendable {
    struct Failure: Sendable {
        var error: SyncError
        var retryIn: Duration
    }

    struct Snapshot: Sendable {
        var failures: [Failure] = []
        var reports: [SyncReport] = []
    }

    private let state = Mutex(Snapshot())
    var snapshot: Snapshot { state.withLock { $0 } }

    @Sendable func append(_ outcome: SyncWorker.Outcome) {
        state.withLock { state in
            switch outcome {
            case .synced(let report, _): state.reports.append(report)
            case .failed(let error, let retryIn, _): state.failures.append(Failure(error: error, retryIn: retryIn))
            }
        }
    }

    /// Waits up to 30 seconds for `condition`.
    func wait(_ condition: (Snapshot) -> Bool) async -> Bool {
        for _ in 0..<600 {
            if condition(snapshot) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return condition(snapshot)
    }
}

extension ReferenceServer {
    /// A raw GET of the running server, as a validator sends it.
    func fetch(_ path: String, token: String) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: baseURL + path)
        request.headers.add(name: "Authorization", value: "Bearer \(token)")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        return Array(try await response.body.collect(upTo: 8 << 20).readableBytesView)
    }
}
