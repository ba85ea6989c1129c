import FareCore
import Foundation
import NIOHTTP1
import Signatures
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// The fleet's first use of single-use tickets, claimed by online checks: real servers on loopback, each database.
@Suite("farecheck-server: fleet-wide first use", .timeLimit(.minutes(5)))
struct FirstUseServerTests {
    static let payload = Array("FC1:NCFOXN%TS3DH".utf8)

    static func claim(_ ticketID: [UInt8], inspection: String?, issuer: String = "demo-transit") -> OnlineCheckRequest {
        OnlineCheckRequest(
            payload: payload, format: "fc1", issuer: issuer, ticketID: ticketID, keyID: "a6615e0f615889bb",
            claimFirstUse: true, inspectionID: inspection)
    }

    static func check(_ request: OnlineCheckRequest, url: String, token: String) async throws -> OnlineCheckResponse {
        let answer = try await send(.POST, url + "/v1/check", token: token, body: try WireFormat.encode(request))
        guard answer.status == 200 else {
            throw BenchError(description: "check answered \(answer.status): \(answer.text)")
        }
        return try answer.decode(OnlineCheckResponse.self)
    }

    @Test(
        "of many gates claiming one ticket at once, on two servers sharing the database, exactly one passes it",
        arguments: Backend.available)
    func concurrentClaims(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let gates = try (1...8).map { ("gate-\($0)", try bench.addDevice("gate-\($0)")) }
        let servers = [try bench.startServer(), try bench.startServer()]
        defer { for server in servers { _ = server.stop() } }
        // Five tickets, each claimed by every gate at once (eight claims a ticket, spread over both servers).
        let tickets: [[UInt8]] = (1...5).map { [0x51, UInt8($0)] }
        let answers = try await withThrowingTaskGroup(of: (ticket: Int, gate: String, OnlineCheckResponse).self) {
            group in
            for (ticketIndex, ticket) in tickets.enumerated() {
                for (gateIndex, (gate, token)) in gates.enumerated() {
                    let url = servers[(gateIndex + ticketIndex) % servers.count].baseURL
                    group.addTask {
                        let request = Self.claim(ticket, inspection: "\(gate)-scan-\(ticketIndex)")
                        return (ticketIndex, gate, try await Self.check(request, url: url, token: token))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == tickets.count * gates.count)
        for index in tickets.indices {
            let forTicket = answers.filter { $0.ticket == index }
            let winners = forTicket.filter { $0.2.firstUse?.claimed == true }
            #expect(winners.count == 1, "ticket \(index): \(winners.map(\.gate))")
            guard let winner = winners.first else { continue }
            #expect(winner.2.verdict == "not-revoked" && winner.2.firstUse?.device == winner.gate)
            for loser in forTicket where loser.gate != winner.gate {
                #expect(loser.2.verdict == "already-used")
                #expect(loser.2.firstUse?.device == winner.gate && loser.2.firstUse?.claimed == false)
                #expect(loser.2.reason.contains("already used at \(winner.gate)"), "\(loser.2.reason)")
                #expect(loser.2.firstUse?.usedAt == winner.2.firstUse?.usedAt)
            }
        }
    }

    @Test(
        "a retried claim wins again; the same gate's next inspection does not; a revoked ticket claims nothing",
        arguments: Backend.available)
    func retriesAndRevocations(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let tokenA = try bench.addDevice("gate-a")
        let tokenB = try bench.addDevice("gate-b")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        let first = try await Self.check(Self.claim([0x77], inspection: "insp-1"), url: url, token: tokenA)
        #expect(first.firstUse?.claimed == true && first.verdict == "not-revoked")
        // The answer was lost and the gate asks again for the same inspection: still its claim.
        let retry = try await Self.check(Self.claim([0x77], inspection: "insp-1"), url: url, token: tokenA)
        #expect(retry.firstUse?.claimed == true && retry.firstUse?.usedAt == first.firstUse?.usedAt)
        // The same ticket shown again at the same gate, later: a second use.
        let again = try await Self.check(Self.claim([0x77], inspection: "insp-2"), url: url, token: tokenA)
        #expect(again.verdict == "already-used" && again.firstUse?.device == "gate-a")
        // Another gate with the first gate's inspection id claims nothing either: ids are per device.
        let other = try await Self.check(Self.claim([0x77], inspection: "insp-1"), url: url, token: tokenB)
        #expect(other.verdict == "already-used")
        // Another issuer's ticket with the same id is another ticket.
        let elsewhere = try await Self.check(
            Self.claim([0x77], inspection: "insp-3", issuer: "other-transit"), url: url, token: tokenB)
        #expect(elsewhere.firstUse?.claimed == true)

        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "88", "--reason", "refunded"])
        let revoked = try await Self.check(Self.claim([0x88], inspection: "insp-4"), url: url, token: tokenA)
        #expect(revoked.verdict == "revoked" && revoked.firstUse == nil)
        // Not claimed by the refusal: were it unrevoked, its first use would still be free.
        try bench.adminOK(["unrevoke", "--issuer", "demo-transit", "--ticket-id", "88"])
        let after = try await Self.check(Self.claim([0x88], inspection: "insp-5"), url: url, token: tokenB)
        #expect(after.firstUse?.claimed == true)

        // A check without a claim leaves the first use alone.
        var plain = Self.claim([0x99], inspection: nil)
        plain.claimFirstUse = false
        #expect(try await Self.check(plain, url: url, token: tokenA).firstUse == nil)
        #expect(
            try await Self.check(Self.claim([0x99], inspection: "x"), url: url, token: tokenB).firstUse?.claimed == true
        )

        // An inspection id that is empty or too long is a bad request.
        for bad in ["", String(repeating: "i", count: 129)] {
            let body = try WireFormat.encode(Self.claim([0x55], inspection: bad))
            #expect(try await send(.POST, url + "/v1/check", token: tokenA, body: body).status == 400)
        }
    }

    static func pass(_ id: String, ticket: [UInt8], at offset: Int64) -> InspectionUpload {
        var record = InspectionOwnershipTests.record(id, at: offset)
        record.ticketID = ticket
        record.firstUse = true
        return record
    }

    static func firstUsePage(
        since: Int64, limit: Int? = nil, url: String, token: String
    ) async throws -> FirstUseDelta {
        let query = "?since=\(since)" + (limit.map { "&limit=\($0)" } ?? "")
        let answer = try await send(.GET, url + "/v1/first-uses" + query, token: token)
        guard answer.status == 200 else { throw BenchError(description: "first-uses: \(answer.status) \(answer.text)") }
        let document = try SignedDocument(jsonBytes: answer.body)
        return try document.open(as: FirstUseDelta.self, trusting: [.demo])
    }

    @Test(
        "offline passes uploaded: the first is the fleet's first use, a later one a listed conflict; signed pages",
        arguments: Backend.available)
    func uploadsConflictsAndPages(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        let tokenA = try bench.addDevice("gate-a")
        let tokenB = try bench.addDevice("gate-b")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        // Gate A, offline, passed ticket 5a; so did gate B, offline too, a minute later.
        let atA = Self.pass("a-1", ticket: [0x5a], at: 0)
        let atB = Self.pass("b-1", ticket: [0x5a], at: 60_000)
        #expect(try await InspectionOwnershipTests.upload([atA], to: server, token: tokenA).accepted == ["a-1"])
        #expect(try await InspectionOwnershipTests.upload([atB], to: server, token: tokenB).accepted == ["b-1"])
        // Sent again (the acknowledgement was lost): stored before, and still one conflict.
        #expect(
            try await InspectionOwnershipTests.upload([atB], to: server, token: tokenB).results?.first?.outcome
                == .alreadyStored)
        let conflicts = try bench.adminOK(["first-uses", "conflicts", "--json"]).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(conflicts.count == 1)
        #expect(
            conflicts.first?["device"] as? String == "gate-b" && conflicts.first?["firstDevice"] as? String == "gate-a")
        #expect(conflicts.first?["ticketID"] as? String == "5a" && conflicts.first?["inspectionID"] as? String == "b-1")
        let text = try bench.adminOK(["first-uses", "conflicts"])
        #expect(text.contains("demo-transit/5a: passed gate-b at") && text.contains("after gate-a at"), "\(text)")

        // An online claim of 5a now is already used, by gate A, at its offline time.
        let online = try await Self.check(Self.claim([0x5a], inspection: "c-1"), url: url, token: tokenB)
        #expect(online.verdict == "already-used" && online.firstUse?.device == "gate-a")
        #expect(online.firstUse?.usedAt == Date(timeIntervalSince1970: 1_800_000_000))
        // A gate that claimed online and uploads the same inspection later finds its own claim: no conflict.
        _ = try await Self.check(Self.claim([0x6b], inspection: "a-2"), url: url, token: tokenA)
        _ = try await InspectionOwnershipTests.upload(
            [Self.pass("a-2", ticket: [0x6b], at: 5)], to: server, token: tokenA)
        #expect(try bench.adminOK(["first-uses", "conflicts", "--json"]).split(separator: "\n").count == 1)
        // Not a pass (no firstUse): nothing recorded.
        var seen = InspectionOwnershipTests.record("a-3")
        seen.ticketID = [0x7c]
        _ = try await InspectionOwnershipTests.upload([seen], to: server, token: tokenA)

        // The signed pages: every first use recorded since the moment asked, oldest first, 7c not among them.
        let page = try await Self.firstUsePage(since: started - 1000, url: url, token: tokenB)
        #expect(page.entries.map(\.ticketID.hexString).sorted() == ["5a", "6b"], "\(page.entries)")
        #expect(page.entries.first { $0.ticketID == [0x5a] }?.device == "gate-a")
        #expect(!page.more && page.since == started - 1000 && page.next >= started)
        // Paged one at a time: the first page says there is more.
        let first = try await Self.firstUsePage(since: started - 1000, limit: 1, url: url, token: tokenB)
        #expect(first.entries.count == 1 && first.more)
        let second = try await Self.firstUsePage(since: first.next, limit: 1, url: url, token: tokenB)
        #expect(second.entries.count == 1)
        // After the cursor, nothing.
        let later = try await Self.firstUsePage(since: page.next + 1, url: url, token: tokenB)
        #expect(later.entries.isEmpty)
        for bad in ["-1", "x"] {
            #expect(try await send(.GET, url + "/v1/first-uses?since=" + bad, token: tokenB).status == 400)
        }
        #expect(try await send(.GET, url + "/v1/first-uses?limit=5001", token: tokenB).status == 400)
        #expect(try await send(.GET, url + "/v1/first-uses").status == 401)
    }

    @Test(
        "first-uses prune forgets what the server recorded before the horizon: those tickets can be claimed again",
        arguments: Backend.available)
    func prune(backend: Backend) async throws {
        let bench = try ServerBench(backend)
        _ = try bench.addDevice("gate-a")
        _ = try bench.addDevice("gate-b")
        let now = Date()
        let tenDaysAgo = now.addingTimeInterval(-10 * 86_400)
        func claim(_ ticket: UInt8, by device: String, at date: Date) -> FirstUseClaim {
            FirstUseClaim(
                format: "fc1", issuer: "demo-transit", ticketID: [ticket], deviceID: device,
                inspectionID: "\(device)-\(ticket)-\(date.timeIntervalSince1970)", at: date)
        }
        try await bench.withStore { store in
            // Ten days ago: two online claims, and two offline passes of one ticket uploaded then (a conflict).
            _ = try await store.claimFirstUse(claim(0x01, by: "gate-a", at: tenDaysAgo))
            _ = try await store.claimFirstUse(claim(0x02, by: "gate-a", at: tenDaysAgo))
            _ = try await store.storeInspections(
                [Self.pass("a-old", ticket: [0x03], at: 0)], deviceID: "gate-a", receivedAt: tenDaysAgo)
            _ = try await store.storeInspections(
                [Self.pass("b-old", ticket: [0x03], at: 60_000)], deviceID: "gate-b", receivedAt: tenDaysAgo)
            // Today: one claim.
            _ = try await store.claimFirstUse(claim(0x04, by: "gate-a", at: now))
        }
        #expect(try bench.adminOK(["first-uses", "conflicts", "--json"]).split(separator: "\n").count == 1)

        // Less than the week validators keep: refused, nothing forgotten.
        let tooSoon = try bench.admin(["first-uses", "prune", "--older-than", "3"])
        #expect(tooSoon.status != 0)
        #expect(tooSoon.stderr.contains("--older-than must be at least 7 days"), "\(tooSoon.stderr)")

        let output = try bench.adminOK(["first-uses", "prune", "--older-than", "8"])
        #expect(output.hasPrefix("forgot 3 first uses and 1 conflicts recorded before "), "\(output)")
        #expect(try bench.adminOK(["first-uses", "conflicts"]).contains("No first-use conflicts"))
        try await bench.withStore { store in
            // Forgotten: gate B's claim of ticket 01 now wins. Kept: ticket 04 is still gate A's.
            #expect(try await store.claimFirstUse(claim(0x01, by: "gate-b", at: now)).isClaimant)
            let kept = try await store.claimFirstUse(claim(0x04, by: "gate-b", at: now))
            #expect(!kept.isClaimant && kept.deviceID == "gate-a")
        }
        // Run again: nothing left to forget.
        #expect(try bench.adminOK(["first-uses", "prune", "--older-than", "8"]).hasPrefix("forgot 0 first uses and 0"))
    }
}
