import FareCore
import Foundation
import Testing

@testable import Scanners

/// The base45 FC1 text ticket typed in the wedge recordings (`make-input-recordings.py`).
private let fc1Ticket =
    "FC1:6BFOXN*TS0BI$ZD4N9:9S6RCVN5+O30K3/XIV0W23NTDEXWK G2EP4J0BGJLFX3R3VHXK.PJ:2DPF6R:5SVBHABVCNN95SWMPHQUHQN"
    + "%A0SOE+QQAB-HQ/HQ7IR.SQEEOK9SAI4- 7Y15KBPD34 QKHTS"

/// Replays a recorded `input_event` stream through a framer in chunks of `chunk` bytes (a pipe may split
/// records anywhere), then ends it as the transport does when the stream goes quiet.
private func frame(_ name: String, with framer: WedgeFramer, chunk: Int = 4096) throws -> [WedgeFramer.Outcome] {
    try frame(bytes: try Recordings.bytes(name), with: framer, chunk: chunk)
}

/// Replays `input_event` bytes through a framer, as `frame(_:with:chunk:)` does a recording.
private func frame(bytes: [UInt8], with framer: WedgeFramer, chunk: Int = 4096) throws -> [WedgeFramer.Outcome] {
    var framer = framer
    var decoder = InputEventDecoder()
    var outcomes: [WedgeFramer.Outcome] = []
    var offset = 0
    while offset < bytes.count {
        let end = min(offset + chunk, bytes.count)
        for event in decoder.decode(bytes[offset..<end]) {
            outcomes += framer.accept(event)
        }
        offset = end
    }
    #expect(decoder.pendingBytes == 0)
    if let last = framer.finishIdleScan() { outcomes.append(last) }
    return outcomes
}

private func texts(_ outcomes: [WedgeFramer.Outcome]) -> [String] {
    outcomes.map {
        switch $0 {
        case .scan(let scan): String(decoding: scan.payload, as: UTF8.self)
        case .dropped(let dropped): "dropped: \(dropped.reason)"
        }
    }
}

@Suite struct WedgeTests {
    @Test func usLayoutWithShiftCapsLockAndARepeatIgnored() throws {
        let outcomes = try frame("wedge-us.inputevents", with: WedgeFramer(layout: .us), chunk: 7)
        #expect(texts(outcomes) == [fc1Ticket, "HELLOyz"])
        if case .scan(let scan) = outcomes.first {
            #expect(scan.payload == Array(fc1Ticket.utf8))
            #expect(scan.symbology == .other)
        }
    }

    @Test func germanLayout() throws {
        let outcomes = try frame("wedge-de.inputevents", with: WedgeFramer(layout: .german))
        #expect(texts(outcomes) == [fc1Ticket, "yZ-Grüße@öä{\\}&=#'"])
        // The UTF-8 bytes of the umlauts and ß, not Latin-1.
        if case .scan(let scan) = outcomes.last {
            #expect(scan.payload.starts(with: Array("yZ-Gr".utf8) + [0xC3, 0xBC, 0xC3, 0x9F]))
        }
    }

    @Test func germanStreamReadWithTheUSLayoutSaysWhatToFix() throws {
        // What a user sees when the layout setting does not match the scanner: the ticket comes out with
        // y/z and punctuation wrong (and then fails verification), and keys that only AltGr gives in
        // German drop the scan with a reason.
        let outcomes = try frame("wedge-de.inputevents", with: WedgeFramer(layout: .us))
        let result = texts(outcomes)
        #expect(result.count == 2)
        #expect(result.first?.hasPrefix("FC1>6BFOXN}TS0BI$YD4N9>9S6RCVN5]O30K3&XIV0W23") == true)
        #expect(
            result.last
                == "dropped: key code(s) 16, 8, 12, 11 type nothing in the us layout; "
                + "set the wedge layout to the one configured on the scanner"
        )
    }

    @Test func interKeyTimeoutSplitsTwoScans() throws {
        let outcomes = try frame("wedge-timeout.inputevents", with: WedgeFramer(layout: .us))
        #expect(texts(outcomes) == ["FC1:ABC", "XYZ"])

        // With a longer timeout the pause is part of one scan.
        let patient = WedgeFramer(layout: .us, interKeyTimeout: .milliseconds(500))
        #expect(texts(try frame("wedge-timeout.inputevents", with: patient)) == ["FC1:ABCXYZ"])
    }

    @Test func enterAloneIsNotAScanAndTabCanBeTheSuffix() throws {
        var framer = WedgeFramer(layout: .us, suffixKeys: [KeyCode.tab])
        var outcomes: [WedgeFramer.Outcome] = []
        var micros: Int64 = 0
        func key(_ code: UInt16, _ value: Int32) -> InputEvent {
            micros += 1000
            return InputEvent(
                seconds: 100, microseconds: micros, type: InputEvent.EventType.key, code: code, value: value)
        }
        for code: UInt16 in [KeyCode.tab, 30, 48, KeyCode.tab] {
            outcomes += framer.accept(key(code, 1))
            outcomes += framer.accept(key(code, 0))
        }
        #expect(texts(outcomes) == ["ab"])
    }

    @Test func unplugMidScanDropsIt() throws {
        var framer = WedgeFramer(layout: .us)
        var decoder = InputEventDecoder()
        let bytes = try Recordings.bytes("wedge-timeout.inputevents")
        for event in decoder.decode(bytes.prefix(InputEvent.size * 24)) {
            #expect(framer.accept(event).isEmpty)
        }
        let dropped = framer.abandon(reason: "the scanner was unplugged")
        #expect(dropped?.receivedBytes == 2)
        #expect(framer.finishIdleScan() == nil)
    }

    @Test func aimIdentifierIsStrippedWhenAsked() throws {
        var framer = WedgeFramer(layout: .us, stripsAIMIdentifier: true)
        var micros: Int64 = 0
        var outcomes: [WedgeFramer.Outcome] = []
        func send(_ code: UInt16, _ value: Int32) {
            micros += 1000
            let event = InputEvent(
                seconds: 5, microseconds: micros, type: InputEvent.EventType.key, code: code, value: value)
            outcomes += framer.accept(event)
        }
        // "]Q1AB" then Enter: ] is code 27, Q is Shift+16, 1 is code 2, A is Shift+30, B is Shift+48.
        for (code, shifted) in [(27, false), (16, true), (2, false), (30, true), (48, true), (28, false)] {
            if shifted { send(KeyCode.leftShift, 1) }
            send(UInt16(code), 1)
            send(UInt16(code), 0)
            if shifted { send(KeyCode.leftShift, 0) }
        }
        guard case .scan(let scan)? = outcomes.first, outcomes.count == 1 else {
            Issue.record("expected one scan, got \(outcomes)")
            return
        }
        #expect(scan.payload == Array("AB".utf8))
        #expect(scan.symbology == .qr)
    }

    /// Found by `fuzz-wedge`: a record's seconds field times 10⁶ overflowed `Int64` and trapped the reader.
    /// Keys at −9·10¹² s, +9·10¹² s (a gap past `Int64.max` µs) and `Int64.max` s are three scans, not a crash.
    @Test func timestampsBeyondAnyClockAreFarApartKeysNotATrap() throws {
        let bytes = try FuzzRegressions.bytes("wedge-timestamp-overflow.inputevents")
        #expect(texts(try frame(bytes: bytes, with: WedgeFramer(layout: .us))) == ["a", "b", "c"])
        #expect(InputEvent(seconds: .max, microseconds: 0, type: 1, code: 30, value: 1).timestampMicroseconds == .max)
        #expect(InputEvent(seconds: .min, microseconds: 0, type: 1, code: 30, value: 1).timestampMicroseconds == .min)

        // The input the fuzzer found (its selector byte and the partial record at its end removed): framed to the end without trapping.
        let found = try FuzzRegressions.bytes("wedge-timestamp-overflow-fuzzer.inputevents")
        let outcomes = try frame(bytes: found, with: WedgeFramer(layout: .us, stripsAIMIdentifier: true))
        #expect(!outcomes.isEmpty)
    }

    @Test func inputEventRecordRoundTrips() {
        let event = InputEvent(seconds: 1_700_000_000, microseconds: 123_456, type: 1, code: 30, value: -1)
        #expect(event.record.count == InputEvent.size)
        #expect(InputEvent(record: event.record) == event)
        #expect(InputEvent(record: event.record.prefix(23)) == nil)
    }
}
