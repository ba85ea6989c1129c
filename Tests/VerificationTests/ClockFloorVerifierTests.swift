import FareCore
import Foundation
import Synchronization
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// A floor known to the test, as the store would report it.
struct KnownFloor: TrustedTimeFloorSource {
    var floor: TrustedTimeFloor?
    func trustedTimeFloor() throws -> TrustedTimeFloor? { floor }
}

/// A wall clock the test can set, as an operator or NTP sets the device's.
final class SettableClock: InspectionClock {
    private let instant: Mutex<Date>
    init(_ instant: Date) { self.instant = Mutex(instant) }
    func set(_ date: Date) { instant.withLock { $0 = date } }
    func now() -> Date { instant.withLock { $0 } }
}

@Suite("A clock it can doubt: verdicts against the trusted-time floor")
struct ClockFloorVerifierTests {
    /// The floor: a key bundle signed an hour after the inspection time the tickets are made for.
    static let floor = TrustedTimeFloor(instant: inspection.addingTimeInterval(3600), source: .keyBundle)
    static let issuer = TestIssuer.es256

    func verifier(
        clock: any InspectionClock, floor: TrustedTimeFloor? = Self.floor, tolerance: TimeInterval = 300,
        keys: TrustSnapshot? = nil
    ) -> TicketVerifier {
        var configuration = TicketVerifier.Configuration()
        configuration.clockFloorTolerance = tolerance
        return TicketVerifier(
            trust: keys ?? trust(Self.issuer.trustedKey()), clock: clock, configuration: configuration,
            trustedTime: KnownFloor(floor: floor))
    }

    @Test("a clock at 1970: a genuine ticket is clock-untrusted, its signature valid, the reason says what to do")
    func clockAt1970() throws {
        let clock = FixedClock(Date(timeIntervalSince1970: 12))
        let verdict = try verifier(clock: clock).verify(try Self.issuer.payload(dayTicket()))
        #expect(verdict.kind == .clockUntrusted)
        #expect(!verdict.isValid)
        #expect(verdict.signature == .valid)
        #expect(verdict.ticket?.product == "day", "the inspector still sees the ticket")
        #expect(verdict.reason.contains("1970-01-01T00:00:12Z"))
        #expect(verdict.reason.contains(Self.floor.instant.formatted(.iso8601)))
        #expect(verdict.reason.contains("set the clock (NTP)"))
        #expect(verdict.reason.contains("key bundle"))
        #expect(verdict.clockFloor == Self.floor)
        #expect(verdict.inspectedAt == Date(timeIntervalSince1970: 12), "the verdict keeps the wall clock")
    }

    @Test("hours behind the floor: every kind that depends on the instant becomes clock-untrusted")
    func timeDependentKinds() throws {
        // The clock reads the inspection time; the floor (a revocation list's signing time) is three hours later.
        let clock = FixedClock(inspection)
        let floor = TrustedTimeFloor(instant: inspection.addingTimeInterval(3 * 3600), source: .revocations)
        let expiredKey = Self.issuer.trustedKey(notAfter: inspection.addingTimeInterval(-60))
        let cases: [(String, [UInt8], TrustSnapshot?)] = [
            ("valid", try Self.issuer.payload(dayTicket()), nil),
            ("expired", try Self.issuer.payload(dayTicket(from: -10 * 3600, until: -5 * 3600)), nil),
            ("not yet valid", try Self.issuer.payload(dayTicket(from: 7200, until: 9000)), nil),
            ("key expired", try Self.issuer.payload(dayTicket()), trust(expiredKey)),
        ]
        for (name, payload, keys) in cases {
            let doubted = try verifier(clock: clock, floor: floor, keys: keys).verify(payload)
            #expect(doubted.kind == .clockUntrusted, "\(name): \(doubted.reason)")
            #expect(doubted.signature == .valid, "\(name)")
            #expect(doubted.reason.contains("revocation list"), "\(name)")
        }
        // The same payloads judged with the clock trusted give their own kinds: the doubt changed them.
        let trusted = FixedClock(clock.instant)
        let kinds = try cases.map { _, payload, keys in
            try verifier(clock: trusted, floor: nil, keys: keys).verify(payload).kind
        }
        #expect(kinds == [.valid, .expired, .notYetValid, .keyExpired])
    }

    @Test("verdicts that hold at any instant stay as they are while the clock is doubted")
    func timeIndependentKinds() throws {
        let clock = FixedClock(Date(timeIntervalSince1970: 946_684_800))  // 2000-01-01, an RTC reset
        var revoked = trust(Self.issuer.trustedKey())
        revoked.revokeTicket([0xC0, 0xFF, 0xEE], issuer: "demo-transit", Revocation(reason: "stolen"))
        let genuine = try Self.issuer.payload(dayTicket())

        let revokedVerdict = try verifier(clock: clock, keys: revoked).verify(genuine)
        #expect(revokedVerdict.kind == .revoked, "\(revokedVerdict.reason)")
        #expect(revokedVerdict.reason.contains("stolen"))

        var forged = try Self.issuer.cose(dayTicket().encoded())
        forged[forged.count - 1] ^= 0x01
        let forgedVerdict = try verifier(clock: clock).verify(FC1.encode(cose: forged, transport: .zlib))
        #expect(forgedVerdict.kind == .invalidSignature)
        #expect(forgedVerdict.signature == .invalid)

        let other = try TestIssuer(.es256)
        #expect(try verifier(clock: clock).verify(try other.payload(dayTicket())).kind == .unknownKey)
        let wrongIssuer = try Self.issuer.payload(dayTicket(issuer: "other-transit"))
        #expect(try verifier(clock: clock).verify(wrongIssuer).kind == .wrongIssuer)
        #expect(try verifier(clock: clock).verify(Array("FC1:not base45 at all".utf8)).kind == .malformed)
        for kind in VerdictKind.allCases {
            let expected: Bool = [.valid, .expired, .notYetValid, .keyExpired, .barcodeExpired, .replayed].contains(
                kind)
            #expect(kind.dependsOnTime == expected, "\(kind)")
        }
    }

    @Test("within the tolerance the clock is trusted: a small step back by NTP is not a wrong clock")
    func withinTolerance() throws {
        let floor = TrustedTimeFloor(instant: inspection.addingTimeInterval(200), source: .journal)
        let payload = try Self.issuer.payload(dayTicket())
        let trusted = try verifier(clock: FixedClock(inspection), floor: floor, tolerance: 300).verify(payload)
        #expect(trusted.kind == .valid)
        #expect(trusted.clockFloor == floor, "the floor judged against is kept with the verdict")
        let strict = try verifier(clock: FixedClock(inspection), floor: floor, tolerance: 60).verify(payload)
        #expect(strict.kind == .clockUntrusted)
        #expect(strict.reason.contains("newest inspection in the journal"))
    }

    @Test("an explicit instant (verify --at) is never held against the floor")
    func explicitInstant() throws {
        let payload = try Self.issuer.payload(dayTicket())
        let clock = FixedClock(Date(timeIntervalSince1970: 12))
        let verdict = try verifier(clock: clock).verify(payload, at: inspection)
        #expect(verdict.kind == .valid)
        #expect(verdict.clockFloor == nil)
    }

    @Test("the clock put right: the next verdict is judged normally, with the same verifier")
    func recovery() throws {
        let clock = SettableClock(Date(timeIntervalSince1970: 12))
        let checker = verifier(clock: clock)
        let payload = try Self.issuer.payload(dayTicket())
        #expect(try checker.verify(payload).kind == .clockUntrusted)
        clock.set(inspection.addingTimeInterval(3500))  // within the ticket's day, not behind the floor
        #expect(try checker.verify(payload).kind == .valid)
        clock.set(inspection.addingTimeInterval(-3 * 3600))  // stepped back again
        #expect(try checker.verify(payload).kind == .clockUntrusted)
    }

    @Test("a check outside the policies (a VDV certificate past its end) also ends as clock-untrusted")
    func checksOutsideThePolicies() throws {
        let payload = try VDVFixtures.ticket()
        let authorities = try VDVFixtures.authorities()
        // The issuer certificate ended on 2023-10-11; the floor (a journal entry) says it is 2026 by now.
        let wall = utc("2023-10-12T08:00:00Z")
        let floor = TrustedTimeFloor(instant: utc("2026-11-25T00:00:00Z"), source: .journal)
        let plain = TicketVerifier(trust: TrustSnapshot(), clock: FixedClock(wall), vdvCertificates: authorities)
        #expect(try plain.verify(payload).kind == .keyExpired)
        let doubting = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(wall), vdvCertificates: authorities,
            trustedTime: KnownFloor(floor: floor))
        let verdict = try doubting.verify(payload)
        #expect(verdict.kind == .clockUntrusted)
        #expect(verdict.signature == .valid)
        #expect(verdict.reason.contains("2023-10-12T08:00:00Z"))
    }

    @Test("the floor only moves forward, and a doubt needs the clock beyond the tolerance")
    func floorValue() {
        let early = TrustedTimeFloor(instant: Date(timeIntervalSince1970: 1000), source: .release)
        let late = TrustedTimeFloor(instant: Date(timeIntervalSince1970: 2000), source: .keyBundle)
        #expect(early.raised(to: late) == late)
        #expect(late.raised(to: early) == late)
        #expect(late.raised(to: nil) == late)
        #expect(late.doubt(of: Date(timeIntervalSince1970: 1700), tolerance: 300) == nil)
        #expect(late.doubt(of: Date(timeIntervalSince1970: 1699), tolerance: 300)?.behind == 301)
        #expect(TrustedTimeFloor.release.instant == FarecheckRelease.date)
    }
}
