import Foundation
import Testing
import ValidationAPI

/// A revocation page read entry by entry, as sync applies it: one entry that cannot be read costs only itself.
@Suite("Revocation pages entry by entry")
struct RevocationPageEntriesTests {
    static let page = """
        {"from":0,"next":9,"full":true,"more":false,
         "addedTickets":[
           {"issuer":"demo-transit","ticketID":"a1","revokedAt":"2026-11-22T08:30:00Z"},
           {"issuer":"demo-transit","ticketID":"a2","revokedAt":"0000-06-01T00:00:00Z"},
           {"issuer":"demo-transit","ticketID":"not hex","revokedAt":"2026-11-22T08:30:00Z"},
           {"issuer":"demo-transit","ticketID":"a4","reason":"stolen","revokedAt":"2026-11-22T08:30:00Z"}],
         "removedTickets":[{"issuer":"demo-transit"},{"issuer":"demo-transit","ticketID":"b2"}],
         "addedKeys":[{"format":"fc1","issuer":"demo-transit","keyID":"k1","revokedAt":"2026-11-22T08:30:00Z"}],
         "removedKeys":[]}
        """

    @Test("the entries that read are kept in order; each one that does not is named by its list, place and reason")
    func badEntriesSkipped() throws {
        let reading = try RevocationDelta.reading(wireBytes: Array(Self.page.utf8))
        #expect(reading.page.addedTickets.map(\.ticketID) == [[0xa1], [0xa4]])
        #expect(reading.page.addedTickets.last?.reason == "stolen")
        #expect(reading.page.removedTickets == [TicketReference(issuer: "demo-transit", ticketID: [0xb2])])
        #expect(reading.page.addedKeys.map(\.keyID) == ["k1"])
        #expect(reading.page.next == 9 && reading.page.full && !reading.page.more)
        #expect(reading.skipped.map(\.list) == ["addedTickets", "addedTickets", "removedTickets"])
        #expect(reading.skipped.map(\.index) == [1, 2, 0])
        #expect(reading.skipped.allSatisfy { !$0.reason.isEmpty })
        #expect(reading.skipped[0].description.hasPrefix("addedTickets[1]: "))
        #expect(reading.skipped[1].reason.contains("hex"), "\(reading.skipped[1])")

        // Read whole, as a document that must be right in every part, the same page is refused.
        #expect(throws: JSONReadError.self) { try RevocationDelta(wireBytes: Array(Self.page.utf8)) }
    }

    @Test("a page whose own fields cannot be read, or that is not JSON, is refused whole")
    func pageFieldsStrict() {
        let cases = [
            Self.page.replacingOccurrences(of: #""next":9"#, with: #""next":"soon""#),
            Self.page.replacingOccurrences(of: #""full":true,"#, with: ""),
            Self.page.replacingOccurrences(of: #""removedKeys":[]"#, with: #""removedKeys":{}"#),
            String(Self.page.dropLast()),
        ]
        for text in cases {
            #expect(throws: JSONReadError.self) { try RevocationDelta.reading(wireBytes: Array(text.utf8)) }
        }
    }
}
