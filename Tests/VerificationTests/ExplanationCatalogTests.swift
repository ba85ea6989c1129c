import FareCore
import Foundation
import RSATestKeys
import Signatures
import TestSupport
import Testing
import TicketFormats

@testable import Verification

/// The inspector page says farecheck's sentences in its eight other languages from its catalogs
/// (`Sources/Presentation/Languages/LANG.json`), where each translation is found by the sentence's English
/// template (see ``Explanation``). A sentence the catalogs lack is shown in English on a Danish or Czech page: these
/// tests give real tickets of every format, in every state an inspector meets, and fail on any sentence of theirs
/// that a catalog lacks, or that a translation would say with other values than the English.
///
/// The catalogs are the page's resource files, read here from the source tree beside this test.
@Suite("The page's translations of farecheck's sentences")
struct ExplanationCatalogTests {
    /// One part of one language's catalog (`sentences`, `labels`), by English key.
    static func catalog(_ language: String, _ part: String) throws -> [String: String] {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/Presentation/Languages/\(language).json")
        let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        return catalog?[part] as? [String: String] ?? [:]
    }

    /// The languages farecheck ships besides English.
    static let translations = ["de", "fr", "nl", "da", "it", "pl", "cs", "sl"]

    /// The sentences of one language, by English template.
    static func sentences(_ language: String) throws -> [String: String] { try catalog(language, "sentences") }

    /// The field labels of one language, by English label.
    static func labels(_ language: String) throws -> [String: String] { try catalog(language, "labels") }

    /// A label as the page looks it up: a document's number (`document 2 places`) is its own word.
    static func labelKey(_ label: String) -> String {
        label.replacing(#/^(document|traveler) \d+/#) { "\($0.output.1) {0}" }
    }

    /// The places (`{0}`, `{1}`, …) a template names.
    static func places(_ template: String) -> Set<String> {
        var found: Set<String> = []
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
            found.insert(String(rest[open...close]))
            rest = rest[rest.index(after: close)...]
        }
        return found
    }

    /// Every template in `explanation`, its clauses' included; text as it came (verbatim) has none.
    static func templates(_ explanation: Explanation) -> [String] {
        var found = explanation.isVerbatim || explanation.template.isEmpty ? [] : [explanation.template]
        for case .explanation(let clause) in explanation.arguments { found += templates(clause) }
        return found
    }

    @Test("each translation names the same values as its English sentence, and is not left in English")
    func translationsKeepTheirPlaces() throws {
        for language in Self.translations {
            let sentences = try Self.sentences(language)
            #expect(sentences.count >= 100, "\(language): \(sentences.count) sentences")
            for (english, translated) in sentences {
                #expect(Self.places(english) == Self.places(translated), "\(language): \(english) → \(translated)")
                if english.count > 20 { #expect(english != translated, "\(language) left in English: \(english)") }
            }
        }
    }

    /// Real tickets of every format, each judged as genuine and now, expired, not yet valid, without its key,
    /// altered, and revoked: the sentences an inspector sees.
    static func corpus() throws -> [Verdict] {
        var verdicts: [Verdict] = []
        let instants = [
            "2000-01-01T00:00:00Z", "2020-06-01T12:00:00Z", "2023-03-15T12:00:00Z", "2025-02-28T12:00:00Z",
            "2026-02-15T12:00:00Z", "2045-01-01T00:00:00Z",
        ].map { try! Date($0, strategy: .iso8601) }
        func judge(_ payload: [UInt8], _ trust: TrustSnapshot, vdv: VDVCertificateSet? = nil) throws {
            for instant in instants {
                let verifier = TicketVerifier(trust: trust, clock: FixedClock(instant), vdvCertificates: vdv)
                verdicts.append(try verifier.verify(payload))
                // Altered: one bit of the signed part, and of the end (a signature or a clear part).
                for index in [payload.count / 2, payload.count - 1] {
                    var altered = payload
                    altered[index] ^= 0x01
                    verdicts.append(try verifier.verify(altered))
                }
                // Without any key.
                verdicts.append(
                    try TicketVerifier(trust: TrustSnapshot(), clock: FixedClock(instant)).verify(payload))
            }
        }
        let uic = try DOSIPASFixtures.trust()
        var uicRevoked = uic
        for name in [
            "uic/db-city-mobil-v1-sha1.bin", "uic/db-deutschland-ticket-2025.bin",
            "uic/db-supersparpreis-v2-sha256.bin",
        ] {
            let payload = try Fixtures.bytes(name)
            try judge(payload, uic)
            if let ticket = try TicketVerifier(trust: uic, clock: FixedClock(instants[3])).verify(payload).ticket {
                uicRevoked.revokeTicket(ticket.ticketID, issuer: ticket.issuer, Revocation(reason: "reported stolen"))
            }
            try judge(payload, uicRevoked)
        }
        for name in DOSIPASFixtures.samples { try judge(try DOSIPASFixtures.bytes(name), uic) }
        for name in [SSBVerifierFixtures.nrt, SSBVerifierFixtures.group] {
            try judge(try SSBVerifierFixtures.bytes(name), try SSBVerifierFixtures.trust())
        }
        try judge(RSP6Fixtures.realTicket, try RSP6Fixtures.trust())
        // A ticket only an issuer's test key opens: refused in service, and judged on a bench that accepts test keys.
        let testIssuer = RSP6Fixtures.issuer
        var testKeys = TrustSnapshot()
        testKeys.add(
            try RSP6KeyImport.trustedKey(
                RSP6PublishedKey(
                    issuer: testIssuer.issuerID, modulus: testIssuer.key.modulus, exponent: testIssuer.key.exponent,
                    terms: RSP6KeyTerms(use: .test))))
        // Travel 2025-10-24, bought two days before, three days: the fields a plain ticket has.
        var writer = RSP6TicketWriter(bitCount: RSP6Ticket.fixedPartBits + RSP6Ticket.purchaseBits)
        writer.text("ABC123XYZ", at: 8, count: 9)
        writer.text("SDS", at: 91, count: 3)
        writer.dateTime(days: 10_523, minutes: 0, at: 211)
        writer.number(1, at: 384, width: 1)
        writer.dateTime(days: 10_521, minutes: 19 * 60, at: RSP6Ticket.fixedPartBits)
        writer.number(165, at: RSP6Ticket.fixedPartBits + 25, width: 21)
        writer.number(3, at: RSP6Ticket.fixedPartBits + 107, width: 9)
        let testTicket = testIssuer.text(writer.bytes)
        try judge(testTicket, testKeys)
        var bench = TicketVerifier.Configuration()
        bench.acceptTestKeys = true
        verdicts.append(
            try TicketVerifier(trust: testKeys, clock: FixedClock(utc("2025-10-25T09:00:00Z")), configuration: bench)
                .verify(testTicket))
        #expect(verdicts.last?.kind == .valid && verdicts.last?.warnings.map(\.code).contains("test-key") == true)
        #expect(verdicts.contains { $0.kind == .wrongIssuer && $0.reason.contains("as a test key") })
        try judge(try VDVFixtures.ticket(), TrustSnapshot(), vdv: try VDVFixtures.authorities())
        try judge(try VDVFixtures.ticket(), TrustSnapshot())
        // What is not a ticket at all.
        for junk in [Array("hello".utf8), [0x23, 0x55, 0x54, 0x30, 0x31], Array(repeating: 0xFF, count: 64)] {
            verdicts.append(try TicketVerifier(trust: uic, clock: FixedClock(instants[1])).verify(junk))
        }
        return verdicts
    }

    @Test("every sentence real tickets of every format give, in every state, has a translation in every language")
    func everySentenceOfRealTicketsIsTranslated() throws {
        let verdicts = try Self.corpus()
        var templates: Set<String> = []
        var kinds: Set<VerdictKind> = []
        for verdict in verdicts {
            kinds.insert(verdict.kind)
            // The reason, the warnings, and each document's one line (`2nd class, 1 adult`).
            let documents = verdict.ticket?.documents.compactMap(\.summaryExplanation) ?? []
            for explanation in [verdict.explanation] + verdict.warnings.map(\.explanation) + documents {
                templates.formUnion(Self.templates(explanation))
                // The English is the sentence as it always was: the template with its values in place.
                #expect(!explanation.english.contains("{0}"), "\(explanation.english)")
            }
        }
        // The corpus reaches the verdicts an inspector meets most.
        for kind in [VerdictKind.valid, .expired, .notYetValid, .unknownKey, .invalidSignature, .revoked, .malformed] {
            #expect(kinds.contains(kind), "no \(kind) in the corpus")
        }
        #expect(templates.count >= 20, "\(templates.count) sentences")
        // English holds every template (a translator's `farecheck languages template` starts from it), and each
        // other language translates each of them.
        for language in ["en"] + Self.translations {
            let sentences = try Self.sentences(language)
            let missing = templates.filter { sentences[$0] == nil }.sorted()
            #expect(missing.isEmpty, "\(language) lacks \(missing.count): \(missing.joined(separator: "\n"))")
        }
        // The labels of every field the tickets carry ("All fields" on the page).
        let labels = Set(verdicts.flatMap { $0.ticket?.details.map { Self.labelKey($0.label) } ?? [] })
        #expect(labels.count >= 50, "\(labels.count) labels")
        for language in ["en"] + Self.translations {
            let translated = try Self.labels(language)
            let missing = labels.filter { translated[$0] == nil }.sorted()
            #expect(missing.isEmpty, "\(language) lacks \(missing.count) labels:\n\(missing.joined(separator: "\n"))")
        }
    }

    @Test("a holder line with words of its own (born, ID card, passport) comes with the fields the page translates")
    func holderLinesAreShownAsTranslatedFields() throws {
        // The page shows the one-line holder only for a ticket without holder fields (a bare name, as RSP6 and FC1
        // carry); a line that says "born" or "ID card" must come with those fields, whose labels are translated.
        var worded = 0
        for verdict in try Self.corpus() {
            guard let ticket = verdict.ticket, let line = ticket.holder else { continue }
            let words = ["born ", "ID card ", "passport "].filter { line.contains($0) }
            guard !words.isEmpty else { continue }
            worded += 1
            let check = ticket.holderCheck
            #expect(
                check?.dateOfBirth != nil || check?.idDocuments.isEmpty == false,
                "\(ticket.format): \"\(line)\" has no holder fields")
            if words.contains("born ") { #expect(check?.dateOfBirth != nil, "\(line)") }
        }
        #expect(worded >= 2, "the corpus has \(worded) holder lines with words of their own")
    }
}
