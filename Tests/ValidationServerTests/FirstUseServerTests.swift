import FareCore
import Foundation
import NIOHTTP1
import Signatures
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// The fleet's first use of single-use tickets, claimed by online checks and uploads that carry the ticket: real
/// servers on loopback, each database, real FC1 tickets signed with the demo key the server published.
@Suite("farecheck-server: fleet-wide first use", .timeLimit(.minutes(5)))
struct FirstUseServerTests {
    /// Real FC1 tickets, issued by `farecheck issue` with the demo ES256 key (the server publishes its public half).
    final class Tickets: @unchecked Sendable {
        let bench = Workbench()
        static let key = "\(repositoryRoot)/Keys/demo-transit-es256.key"
        static let publicKey = "\(repositoryRoot)/Keys/demo-transit-es256.pub.pem"

        /// The payload of a ticket with id `id` (hex) of `product`, valid from `validFrom` for a day.
        func payload(_ id: String, product: String = "single", validFrom: Date? = nil) throws -> [UInt8] {
            let out = bench.path("ticket-\(id)-\(product).bin")
            var arguments = [
                "issue", "--key", Self.key, "--ticket-id", id, "--product", product, "--payload-out", out, "--out",
                bench.path("ticket-\(id).png"),
            ]
            if let validFrom { arguments += ["--valid-from", validFrom.formatted(.iso8601)] }
            let issued = try bench.farecheck(arguments)
            guard issued.status == 0 else { throw BenchError(description: "farecheck issue: \(issued.stderr)") }
            return Array(try Data(contentsOf: URL(fileURLWithPath: out)))
        }
    }

    /// A server bench with the demo ES256 key published, as a fleet's server has its issuers' keys.
    static func bench(_ backend: Backend) throws -> ServerBench {
        let bench = try ServerBench(backend)
        try bench.adminOK(["keys", "add", "--issuer", "demo-transit", "--format", "fc1", Tickets.publicKey])
        try bench.adminOK(["keys", "publish", "--anchor-key", "\(repositoryRoot)/Keys/demo-anchor.key"])
        return bench
    }

    static func claim(
        _ payload: [UInt8], ticketID: [UInt8]? = nil, inspection: String?, issuer: String? = "demo-transit"
    ) -> OnlineCheckRequest {
        OnlineCheckRequest(
            payload: payload, format: "fc1", issuer: issuer.map(IssuerID.init), ticketID: ticketID.map(TicketID.init),
            keyID: "a6615e0f615889bb",
            claimFirstUse: true, inspectionID: inspection.map(InspectionID.init))
    }

    static func check(_ request: OnlineCheckRequest, url: String, token: String) async throws -> OnlineCheckResponse {
        let answer = try await send(.POST, url + "/v1/check", token: token, body: try WireFormat.encode(request))
        guard answer.status == 200 else {
            throw BenchError(description: "check answered \(answer.status): \(answer.text)")
        }
        return try answer.decode(OnlineCheckResponse.self)
    }

    /// The status and error body of a check the server refuses.
    static func refusedCheck(
        _ request: OnlineCheckRequest, url: String, token: String
    ) async throws -> (status: Int, error: ErrorBody?, retryAfter: String?) {
        let answer = try await send(.POST, url + "/v1/check", token: token, body: try WireFormat.encode(request))
        return (answer.status, answer.errorBody, answer.header("Retry-After"))
    }

    @Test(
        "of many gates claiming one ticket at once, on two servers sharing the database, exactly one passes it",
        arguments: Backend.available)
    func concurrentClaims(backend: Backend) async throws {
        let bench = try Self.bench(backend)
        let tickets = Tickets()
        let gates = try (1...6).map { ("gate-\($0)", try bench.addDevice("gate-\($0)")) }
        let servers = [try bench.startServer(), try bench.startServer()]
        defer { for server in servers { _ = server.stop() } }
        // Four tickets, each claimed by every gate at once (six claims a ticket, spread over both servers).
        let payloads = try (1...4).map { try tickets.payload("51\(String(format: "%02x", $0))") }
        let answers = try await withThrowingTaskGroup(of: (ticket: Int, gate: String, OnlineCheckResponse).self) {
            group in
            for (ticketIndex, payload) in payloads.enumerated() {
                for (gateIndex, (gate, token)) in gates.enumerated() {
                    let url = servers[(gateIndex + ticketIndex) % servers.count].baseURL
                    group.addTask {
                        let request = Self.claim(payload, inspection: "\(gate)-scan-\(ticketIndex)")
                        return (ticketIndex, gate, try await Self.check(request, url: url, token: token))
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == payloads.count * gates.count)
        for index in payloads.indices {
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
        let bench = try Self.bench(backend)
        let tickets = Tickets()
        let tokenA = try bench.addDevice("gate-a")
        let tokenB = try bench.addDevice("gate-b")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        let ticket77 = try tickets.payload("77")
        let first = try await Self.check(Self.claim(ticket77, inspection: "insp-1"), url: url, token: tokenA)
        #expect(first.firstUse?.claimed == true && first.verdict == "not-revoked")
        // The answer was lost and the gate asks again for the same inspection: still its claim.
        let retry = try await Self.check(Self.claim(ticket77, inspection: "insp-1"), url: url, token: tokenA)
        #expect(retry.firstUse?.claimed == true && retry.firstUse?.usedAt == first.firstUse?.usedAt)
        // The same ticket shown again at the same gate, later: a second use.
        let again = try await Self.check(Self.claim(ticket77, inspection: "insp-2"), url: url, token: tokenA)
        #expect(again.verdict == "already-used" && again.firstUse?.device == "gate-a")
        // Another gate with the first gate's inspection id claims nothing either: ids are per device.
        let other = try await Self.check(Self.claim(ticket77, inspection: "insp-1"), url: url, token: tokenB)
        #expect(other.verdict == "already-used")

        let ticket88 = try tickets.payload("88")
        try bench.adminOK(["revoke", "--issuer", "demo-transit", "--ticket-id", "88", "--reason", "refunded"])
        let revoked = try await Self.check(
            Self.claim(ticket88, ticketID: [0x88], inspection: "insp-4"), url: url, token: tokenA)
        #expect(revoked.verdict == "revoked" && revoked.firstUse == nil)
        // Not claimed by the refusal: were it unrevoked, its first use would still be free.
        try bench.adminOK(["unrevoke", "--issuer", "demo-transit", "--ticket-id", "88"])
        let after = try await Self.check(Self.claim(ticket88, inspection: "insp-5"), url: url, token: tokenB)
        #expect(after.firstUse?.claimed == true)

        // A check without a claim leaves the first use alone.
        let ticket99 = try tickets.payload("99")
        var plain = Self.claim(ticket99, inspection: nil)
        plain.claimFirstUse = false
        #expect(try await Self.check(plain, url: url, token: tokenA).firstUse == nil)
        #expect(
            try await Self.check(Self.claim(ticket99, inspection: "x"), url: url, token: tokenB).firstUse?.claimed
                == true)

        // An inspection id that is empty or too long is a bad request.
        for bad in ["", String(repeating: "i", count: 129)] {
            let body = try WireFormat.encode(Self.claim(ticket99, inspection: bad))
            #expect(try await send(.POST, url + "/v1/check", token: tokenA, body: body).status == 400)
        }
    }

    @Test(
        "a stolen token claims nothing it cannot back: junk, another issuer, a day ticket, a forged one, a handheld",
        arguments: Backend.available)
    func unbackedClaimsAreRefused(backend: Backend) async throws {
        let bench = try Self.bench(backend)
        let tickets = Tickets()
        let gate = try bench.addDevice("gate-a")
        let handheld = try bench.adminOK(["devices", "add", "handheld-1", "--role", "handheld"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let server = try bench.startServer(extra: ["--claims-per-second", "0.01", "--claim-burst", "12"])
        defer { _ = server.stop() }
        let url = server.baseURL
        let genuine = try tickets.payload("c0ffee")
        var forged = genuine
        forged[forged.count - 3] = forged[forged.count - 3] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let probes: [(String, OnlineCheckRequest, String)] = [
            ("junk", Self.claim(Array("FC1:NCFOXN%TS3DH".utf8), ticketID: [0x12], inspection: "p1"), "says"),
            ("another issuer named", Self.claim(genuine, inspection: "p2", issuer: "other-transit"), "issuer"),
            ("another ticket named", Self.claim(genuine, ticketID: [0x01], inspection: "p3"), "ticket"),
            ("a day ticket", Self.claim(try tickets.payload("da01", product: "day"), inspection: "p4"), "single-use"),
            ("a forged one", Self.claim(forged, inspection: "p5"), "says"),
            (
                "not yet valid",
                Self.claim(try tickets.payload("0f00", validFrom: Date().addingTimeInterval(86_400)), inspection: "p6"),
                "says"
            ),
        ]
        for (what, request, word) in probes {
            let refused = try await Self.refusedCheck(request, url: url, token: gate)
            #expect(refused.status == 403, "\(what): \(refused.status)")
            #expect(refused.error?.error == "claim-refused", "\(what)")
            #expect(refused.error?.message.contains(word) == true, "\(what): \(refused.error?.message ?? "")")
        }
        let fromHandheld = try await Self.refusedCheck(Self.claim(genuine, inspection: "h1"), url: url, token: handheld)
        #expect(fromHandheld.status == 403 && fromHandheld.error?.message.contains("handheld") == true)
        // Nothing of that was claimed: the genuine ticket's first use is still free, and the page is empty.
        let won = try await Self.check(Self.claim(genuine, inspection: "g1"), url: url, token: gate)
        #expect(won.firstUse?.claimed == true)
        let page = try await Self.firstUsePage(since: 0, url: url, token: gate)
        #expect(page.entries.map(\.ticketID.hexString) == ["c0ffee"], "\(page.entries)")
        // Past its rate (12 at once, then one a hundred seconds): 429 with when to try again.
        var limited: (status: Int, error: ErrorBody?, retryAfter: String?)?
        for attempt in 0..<20 {
            let answer = try await Self.refusedCheck(
                Self.claim(genuine, inspection: "r\(attempt)"), url: url, token: gate)
            if answer.status == 429 {
                limited = answer
                break
            }
        }
        #expect(limited?.error?.error == "too-many-claims" && limited?.retryAfter.flatMap(Int.init) ?? 0 >= 1)
    }

    static func pass(_ id: String, payload: [UInt8]?, ticket: [UInt8], at time: Date) -> InspectionRecord {
        var record = InspectionOwnershipTests.record(id)
        record.inspectedAt = Int64(time.timeIntervalSince1970 * 1000)
        record.ticketID = TicketID(ticket)
        record.firstUse = true
        record.payload = payload
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
        let bench = try Self.bench(backend)
        let tickets = Tickets()
        let tokenA = try bench.addDevice("gate-a")
        let tokenB = try bench.addDevice("gate-b")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        let ticket5a = try tickets.payload("5a")
        // Gate A, offline, passed ticket 5a a minute ago; so did gate B, offline too, half a minute later.
        let usedByA = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 60).rounded(.down))
        let atA = Self.pass("a-1", payload: ticket5a, ticket: [0x5a], at: usedByA)
        let atB = Self.pass("b-1", payload: ticket5a, ticket: [0x5a], at: usedByA.addingTimeInterval(30))
        #expect(try await InspectionOwnershipTests.upload([atA], to: server, token: tokenA).accepted == ["a-1"])
        #expect(try await InspectionOwnershipTests.upload([atB], to: server, token: tokenB).accepted == ["b-1"])
        // Sent again (the acknowledgement was lost): stored before, and still one conflict.
        #expect(
            try await InspectionOwnershipTests.upload([atB], to: server, token: tokenB).results?.first?.outcome
                == .alreadyStored)
        let conflicts = try bench.adminOK(["first-uses", "conflicts", "--json"]).jsonRecords
        #expect(conflicts.count == 1)
        #expect(
            conflicts.first?["device"] as? String == "gate-b" && conflicts.first?["firstDevice"] as? String == "gate-a")
        #expect(conflicts.first?["ticketId"] as? String == "5a" && conflicts.first?["inspectionId"] as? String == "b-1")
        let text = try bench.adminOK(["first-uses", "conflicts"])
        #expect(text.contains("demo-transit/5a: passed gate-b at") && text.contains("after gate-a at"), "\(text)")

        // An online claim of 5a now is already used, by gate A, at its offline time (within the sync period).
        let online = try await Self.check(Self.claim(ticket5a, inspection: "c-1"), url: url, token: tokenB)
        #expect(online.verdict == "already-used" && online.firstUse?.device == "gate-a")
        #expect(online.firstUse?.usedAt == usedByA)
        // A gate that claimed online and uploads the same inspection later finds its own claim: no conflict.
        let ticket6b = try tickets.payload("6b")
        _ = try await Self.check(Self.claim(ticket6b, inspection: "a-2"), url: url, token: tokenA)
        _ = try await InspectionOwnershipTests.upload(
            [Self.pass("a-2", payload: ticket6b, ticket: [0x6b], at: Date())], to: server, token: tokenA)
        #expect(try bench.adminOK(["first-uses", "conflicts", "--json"]).jsonRecords.count == 1)
        // Not a pass (no firstUse): nothing recorded.
        var seen = InspectionOwnershipTests.record("a-3")
        seen.ticketID = [0x7c]
        _ = try await InspectionOwnershipTests.upload([seen], to: server, token: tokenA)
        // A pass without its payload, or dated a year ahead or back: stored, and only the last two claim (at arrival).
        let ticket8d = try tickets.payload("8d")
        let ticket9e = try tickets.payload("9e")
        let arrival = Date()
        let odd = try await InspectionOwnershipTests.upload(
            [
                Self.pass("a-4", payload: nil, ticket: [0x7d], at: Date()),
                Self.pass("a-5", payload: ticket8d, ticket: [0x8d], at: Date().addingTimeInterval(365 * 86_400)),
                Self.pass("a-6", payload: ticket9e, ticket: [0x9e], at: Date().addingTimeInterval(-365 * 86_400)),
            ], to: server, token: tokenA)
        // A pass recorded as invalid (no gate writes one) claims nothing either, its genuine payload notwithstanding.
        let ticketAf = try tickets.payload("af")
        var invalid = Self.pass("a-7", payload: ticketAf, ticket: [0xaf], at: Date())
        invalid.verdict = "invalid"
        let refusedInvalid = try await InspectionOwnershipTests.upload([invalid], to: server, token: tokenA)
        #expect(refusedInvalid.results?.first?.code == "claim-refused")
        #expect(refusedInvalid.results?.first?.reason?.contains("verdict is invalid") == true)
        #expect(odd.accepted == ["a-4", "a-5", "a-6"])
        #expect(odd.results?.first?.code == "claim-refused" && odd.results?.first?.reason?.contains("payload") == true)

        // The signed pages: every first use recorded since the moment asked, oldest first, 7c and 7d not among them.
        let page = try await Self.firstUsePage(since: started - 1000, url: url, token: tokenB)
        #expect(page.entries.map(\.ticketID.hexString).sorted() == ["5a", "6b", "8d", "9e"], "\(page.entries)")
        #expect(page.entries.first { $0.ticketID == [0x5a] }?.device == "gate-a")
        for late in page.entries where late.ticketID == [0x8d] || late.ticketID == [0x9e] {
            #expect(abs(late.usedAt.timeIntervalSince(arrival)) < 60, "\(late)")
            #expect(late.recordedAt != nil)
        }
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
        "a revoked device's claims are withdrawn (and signed into the pages); first-uses forget does it by hand",
        arguments: Backend.available)
    func revokedDevicesClaimsAreWithdrawn(backend: Backend) async throws {
        let bench = try Self.bench(backend)
        let tickets = Tickets()
        let stolen = try bench.addDevice("gate-stolen")
        let honest = try bench.addDevice("gate-b")
        let other = try bench.addDevice("gate-c")
        let server = try bench.startServer()
        defer { _ = server.stop() }
        let url = server.baseURL
        let started = Int64(Date().timeIntervalSince1970 * 1000)
        let ticketA1 = try tickets.payload("a1")
        let ticketA2 = try tickets.payload("a2")
        let ticketA3 = try tickets.payload("a3")
        // The stolen device claims two tickets; the honest gate claims a third.
        for (payload, inspection) in [(ticketA1, "s-1"), (ticketA2, "s-2")] {
            #expect(
                try await Self.check(Self.claim(payload, inspection: inspection), url: url, token: stolen).firstUse?
                    .claimed == true)
        }
        #expect(
            try await Self.check(Self.claim(ticketA3, inspection: "b-1"), url: url, token: honest).firstUse?.claimed
                == true)
        // Gate C passed ticket a2 offline after the stolen device: confirmed, so it stays.
        _ = try await InspectionOwnershipTests.upload(
            [Self.pass("c-1", payload: ticketA2, ticket: [0xa2], at: Date())], to: server, token: other)

        let revoked = try bench.adminOK(["devices", "revoke", "gate-stolen"])
        #expect(revoked.contains("1 first-use claim withdrawn"), "\(revoked)")
        // The page tells the validators: a1 withdrawn, a2 and a3 stand.
        let page = try await Self.firstUsePage(since: started - 1000, url: url, token: honest)
        #expect(page.withdrawals?.map(\.ticketID.hexString) == ["a1"], "\(String(describing: page.withdrawals))")
        #expect(page.entries.map(\.ticketID.hexString).sorted() == ["a2", "a3"])
        // The genuine passenger of a1 passes again; a2 is still used.
        #expect(
            try await Self.check(Self.claim(ticketA1, inspection: "b-2"), url: url, token: honest).firstUse?.claimed
                == true)
        #expect(
            try await Self.check(Self.claim(ticketA2, inspection: "b-3"), url: url, token: honest).verdict
                == "already-used")
        // By hand: the honest gate's claims since the start, then the audit lists all three withdrawals.
        #expect(
            try bench.adminOK(["first-uses", "forget", "--device", "gate-b"]).contains("withdrew 2 first-use claims"))
        let listed = try bench.adminOK(["first-uses", "withdrawals", "--json"]).jsonRecords
        #expect(listed.count == 3, "\(listed)")
        #expect(try bench.adminOK(["first-uses", "withdrawals"]).contains("the device gate-stolen was revoked"))
        // The operator report's audit shows them, with the reasons, on the day they were withdrawn.
        let operatorToken = try bench.adminOK(["operators", "add", "auditor"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let day = String(Date().formatted(.iso8601).prefix(10))
        let report = try await send(.GET, "\(url)/report.json?day=\(day)", token: operatorToken)
        let audit = try report.decode(OperatorReport.self).withdrawals
        #expect(audit.map(\.ticketID).sorted() == ["a1", "a1", "a3"], "\(report.text)")
        #expect(audit.first?.reason == "the device gate-stolen was revoked" && audit.first?.device == "gate-stolen")
        let badSince = try bench.admin(["first-uses", "forget", "--device", "gate-b", "--since", "yesterday"])
        // A usage error (64), as every option's bad value, naming the option and the accepted forms.
        #expect(badSince.status == 64 && badSince.stderr.contains("RFC 3339"), "\(badSince.stderr)")
        #expect(badSince.stderr.contains("'yesterday' is invalid for '--since <time>'"), "\(badSince.stderr)")
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
        func backed(_ ticket: UInt8, usedAt: Date) -> BackedClaim {
            BackedClaim(format: .fc1, issuer: "demo-transit", ticketID: [ticket], usedAt: usedAt)
        }
        try await bench.withStore { store in
            // Ten days ago: two online claims, and two offline passes of one ticket uploaded then (a conflict).
            _ = try await store.claimFirstUse(claim(0x01, by: "gate-a", at: tenDaysAgo))
            _ = try await store.claimFirstUse(claim(0x02, by: "gate-a", at: tenDaysAgo))
            _ = try await store.storeInspections(
                [Self.pass("a-old", payload: nil, ticket: [0x03], at: tenDaysAgo)], deviceID: "gate-a",
                receivedAt: tenDaysAgo, claims: [backed(0x03, usedAt: tenDaysAgo)])
            _ = try await store.storeInspections(
                [Self.pass("b-old", payload: nil, ticket: [0x03], at: tenDaysAgo)], deviceID: "gate-b",
                receivedAt: tenDaysAgo, claims: [backed(0x03, usedAt: tenDaysAgo.addingTimeInterval(60))])
            // Today: one claim.
            _ = try await store.claimFirstUse(claim(0x04, by: "gate-a", at: now))
        }
        #expect(try bench.adminOK(["first-uses", "conflicts", "--json"]).jsonRecords.count == 1)

        // Less than the week validators keep, or more than a century: refused, nothing forgotten.
        let tooSoon = try bench.admin(["first-uses", "prune", "--older-than", "3"])
        #expect(tooSoon.status != 0)
        #expect(tooSoon.stderr.contains("--older-than must be at least 7 days"), "\(tooSoon.stderr)")
        for huge in ["36526", "9223372036854775807"] {
            let tooLong = try bench.admin(["first-uses", "prune", "--older-than", huge])
            let inspections = try bench.admin(["inspections", "prune", "--older-than", huge])
            #expect(tooLong.status != 0 && inspections.status != 0)
            #expect(tooLong.stderr.contains("at most 36525 days"), "\(tooLong.stderr)")
        }

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
