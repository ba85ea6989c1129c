import FareCore
import Foundation
import Testing

/// A verdict's reason as the CLI, the journal and the log say it in English, and as the journal and the page keep it
/// for translation.
@Suite("Explanations: the English sentence and what is kept to translate it")
struct ExplanationTests {
    static let expiry = Date(timeIntervalSince1970: 1_795_336_200)

    @Test("the English sentence reads exactly as it was written, each value in its place")
    func english() {
        let reason: Explanation = "The ticket \("C0FFEE") expired on \(date: Self.expiry), \(2) zones ago."
        #expect(reason.english == "The ticket C0FFEE expired on 2026-11-22T08:30:00Z, 2 zones ago.")
        #expect(reason.template == "The ticket {0} expired on {1}, {2} zones ago.")
        #expect(reason.arguments == [.text("C0FFEE"), .date(Self.expiry), .number(2)])
        #expect(reason.description == reason.english)
        // Braces that are no place stay as they are.
        let braces: Explanation = "A set {a, b} and {9} of \("x")."
        #expect(braces.english == "A set {a, b} and {9} of x.")
    }

    @Test(
        "a length of time is said in its largest whole unit",
        arguments: [
            (59, "59 seconds"), (119, "119 seconds"), (120, "2 minutes"), (7199, "119 minutes"), (7200, "2 hours"),
            (172_799, "47 hours"), (172_800, "2 days"), (30 * 86_400, "30 days"),
        ] as [(TimeInterval, String)])
    func durations(seconds: TimeInterval, text: String) {
        let sentence: Explanation = "Data older than \(duration: seconds)."
        #expect(sentence.english == "Data older than \(text).")
    }

    @Test("two sentences joined say both, the second's values numbered after the first's")
    func joining() {
        let first: Explanation = "Key \("k1") of \("demo-transit")"
        let clause: Explanation = ", revoked on \(date: Self.expiry) (\("stolen"))."
        let joined = first + clause
        #expect(joined.english == "Key k1 of demo-transit, revoked on 2026-11-22T08:30:00Z (stolen).")
        #expect(joined.template == "Key {0} of {1}, revoked on {2} ({3}).")
        // A clause inside a sentence keeps its own template, to be translated on its own.
        let nested: Explanation = "The ticket is revoked\(clause)"
        #expect(nested.template == "The ticket is revoked{0}")
        #expect(nested.english == "The ticket is revoked, revoked on 2026-11-22T08:30:00Z (stolen).")
    }

    @Test("text that is not farecheck's is kept verbatim, and shown as it came")
    func verbatim() {
        let text = Explanation.verbatim("Server says: {0} is not a place")
        #expect(text.isVerbatim)
        #expect(text.english == "Server says: {0} is not a place")
        let sentence: Explanation = "Key \("k1") is unknown."
        #expect(!sentence.isVerbatim)
    }

    @Test("an explanation is stored and read back whole: template, every kind of value, clauses inside")
    func codableRoundTrip() throws {
        let clause: Explanation = " after \(duration: 300)"
        let reason: Explanation =
            "Ticket \("T-1") seen \(2) times, last on \(date: Self.expiry)\(clause)\(Explanation.verbatim("!"))"
        let data = try JSONEncoder().encode(reason)
        let read = try JSONDecoder().decode(Explanation.self, from: data)
        #expect(read == reason)
        #expect(read.english == "Ticket T-1 seen 2 times, last on 2026-11-22T08:30:00Z after 5 minutes!")

        let unknown = #"{"template":"{0}","arguments":[{"colour":"red"}]}"#
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Explanation.self, from: Data(unknown.utf8)) }
    }
}
