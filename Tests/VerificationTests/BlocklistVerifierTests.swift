import FareCore
import Foundation
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// Real fixture tickets against blocklist entries: which entry matches which ticket, and what the verdict says.
@Suite("Blocklists in verification")
struct BlocklistVerifierTests {
    static func uic(_ path: String) throws -> [UInt8] { try Fixtures.bytes(path) }

    static let vdvInside = utc("2023-03-15T12:00:00Z")

    func vdvVerdict(_ entries: [BlocklistEntry]) throws -> Verdict {
        var trust = TrustSnapshot()
        for entry in entries { trust.addBlocklistEntry(entry, version: "2025-06-01T03:00:00Z") }
        return try TicketVerifier(
            trust: trust, clock: FixedClock(Self.vdvInside), vdvCertificates: try VDVFixtures.authorities()
        ).verify(try VDVFixtures.ticket())
    }

    static func vdv(
        _ org: UInt16, _ number: UInt32, _ instance: Int64, _ mode: BlocklistLockMode,
        item: VDVBlocklistItem = .entitlement
    ) -> BlocklistEntry {
        .vdv(VDVBlocklistEntry(item: item, organisation: org, number: number, instance: instance, lockMode: mode))
    }

    @Test("the VRR Deutschland-Ticket on the VDV-KA blocklist: revoked, with the list, the entry and the instruction")
    func vdvLockModes() throws {
        let instructions: [BlocklistLockMode: String] = [
            .block: "Refuse the ticket.", .confiscate: "Keep the ticket: it is to be confiscated.",
            .suspicious: "Check the passenger's ID: the ticket is suspicious.",
        ]
        for mode in BlocklistLockMode.allCases {
            let verdict = try vdvVerdict([Self.vdv(57, 2_099_643, 3, mode)])
            #expect(verdict.kind == .revoked, "\(mode)")
            #expect(verdict.signature == .valid)
            let revocation = try #require(verdict.blocklistRevocation)
            #expect(revocation.list == .vdvKA)
            #expect(revocation.version == "2025-06-01T03:00:00Z")
            #expect(revocation.lockMode == mode)
            #expect(
                verdict.reason
                    == "On the VDV-KA blocklist (version 2025-06-01T03:00:00Z): entitlement 2099643 of organisation 57 "
                    + "(type B, instance 3, lock mode \(mode.rawValue)). \(instructions[mode]!)")
        }
    }

    @Test("of several instances of one entitlement the highest applies, whichever came first")
    func highestInstance() throws {
        let verdict = try vdvVerdict([
            Self.vdv(57, 2_099_643, 1, .block), Self.vdv(57, 2_099_643, 5, .suspicious),
            Self.vdv(57, 2_099_643, 2, .confiscate),
        ])
        #expect(verdict.blocklistRevocation?.action == .checkID)
    }

    @Test("entries that name another organisation, another number or a user medium do not match the ticket")
    func vdvNonMatches() throws {
        let verdict = try vdvVerdict([
            // The product (PV) organisation 70 is not the ticket's: entries match the selling (KVP) one, 57.
            Self.vdv(70, 2_099_643, 1, .block), Self.vdv(57, 2_099_644, 1, .block),
            // A user medium of the same numbers: a static barcode carries no user medium number.
            Self.vdv(57, 2_099_643, 9, .confiscate, item: .userMedium),
            Self.vdv(57, 118_017, 1, .block, item: .userMedium),
        ])
        #expect(verdict.kind == .valid, "\(verdict.reason)")
        #expect(verdict.blocklistRevocation == nil)
    }

    @Test("a manual revocation keeps its reason and carries no blocklist entry")
    func manualRevocationUnchanged() throws {
        var trust = TrustSnapshot()
        trust.revokeTicket([0x00, 0x20, 0x09, 0xBB], issuer: "57", Revocation(reason: "reported stolen"))
        trust.addBlocklistEntry(Self.vdv(57, 2_099_643, 1, .confiscate), version: "v")
        let verdict = try TicketVerifier(
            trust: trust, clock: FixedClock(Self.vdvInside), vdvCertificates: try VDVFixtures.authorities()
        ).verify(try VDVFixtures.ticket())
        #expect(verdict.kind == .revoked)
        #expect(verdict.reason == "Ticket 002009bb of 57 has been revoked: reported stolen.")
        #expect(verdict.blocklistRevocation == nil)
    }

    @Test("an expired ticket stays expired: the window is judged before the lists")
    func expiredBeforeBlocklist() throws {
        var trust = TrustSnapshot()
        trust.addBlocklistEntry(Self.vdv(57, 2_099_643, 1, .confiscate), version: "v")
        let verdict = try TicketVerifier(
            trust: trust, clock: FixedClock(utc("2023-04-02T08:00:00Z")),
            vdvCertificates: try VDVFixtures.authorities()
        ).verify(try VDVFixtures.ticket())
        #expect(verdict.kind == .expired)
    }

    /// The UIC key lists, with a DTVG entry for each of the given tickets.
    func uicTrust(_ entries: [DTVGBlocklistEntry]) throws -> TrustSnapshot {
        var trust = try DBSampleTests.trust()
        for entry in entries { trust.addBlocklistEntry(.dtvg(entry), version: "42") }
        return trust
    }

    @Test("#UT with U_HEAD: DB's 2025 Deutschland-Ticket by U_HEAD's issuer 1080 and ticket key QWXY3BTA")
    func uicWithHead() throws {
        let payload = try Self.uic("uic/db-deutschland-ticket-2025.bin")
        let at = utc("2025-02-28T12:00:00Z")
        var keys = try DBSampleTests.trust()
        try keys.addUICKeyList(xml: try Self.uic("uic/uic-publickeys-snapshot.xml"))
        let clean = try TicketVerifier(trust: keys, clock: FixedClock(at)).verify(payload)
        #expect(clean.kind == .valid, "\(clean.reason)")
        keys.addBlocklistEntry(.dtvg(DTVGBlocklistEntry(rics: 1080, ticketID: "QWXY3BTA")), version: "42")
        let verdict = try TicketVerifier(trust: keys, clock: FixedClock(at)).verify(payload)
        #expect(verdict.kind == .revoked)
        #expect(
            verdict.reason
                == "On the DTVG UIC blocklist (version 42): ticket QWXY3BTA of RICS 1080. Refuse the ticket.")
        #expect(verdict.blocklistRevocation?.lockMode == .block)
        // Another RICS, or the ticket key in other case, is another ticket.
        var other = try DBSampleTests.trust()
        try other.addUICKeyList(xml: try Self.uic("uic/uic-publickeys-snapshot.xml"))
        other.addBlocklistEntry(.dtvg(DTVGBlocklistEntry(rics: 1180, ticketID: "QWXY3BTA")), version: "42")
        other.addBlocklistEntry(.dtvg(DTVGBlocklistEntry(rics: 1080, ticketID: "qwxy3bta")), version: "42")
        #expect(try TicketVerifier(trust: other, clock: FixedClock(at)).verify(payload).kind == .valid)
    }

    @Test("issuer codes match as numbers: a U_HEAD issuer 0080 is listed as RICS 80")
    func normalisedIssuer() throws {
        let payload = try Self.uic("uic-918-9-db/Muster-918-3-City-Mobil-Ticket.bin")
        let ticket = try UIC918_3.ticket(from: try UICContainer(parsing: payload))
        #expect(ticket.issuer == "0080")
        var normalised = ticket
        normalised.issuer = UICKeyList.normalizedCode(ticket.issuer)
        #expect(BlocklistKey(ticket: normalised) == .dtvgTicket(rics: 80, ticketID: Array("RPEX4F-4".utf8)))
        #expect(BlocklistKey(ticket: ticket) == .dtvgTicket(rics: 80, ticketID: Array("RPEX4F-4".utf8)))
    }

    @Test("#UT with U_FLEX and no U_HEAD: the FCB issuer and ticket id")
    func uicFlexOnly() throws {
        let payload = try Self.uic("uic-918-9-db/Muster-918-9-CityTicket.bin")
        let ticket = try UIC918_3.ticket(from: try UICContainer(parsing: payload))
        let key = try #require(BlocklistKey(ticket: ticket))
        guard case .dtvgTicket(let rics, let id) = key else {
            Issue.record("no DTVG key")
            return
        }
        #expect(rics == 1080)
        #expect(id == Array("CYJYYCKU".utf8))
        let trust = try uicTrust([DTVGBlocklistEntry(rics: rics, ticketID: String(decoding: id, as: UTF8.self))])
        let inside = try #require(ticket.validFrom).addingTimeInterval(3600)
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(inside)).verify(payload)
        #expect(verdict.kind == .revoked, "\(verdict.reason)")
        #expect(verdict.blocklistRevocation?.list == .dtvgUIC)
    }

    @Test("DOSIPAS: the FCB issuer and ticket id (cts: 3703, 7752008)")
    func dosipas() throws {
        let payload = try DOSIPASFixtures.bytes("cts-ticket.bin")
        var trust = try DOSIPASFixtures.trust()
        trust.addBlocklistEntry(.dtvg(DTVGBlocklistEntry(rics: 3703, ticketID: "7752008")), version: "42")
        let verdict = try TicketVerifier(trust: trust, clock: FixedClock(utc("2026-02-12T18:47:00Z"))).verify(payload)
        #expect(verdict.kind == .revoked, "\(verdict.reason)")
        #expect(verdict.format == .uic9189)
        #expect(verdict.blocklistRevocation?.entry == .dtvg(DTVGBlocklistEntry(rics: 3703, ticketID: "7752008")))
    }

    @Test("FC1 and SSB tickets are on no blocklist; a ticket without an id or numeric issuer gets no key")
    func noKey() {
        #expect(BlocklistKey(ticket: Ticket(format: .fc1, issuer: "80", ticketID: [1])) == nil)
        #expect(BlocklistKey(ticket: Ticket(format: .eraSSB, issuer: "1179", ticketID: [1])) == nil)
        #expect(BlocklistKey(ticket: Ticket(format: .uic9183, issuer: "1080", ticketID: [])) == nil)
        #expect(BlocklistKey(ticket: Ticket(format: .uic9183, issuer: "TT", ticketID: [1])) == nil)
        #expect(BlocklistKey(ticket: Ticket(format: .vdvKA, issuer: "70000", ticketID: [0, 0, 0, 1])) == nil)
        #expect(BlocklistKey(ticket: Ticket(format: .vdvKA, issuer: "57", ticketID: [0, 1])) == nil)
    }

    @Test("the revocation travels as JSON: list, version, entry, lockMode and action")
    func json() throws {
        let revocation = BlocklistRevocation(
            version: "2025-06-01T03:00:00Z", entry: Self.vdv(57, 2_099_643, 3, .confiscate))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(revocation), as: UTF8.self)
        #expect(
            text
                == #"{"action":"keep-ticket","entry":{"instanceNum":3,"list":"vdv-ka","lockMode":1,"number":2099643,"#
                + #""orgId":57,"type":"B"},"list":"vdv-ka","lockMode":"confiscate","version":"2025-06-01T03:00:00Z"}"#)
        #expect(try JSONDecoder().decode(BlocklistRevocation.self, from: Data(text.utf8)) == revocation)
    }
}
