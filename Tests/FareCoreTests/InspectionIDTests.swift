import FareCore
import Foundation
import Testing

/// The id every inspection goes by, in the journal, on the page, in the upload and on the server.
@Suite("Inspection ids")
struct InspectionIDTests {
    @Test("a new id is a random (version 4, RFC 9562 variant) UUID in its usual text form")
    func versionFourUUID() throws {
        for _ in 0..<200 {
            let text = "\(InspectionID.random())"
            let uuid = try #require(UUID(uuidString: text), "\(text)")
            #expect(uuid.uuidString == text, "upper-case hex in 8-4-4-4-12 groups, as Foundation writes it")
            let bytes = withUnsafeBytes(of: uuid.uuid) { Array($0) }
            #expect(bytes[6] >> 4 == 4, "version: \(text)")
            #expect(bytes[8] >> 6 == 0b10, "variant: \(text)")
        }
    }

    @Test("ids do not repeat, and every random bit varies")
    func unique() throws {
        let ids = (0..<10_000).map { _ in "\(InspectionID.random())" }
        #expect(Set(ids).count == ids.count)
        // Over 10,000 ids each of the 122 random bits is seen both set and clear; a bit stuck at one value (a
        // generator that fills only part of the UUID) would show here.
        var seenSet = [UInt8](repeating: 0, count: 16)
        var seenClear = [UInt8](repeating: 0, count: 16)
        for id in ids {
            let uuid = try #require(UUID(uuidString: id))
            withUnsafeBytes(of: uuid.uuid) { bytes in
                for index in 0..<16 {
                    seenSet[index] |= bytes[index]
                    seenClear[index] |= ~bytes[index]
                }
            }
        }
        var fixed = [UInt8](repeating: 0, count: 16)
        fixed[6] = 0xF0
        fixed[8] = 0xC0
        for index in 0..<16 {
            #expect(seenSet[index] & seenClear[index] == ~fixed[index], "byte \(index)")
        }
    }
}

/// Latencies as the event line, the journal and the metrics give them.
@Suite("Durations in whole microseconds")
struct WholeMicrosecondsTests {
    @Test(
        "a duration is counted in whole microseconds, the rest dropped",
        arguments: [
            (Duration.zero, 0), (.nanoseconds(999), 0), (.nanoseconds(1_999), 1), (.milliseconds(2), 2_000),
            (.seconds(1.5), 1_500_000), (.seconds(3) + .nanoseconds(999), 3_000_000),
            (.seconds(86_400 * 365), 31_536_000_000_000),
        ] as [(Duration, Int)])
    func wholeMicroseconds(duration: Duration, microseconds: Int) {
        #expect(duration.wholeMicroseconds == microseconds)
    }
}
