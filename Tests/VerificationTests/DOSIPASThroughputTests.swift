import FareCore
import Foundation
import Testing
import TicketFormats

@testable import Verification

#if canImport(Glibc)
    import Glibc
#endif

/// What the DOSIPAS throughput figures measure (`farecheck-bench formats`, beside `openssl speed ecdsap256`): CTS
/// Strasbourg's ticket from bytes to verdict with its level-2 key known and built anew, both signatures, the header
/// decode. Speed is measured by the benchmark, never here.
@Suite("DOSIPAS throughput inputs")
struct DOSIPASThroughputTests {
    @Test(
        "cts-ticket is valid with its level-2 key known and built anew, both signatures hold, a changed byte is refused"
    )
    func payloadToVerdict() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        let instant = ISO8601DateFormatter().date(from: "2026-02-12T18:47:00Z")!
        let trust = try DOSIPASFixtures.trust()
        let verifier = TicketVerifier(trust: trust, clock: FixedClock(instant))
        let barcode = try DOSIPASBarcode(decoding: payload)
        #expect(try verifier.verify(payload).kind == .valid)
        #expect(try verifier.verify(payload).kind == .valid)
        // A new verifier: the level-2 key is built from its compressed point, as for a passenger seen the first time.
        #expect(try TicketVerifier(trust: trust, clock: FixedClock(instant)).verify(payload).kind == .valid)
        let report = try verifier.checkDOSIPASSignatures(barcode)
        #expect(report.level1.isValid && report.level2.isValid)
        var changed = payload
        changed[payload.count / 2] ^= 0x01
        #expect(try verifier.verify(changed).kind != .valid)
    }
}
