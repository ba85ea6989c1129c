import FareCore
import Foundation
import NIOHTTP1
import TestSupport
import Testing
import ValidationAPI

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
}
