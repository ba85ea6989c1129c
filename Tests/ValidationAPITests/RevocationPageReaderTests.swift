import FareCore
import Foundation
import SeededRandom
import Signatures
import Testing
import ValidationAPI

/// The hand-written reader of revocation pages must read exactly what the documented JSON says, like
/// `JSONDecoder` does, and refuse broken input with a reason instead of crashing.
@Suite("Reading revocation pages", .timeLimit(.minutes(5)))
struct RevocationPageReaderTests {
    /// A delta with a bit of everything, from a seed.
    static func delta(seed: UInt64, entries: Int) -> RevocationDelta {
        var random = SeededRandomNumberGenerator(seed: seed)
        let issuers: [IssuerID] = ["demo-transit", "1080", "Ünïcødé \"quoted\" \\ / \u{1F68B}", "tab\there"]
        let reasons: [String?] = [nil, "reported stolen", "line\nbreak", "\u{7}bell"]
        func date() -> Date { Date(timeIntervalSince1970: Double(Int.random(in: 0...4_000_000_000, using: &random))) }
        func bytes() -> [UInt8] {
            (0..<Int.random(in: 0...20, using: &random)).map { _ in .random(in: 0...255, using: &random) }
        }
        func ticketID() -> TicketID { TicketID(bytes()) }
        return RevocationDelta(
            from: Int64.random(in: -1_000_000...1_000_000, using: &random),
            next: Int64.random(in: Int64.min...Int64.max, using: &random),
            full: Bool.random(using: &random),
            addedTickets: (0..<entries).map { _ in
                RevokedTicket(
                    issuer: issuers.randomElement(using: &random)!, ticketID: ticketID(),
                    reason: reasons.randomElement(using: &random)!, revokedAt: date())
            },
            removedTickets: (0..<entries / 3).map { _ in
                TicketReference(issuer: issuers.randomElement(using: &random)!, ticketID: ticketID())
            },
            addedKeys: (0..<entries / 5).map { index in
                RevokedKey(
                    format: index % 2 == 0 ? "fc1" : "uic", issuer: issuers.randomElement(using: &random)!,
                    keyID: KeyID(bytes().hexString), reason: reasons.randomElement(using: &random)!, revokedAt: date())
            },
            removedKeys: (0..<entries / 7).map { _ in
                KeyReference(format: "uic", issuer: issuers.randomElement(using: &random)!, keyID: "0000\(entries)")
            },
            more: Bool.random(using: &random))
    }

    static func read(_ json: String) throws -> RevocationDelta {
        try RevocationDelta(wireBytes: Array(json.utf8))
    }

    @Test("a page the server writes reads back the same, and as JSONDecoder reads it", arguments: 0..<20)
    func roundTrip(seed: UInt64) throws {
        let delta = Self.delta(seed: seed, entries: Int(seed) * 7)
        let bytes = try WireFormat.encode(delta)
        let read = try RevocationDelta(wireBytes: bytes)
        #expect(read == delta)
        #expect(read == (try WireFormat.decode(RevocationDelta.self, from: bytes)))
    }

    @Test("any member order, whitespace, unknown members, escapes, other date forms and upper-case hex are read")
    func liberalInput() throws {
        let delta = try Self.read(
            """
             { "removedKeys" : [ ] ,"future":{"a":[1,2.5e-3,{"b":null}],"c":"\\u00e9"},
              "addedTickets":[{"revokedAt":"2026-11-22T08:30:00.250Z","ticketID":"0A0b","issuer":"d\\u00e9mo\\ud83d\\ude8b",
                "reason":null,"note":[true,false]}],
              "removedTickets":[{"issuer":"x","ticketID":""}],"addedKeys":[{"format":"fc1","issuer":"x","keyID":"k",
                "revokedAt":"2026-11-22T09:30:00+01:00"}],
              "\\u0066ull":false,"next":-5,"from":-9223372036854775808 }\t\r\n
            """)
        #expect(delta.from == .min)
        #expect(delta.next == -5)
        #expect(!delta.more, "a page without `more` is the last")
        #expect(delta.addedTickets.first?.issuer == "démo\u{1F68B}")
        #expect(delta.addedTickets.first?.ticketID == [0x0A, 0x0B])
        #expect(delta.addedTickets.first?.reason == nil)
        #expect(delta.addedTickets.first?.revokedAt.timeIntervalSince1970 == 1_795_336_200.25)
        #expect(delta.addedKeys.first?.revokedAt.timeIntervalSince1970 == 1_795_336_200)
        #expect(delta.removedTickets == [TicketReference(issuer: "x", ticketID: [])])
    }

    static let broken: [(String, String, String)] = [
        ("trailing comma", #"{"from":0,}"#, "expected a string"),
        (
            "member named twice",
            #"{"from":0,"from":1,"next":1,"full":true,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[]}"#,
            "named twice"
        ),
        (
            "member missing", #"{"from":0,"next":1,"full":true,"addedTickets":[],"removedTickets":[],"addedKeys":[]}"#,
            "lacks removedKeys"
        ),
        ("leading zero", #"{"from":01}"#, "leading zero"),
        ("beyond 64 bits", #"{"from":9223372036854775808}"#, "64 bits"),
        ("fraction for a cursor", #"{"from":1.5}"#, "not a fraction"),
        ("string for a cursor", #"{"from":"1"}"#, "expected an integer"),
        ("unterminated string", #"{"from"#, "unterminated string"),
        ("raw control character", "{\"fr\u{1}om\":1}", "control character"),
        ("lone surrogate", #"{"\ud800":1}"#, "lone surrogate"),
        ("unknown escape", #"{"\q":1}"#, "unknown escape"),
        ("not hex", #"{"addedTickets":[{"issuer":"x","ticketID":"zz","revokedAt":"2026-11-22T08:30:00Z"}]}"#, "hex"),
        ("not a date", #"{"addedTickets":[{"issuer":"x","ticketID":"00","revokedAt":"yesterday"}]}"#, "ISO 8601"),
        (
            "date without a time zone",
            #"{"addedTickets":[{"issuer":"x","ticketID":"00","revokedAt":"2026-11-22T08:30:00"}]}"#, "ISO 8601"
        ),
        (
            "entry lacks a field", #"{"addedTickets":[{"issuer":"x","ticketID":"00"}]}"#,
            "needs issuer, ticketID and revokedAt"
        ),
        (
            "bytes after the document",
            #"{"from":0,"next":1,"full":true,"addedTickets":[],"removedTickets":[],"addedKeys":[],"removedKeys":[]} {}"#,
            "after the document"
        ),
        ("not an object", #"[]"#, "expected an object"),
        ("empty", "", "expected an object"),
        ("nested without end", #"{"x":"# + String(repeating: "[", count: 100_000), "nested deeper than 64"),
        ("comment", #"{/* no */"from":0}"#, "expected a string"),
    ]

    @Test("broken pages are refused with what was expected and where", arguments: broken)
    func refusals(name: String, json: String, expected: String) {
        let error = #expect(throws: JSONReadError.self, "\(name)") { try Self.read(json) }
        #expect(error?.description.contains(expected) == true, "\(name): \(String(describing: error))")
    }

    @Test("invalid UTF-8 in a string is refused")
    func invalidUTF8() {
        var bytes = Array(#"{"from":0,"next":1,"full":true,"addedTickets":[{"issuer":"#.utf8)
        bytes += [UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]
        bytes += Array(
            #","ticketID":"00","revokedAt":"2026-11-22T08:30:00Z"}],"removedTickets":[],"addedKeys":[],"removedKeys":[]}"#
                .utf8)
        let error = #expect(throws: JSONReadError.self) { try RevocationDelta(wireBytes: bytes) }
        #expect(error?.message.contains("UTF-8") == true)
    }

    @Test("every prefix of a page and every one-byte change is refused or read as JSONDecoder reads it, never a crash")
    func cutAndCorrupted() throws {
        let bytes = try WireFormat.encode(Self.delta(seed: 99, entries: 4))
        for length in 0..<bytes.count {
            #expect(throws: JSONReadError.self) { try RevocationDelta(wireBytes: Array(bytes[..<length])) }
        }
        var random = SeededRandomNumberGenerator(seed: 7)
        var readAlike = 0
        for _ in 0..<3_000 {
            var changed = bytes
            changed[Int.random(in: 0..<changed.count, using: &random)] = .random(in: 0...255, using: &random)
            guard let read = try? RevocationDelta(wireBytes: changed) else { continue }
            // What this reader accepts, JSONDecoder accepts too, with the same meaning.
            #expect(read == (try? WireFormat.decode(RevocationDelta.self, from: changed)))
            readAlike += 1
        }
        #expect(readAlike > 0, "some changes (inside strings) still make a page")
    }

    @Test("the envelope refuses a payload named twice, and skips members it does not know")
    func envelope() throws {
        let key = try PrivateKey.generate(.ecP256)
        let document = try SignedDocument.sign(Self.delta(seed: 1, entries: 3), with: key)
        let payload = Data(document.payload).base64EncodedString()
        let signature = Data(document.signature).base64EncodedString()
        let extra =
            #"{"anchor":"\#(document.anchor)","note":{"x":[1]},"algorithm":"ES256","payload":"\#(payload)","signature":"\#(signature)"}"#
        #expect(try SignedDocument(jsonBytes: Array(extra.utf8)) == document)
        let twice =
            #"{"anchor":"\#(document.anchor)","algorithm":"ES256","payload":"\#(payload)","payload":"e30=","signature":"\#(signature)"}"#
        let error = #expect(throws: BundleError.self) { try SignedDocument(jsonBytes: Array(twice.utf8)) }
        #expect(error?.code == .malformedDocument)
        #expect(error?.message.contains("named twice") == true)
        let anchor = try TrustAnchor(publicKey: key.publicKey)
        #expect(try document.openRevocationDelta(trusting: [anchor]) == Self.delta(seed: 1, entries: 3))
    }
}
