import FareCore
import Foundation
import QuirkyTickets
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// Genuine tickets as issuers really write them, signed with the tests' own DSA and ECDSA keys: judged on their
/// signature and their deciding records, with each quirk named.
@Suite("issuer quirks: strict where validity is decided, liberal where a record only informs")
struct IssuerQuirkVerifierTests {
    static let issuers = [try! QuirkyIssuer.dsa(), try! QuirkyIssuer.ecdsa()]
    let from = UICDay(year: 2026, month: 3, day: 1)!
    let until = UICDay(year: 2026, month: 3, day: 31)!
    let inside = utc("2026-03-15T12:00:00Z")
    let after = utc("2026-04-02T12:00:00Z")

    func verifier(_ issuer: QuirkyIssuer, at instant: Date) -> TicketVerifier {
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey)
        return TicketVerifier(trust: trust, clock: FixedClock(instant))
    }

    /// What each tolerated quirk must say in its warning: the quirk, the record and the byte.
    static let named: [(TicketQuirk, [String])] = [
        (.paddedDataLength, ["space-padded-number", "data length of the #UT header at byte"]),
        (.paddedRecordLengths, ["space-padded-number", "length of record U_HEAD at byte 8 of the inflated data"]),
        (.paddedLayoutNumbers, ["space-padded-number", "number of fields of record U_TLAY at byte"]),
        (.layoutLengthsInCharacters, ["length-in-characters", "field 2's text length of record U_TLAY at byte"]),
        (
            .layoutRecordLengthInCharacters,
            ["length-in-characters", "the length of record U_TLAY at byte", "characters, which take", "field 2's text"]
        ),
        (.fewerLayoutFields, ["fewer-fields-than-announced", "record U_TLAY announces 5 fields at byte"]),
        (.version1LayoutInVersion2, ["version-1-layout-in-version-2", "says version 02 at byte 3 of the barcode"]),
    ]

    @Test("each quirk alone: valid in date with an issuer-quirk warning naming it, expired after, forged refused")
    func eachQuirk() throws {
        #expect(Set(Self.named.map(\.0)) == Set(TicketQuirk.tolerated))
        for issuer in Self.issuers {
            // A version 1 layout holds only a DER signature of at most 50 bytes: DSA-1024's.
            for (quirk, fragments) in Self.named where quirk != .version1LayoutInVersion2 || issuer.headerVersion == 1 {
                let payload = try issuer.ticket([quirk], from: from, until: until)
                let verdict = try verifier(issuer, at: inside).verify(payload)
                let label = "\(issuer.algorithmText) \(quirk)"
                #expect(verdict.kind == .valid, "\(label): \(verdict.reason)")
                #expect(verdict.signature == .valid, "\(label)")
                #expect(verdict.ticket?.product == "Ordinaer billet", "\(label)")
                #expect(verdict.warnings.map(\.code) == ["issuer-quirk"], "\(label): \(verdict.warnings)")
                let message = verdict.warnings.first?.message ?? ""
                for fragment in fragments { #expect(message.contains(fragment), "\(label): \(message)") }

                let expired = try verifier(issuer, at: after).verify(payload)
                #expect(expired.kind == .expired, "\(label): \(expired.reason)")
                #expect(expired.warnings.map(\.code) == ["issuer-quirk"], "\(label)")

                // The signature is still checked, and must match: one bit of it changed is a forgery (byte 24 is
                // inside r in both the DER field of version 1 and the raw r ‖ s of version 2).
                var forged = payload
                forged[24] ^= 0x10
                let forgedVerdict = try verifier(issuer, at: inside).verify(forged)
                #expect(forgedVerdict.kind == .invalidSignature, "\(label) forged: \(forgedVerdict.reason)")
                #expect(forgedVerdict.warnings.isEmpty, "\(label): no quirk is named for a ticket not verified")
            }
        }
    }

    @Test("every tolerated quirk at once: valid, one warning per kind, the layout drawn")
    func allQuirks() throws {
        // Characters and fewer fields do not combine (a character reading must consume the record exactly).
        let quirks: Set<TicketQuirk> = [
            .paddedDataLength, .paddedRecordLengths, .paddedLayoutNumbers, .layoutLengthsInCharacters,
        ]
        for issuer in Self.issuers {
            let payload = try issuer.ticket(quirks, from: from, until: until)
            let verdict = try verifier(issuer, at: inside).verify(payload)
            #expect(verdict.kind == .valid, "\(verdict.reason)")
            #expect(verdict.warnings.map(\.code) == ["issuer-quirk", "issuer-quirk"])
            #expect(verdict.warnings.first?.message.contains("the data length of the #UT header") == true)
            #expect(verdict.warnings.first?.message.contains("record U_TLAY") == true)
            #expect(verdict.warnings.last?.message.contains("length-in-characters") == true)
            #expect(verdict.ticket?.unreadableRecords == [])
            #expect(UIC918_3.printedLayout(of: payload)?.joined().contains("København H") == true)
        }
    }

    @Test("a layout no tolerance reads: valid on the deciding records, listed, with an unreadable-record warning")
    func unreadableLayout() throws {
        for issuer in Self.issuers {
            let payload = try issuer.ticket([.brokenLayout], from: from, until: until)
            let verdict = try verifier(issuer, at: inside).verify(payload)
            #expect(verdict.kind == .valid, "\(verdict.reason)")
            #expect(verdict.signature == .valid)
            #expect(verdict.warnings.map(\.code) == ["unreadable-record"])
            #expect(verdict.warnings.first?.message.contains("U_TLAY 01 at byte") == true)
            let record = try #require(verdict.ticket?.unreadableRecords.first)
            #expect(record.tag == "U_TLAY")
            #expect(record.reason.contains("field 3's text"), "\(record.reason)")
            #expect(try verifier(issuer, at: after).verify(payload).kind == .expired)
        }
    }

    @Test("a second layout that cannot be read is listed too: the ticket drawn from the first, valid")
    func repeatedRecordListed() throws {
        let issuer = Self.issuers[1]
        let head = UICHead(issuerCode: issuer.issuerCode, ticketKey: "TWO-LAYOUTS", issuedAt: from.start).record()
        let bl = QuirkyIssuer.bl(from: from, until: until, brokenAfterValidity: false)
        let first = UICLayout(standard: "RCT2", fields: [.init(line: 0, column: 0, width: 20, text: "Kort")]).record()
        var second = first
        second.body += Array("trailing bytes".utf8)
        let payload = try UIC918_3.encode(
            records: [head, bl, first, second], version: issuer.headerVersion, issuerCode: issuer.issuerCode,
            keyID: issuer.keyID
        ) { compressed in try issuer.privateKey.signature(for: compressed, scheme: issuer.scheme) }
        let verdict = try verifier(issuer, at: inside).verify(payload)
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        let listed = try #require(verdict.ticket?.unreadableRecords)
        #expect(listed.map(\.tag) == ["U_TLAY"])
        let container = try UICContainer(parsing: payload)
        #expect(listed.first?.offset == container.records.last?.offset, "the second layout is the one listed")
        #expect(verdict.warnings.map(\.code) == ["unreadable-record"])
        #expect(UIC918_3.printedLayout(of: payload)?.joined().contains("Kort") == true)
    }

    @Test("0080BL fields that break after the validity: valid, the break listed; a break in the validity: malformed")
    func displayFieldsOf0080BL() throws {
        let issuer = Self.issuers[1]
        let payload = try issuer.ticket([.brokenDisplayFields, .paddedRecordLengths], from: from, until: until)
        let verdict = try verifier(issuer, at: inside).verify(payload)
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        #expect(verdict.warnings.map(\.code) == ["issuer-quirk", "unreadable-record"])
        #expect(verdict.ticket?.unreadableRecords.map(\.tag) == ["0080BL"])
        #expect(verdict.ticket?.validUntil == until.end)

        // A break before S031 leaves the validity unknown: malformed, with the signature valid and the record named.
        let head = UICHead(issuerCode: issuer.issuerCode, ticketKey: "BL-BROKEN", issuedAt: from.start).record()
        var bl = QuirkyIssuer.bl(from: from, until: until, brokenAfterValidity: false)
        let marker = try #require(bl.body.indices.first { Array(bl.body[$0...].prefix(4)) == Array("S031".utf8) })
        bl.body[marker] = UInt8(ascii: "X")
        let broken = try UIC918_3.encode(
            records: [head, bl], version: issuer.headerVersion, issuerCode: issuer.issuerCode, keyID: issuer.keyID
        ) { compressed in try issuer.privateKey.signature(for: compressed, scheme: issuer.scheme) }
        let refused = try verifier(issuer, at: inside).verify(broken)
        #expect(refused.kind == .malformed, "\(refused.reason)")
        #expect(refused.signature == .valid)
        #expect(refused.reason.contains("0080BL"), "\(refused.reason)")
    }

    @Test("a deciding record that cannot be read: malformed with the signature valid, naming the record and why")
    func brokenDecidingRecord() throws {
        let issuer = Self.issuers[0]
        var head = UICHead(issuerCode: issuer.issuerCode, ticketKey: "BROKEN", issuedAt: from.start).record()
        head.body.replaceSubrange(24..<36, with: Array("320220261200".utf8))
        let layout = UICLayout(standard: "RCT2", fields: [.init(line: 0, column: 0, width: 20, text: "Kort")])
        let payload = try UIC918_3.encode(
            records: [head, layout.record()], issuerCode: issuer.issuerCode, keyID: issuer.keyID
        ) { compressed in try issuer.privateKey.signature(for: compressed, scheme: issuer.scheme) }
        let verdict = try verifier(issuer, at: inside).verify(payload)
        #expect(verdict.kind == .malformed)
        #expect(verdict.signature == .valid)
        #expect(verdict.reason.contains("issuing time of the U_HEAD record at byte 36"), "\(verdict.reason)")
        #expect(verdict.ticket == nil)
    }

    @Test("a deciding record in a version not decoded: unsupported with the signature valid, never valid or expired")
    func undecodedDecidingRecord() throws {
        let issuer = Self.issuers[1]
        let head = UICHead(issuerCode: issuer.issuerCode, ticketKey: "FLEX07", issuedAt: from.start).record()
        let bl = QuirkyIssuer.bl(from: from, until: until, brokenAfterValidity: false)
        // A U_FLEX of a later version: its validity (which decides over 0080BL's) is not known.
        let flex = UICRecord(id: "U_FLEX", version: "07", body: Array(repeating: 0x5A, count: 24))
        let payload = try UIC918_3.encode(
            records: [head, bl, flex], version: issuer.headerVersion, issuerCode: issuer.issuerCode,
            keyID: issuer.keyID
        ) { compressed in try issuer.privateKey.signature(for: compressed, scheme: issuer.scheme) }
        for instant in [inside, after] {
            let verdict = try verifier(issuer, at: instant).verify(payload)
            #expect(verdict.kind == .unsupported, "\(verdict.reason)")
            #expect(verdict.signature == .valid)
            #expect(verdict.reason.contains("U_FLEX 07 at byte"), "\(verdict.reason)")
            #expect(verdict.reason.contains("check the printed ticket"), "\(verdict.reason)")
            #expect(verdict.ticket?.unreadableRecords.map(\.tag) == ["U_FLEX"])
            #expect(verdict.warnings.map(\.code) == ["unreadable-record"])
            #expect(verdict.warnings.first?.message.contains("decides the ticket's validity") == true)
        }
        // A verdict that holds at any instant stands: a revoked ticket is still revoked.
        var trust = TrustSnapshot()
        trust.add(issuer.trustedKey)
        trust.revokeTicket(
            TicketID(Array("FLEX07".utf8)), issuer: IssuerID(issuer.issuerCode), Revocation(reason: "refunded"))
        let revoking = TicketVerifier(trust: trust, clock: FixedClock(inside))
        #expect(try revoking.verify(payload).kind == .revoked)
    }
}

extension QuirkyIssuer {
    /// The issuer's key as the store trusts it: family UIC, its RICS code and key id, its algorithm text.
    var trustedKey: TrustedKey {
        TrustedKey(
            family: .uic, issuer: UICKeyList.normalizedCode(IssuerID(issuerCode)),
            keyID: KeyID(UICKeyList.normalizedCode(keyID)),
            algorithm: algorithmText, publicKey: publicKey)
    }
}
