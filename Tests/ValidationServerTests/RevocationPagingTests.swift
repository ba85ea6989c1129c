import FareCore
import Foundation
import Testing
import ValidationAPI
import ValidationServer

/// `GET /v1/revocations` in pages, against the real server and each database.
@Suite("Revocation deltas in pages", .timeLimit(.minutes(5)))
struct RevocationPagingTests {
    /// What a validator holds, applied page by page as `TrustStore.applyRevocations` does: a full page
    /// replaces everything, any other page must start at the cursor held; adds, then removals.
    struct Validator {
        var cursor: Int64 = 0
        var tickets: [TicketReference: RevokedTicket] = [:]
        var keys: [KeyReference: RevokedKey] = [:]
        var pages = 0

        mutating func apply(_ page: RevocationDelta) {
            if page.full {
                tickets = [:]
                keys = [:]
            } else {
                #expect(page.from == cursor, "a page must start where the last one ended")
            }
            #expect(page.entryCount <= RevocationDelta.maximumPageLimit)
            for entry in page.addedTickets { tickets[entry.reference] = entry }
            for entry in page.addedKeys { keys[entry.reference] = entry }
            for reference in page.removedTickets { tickets[reference] = nil }
            for reference in page.removedKeys { keys[reference] = nil }
            cursor = page.next
            pages += 1
        }
    }

    /// A running server with one device, and the way to ask it for pages.
    struct Session {
        let bench: ServerBench
        let server: ServerProcess
        let token: String

        init(_ backend: Backend) throws {
            bench = try ServerBench(backend)
            token = try bench.addDevice("v1")
            server = try bench.startServer()
        }

        func page(cursor: Int64, limit: Int) async throws -> RevocationDelta {
            let answer = try await send(
                .GET, server.baseURL + "/v1/revocations?cursor=\(cursor)&limit=\(limit)", token: token)
            #expect(answer.status == 200, "\(answer.text)")
            return try SignedDocument(jsonBytes: answer.body).open(as: RevocationDelta.self, trusting: [.demo])
        }

        /// Asks until the server has no more, from wherever the validator is.
        func sync(_ validator: inout Validator, limit: Int) async throws {
            var page: RevocationDelta
            repeat {
                page = try await self.page(cursor: validator.cursor, limit: limit)
                validator.apply(page)
            } while page.more
        }

        /// Runs `body` on the bench's database in this process (bulk writes an admin would import).
        func withStore<T: Sendable>(_ body: (any ServerStore) async throws -> T) async throws -> T {
            try await bench.storeLocation.withStore(create: false, body)
        }

        /// Everything the server holds as revoked now.
        func serverSet() async throws -> (tickets: [TicketReference: RevokedTicket], keys: [KeyReference: RevokedKey]) {
            let everything = try await withStore { store in try await store.revocationDelta(since: 0) }
            return (
                Dictionary(uniqueKeysWithValues: everything.addedTickets.map { ($0.reference, $0) }),
                Dictionary(uniqueKeysWithValues: everything.addedKeys.map { ($0.reference, $0) })
            )
        }
    }

    static let revokedAt = Date(timeIntervalSince1970: 1_800_000_000)

    static func tickets(_ range: Range<Int>, reason: String? = "bulk") -> [RevokedTicket] {
        range.map { index in
            RevokedTicket(
                issuer: "issuer-\(index % 3)",
                ticketID: TicketID(withUnsafeBytes(of: UInt32(index).bigEndian, Array.init)),
                reason: reason, revokedAt: revokedAt)
        }
    }

    static func reference(_ index: Int) -> TicketReference {
        tickets(index..<(index + 1))[0].reference
    }

    @Test(
        "paging through 60,000 revoked tickets (more than a page holds), fresh and after the log was pruned, yields exactly the server's set",
        arguments: Backend.available)
    func pagesThroughEverything(backend: Backend) async throws {
        let session = try Session(backend)
        try await session.withStore { store in
            for start in stride(from: 0, to: 60_000, by: 30_000) {
                try await store.revokeTickets(Self.tickets(start..<(start + 30_000)))
            }
            try await store.revokeKey(
                RevokedKey(format: "fc1", issuer: "issuer-1", keyID: "k1", reason: nil, revokedAt: Self.revokedAt))
            // Lifted revocations leave removals in the log, which a fresh validator never needs.
            for index in [5, 30_000, 59_999] {
                _ = try await store.unrevokeTicket(Self.reference(index))
            }
        }
        let expected = try await session.serverSet()
        #expect(expected.tickets.count == 59_997 && expected.keys.count == 1)

        var fresh = Validator()
        try await session.sync(&fresh, limit: RevocationDelta.maximumPageLimit)
        // The largest page a server gives, then the rest.
        #expect(fresh.pages == 2)
        #expect(fresh.tickets == expected.tickets && fresh.keys == expected.keys)
        #expect(fresh.cursor == 60_004)

        // After pruning, most current revocations are older than the log: the snapshot pages below it
        // (negative cursors) before the log takes over, and a stale validator starts over with a snapshot.
        var stale = Validator()
        stale.apply(try await session.page(cursor: 0, limit: 20_000))
        let dropped = try await session.withStore { store in try await store.pruneRevocationChanges(keepingLast: 10) }
        #expect(dropped == 59_994)
        var afterPrune = Validator()
        let first = try await session.page(cursor: 0, limit: 40_000)
        #expect(first.full && first.more && first.next < 0)
        afterPrune.apply(first)
        try await session.sync(&afterPrune, limit: 40_000)
        #expect(afterPrune.tickets == expected.tickets && afterPrune.keys == expected.keys)
        #expect(afterPrune.cursor == 60_004)
        let restart = try await session.page(cursor: stale.cursor, limit: 20_000)
        #expect(restart.full)
        #expect(session.server.stop() == 0)
    }

    @Test(
        "revocations lifted, added and changed between the pages of a snapshot are honoured",
        arguments: Backend.available)
    func changesBetweenPages(backend: Backend) async throws {
        for pruned in [false, true] {
            let session = try Session(backend)
            try await session.withStore { store in
                try await store.revokeTickets(Self.tickets(0..<3_000))
                if pruned { _ = try await store.pruneRevocationChanges(keepingLast: 5) }
            }
            var validator = Validator()
            let first = try await session.page(cursor: 0, limit: 1_000)
            #expect(first.full && first.more)
            #expect(first.addedTickets.contains { $0.reference == Self.reference(42) })
            validator.apply(first)
            // Between the pages: lift one already sent and one not yet sent, revoke a new one, and change the
            // reason of one already sent.
            try await session.withStore { store in
                #expect(try await store.unrevokeTicket(Self.reference(42)))
                #expect(try await store.unrevokeTicket(Self.reference(2_500)))
                try await store.revokeTickets(Self.tickets(4_000..<4_001))
                try await store.revokeTickets(Self.tickets(7..<8, reason: "changed"))
            }
            try await session.sync(&validator, limit: 1_000)
            let expected = try await session.serverSet()
            #expect(expected.tickets.count == 2_999)
            #expect(validator.tickets == expected.tickets, "pruned: \(pruned)")
            #expect(validator.tickets[Self.reference(42)] == nil)
            #expect(validator.tickets[Self.reference(2_500)] == nil)
            #expect(validator.tickets[Self.reference(7)]?.reason == "changed")
            #expect(validator.tickets[Self.reference(4_000)] != nil)
            #expect(session.server.stop() == 0)
        }
    }

    @Test("a limit outside 1…50,000 or not a number gets 400 with the error document", arguments: Backend.available)
    func limitValidation(backend: Backend) async throws {
        let session = try Session(backend)
        for query in ["limit=0", "limit=50001", "limit=-3", "limit=many", "cursor=abc", "cursor=1&limit="] {
            let answer = try await send(.GET, session.server.baseURL + "/v1/revocations?\(query)", token: session.token)
            #expect(answer.status == 400, "\(query)")
            #expect(answer.errorBody?.error == "bad-request", "\(query)")
        }
        for query in ["limit=1", "limit=50000", ""] {
            let answer = try await send(.GET, session.server.baseURL + "/v1/revocations?\(query)", token: session.token)
            #expect(answer.status == 200, "\(query): \(answer.text)")
        }
        #expect(session.server.stop() == 0)
    }
}

extension ServerBench {
    /// The bench's database, to open in the test process.
    var storeLocation: StoreLocation {
        get throws {
            let value = databaseArguments[1]
            return databaseArguments[0] == "--db"
                ? try StoreLocation(db: value, databaseURL: nil) : try StoreLocation(db: nil, databaseURL: value)
        }
    }
}
