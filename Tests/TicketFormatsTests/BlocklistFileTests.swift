import FareCore
import Foundation
import TestSupport
import Testing

@testable import TicketFormats

/// The blocklist test files (`scripts/make-blocklist-fixtures.py`: Python's zipfile and sqlite3) in the fixture
/// tree's `blocklists`.
enum BlocklistFixtures {
    static let directory = Fixtures.path("blocklists")

    static func bytes(_ name: String) throws -> [UInt8] { try Fixtures.bytes("blocklists/\(name)") }

    /// Every entry of a DTVG zip with its line, or the error's message.
    static func dtvg(_ bytes: [UInt8], limit: Int = DTVGBlocklistFile.defaultCSVLimit) -> Result<
        [(DTVGBlocklistEntry, Int)], FormatError
    > {
        var entries: [(DTVGBlocklistEntry, Int)] = []
        do {
            try DTVGBlocklistFile.readEntries(zip: bytes, limit: limit) { entry, line in entries.append((entry, line)) }
            return .success(entries)
        } catch {
            return .failure(error)
        }
    }

    static func message(_ result: Result<[(DTVGBlocklistEntry, Int)], FormatError>) -> String? {
        if case .failure(let error) = result { return error.message }
        return nil
    }
}

@Suite("Blocklist files: the DTVG zip and CSV, VDV rows, versions")
struct BlocklistFileTests {
    @Test("the DTVG zip as Python's zipfile writes it, deflated and stored: every row, RICS as numbers, lines counted")
    func dtvgZip() throws {
        for name in ["dtvg-blocklist.zip", "dtvg-blocklist-stored.zip"] {
            let entries = try BlocklistFixtures.dtvg(try BlocklistFixtures.bytes(name)).get()
            #expect(entries.count == 24, "\(name)")
            #expect(entries[0].0 == DTVGBlocklistEntry(rics: 1080, ticketID: "QWXY3BTA"))
            #expect(entries[0].1 == 2)  // line 1 is the header
            // Listed as "80": the same RICS code as the ticket's 0080.
            #expect(entries[1].0 == DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4"))
            #expect(entries.last?.1 == 25)
        }
    }

    @Test("bad DTVG files are refused with a message that says what is wrong")
    func badDTVGFiles() throws {
        let cases: [(String, String)] = [
            ("dtvg-truncated.zip", "no zip end of central directory record"),
            ("dtvg-wrong-columns.zip", "must name the columns rics and ticketId"),
            ("dtvg-no-bom.zip", "does not start with the UTF-8 byte order mark"),
            ("dtvg-extra-bom.zip", "two byte order marks"),
            ("dtvg-rics-not-numeric.zip", "line 5: rics \"DB\" is not a RICS code"),
            ("dtvg-wrong-member.zip", "holds no blacklistuic.csv (it holds \"blacklist.csv\")"),
            ("dtvg-bad-crc.zip", "fails its CRC-32 check"),
            ("vdv-blocklist.db", "no zip end of central directory record"),
        ]
        for (name, expected) in cases {
            let message = BlocklistFixtures.message(BlocklistFixtures.dtvg(try BlocklistFixtures.bytes(name)))
            #expect(message?.contains(expected) == true, "\(name): \(message ?? "accepted")")
        }
        // Duplicates are the importer's to refuse (the store keeps each ticket once): the reader passes both.
        let duplicate = try BlocklistFixtures.dtvg(try BlocklistFixtures.bytes("dtvg-duplicate.zip")).get()
        #expect(duplicate.filter { $0.0 == DTVGBlocklistEntry(rics: 80, ticketID: "RPEX4F-4") }.count == 2)
    }

    @Test("every truncation and every single-byte change of the zip is refused or read, never a crash")
    func corruptions() throws {
        let good = try BlocklistFixtures.bytes("dtvg-blocklist.zip")
        var refused = 0
        for length in 0..<good.count {
            if BlocklistFixtures.message(BlocklistFixtures.dtvg(Array(good.prefix(length)))) != nil { refused += 1 }
        }
        // A prefix is never a whole archive: the end record is at the end.
        #expect(refused == good.count)
        var changedButRead = 0
        for index in 0..<good.count {
            var bytes = good
            bytes[index] ^= 0x5A
            if case .success = BlocklistFixtures.dtvg(bytes) { changedButRead += 1 }
        }
        // Only fields no reader checks (times, version made by, attributes) may change unnoticed; the data is
        // guarded by its CRC.
        #expect(changedButRead < 40)
    }

    @Test("the inflate cap holds: a CSV larger than the limit is refused before it is all inflated")
    func inflateLimit() throws {
        let message = BlocklistFixtures.message(
            BlocklistFixtures.dtvg(try BlocklistFixtures.bytes("dtvg-blocklist.zip"), limit: 100))
        #expect(message?.contains("more than the limit of 100 bytes") == true, "\(message ?? "accepted")")
    }

    @Test("the CSV read in pieces of any size gives the same rows; quoting, CRLF and blank lines as documented")
    func csvPieces() throws {
        let text: [UInt8] =
            [0xEF, 0xBB, 0xBF] + Array("ticketId,\"rics\"\r\n\"AB,\"\"C\",0080\n\nX1,1180\r\n\"Y 2\",7".utf8)
        for size in 1...text.count {
            var reader = DTVGBlocklistCSV()
            var rows: [DTVGBlocklistEntry] = []
            for start in stride(from: 0, to: text.count, by: size) {
                let piece = Array(text[start..<min(text.count, start + size)])
                try piece.withUnsafeBufferPointer { (buffer) throws(FormatError) in
                    try reader.consume(buffer) { entry, _ in rows.append(entry) }
                }
            }
            try reader.finish { entry, _ in rows.append(entry) }
            #expect(
                rows == [
                    DTVGBlocklistEntry(rics: 80, ticketID: "AB,\"C"), DTVGBlocklistEntry(rics: 1180, ticketID: "X1"),
                    DTVGBlocklistEntry(rics: 7, ticketID: "Y 2"),
                ], "pieces of \(size)")
        }
    }

    @Test("CSV lines that break the rules are refused, naming the line")
    func csvRules() {
        func read(_ body: String) -> String? {
            var reader = DTVGBlocklistCSV()
            let bytes: [UInt8] = [0xEF, 0xBB, 0xBF] + Array(body.utf8)
            do {
                try bytes.withUnsafeBufferPointer { (buffer) throws(FormatError) in
                    try reader.consume(buffer) { _, _ in }
                }
                try reader.finish { _, _ in }
                return nil
            } catch {
                return error.message
            }
        }
        #expect(read("rics,ticketId\n1080,A\n") == nil)
        #expect(read("rics,ticketId\n1080,A,B\n")?.contains("line 2 has 3 fields") == true)
        #expect(read("rics,ticketId,extra\n")?.contains("names 3 columns") == true)
        #expect(read("rics,rics\n")?.contains("must name the columns rics and ticketId") == true)
        #expect(read("rics,ticketId\n123456,A\n")?.contains("not a RICS code") == true)
        #expect(read("rics,ticketId\n-80,A\n")?.contains("not a RICS code") == true)
        #expect(read("rics,ticketId\n80,\n")?.contains("the ticketId is empty") == true)
        #expect(read("rics,ticketId\n80, A\n")?.contains("begins or ends with a space") == true)
        #expect(read("rics,ticketId\n80,\"A\"B\n")?.contains("after a closing quote") == true)
        #expect(read("rics,ticketId\n80,\"A\n")?.contains("not closed") == true)
        #expect(read("rics,ticketId\n80,A\"B\n")?.contains("quote inside a field") == true)
        #expect(read("rics,ticketId\n80,é\n")?.contains("not printable ASCII") == true)
        #expect(read("rics,ticketId\n80,\u{FEFF}A\n")?.contains("holds a byte order mark") == true)
        #expect(
            read("rics,ticketId\n80," + String(repeating: "A", count: 65) + "\n")?.contains("longer than 64") == true)
        #expect(read("rics,ticketId\n80," + String(repeating: "A", count: 2000))?.contains("longer than 1024") == true)
        #expect(read("")?.contains("no header") == true)
        #expect(read("\n\n")?.contains("no header") == true)
    }

    @Test("VDV rows: checked column by column; of one number the highest instance is kept; duplicates refused")
    func vdvRows() throws {
        func row(_ type: String, _ org: Int64, _ number: Int64, _ instance: Int64, _ mode: Int64) -> [SQLiteCell] {
            [.text(Array(type.utf8)), .integer(org), .integer(number), .integer(instance), .integer(mode)]
        }
        var rows = VDVBlocklistRows()
        #expect(try rows.accept(row("A", 57, 1, 0, 0), row: 1)?.item == .userMedium)
        let kept = try rows.accept(row("B", 57, 2_099_643, 3, 1), row: 2)
        #expect(
            kept
                == VDVBlocklistEntry(
                    item: .entitlement, organisation: 57, number: 2_099_643, instance: 3, lockMode: .confiscate))
        #expect(try rows.accept(row("B", 57, 2_099_643, 2, 0), row: 3) == nil)
        #expect(rows.supersededCount == 1)
        #expect(throws: FormatError.self) { try rows.accept(row("B", 57, 2_099_643, 2, 0), row: 4) }
        var again = VDVBlocklistRows()
        _ = try again.accept(row("B", 57, 5, 1, 0), row: 1)
        #expect(throws: FormatError.self) { try again.accept(row("B", 57, 4, 1, 0), row: 2) }

        func refusal(_ cells: [SQLiteCell]) -> String? {
            do {
                _ = try VDVBlocklistRows.entry(cells, row: 9)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(refusal(row("C", 57, 1, 0, 0))?.contains("type is \"C\"") == true)
        #expect(refusal(row("B", 70_000, 1, 0, 0))?.contains("orgId is 70000, not an organisation id") == true)
        #expect(refusal(row("B", 57, 1 << 32, 0, 0))?.contains("number is 4294967296") == true)
        #expect(refusal(row("B", 57, 1, -1, 0))?.contains("instanceNum is -1") == true)
        #expect(refusal(row("B", 57, 1, 0, 3))?.contains("lockMode is 3") == true)
        #expect(
            refusal([.text([0x42]), .real(57.5), .integer(1), .integer(0), .integer(0)])?.contains("orgId is 57.5")
                == true)
        #expect(
            refusal([.text([0x42]), .null, .integer(1), .integer(0), .integer(0)])?.contains("orgId is NULL") == true)
        #expect(refusal(Array(row("B", 57, 1, 0, 0).prefix(4)))?.contains("has 4 columns") == true)
        // Digits held as text (a column without a declared type) count as numbers.
        #expect(refusal([.text([0x42]), .text(Array("57".utf8)), .integer(1), .integer(0), .integer(0)]) == nil)
    }

    @Test("versions: VDV-KA ISO 8601 timestamps (zones, fractions, no zone = UTC), DTVG numbers and version files")
    func versions() throws {
        let vdv = try BlocklistVersion(parsing: "2025-06-01T03:00:00+00:00\n", for: .vdvKA)
        #expect(vdv.text == "2025-06-01T03:00:00Z")
        #expect(try BlocklistVersion(parsing: "2025-06-01T05:00:00+02:00", for: .vdvKA) == vdv)
        #expect(try BlocklistVersion(parsing: "2025-06-01 03:00:00", for: .vdvKA) == vdv)
        #expect(try BlocklistVersion(parsing: "2025-06-01T03:00Z", for: .vdvKA) == vdv)
        #expect(try BlocklistVersion(parsing: "2025-06-01T01:00:00-0200", for: .vdvKA) == vdv)
        let fraction = try BlocklistVersion(parsing: "2025-06-01T03:00:00.123456Z", for: .vdvKA)
        #expect(fraction.text == "2025-06-01T03:00:00.123Z")
        #expect(vdv < fraction)
        #expect(try BlocklistVersion(parsing: fraction.text, for: .vdvKA) == fraction)
        #expect(try BlocklistVersion(parsing: "1999-12-31T23:59:59Z", for: .vdvKA).text == "1999-12-31T23:59:59Z")
        #expect(try BlocklistVersion(parsing: "2024-02-29T12:00:00Z", for: .vdvKA).text == "2024-02-29T12:00:00Z")
        // Found by fuzz-blocklist: a year before 1000 written with three digits did not read back.
        let early = try BlocklistVersion(parsing: "0224-06-04 03:00:00.1456Z", for: .vdvKA)
        #expect(early.text == "0224-06-04T03:00:00.145Z")
        #expect(try BlocklistVersion(parsing: early.text, for: .vdvKA) == early)
        for bad in [
            "", "2025-06-01", "2025-02-30T00:00:00Z", "2025-06-01T24:00:00Z", "2025-06-01T03:00:00+25:00",
            "2025-06-01T03:00:00 Z", "42", "2025-06-01T03:00:00.Z",
        ] {
            #expect(throws: BlocklistVersionError.self, "\(bad)") { try BlocklistVersion(parsing: bad, for: .vdvKA) }
        }
        #expect(try BlocklistVersion(parsing: "{\"blacklistId\": 42}\n", for: .dtvgUIC) == .number(42))
        #expect(try BlocklistVersion(parsing: " 43 ", for: .dtvgUIC) == .number(43))
        for bad in ["", "-1", "{\"blacklistId\": -1}", "{\"blacklistId\": \"x\"}", "{\"id\": 4}", "4.5", "{"] {
            #expect(throws: BlocklistVersionError.self, "\(bad)") { try BlocklistVersion(parsing: bad, for: .dtvgUIC) }
        }
        #expect(BlocklistVersion.number(9) < BlocklistVersion.number(10))
    }
}
