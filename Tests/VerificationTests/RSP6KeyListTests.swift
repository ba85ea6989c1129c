import FareCore
import Foundation
import RSATestKeys
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The key list the open decoders share (docs/uk-rsp6.md, "The published key list"), made here with the tests' own
/// RSA keys: each entry read on its own, refused by name when it cannot be used, a key listed twice kept once, and
/// the list's terms (validity, test keys) judged by the verifier.
@Suite("UK RSP6: the published key list")
struct RSP6KeyListTests {
    static let live = RSP6TestIssuer(issuerID: "ZZ")
    static let test = RSP6TestIssuer(issuerID: "ZZ")
    static let other = RSP6TestIssuer(issuerID: "YY")
    static let small = RSP6TestIssuer(issuerID: "ZZ", bits: 512)
    static let unlisted = RSP6TestIssuer(issuerID: "ZZ")

    static let from = "2025-01-01 00:00:00"
    static let until = "2026-12-31 23:59:59"

    /// ZZ: the live key (valid 2025 and 2026), the same key again with its PEM in upper-case hex, a test key, a
    /// private entry, a 512-bit key; YY: one key without dates, given by its PEM alone.
    static let list = Array(
        """
        {"ZZ": [
          \(live.listEntry(validFrom: from, validUntil: until)),
          \(live.listEntry(validFrom: from, validUntil: until, x509: true, uppercase: true)),
          \(test.listEntry(isTest: true)),
          \(unlisted.listEntry(isPrivate: true)),
          \(small.listEntry())
        ],
        "YY": [\(other.listEntry(validFrom: nil, validUntil: nil, numbers: false, x509: true))]}
        """.utf8)

    static func plan() throws -> RSP6KeyImportPlan {
        RSP6KeyImportPlan(try RSP6KeyFile.entries(parsing: list, issuer: nil))
    }

    static func trust(_ plan: RSP6KeyImportPlan) -> TrustSnapshot {
        var snapshot = TrustSnapshot()
        for key in plan.keys { snapshot.add(key.trusted) }
        return snapshot
    }

    func verify(
        _ payload: [UInt8], at instant: Date, acceptTestKeys: Bool = false, trust: TrustSnapshot? = nil
    ) throws -> Verdict {
        var configuration = TicketVerifier.Configuration()
        configuration.acceptTestKeys = acceptTestKeys
        return try TicketVerifier(
            trust: trust ?? Self.trust(try Self.plan()), clock: FixedClock(instant), configuration: configuration
        ).verify(payload)
    }

    @Test("each entry read on its own: good keys kept once, the private entry and the 512-bit key refused by name")
    func entries() throws {
        let plan = try Self.plan()
        #expect(plan.keys.map(\.trusted.issuer) == ["YY", "ZZ", "ZZ"])
        #expect(plan.entryCounts == ["ZZ": 5, "YY": 1])
        let refusals = plan.refusals.map(\.description)
        #expect(refusals.count == 2, "\(refusals)")
        #expect(refusals.first?.hasPrefix("ZZ entry 4: marked is_private") == true, "\(refusals)")
        #expect(refusals.last?.hasPrefix("ZZ entry 5: an RSA key of 512 bits") == true, "\(refusals)")

        // The live key, listed twice (once with its PEM, in upper case), is one key with the list's dates, in UK time.
        let live = try #require(
            plan.keys.first { $0.trusted.keyID.rawValue == RSP6KeyImport.keyID(modulus: Self.live.key.modulus) })
        #expect(live.positions.map(\.description) == ["ZZ entry 1", "ZZ entry 2"])
        #expect(live.trusted.purpose == .tickets)
        #expect(live.trusted.notBefore == utc("2025-01-01T00:00:00Z"))
        #expect(live.trusted.notAfter == utc("2026-12-31T23:59:59Z"))
        let test = try #require(
            plan.keys.first { $0.trusted.keyID.rawValue == RSP6KeyImport.keyID(modulus: Self.test.key.modulus) })
        #expect(test.trusted.purpose == .testTickets)
        // Read from the PEM alone; no dates: open.
        let other = try #require(plan.keys.first { $0.trusted.issuer == "YY" })
        #expect(other.trusted.keyID.rawValue == RSP6KeyImport.keyID(modulus: Self.other.key.modulus))
        #expect(other.trusted.notBefore == nil && other.trusted.notAfter == nil)

        // What the import says, per issuer, when the store held the live key already.
        let summary = RSP6KeyImportSummary(plan: plan) { $0.keyID == live.trusted.keyID }
        #expect(
            summary.lines == [
                "YY: 1 added, 0 kept, 0 refused (1 entry)",
                "ZZ: 1 added, 1 kept, 2 refused (5 entries, 1 repeating a key, 1 test key)",
            ])
        // For the server, whose bundles carry no test keys: refused too, by name.
        var server = plan
        server.refuseTestKeys()
        #expect(server.keys.allSatisfy { $0.trusted.purpose == .tickets })
        #expect(server.refusals.map(\.position.description) == ["ZZ entry 3", "ZZ entry 4", "ZZ entry 5"])
        #expect(server.refusals[0].reason == .testKeyNotPublished)
    }

    @Test(
        "a genuine ticket verifies with a key of the list; a test key's is wrong-issuer unless test keys are accepted")
    func verdicts() throws {
        // Travel 2025-10-24, bought 2025-10-22, three days.
        let ticket = RSP6TicketWriter.full(days: 10_523, daysOfValidity: 3)
        let at = utc("2025-10-25T09:00:00Z")
        let valid = try verify(Self.live.text(ticket), at: at)
        #expect(valid.kind == .valid, "\(valid.reason)")
        #expect(valid.keyID?.rawValue == RSP6KeyImport.keyID(modulus: Self.live.key.modulus))
        #expect(try verify(Self.other.text(ticket), at: at).kind == .valid)

        let signedByTest = Self.test.text(ticket)
        let live = try verify(signedByTest, at: at)
        #expect(live.kind == .wrongIssuer, "\(live.reason)")
        #expect(live.signature == .valid)
        #expect(live.reason.contains("publishes as a test key: it is not valid in service"), "\(live.reason)")
        let bench = try verify(signedByTest, at: at, acceptTestKeys: true)
        #expect(bench.kind == .valid, "\(bench.reason)")
        #expect(bench.warnings.map(\.code).contains("test-key"))
        // Accepting test keys changes nothing for a live key's ticket.
        #expect(
            try verify(Self.live.text(ticket), at: at, acceptTestKeys: true).warnings.map(\.code) == [
                "booked-departure"
            ])

        // The refused entries gave no key: their tickets are forged as far as the verifier knows.
        #expect(try verify(Self.unlisted.text(ticket), at: at).kind == .invalidSignature)
    }

    @Test("a ticket bought outside its key's validity is key-expired, judged at its purchase as for UIC keys")
    func keyValidity() throws {
        // Bought 2025-10-22, inside the key's 2025–2026: valid on its travel days, also once the key has ended.
        let inside = Self.live.text(RSP6TicketWriter.full(days: 10_523, daysOfValidity: 3))
        #expect(try verify(inside, at: utc("2025-10-25T09:00:00Z")).kind == .valid)
        // Travel 2027-01-03, bought 2027-01-01 19:02 UK time: after the key's end (and its hour of slack).
        let after = Self.live.text(RSP6TicketWriter.full(days: 10_959, daysOfValidity: 1))
        let expired = try verify(after, at: utc("2027-01-03T10:00:00Z"))
        #expect(expired.kind == .keyExpired, "\(expired.reason)")
        #expect(expired.signature == .valid)
        #expect(expired.reason.contains("before the ticket was issued"), "\(expired.reason)")
        // Travel 2024-12-31, bought 2024-12-29: before the key's start.
        let before = Self.live.text(RSP6TicketWriter.full(days: 10_226, daysOfValidity: 1))
        let early = try verify(before, at: utc("2024-12-31T10:00:00Z"))
        #expect(early.kind == .keyExpired, "\(early.reason)")
        #expect(early.reason.contains("only valid from"), "\(early.reason)")
    }

    @Test(
        "entries that contradict themselves or cannot be read are refused by name; a file that is not JSON says where")
    func refusals() throws {
        let a = Self.live
        let b = Self.other
        // Another key's PEM beside a key's numbers; a date that is none; an issuer_id of another issuer; neither
        // numbers nor PEM; an exponent that differs for the same modulus; a value that is no array.
        let otherPEM = String(
            decoding: try JSONSerialization.data(withJSONObject: [b.publicKeyPEM]), as: UTF8.self
        ).dropFirst().dropLast()
        let mixed = a.listEntry(x509: false).replacingOccurrences(
            of: "\"public_key_x509\": null", with: "\"public_key_x509\": \(otherPEM)")
        let otherExponent = a.listEntry().replacingOccurrences(
            of: "\"public_exponent_hex\": \"10001\"", with: "\"public_exponent_hex\": \"3\"")
        let json = """
            {"ZZ": [\(mixed), \(a.listEntry(validFrom: "2025-02-30 00:00:00")), \(b.listEntry()),
                    \(a.listEntry(numbers: false)), \(a.listEntry()), \(otherExponent)],
             "XX": {"not": "an array"}, "X": []}
            """
        let plan = RSP6KeyImportPlan(try RSP6KeyFile.entries(parsing: Array(json.utf8), issuer: nil))
        let refusals = Dictionary(
            uniqueKeysWithValues: plan.refusals.map { ($0.position.description, $0.reason.description) })
        #expect(refusals["ZZ entry 1"]?.contains("another key than its modulus_hex") == true, "\(refusals)")
        #expect(refusals["ZZ entry 2"]?.contains("valid_from \"2025-02-30 00:00:00\" is not a date-time") == true)
        #expect(refusals["ZZ entry 3"]?.contains("issuer_id is \"YY\", but it is listed under issuer ZZ") == true)
        #expect(refusals["ZZ entry 4"]?.contains("neither modulus_hex") == true, "\(refusals)")
        #expect(refusals["ZZ entry 6"]?.contains("the modulus of ZZ entry 5 with another exponent") == true)
        #expect(refusals["issuer XX"]?.contains("not an array") == true, "\(refusals)")
        #expect(refusals["issuer X"]?.contains("no issuer id") == true, "\(refusals)")
        #expect(plan.keys.count == 1 && plan.keys[0].positions.map(\.description) == ["ZZ entry 5"])

        // Broken JSON: the line and column where it stops being JSON.
        let broken = Array("{\"ZZ\": [\n  \(a.listEntry())\n  \(b.listEntry())\n]}".utf8)
        #expect {
            try RSP6KeyFile.entries(parsing: broken, issuer: nil)
        } throws: { error in
            "\(error)".contains("not JSON") && "\(error)".contains("line 3, column")
        }
        // The {"n", "e"} form still reads, and both forms may share a file.
        let both = Array(#"{"ZZ": \#(String(decoding: a.keyFileJSON, as: UTF8.self)), "YY": [\#(b.listEntry())]}"#.utf8)
        let read = RSP6KeyImportPlan(try RSP6KeyFile.entries(parsing: both, issuer: nil))
        #expect(read.refusals.isEmpty && read.keys.count == 2)
    }

    @Test("terms of a key listed twice: a test key if either entry says so, valid where both say it is")
    func mergedTerms() throws {
        let a = Self.live
        let json = """
            {"ZZ": [\(a.listEntry(validFrom: "2025-01-01 00:00:00", validUntil: "2027-01-01 00:00:00")),
                    \(a.listEntry(validFrom: "2024-01-01", validUntil: "2026-06-30", isTest: true, x509: true))]}
            """
        let plan = RSP6KeyImportPlan(try RSP6KeyFile.entries(parsing: Array(json.utf8), issuer: nil))
        let key = try #require(plan.keys.first?.trusted)
        #expect(plan.keys.count == 1 && plan.refusals.isEmpty)
        #expect(key.purpose == .testTickets)
        #expect(key.notBefore == utc("2025-01-01T00:00:00Z"))
        // A bare day ends at its last second, UK time (BST in June).
        #expect(key.notAfter == utc("2026-06-30T22:59:59Z"))
    }
}
