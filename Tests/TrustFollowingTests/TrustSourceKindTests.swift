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
