import FareCore
import Foundation
import SeededRandom
import Testing

@testable import TicketFormats

/// Parses and expects `malformed` with a message that mentions `fragment` (usually `byte N`).
private func expectMalformed(
    _ bytes: [UInt8], mentioning fragment: String, inflateLimit: Int = Zlib.defaultInflateLimit,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    do {
        let container = try UICContainer(parsing: bytes, inflateLimit: inflateLimit)
        Issue.record("parsed \(container.records.count) records, expected malformed", sourceLocation: sourceLocation)
    } catch {
        #expect(error.code == .malformed, "\(error)", sourceLocation: sourceLocation)
        #expect(error.message.contains(fragment), "\(error.message)", sourceLocation: sourceLocation)
    }
}

/// A container around hand-made inflated data, for record-level faults.
private func container(inflated: [UInt8]) -> [UInt8] {
    UIC918_3.encode(inflated: inflated, issuerCode: "1080", keyID: "00007", signer: UICFixture.derSigner)
}

@Suite("UIC 918.3 malformed input")
struct UICMalformedTests {
    @Test("a container cut anywhere in its header says where")
    func truncatedHeader() throws {
        let v1 = try UICFixture.bytes(UICFixture.cityMobilV1)
        for length in 0..<68 {
            expectMalformed(Array(v1.prefix(length)), mentioning: "truncated at byte \(length)")
        }
        let v2 = try UICFixture.bytes(UICFixture.superSparpreisV2)
        for length in 0..<82 {
            expectMalformed(Array(v2.prefix(length)), mentioning: "truncated at byte \(length)")
        }
    }

    @Test("a container cut in its compressed data: the length field at byte 64 overstates it")
    func truncatedData() throws {
        let v1 = try UICFixture.bytes(UICFixture.cityMobilV1)
        for length in 68..<v1.count {
            expectMalformed(Array(v1.prefix(length)), mentioning: "data length at byte 64 states 285 bytes")
        }
    }

    @Test("a length field that is not digits, or that points past the end")
    func badLength() throws {
        var bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        bytes[66] = UInt8(ascii: "x")
        expectMalformed(bytes, mentioning: "data length at byte 64 is \"02x5\", not 4 digits")
        bytes[66] = UInt8(ascii: " ")
        expectMalformed(bytes, mentioning: "at byte 64")

        var long = try UICFixture.bytes(UICFixture.superSparpreisV2)
        long.replaceSubrange(78..<82, with: Array("9999".utf8))
        expectMalformed(long, mentioning: "data length at byte 78 states 9999 bytes, but only 196 follow")
    }

    @Test("a broken zlib stream names the byte where the compressed data starts")
    func brokenZlib() throws {
        var bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        bytes[69] ^= 0xFF
        expectMalformed(bytes, mentioning: "compressed data at byte 68 does not inflate")

        var middle = try UICFixture.bytes(UICFixture.deutschlandTicket)
        middle[200] ^= 0x55
        expectMalformed(middle, mentioning: "compressed data at byte 68")

        var garbage = Array(try UICFixture.bytes(UICFixture.cityMobilV1).prefix(64))
        garbage += Array("0004".utf8) + [1, 2, 3, 4]
        expectMalformed(garbage, mentioning: "compressed data at byte 68")
    }

    @Test("a zlib bomb stops at the cap, with the offset of the data")
    func zlibBomb() {
        let bomb = container(inflated: [UInt8](repeating: 0x30, count: 200 * 1024))
        #expect(bomb.count < 1_000)
        expectMalformed(bomb, mentioning: "compressed data at byte 68")
        expectMalformed(bomb, mentioning: "64 KiB limit")
        let small = container(
            inflated: UICRecord(id: "U_FLEX", version: "13", body: [UInt8](repeating: 1, count: 2_000)).encoded())
        expectMalformed(small, mentioning: "limit", inflateLimit: 1_024)
    }

    @Test("records that overrun, are shorter than their header, or have no digits in their length")
    func brokenRecords() {
        let good = UICRecord(id: "0080VU", version: "01", body: [1, 2, 3]).encoded()
        expectMalformed(
            container(inflated: good + Array("U_HEAD010099abc".utf8)), mentioning: "record U_HEAD at byte 15")
        expectMalformed(container(inflated: good + Array("U_HEAD010099abc".utf8)), mentioning: "length of 99")
        expectMalformed(
            container(inflated: Array("U_HEAD010005abcdef".utf8)), mentioning: "less than its own 12-byte header")
        expectMalformed(container(inflated: Array("U_HEAD01 5x3abcdef".utf8)), mentioning: "U_HEAD at byte 8")
        expectMalformed(container(inflated: good + Array("U_HE".utf8)), mentioning: "record header at byte 15")
        expectMalformed(container(inflated: [0xFF] + Array("_HEAD010012".utf8)), mentioning: "record header at byte 0")
    }

    @Test("a version 1 signature field that is not DER, or has more than zero padding after it")
    func badDER() throws {
        let bytes = try UICFixture.bytes(UICFixture.cityMobilV1)
        var notSequence = bytes
        notSequence[14] = 0x31
        expectMalformed(notSequence, mentioning: "signature field at byte 14 does not hold a DER signature")
        var tooLong = bytes
        tooLong[15] = 0x40
        expectMalformed(tooLong, mentioning: "signature field at byte 14")
        var notInteger = bytes
        notInteger[16] = 0x04
        expectMalformed(notInteger, mentioning: "exactly two INTEGERs")
        var dirtyPadding = bytes
        dirtyPadding[62] = 0x01
        expectMalformed(dirtyPadding, mentioning: "0x1 at byte 62")
    }

    @Test("broken known records: the mapping names their offset in the inflated data")
    func brokenKnownRecords() throws {
        var head = UICHead(issuerCode: "1080", ticketKey: "K", issuedAt: Date(timeIntervalSince1970: 0)).record()
        head.body.replaceSubrange(24..<36, with: Array("320120251200".utf8))
        let bytes = container(inflated: UICRecord(id: "U_FLEX", version: "13", body: [0]).encoded() + head.encoded())
        let parsed = try UICContainer(parsing: bytes)
        let error = #expect(throws: FormatError.self) { try UIC918_3.ticket(from: parsed) }
        #expect(error?.code == .malformed)
        #expect(error?.message.contains("issuing time of the U_HEAD record at byte 49") == true)

        let short = UICRecord(id: "U_HEAD", version: "01", body: Array("1080ABC".utf8), offset: 10)
        let shortError = #expect(throws: FormatError.self) { try UICHead(record: short) }
        #expect(shortError?.message.contains("byte 26") == true)

        let layout = UICRecord(id: "U_TLAY", version: "01", body: Array("RCT200020102011000005Hallo0101".utf8))
        let layoutError = #expect(throws: FormatError.self) { try UICLayout(record: layout) }
        #expect(layoutError?.message.contains("field 2's") == true)
        #expect(layoutError?.message.contains("byte 42") == true)

        let overrun = UICRecord(id: "U_TLAY", version: "01", body: Array("RCT200010102011000099Hallo".utf8))
        let overrunError = #expect(throws: FormatError.self) { try UICLayout(record: overrun) }
        #expect(overrunError?.message.contains("field 1's text at byte 33") == true)

        let bl = UICRecord(
            id: "0080BL", version: "03", body: Array("031".utf8) + Array("3201202431012024ABCDEFGHIJ00".utf8))
        let blError = #expect(throws: FormatError.self) { try UIC0080BL(record: bl) }
        #expect(blError?.message.contains("first day of validity block 1 of the 0080BL record at byte 15") == true)
    }

    @Test(
        "random bytes and single-byte mutations of the samples are read, or refused as malformed or unsupported with a reason"
    )
    func fuzz() throws {
        var random = SeededRandomNumberGenerator(seed: 0x5EED_918_3)
        // What the inspector sees for each: a ticket, or a malformed or unsupported verdict with a sentence saying
        // why (a printed layout that cannot be read is left out, with its reason); never a crash, never another error.
        var refusals = 0
        var unexplained: [String] = []
        func refused(_ error: FormatError) {
            refusals += 1
            if !(error.code == .malformed || error.code == .unsupported) || error.message.isEmpty {
                unexplained.append(error.description)
            }
        }
        func exercise(_ bytes: [UInt8]) {
            let container: UICContainer
            do {
                container = try UICContainer(parsing: bytes, inflateLimit: 16 * 1024)
            } catch {
                return refused(error)
            }
            do {
                _ = try UIC918_3.ticket(from: container).details.count
            } catch {
                refused(error)
            }
            for record in container.records where record.id == "U_TLAY" {
                do {
                    _ = try UICLayout(record: record).renderedLines()
                } catch {
                    refused(error)
                }
            }
        }

        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<300, using: &random)
            var bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
            if Bool.random(using: &random) {
                bytes = Array("#UT0\(Int.random(in: 1...2, using: &random))".utf8) + bytes
            }
            exercise(bytes)
        }

        for name in UICFixture.all {
            let original = try UICFixture.bytes(name)
            for index in original.indices {
                for value in [0x00, 0xFF, UInt8.random(in: 0...255, using: &random), original[index] ^ 0x01] {
                    var mutated = original
                    mutated[index] = value
                    exercise(mutated)
                }
            }
        }
        #expect(refusals > 0)
        #expect(unexplained.isEmpty, "refusals without a malformed or unsupported reason: \(unexplained.prefix(3))")
    }

    @Test(
        "mutated record data, recompressed so that it reaches the record decoders, is read or refused as malformed or unsupported with a reason"
    )
    func fuzzRecords() throws {
        var random = SeededRandomNumberGenerator(seed: 0x0080_B1)
        var refusals = 0
        var unexplained: [String] = []
        func refused(_ error: FormatError) {
            refusals += 1
            if !(error.code == .malformed || error.code == .unsupported) || error.message.isEmpty {
                unexplained.append(error.description)
            }
        }
        var samples: [[UInt8]] = []
        for name in UICFixture.all {
            samples.append(try UICFixture.container(name).records.flatMap { $0.encoded() })
        }
        let digits = Array("0123456789".utf8)
        for sample in samples {
            for _ in 0..<1_500 {
                var mutated = sample
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let index = Int.random(in: 0..<mutated.count, using: &random)
                    // Digits keep length fields plausible so that the decoders behind them get exercised.
                    mutated[index] =
                        Bool.random(using: &random)
                        ? digits.randomElement(using: &random)! : UInt8.random(in: 0...255, using: &random)
                }
                if Int.random(in: 0..<10, using: &random) == 0 {
                    mutated.removeLast(Int.random(in: 0..<min(40, mutated.count), using: &random))
                }
                let parsed: UICContainer
                do {
                    parsed = try UICContainer(parsing: container(inflated: mutated))
                } catch {
                    refused(error)
                    continue
                }
                do { _ = try UIC918_3.ticket(from: parsed) } catch { refused(error) }
                for record in parsed.records {
                    // Each decoder refuses the records that are not its own as well: same kinds, same sentences.
                    do { _ = try UICHead(record: record) } catch { refused(error) }
                    do { _ = try UIC0080BL(record: record) } catch { refused(error) }
                    do { _ = try UICLayout(record: record).renderedLines() } catch { refused(error) }
                }
            }
        }
        #expect(refusals > 0)
        #expect(unexplained.isEmpty, "refusals without a malformed or unsupported reason: \(unexplained.prefix(3))")
    }
}
