import FareCore
import Foundation
import Sync
import Testing
import TrustStore
import ValidationAPI

/// The trusted-time floor from sync: the signing times of what a round accepts and the server's `Date`.
@Suite("Sync and the trusted-time floor", .serialized, .timeLimit(.minutes(5)))
struct ServerTimeTests {
    @Test("the server's Date counts when it is not ahead of the device clock beyond the tolerance")
    func serverDate() async throws {
        let bench = try SyncBench()
        let proxy = try FaultProxy(upstream: bench.server.baseURL)
        proxy.set(.header("Date", "Fri, 01 Jan 2100 00:00:00 GMT"))
        _ = try await bench.round(url: proxy.baseURL)
        let signed = try #require(try bench.store().storedTimeFloor())
        #expect(signed.instant <= Date(), "a Date in 2100 was taken")
        #expect(signed.source == .keyBundle || signed.source == .revocations)

        // A minute ahead: within the 300 s tolerance, and later than the signing times.
        let ahead = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 + 60).rounded(.down))
        proxy.set(.header("Date", Self.httpDate(ahead)))
        _ = try await bench.round(url: proxy.baseURL)
        #expect(try bench.store().storedTimeFloor() == TrustedTimeFloor(instant: ahead, source: .serverReply))
    }

    @Test("HTTP dates: the IMF-fixdate form is read exactly; other forms and impossible dates are not")
    func httpDates() {
        #expect(ServerTime.date(httpDate: "Sun, 06 Nov 1994 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(
            ServerTime.date(httpDate: "Thu, 29 Feb 2024 23:59:59 GMT") == Date(timeIntervalSince1970: 1_709_251_199))
        #expect(
            ServerTime.date(httpDate: "Wed, 25 Nov 2026 02:07:23 GMT") == Date(timeIntervalSince1970: 1_795_572_443))
        for text in [
            "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
            "Thu, 29 Feb 2023 12:00:00 GMT", "Sun, 06 Nox 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "",
            "Sun, 0x Nov 1994 08:49:37 GMT",
        ] {
            #expect(ServerTime.date(httpDate: text) == nil, "\(text)")
        }
    }

    @Test("a revocation page carries its signing time, which the reference server sets; older pages still read")
    func revocationPageTime() async throws {
        let delta = RevocationDelta(from: 0, next: 3, full: true, issuedAt: FarecheckRelease.date)
        let bytes = try WireFormat.encode(delta)
        #expect(String(decoding: bytes, as: UTF8.self).contains(#""issuedAt":"2026-11-25T00:00:00Z""#))
        #expect(try RevocationDelta(wireBytes: bytes) == delta)
        #expect(try WireFormat.decode(RevocationDelta.self, from: bytes) == delta)
        let older =
            #"{"from":0,"next":3,"full":true,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[]}"#
        #expect(try RevocationDelta(wireBytes: Array(older.utf8)).issuedAt == nil)
        #expect(try WireFormat.decode(RevocationDelta.self, from: Array(older.utf8)).issuedAt == nil)

        let bench = try SyncBench()
        let before = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        let page = try SignedDocument(
            jsonBytes: try await bench.server.fetch(APIPath.revocations + "?cursor=0", token: bench.token)
        ).openRevocationDelta(trusting: [.demo])
        let signed = try #require(page.issuedAt)
        #expect(signed >= before && signed <= Date())
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}
