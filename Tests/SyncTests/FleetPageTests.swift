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

/// Signed pages with an entry the validator cannot read, withdrawals, and the server's record time, served by a
/// loopback server that signs pages the test wrote byte by byte with the demo anchor (the reference server cannot
/// be made to sign such entries).
@Suite("signed pages: bad entries, withdrawals, record times", .serialized, .timeLimit(.minutes(3)))
struct FleetPageTests {
    /// The demo anchor's private key, which the validator pins as `.demo`.
    static func anchorKey() throws -> PrivateKey {
        try PrivateKey(pem: try String(contentsOfFile: ReferenceServer.demoAnchorKey, encoding: .utf8))
    }

    /// `payload` (JSON text) signed by the demo anchor, as the server sends a page.
    static func signed(_ payload: String) throws -> [UInt8] {
        try SignedDocument.sign(payload: Array(payload.utf8), with: anchorKey()).jsonBytes()
    }

    /// A date as the API writes it.
    static func wire(_ date: Date) -> String { date.formatted(.iso8601) }

    /// A server with no key bundle, answering revocation and first-use requests from `pages` (by request target,
    /// query included); a target it has no page for is an empty page at the asked cursor.
    static func server(pages: @escaping @Sendable () -> [String: [UInt8]]) throws -> CannedHTTPServer {
        try CannedHTTPServer { request in
            let json = ["Content-Type": "application/json"]
            if let page = pages()[request.target] { return .respond(status: 200, headers: json, body: page) }
            if request.target.hasPrefix(APIPath.keys) {
                return .respond(
                    status: 404, headers: json,
                    body: Array(#"{"error":"no-bundle","message":"No key bundle is published."}"#.utf8))
            }
            let query = request.target.split(separator: "?").last.map(String.init) ?? ""
            let value = query.split(separator: "&").first.flatMap { $0.split(separator: "=").last }.map(String.init)
            let at = value ?? "0"
            let empty =
                request.target.hasPrefix(APIPath.revocations)
                ? #"{"from":\#(at),"next":\#(at),"full":false,"more":false,"addedTickets":[],"removedTickets":[],"#
                    + #""addedKeys":[],"removedKeys":[]}"#
                : #"{"since":\#(at),"next":\#(at),"more":false,"entries":[]}"#
            return .respond(status: 200, headers: json, body: (try? signed(empty)) ?? [])
        }
    }

    /// One sync round of a fresh store against `url`, as the daemon's worker runs it.
    static func round(_ url: String, store: TrustStore) async throws -> SyncReport {
        try await HTTPClient.withHTTPClient { http in
            let client = ValidationAPIClient(
                configuration: .init(baseURL: url, token: "t", deviceID: "gate-self", requestTimeout: .seconds(10)),
                http: http)
            let round = SyncRound(client: client, store: store, anchors: [.demo], logger: Logger(label: "test"))
            // The pages' handling is under test, not the round's scheduling (as in SyncBench.round).
            return try await round.run()
        }
    }

    @Test("a signed page with one bad entry among good ones: good ones applied, the cursor moved, the bad one counted")
    func badEntrySkipped() async throws {
        let bench = Workbench()
        let store = try TrustStore(path: bench.db)
        let now = Date()
        let revocations = try Self.signed(
            #"{"from":0,"next":3,"full":true,"more":false,"addedTickets":["#
                + #"{"issuer":"demo-transit","ticketID":"a1","revokedAt":"\#(Self.wire(now))"},"#
                // Before year 1: the API cannot carry it, the validator cannot read it.
                + #"{"issuer":"demo-transit","ticketID":"a2","revokedAt":"0000-06-01T00:00:00Z"},"#
                + #"{"issuer":"demo-transit","ticketID":"a3","revokedAt":"\#(Self.wire(now))"}"#
                + #"],"removedTickets":[],"addedKeys":[],"removedKeys":[]}"#)
        let next: Int64 = 1_900_000_000_000
        let firstUses = try Self.signed(
            #"{"since":0,"next":\#(next),"more":false,"entries":["#
                + #"{"format":"fc1","issuer":"demo-transit","ticketID":"b1","device":"gate-x","#
                + #""usedAt":"\#(Self.wire(now))","recordedAt":"\#(Self.wire(now))"},"#
                + #"{"format":"fc1","issuer":"demo-transit","ticketID":"b2","device":"gate-x","#
                + #""usedAt":"0000-12-31T00:00:00Z","recordedAt":"\#(Self.wire(now))"},"#
                + #"{"format":"fc1","issuer":"demo-transit","ticketID":"b3","device":"gate-x","#
                + #""usedAt":"\#(Self.wire(now))"}"#
                + #"]}"#)
        let server = try Self.server {
            [
                APIPath.revocations + "?cursor=0&limit=\(RevocationDelta.maximumPageLimit)": revocations,
                APIPath.firstUses + "?since=0": firstUses,
            ]
        }
        defer { server.stop() }

        let report = try await Self.round(server.baseURL, store: store)
        #expect(report.entriesSkipped == 2, "\(report.summary)")
        #expect(report.summary.contains("2 unreadable page entries skipped"))
        // The revocation page: both good tickets revoked, the cursor past the page.
        let revoked = try store.ticketRevocations().map(\.ticketID.bytes).sorted { $0.lexicographicallyPrecedes($1) }
        #expect(revoked == [[0xa1], [0xa3]])
        #expect(try store.syncState().revocationCursor == 3)
        // The first-use page: both good entries kept, the cursor at the page's next.
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xb1], format: .fc1)?.device == "gate-x")
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xb3], format: .fc1) != nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xb2], format: .fc1) == nil)
        #expect(try store.fleetFirstUseCursor() == next)
    }

    @Test("a page whose own fields cannot be read is still refused whole; the cursor stays")
    func badPageFieldRefused() async throws {
        let bench = Workbench()
        let store = try TrustStore(path: bench.db)
        let broken = try Self.signed(#"{"since":0,"next":"soon","more":false,"entries":[]}"#)
        let server = try Self.server { [APIPath.firstUses + "?since=0": broken] }
        defer { server.stop() }
        do {
            let report = try await Self.round(server.baseURL, store: store)
            Issue.record("a page without a readable cursor was applied: \(report.summary)")
        } catch let error as SyncError {
            #expect(error.code == .refused && error.message.contains("not a FirstUseDelta"), "\(error)")
        }
        #expect(try store.fleetFirstUseCursor() == 0)
    }

    @Test(
        "a withdrawal forgets the entry it names (issuer as stored); entries are forgotten by the server's record time")
    func withdrawalsAndRecordTime() async throws {
        let bench = Workbench()
        let store = try TrustStore(path: bench.db)
        let now = Date()
        let eightDaysAgo = now.addingTimeInterval(-8 * 86400)
        let page = Mutex<[UInt8]>([])
        page.withLock {
            $0 =
                (try? Self.signed(
                    #"{"since":0,"next":1,"more":false,"entries":["#
                        // A UIC ticket: its issuer is stored as verification matches it (1080 → 1080, 0080 → 80).
                        + #"{"format":"uic-918-3","issuer":"0080","ticketID":"c1","device":"gate-x","#
                        + #""usedAt":"\#(Self.wire(now))","recordedAt":"\#(Self.wire(now))"},"#
                        + #"{"format":"fc1","issuer":"demo-transit","ticketID":"c2","device":"gate-x","#
                        + #""usedAt":"\#(Self.wire(now))","recordedAt":"\#(Self.wire(now))"},"#
                        // Claimed for the far future, recorded long ago: forgotten by its record time.
                        + #"{"format":"fc1","issuer":"demo-transit","ticketID":"c3","device":"gate-x","#
                        + #""usedAt":"9999-01-01T00:00:00Z","recordedAt":"\#(Self.wire(eightDaysAgo))"},"#
                        // Used long ago (an offline gate's upload), recorded now: kept.
                        + #"{"format":"fc1","issuer":"demo-transit","ticketID":"c4","device":"gate-x","#
                        + #""usedAt":"\#(Self.wire(eightDaysAgo))","recordedAt":"\#(Self.wire(now))"}"#
                        + #"]}"#)) ?? []
        }
        let server = try Self.server { [APIPath.firstUses + "?since=0": page.withLock { $0 }] }
        defer { server.stop() }

        _ = try await Self.round(server.baseURL, store: store)
        #expect(try store.fleetFirstUse(issuer: "80", ticketID: [0xc1], format: .uic9183) != nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xc2], format: .fc1) != nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xc3], format: .fc1) == nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xc4], format: .fc1) != nil)

        // The server withdraws c1 (and names c2 with another device, whose entry it is not).
        page.withLock {
            $0 =
                (try? Self.signed(
                    #"{"since":0,"next":2,"more":false,"entries":[],"withdrawals":["#
                        + #"{"format":"uic-918-3","issuer":"0080","ticketID":"c1","device":"gate-x","#
                        + #""withdrawnAt":"\#(Self.wire(now))"},"#
                        + #"{"format":"fc1","issuer":"demo-transit","ticketID":"c2","device":"gate-y","#
                        + #""withdrawnAt":"\#(Self.wire(now))"}"#
                        + #"]}"#)) ?? []
        }
        let report = try await Self.round(server.baseURL, store: store)
        #expect(report.fleetFirstUsesWithdrawn == 2)
        #expect(try store.fleetFirstUse(issuer: "80", ticketID: [0xc1], format: .uic9183) == nil)
        #expect(try store.fleetFirstUse(issuer: "demo-transit", ticketID: [0xc2], format: .fc1)?.device == "gate-x")
    }
}
