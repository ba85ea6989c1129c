import FareCore
import Foundation
import FuzzSupport
import ValidationAPI

/// Fuzzes every JSON document of the API, both ends' readers: the signed pages a validator decodes (the
/// `SignedDocument` envelope, then its payload as a `KeyBundle`, a `RevocationDelta` through
/// `RevocationDelta(wireBytes:)`, and a `FirstUseDelta`, and both pages entry by entry as a validator applies them),
/// and the bodies the server decodes from any device
/// (`InspectionBatch`, `OnlineCheckRequest`, with `WireFormat.decode` as the server calls it) or from anyone (the
/// operator login form, `FormBody`). One target for all of them keeps CI's fuzz run short; each input is tried
/// as every document, since most mutations of one are a few edits away from another.
///
/// What decodes is encoded again (what the server acknowledges and validators store goes out the same way), and
/// each of its times is converted to Unix milliseconds as the stores convert them (`WireFormat.milliseconds`).
@_cdecl("fuzz_sync_json_main")
func main(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> CInt {
    runLibFuzzer(argc, argv, fuzz)
}

/// One input: decode it; errors are the expected outcome, crashes, traps and hangs are the findings.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = fuzzInput(start, count)
    if let document = try? SignedDocument(jsonBytes: bytes) {
        _ = document.jsonBytes()
        pages(document.payload)
    }
    pages(bytes)
    bodies(bytes)
    return 0
}

/// The payloads of the signed pages a validator applies.
func pages(_ bytes: [UInt8]) {
    if let delta = try? RevocationDelta(wireBytes: bytes) {
        _ = try? WireFormat.encode(delta)
        for entry in delta.addedTickets { _ = WireFormat.milliseconds(entry.revokedAt) }
        for entry in delta.addedKeys { _ = WireFormat.milliseconds(entry.revokedAt) }
        if let issuedAt = delta.issuedAt { _ = WireFormat.milliseconds(issuedAt) }
    }
    // Entry by entry, as a validator reads a signed page: an entry it cannot read is skipped, never a trap.
    if let reading = try? RevocationDelta.reading(wireBytes: bytes) {
        for entry in reading.page.addedTickets { _ = WireFormat.milliseconds(entry.revokedAt) }
    }
    if let reading = try? FirstUseDelta.reading(wireBytes: bytes) {
        for entry in reading.page.entries {
            _ = WireFormat.milliseconds(entry.usedAt)
            if let recordedAt = entry.recordedAt { _ = WireFormat.milliseconds(recordedAt) }
        }
    }
    if let bundle = try? WireFormat.decode(KeyBundle.self, from: bytes) {
        _ = try? WireFormat.encode(bundle)
        _ = try? bundle.checkNotRollback(holding: 1)
        _ = WireFormat.milliseconds(bundle.issuedAt)
        for key in bundle.keys {
            _ = key.family
            if let notBefore = key.notBefore { _ = WireFormat.milliseconds(notBefore) }
            if let notAfter = key.notAfter { _ = WireFormat.milliseconds(notAfter) }
        }
    }
    if let delta = try? WireFormat.decode(FirstUseDelta.self, from: bytes) {
        _ = try? WireFormat.encode(delta)
        for entry in delta.entries {
            _ = WireFormat.milliseconds(entry.usedAt)
            if let recordedAt = entry.recordedAt { _ = WireFormat.milliseconds(recordedAt) }
        }
        for withdrawal in delta.withdrawals ?? [] { _ = WireFormat.milliseconds(withdrawal.withdrawnAt) }
        if let issuedAt = delta.issuedAt { _ = WireFormat.milliseconds(issuedAt) }
    }
}

/// The request bodies the server reads.
func bodies(_ bytes: [UInt8]) {
    if let batch = try? WireFormat.decode(InspectionBatch.self, from: bytes) {
        _ = try? WireFormat.encode(batch)
        for record in batch.records {
            _ = record.verdict.known
            _ = record.decidedBy?.known
            _ = WireFormat.date(milliseconds: record.inspectedAt)
        }
    }
    if let request = try? WireFormat.decode(OnlineCheckRequest.self, from: bytes) {
        _ = try? WireFormat.encode(request)
        if let format = request.format { _ = KeyFamily(name: format.text) }
    }
    let text = String(decoding: bytes, as: UTF8.self)
    _ = FormBody.field("token", in: text)
}
