import FareCore
import Foundation
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// DB's sample tickets ("Muster", 2020–2024) with both UIC key lists: the older one still holds 1080/00001 and
/// 1080/00002, which signed them and expired on 2024-05-11.
@Suite("DB sample tickets with both UIC key lists")
struct DBSampleTests {
    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("uic-918-9-db/\(name)") }

    static var samples: [String] { (try? Fixtures.names(in: "uic-918-9-db", endingWith: ".bin")) ?? [] }

    /// Both lists in one snapshot, the newer one last, as `keys import --uic-xml` twice leaves a store.
    static func trust() throws -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        for file in ["uic/uic-publickeys-historic.xml", "uic/uic-publickeys-snapshot.xml"] {
            try snapshot.addUICKeyList(xml: try Fixtures.bytes(file))
        }
        return snapshot
    }

    @Test(
        "every U_FLEX sample: valid inside its FCB window, expired after, not yet valid before; expired today (their keys were valid when they were issued)"
    )
    func windows() throws {
        let trust = try Self.trust()
        func verify(_ payload: [UInt8], at instant: Date) throws -> Verdict {
            try TicketVerifier(trust: trust, clock: FixedClock(instant)).verify(payload)
        }
        var judged = 0
        for name in Self.samples {
            let payload = try Self.bytes(name)
            let container = try UICContainer(parsing: payload)
            guard container.record(UICFlex.recordID) != nil else { continue }
            let ticket = try UIC918_3.ticket(from: container)
            let from = try #require(ticket.validFrom, "\(name) states no start")
            let until = try #require(ticket.validUntil, "\(name) states no end")
            let keyID = UICKeyList.normalizedCode(container.keyID)
            #expect(["1", "2"].contains(keyID), "\(name) is signed with 1080/\(keyID)")

            let inside = try verify(payload, at: from.addingTimeInterval(until.timeIntervalSince(from) / 2))
            #expect(inside.kind == .valid, "\(name): \(inside.reason)")
            #expect(inside.signature == .valid)
            let after = try verify(payload, at: until.addingTimeInterval(86_400))
            #expect(after.kind == .expired, "\(name): \(after.reason)")
            let before = try verify(payload, at: from.addingTimeInterval(-86_400))
            #expect(before.kind == .notYetValid, "\(name): \(before.reason)")
            // Checked today: the signature is genuine. The key expired on 2024-05-11, after these tickets were
            // issued, so it still vouches for them: each is judged by its own window, long past.
            let issued = try #require(ticket.issuedAt, "\(name) states no issuing time")
            #expect(issued < utc("2024-05-11T23:59:59Z"), "\(name) issued \(issued)")
            let today = try verify(payload, at: utc("2026-11-23T12:00:00Z"))
            #expect(today.kind == .expired && today.signature == .valid, "\(name): \(today.reason)")
            judged += 1
        }
        #expect(judged == 9)
    }

    @Test("the 0080BL-only samples are signed with 0080/00007, whose key no list holds: unknown-key, never valid")
    func blOnly() throws {
        let trust = try Self.trust()
        let blOnly = try Self.samples.filter { try UICContainer(parsing: try Self.bytes($0)).record("U_FLEX") == nil }
        #expect(blOnly.count == 4)
        for name in blOnly {
            let verdict = try TicketVerifier(trust: trust, clock: FixedClock(utc("2021-06-01T12:00:00Z")))
                .verify(try Self.bytes(name))
            #expect(verdict.kind == .unknownKey || verdict.kind == .keyExpired, "\(name): \(verdict.reason)")
            #expect(verdict.kind != .valid)
        }
    }
}
