import Testing
import TrustFollowing

@Suite("trust source kinds")
struct TrustSourceKindTests {
    @Test("a source of each kind is fetched as often as its publisher changes it, unless its entry says otherwise")
    func defaultPeriods() {
        let keys = TrustSourceConfiguration(name: "uic", kind: .uicKeyList, url: "https://railpublickey.uic.org/")
        #expect(keys.period == .seconds(86_400))
        #expect(keys.staleAfter == .seconds(3 * 86_400))
        let blocklist = TrustSourceConfiguration(
            name: "vdv", kind: .vdvBlocklist, url: "https://example.org/blacklist.db", period: .seconds(600))
        #expect(blocklist.period == .seconds(600))
        #expect(blocklist.staleAfter == .seconds(1_800))
        #expect(
            TrustSourceKind.allCases.map(\.rawValue).sorted() == [
                "dtvg-blocklist", "rsp6-keylist", "uic-keylist", "vdv-blocklist", "vdv-ldap",
            ])
    }
}

@Suite("when a source is fetched next")
struct TrustScheduleTests {
    let source = TrustSourceConfiguration(
        name: "dtvg", kind: .dtvgBlocklist, url: "https://example.org/x.zip", period: .seconds(3_600), jitter: 0.1)

    @Test("after a success: one period, give or take its jitter, so that servers started together spread out")
    func afterSuccess() {
        #expect(TrustSchedule.wait(after: source, failures: 0, random: 0.5) == .seconds(3_600))
        #expect(TrustSchedule.wait(after: source, failures: 0, random: 0) == .seconds(3_240))
        #expect(TrustSchedule.wait(after: source, failures: 0, random: 0.999_999) < .seconds(3_961))
    }

    @Test("after failures: a minute, doubling, never longer than the period, so that a publisher down is not hammered")
    func afterFailures() {
        let waits = (1...8).map { TrustSchedule.wait(after: source, failures: $0, random: 0.5) }
        #expect(waits.prefix(4) == [.seconds(60), .seconds(120), .seconds(240), .seconds(480)])
        #expect(waits.last == .seconds(3_600))
        #expect(TrustSchedule.wait(after: source, failures: Int.max, random: 0.5) == .seconds(3_600))
    }
}
