import FareCore
import Foundation
import FuzzSupport
import TicketFormats
import Verification

/// Fuzzes UK RSP6: the text, the RSA recovery with issuer TT's published keys, the bit field and its mapping,
/// and the key files.
///
/// The first byte selects: 0, a barcode text judged by `TicketVerifier.verify` with TT's keys (and the letters of a
/// parsed text must give back its RSA input); 1, a recovered ticket's bit field (`RSP6Ticket`, `RSP6.ticket` and
/// its details); 2, a key file (`RSP6KeyFile`, each key made a `TrustedKey`; entry by entry, `RSP6KeyImportPlan`, no
/// entry lost). The rest is the input.
@_cdecl("fuzz_rsp6_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// TT's published keys (`Keys/TT.json`, as `farecheck keys import --rsp6` reads them), judged on the day the real
/// seed ticket is for.
let verifier: TicketVerifier = {
    let url = Bundle.module.url(forResource: "TT", withExtension: "json", subdirectory: "Keys")!
    var trust = TrustSnapshot()
    for key in try! RSP6KeyFile.keys(parsing: Array(Data(contentsOf: url)), issuer: "TT") {
        trust.add(try! RSP6KeyImport.trustedKey(key))
    }
    trust.revokeTicket(TicketID(Array("TTREVOKED01".utf8)), issuer: "TT")
    return TicketVerifier(trust: trust, clock: FixedClock(Date(timeIntervalSince1970: 1_672_228_800)))
}()

/// The clear part a fuzzed bit field is mapped with.
let barcode = try! RSP6Barcode(parsing: Array("06DNQL4XHVK00TT".utf8) + Array(repeating: UInt8(ascii: "Q"), count: 60))

/// One input; errors and refusals are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    guard let selector = bytes.first else { return 0 }
    let input = Array(bytes.dropFirst())
    switch selector % 3 {
    case 0:
        _ = try? verifier.verify(input)
        if let parsed = try? RSP6Barcode(parsing: input), let c = parsed.rsaInput(byteCount: parsed.block.count),
            c.contains(where: { $0 != 0 })
        {
            // The letters of the RSA input read back as the same input.
            let again = try! RSP6Barcode(
                parsing: Array(input.prefix(RSP6Barcode.headerLength)) + RSP6Barcode.letters(forBlock: c))
            precondition(again.rsaInput(byteCount: c.count) == c, "base 26 did not round-trip")
        }
    case 1:
        if let ticket = try? RSP6Ticket(decoding: input[...]) {
            let mapped = RSP6.ticket(from: ticket, barcode: barcode)
            _ = mapped.details
            precondition(mapped.validFrom! <= mapped.validUntil!, "validity ends before it starts")
        }
    default:
        for key in (try? RSP6KeyFile.keys(parsing: input, issuer: nil)) ?? [] {
            _ = try? RSP6KeyImport.trustedKey(key)
        }
        // Entry by entry, as `keys import --rsp6` reads it: every entry is a key or a refusal, and a key given by
        // several entries is one.
        if let entries = try? RSP6KeyFile.entries(parsing: input, issuer: nil) {
            let plan = RSP6KeyImportPlan(entries)
            let given = plan.keys.reduce(0) { $0 + $1.positions.count }
            precondition(given + plan.refusals.count == entries.count, "an entry was lost")
            let summary = RSP6KeyImportSummary(plan: plan) { _ in false }
            precondition(summary.total.entries == entries.count, "the summary miscounts the entries")
            _ = summary.lines
        }
    }
    return 0
}
