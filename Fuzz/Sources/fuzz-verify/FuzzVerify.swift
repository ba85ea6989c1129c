import FareCore
import Foundation
import FuzzSupport
import Signatures
import TicketFormats
import Verification

/// Fuzzes `TicketVerifier.verify` as a whole: detection, envelopes, key look-up, real signature checks,
/// policies and mapping, over an in-memory trust snapshot holding real keys.
///
/// The keys: the two DB certificates of the UIC samples (issuers 80/7 and 1080/2), SŽ's SSB key (1179/1),
/// and two FC1 keys (`issuer fuzz-transit`) whose private halves sign the FC1 seeds (`Fuzz/Keys`), so
/// mutations of a genuine payload reach the signature check and, where it holds, the policies.
@_cdecl("fuzz_verify_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// The verifier, made once: every input is judged against the same trust, at a fixed instant inside the
/// DB sample keys' window.
let verifier: TicketVerifier = {
    var trust = TrustSnapshot()
    for (file, issuer, keyID) in [("0080-00007", "80", "7"), ("1080-00002", "1080", "2")] {
        let certificate = try! X509Certificate(pem: pem(file))
        trust.add(
            TrustedKey(
                family: .uic, issuer: IssuerID(issuer), keyID: KeyID(keyID), algorithm: nil,
                publicKey: certificate.publicKey,
                notBefore: certificate.notBefore, notAfter: certificate.notAfter))
    }
    trust.add(
        TrustedKey(
            family: .uic, issuer: "1179", keyID: "1", algorithm: nil,
            publicKey: try! PublicKey(pem: pem("sz-1179-key1.pub"))))
    for (file, algorithm) in [("fc1-fuzz-ed25519.pub", "EdDSA"), ("fc1-fuzz-es256.pub", "ES256")] {
        let key = try! PublicKey(pem: pem(file))
        trust.add(
            TrustedKey(
                family: .fc1, issuer: "fuzz-transit",
                keyID: KeyID(Array(digest(.sha256, key.spkiDER).prefix(8)).hexString),
                algorithm: algorithm, publicKey: key))
    }
    trust.revokeTicket([0xDE, 0xAD], issuer: "fuzz-transit")
    return TicketVerifier(trust: trust, clock: FixedClock(Date(timeIntervalSince1970: 1_610_366_400)))
}()

/// Whether to print each verdict (to check that the seeds reach the signature check and the policies).
let printsVerdicts = ProcessInfo.processInfo.environment["FARECHECK_FUZZ_PRINT"] != nil

/// A key file shipped with this target.
func pem(_ name: String) -> String {
    let url = Bundle.module.url(forResource: name, withExtension: "pem", subdirectory: "Keys")!
    return try! String(contentsOf: url, encoding: .utf8)
}

/// One input: judge it. A `VerifierError` is an expected outcome; crashes, traps and hangs are findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    let verdict = try? verifier.verify(bytes)
    // `FARECHECK_FUZZ_PRINT=1 fuzz-verify Corpora/fuzz-verify/*` shows what the seeds reach.
    if printsVerdicts { print(verdict.map { "\($0.kind)" } ?? "verifier error") }
    return 0
}
