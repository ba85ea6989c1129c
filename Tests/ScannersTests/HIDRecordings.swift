import Foundation
import TestSupport

/// Recorded device streams, in the fixture tree's `recordings`.
enum Recordings {
    static let directory = Fixtures.url("recordings")

    /// The bytes of a recording.
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

/// Inputs that crashed a scanner fuzz target (`Fuzz/`), kept in the fixture tree's `fuzz-regressions/scanners`.
enum FuzzRegressions {
    static let directory = Fixtures.url("fuzz-regressions/scanners")

    /// The bytes of a saved input.
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: directory.appendingPathComponent(name)))
    }
}

/// One report of a recorded HID stream: when it came (from the start of the recording) and its bytes.
struct RecordedReport {
    var time: Date
    var bytes: [UInt8]
}

/// Reads a `.hidreports` recording: `u32 LE microseconds, u16 LE length, report` per record.
func recordedReports(_ name: String, start: Date = Date(timeIntervalSince1970: 1_700_000_000)) throws
    -> [RecordedReport]
{
    let bytes = try Recordings.bytes(name)
    var reports: [RecordedReport] = []
    var index = 0
    while index + 6 <= bytes.count {
        let micros = (0..<4).reduce(UInt32(0)) { $0 | UInt32(bytes[index + $1]) << (8 * $1) }
        let length = Int(bytes[index + 4]) | Int(bytes[index + 5]) << 8
        index += 6
        precondition(index + length <= bytes.count, "recording \(name) is cut short")
        reports.append(
            RecordedReport(time: start + TimeInterval(micros) / 1_000_000, bytes: Array(bytes[index..<index + length]))
        )
        index += length
    }
    return reports
}
