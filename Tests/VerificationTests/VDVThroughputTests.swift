import FareCore
import Foundation
import RSATestKeys
import Signatures
import Testing
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// What the VDV-KA throughput figures measure (`farecheck-bench formats`, beside `openssl speed rsa1024`): payload →
/// verdict with a warm certificate cache and with the issuer certificate recovered every time. Speed is measured by
/// the benchmark, never here.
@Suite("VDV-KA verification throughput inputs")
struct VDVThroughputTests {
    @Test("the benchmark's tickets are valid with a warm cache and a cold one; a changed byte is not")
    func throughput() throws {
        let pki = VDVTestPKI.shared
        // `openssl speed` verifies with e = 65537; the test PKI's usual issuer has the sample's 31-bit
        // exponent, which costs about twice the multiplications, so this issuer key is a 65537 one.
        let issuer = TestRSAKey(bits: 1024)
        let body = VDVWriter.body(
            profile: 4, authority: pki.subCAReference,
            holder: VDVWriter.samHolder(organisation: VDVTestPKI.organisation, samID: VDVTestPKI.samID), role: 0x22,
            expiry: (2031, 12, 31), key: issuer)
        let payload = VDVWriter.barcode(
            entitlement: VDVWriter.entitlement(
                number: 42, organisation: VDVTestPKI.organisation, from: VDVTestPKI.from, until: VDVTestPKI.until,
                samID: VDVTestPKI.samID),
            issuerKey: issuer, certificate: VDVWriter.signedCertificate(body, signer: pki.subCA),
            caReference: pki.subCAReference)
        let verifier = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(VDVTestPKI.inspection), vdvCertificates: try pki.authorities())
        let vrr = try VDVFixtures.ticket()
        let vrrVerifier = TicketVerifier(
            trust: TrustSnapshot(), clock: FixedClock(try Date("2023-03-15T12:00:00Z", strategy: .iso8601)),
            vdvCertificates: try VDVFixtures.authorities())
        let cache = try #require(verifier.vdvCertificateCache)
        // Warm, then cold (the issuer certificate recovered again): the same valid verdict either way.
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(try verifier.verify(payload).kind == .valid)
        cache.removeAll()
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(try vrrVerifier.verify(vrr).kind == .valid)
        // A changed byte of the signature is refused.
        var forged = payload
        forged[10] ^= 0x01
        #expect(try verifier.verify(forged).kind != .valid)
    }
}
