import FareCore
import Foundation
import Symbols
import TestSupport
import Testing

/// Recordings in YUV4MPEG2 as ffmpeg writes them (grey and 4:2:0) are read frame by frame; anything else, or a
/// recording cut short, is refused with a reason.
@Suite struct Y4MReaderTests {
    static let gray = "video/handheld-320x240-gray.y4m"
    static let yuv420 = "video/handheld-320x240-420.y4m"

    static func frames(_ reader: Y4MReader) throws -> [VideoFrame] {
        var frames: [VideoFrame] = []
        while let frame = try reader.nextFrame() { frames.append(frame) }
        return frames
    }

    /// The error reading `bytes` to their end gives.
    static func error(reading bytes: [UInt8]) -> VideoFrameError? {
        do {
            let reader = try Y4MReader(source: MemoryByteSource(bytes))
            _ = try frames(reader)
            return nil
        } catch let error as VideoFrameError {
            return error
        } catch {
            Issue.record("unexpected error \(error)")
            return nil
        }
    }

    @Test func greyRecordingGivesEveryFrameWithItsTime() throws {
        let reader = try Y4MReader(contentsOfFile: Fixtures.path(Self.gray))
        #expect(reader.header.width == 320 && reader.header.height == 240)
        #expect(reader.header.chroma == .mono)
        #expect(reader.header.frameRate.description == "4.0 fps")
        let frames = try Self.frames(reader)
        #expect(frames.count == 24)
        #expect(frames.map(\.index) == Array(0..<24))
        #expect(frames[6].time == .milliseconds(1500))
        let aztec = try Fixtures.bytes("video/ticket-aztec.bin")
        #expect(SymbolScanner(configuration: .camera).scan(frames[0].image).map(\.bytes) == [aztec])
    }

    @Test func yuv420RecordingGivesItsLuminance() throws {
        let reader = try Y4MReader(contentsOfFile: Fixtures.path(Self.yuv420))
        #expect(reader.header.chroma == .yuv420)
        #expect(reader.header.chromaByteCount == 2 * 160 * 120)
        let frames = try Self.frames(reader)
        #expect(frames.count == 8)
        let aztec = try Fixtures.bytes("video/ticket-aztec.bin")
        #expect(SymbolScanner(configuration: .camera).scan(frames[3].image).map(\.bytes) == [aztec])
    }

    @Test func recordingCutInsideAFrameIsTruncatedAfterTheWholeFrames() throws {
        let bytes = try Fixtures.bytes(Self.gray)
        let headerLength = bytes.firstIndex(of: 0x0A)! + 1
        let frameLength = 6 + 320 * 240
        // Three whole frames and half of the fourth.
        let cut = Array(bytes.prefix(headerLength + 3 * frameLength + frameLength / 2))
        let reader = try Y4MReader(source: MemoryByteSource(cut))
        for _ in 0..<3 { #expect(try reader.nextFrame() != nil) }
        let error = #expect(throws: VideoFrameError.self) { try reader.nextFrame() }
        #expect(error?.code == .truncated)
        #expect(error?.message.contains("inside frame 3") == true)
    }

    @Test func recordingCutInsideAFrameMarkerOrChromaIsTruncated() throws {
        let bytes = try Fixtures.bytes(Self.yuv420)
        let headerLength = bytes.firstIndex(of: 0x0A)! + 1
        let frameLength = 6 + 320 * 240 * 3 / 2
        #expect(Self.error(reading: Array(bytes.prefix(headerLength + frameLength + 3)))?.code == .truncated)
        #expect(Self.error(reading: Array(bytes.prefix(headerLength + frameLength - 10)))?.code == .truncated)
        // Cut exactly between frames: simply fewer frames.
        #expect(Self.error(reading: Array(bytes.prefix(headerLength + 2 * frameLength))) == nil)
    }

    @Test func otherFilesAreNotYUV4MPEG2() throws {
        let png = try Fixtures.bytes("video/ticket-aztec.png")
        #expect(Self.error(reading: png)?.code == .notYUV4MPEG2)
        #expect(Self.error(reading: [])?.code == .notYUV4MPEG2)
        #expect(Self.error(reading: Array("just some text\n".utf8))?.code == .notYUV4MPEG2)
        #expect(Self.error(reading: [UInt8](repeating: 0x41, count: 5000))?.code == .notYUV4MPEG2)
        let error = Self.error(reading: png)
        #expect(error?.message.contains("ffmpeg") == true)
    }

    @Test(arguments: [
        ("W320 H240 F30:1 C444", VideoFrameError.Code.unsupported),
        ("W320 H240 F30:1 C420p10", .unsupported),
        ("W320 H240 F30:1 Cmono16", .unsupported),
        ("H240 F30:1", .corrupt),
        ("W0 H240 F30:1", .corrupt),
        ("W-5 H240 F30:1", .corrupt),
        ("Wabc H240 F30:1", .corrupt),
        ("W320 H240", .corrupt),
        ("W320 H240 F30:0", .corrupt),
        ("W320 H240 F30:1 Iz", .corrupt),
        ("W320 H240 F30:1 Qfoo", .corrupt),
        ("W320  H240 F30:1", .corrupt),
        ("W100000 H240 F30:1", .tooLarge),
        ("W8192 H8192 F30:1", .tooLarge),
    ])
    func malformedHeadersAreRefusedWithAReason(parameters: String, code: VideoFrameError.Code) {
        let error = Self.error(reading: Array("YUV4MPEG2 \(parameters)\n".utf8))
        #expect(error?.code == code, "\(parameters)")
        #expect(error?.message.isEmpty == false)
    }

    @Test func brokenFrameMarkerIsCorrupt() {
        var bytes = Array("YUV4MPEG2 W4 H2 F1:1 Cmono\nFRAME\n".utf8) + [UInt8](repeating: 9, count: 8)
        bytes += Array("FRAMX\n".utf8) + [UInt8](repeating: 9, count: 8)
        let error = Self.error(reading: bytes)
        #expect(error?.code == .corrupt)
        #expect(error?.message.contains("frame 1") == true)
    }

    @Test func frameParametersAndOddSizesAreRead() throws {
        // 3 × 3 in 4:2:0: chroma planes of 2 × 2 each; a frame marker with a parameter.
        let frame = Array("FRAME Ixyz\n".utf8) + Array(1...9) + [UInt8](repeating: 128, count: 8)
        let bytes = Array("YUV4MPEG2 W3 H3 F25:1 C420jpeg XYSCSS=420JPEG\n".utf8) + frame + frame
        let frames = try Self.frames(try Y4MReader(source: MemoryByteSource(bytes)))
        #expect(frames.count == 2)
        #expect(frames[1].image.pixels == Array(1...9))
        #expect(frames[1].time == .milliseconds(40))
    }

    @Test func missingFileIsUnreadableAndNamed() {
        let error = #expect(throws: VideoFrameError.self) { try Y4MReader(contentsOfFile: "/nonexistent/clip.y4m") }
        #expect(error?.code == .unreadable)
        #expect(error?.description.hasPrefix("/nonexistent/clip.y4m: ") == true)
    }

    @Test func bytesThatAreNoRecordingSaySoWithoutAPath() throws {
        let error = try #require(Self.error(reading: Array("GIF89a, not a video\n".utf8)))
        #expect(error.code.name == "not YUV4MPEG2")
        #expect(error.path == nil)
        #expect(error.description == error.message)
        #expect(error.message.hasPrefix("not a YUV4MPEG2 recording (it starts "))
    }

    @Test func presentationsOfTheRecording() throws {
        // The Aztec ticket (frames 0-7), out of view for 1.5 s (8-13), back (14-17), then the QR ticket (18-23).
        let aztec = try Fixtures.bytes("video/ticket-aztec.bin")
        let qr = try Fixtures.bytes("video/ticket-qr.bin")
        for (absence, expected) in [
            (Duration.seconds(2), [(0, aztec), (18, qr)]),
            (Duration.seconds(1), [(0, aztec), (14, aztec), (18, qr)]),
        ] {
            let reader = try Y4MReader(contentsOfFile: Fixtures.path(Self.gray))
            var presentations = PresentationReader(absenceForNewPresentation: absence)
            var found: [Presentation] = []
            while let frame = try reader.nextFrame() { found += presentations.presentations(in: frame) }
            #expect(found.map(\.frame) == expected.map(\.0), "absence \(absence)")
            #expect(found.map(\.symbol.bytes) == expected.map(\.1), "absence \(absence)")
        }
    }
}
