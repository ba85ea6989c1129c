import Camera
import DeviceSettings
import FareCore
import Foundation
import Symbols
import Synchronization
import TestSupport
import Testing

/// A camera the tests script frame by frame: what a driver can do (deliver frames, short or damaged ones, go
/// quiet, fail, vanish), with the buffer cycle checked: a buffer is lent once and must come back before it is lent
/// again, and never more buffers are out than were mapped.
final class ScriptedCamera: CameraDevice, @unchecked Sendable {
    enum Step {
        /// A frame with these bytes (a whole buffer's worth; `used` of them filled).
        case frame([UInt8], used: Int? = nil)
        /// A frame the driver flags as damaged.
        case damaged([UInt8])
        /// No frame within the dequeue's timeout.
        case silence
        /// The device fails.
        case fail(CameraError)
    }

    let name = "scripted camera"
    let offered: [CameraMode]
    let format: (CameraMode) -> CameraFormat
    private var steps: [Step]
    private var storage: [UnsafeMutableRawBufferPointer] = []
    private(set) var lent: Set<Int> = []
    private(set) var violations: [String] = []
    private(set) var closed = false
    private(set) var startedMode: CameraMode?
    private var nextBuffer = 0

    init(offered: [CameraMode], steps: [Step], format: @escaping (CameraMode) -> CameraFormat) {
        self.offered = offered
        self.steps = steps
        self.format = format
    }

    deinit { for buffer in storage { buffer.deallocate() } }

    func modes(near request: CameraRequest) throws(CameraError) -> [CameraMode] { offered }

    func start(_ mode: CameraMode, bufferCount: Int) throws(CameraError) -> CameraFormat {
        startedMode = mode
        let set = format(mode)
        storage = (0..<bufferCount).map { _ in .allocate(byteCount: max(set.frameBytes, 1), alignment: 16) }
        return set
    }

    func dequeue(timeout: Duration) throws(CameraError) -> CapturedBuffer? {
        guard !steps.isEmpty else {
            // The script is over: the camera goes quiet until the test stops the capture.
            Thread.sleep(forTimeInterval: 0.002)
            return nil
        }
        let step = steps.removeFirst()
        let bytes: [UInt8]
        var used: Int
        var damaged = false
        switch step {
        case .silence:
            Thread.sleep(forTimeInterval: 0.001)
            return nil
        case .fail(let error): throw error
        case .frame(let frame, let filled):
            bytes = frame
            used = filled ?? frame.count
        case .damaged(let frame):
            bytes = frame
            used = frame.count
            damaged = true
        }
        let index = nextBuffer
        nextBuffer = (nextBuffer + 1) % storage.count
        if lent.contains(index) { violations.append("buffer \(index) lent again before it came back") }
        lent.insert(index)
        let buffer = storage[index]
        let count = min(bytes.count, buffer.count)
        bytes.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(count))) }
        used = min(used, count)
        return CapturedBuffer(
            index: index, bytes: UnsafeRawBufferPointer(rebasing: buffer.prefix(count)), bytesUsed: used,
            isDamaged: damaged)
    }

    func requeue(_ buffer: CapturedBuffer) throws(CameraError) {
        if lent.remove(buffer.index) == nil { violations.append("buffer \(buffer.index) given back but not lent") }
    }

    func close() { closed = true }
}

/// Runs a capture on a thread until `until` holds of its events and counts (or a few seconds pass), then stops it
/// and returns every frame it queued, with the events.
private func capture(
    settings: CameraCapture.Settings, cameras: [ScriptedCamera], openFailures: Int = 0,
    until done: @escaping @Sendable ([CameraCapture.Event], CameraCapture.Counts) -> Bool
) async -> (frames: [VideoFrame], events: [CameraCapture.Event], counts: CameraCapture.Counts) {
    let queue = FrameQueue(capacity: 1000)
    let events = Mutex<[CameraCapture.Event]>([])
    let opened = Mutex(0)
    let cameras = UncheckedBox(cameras)
    let capture = CameraCapture(
        settings: settings, queue: queue,
        open: { () throws(CameraError) -> any CameraDevice in
            let attempt = opened.withLock { count in
                defer { count += 1 }
                return count
            }
            if attempt < openFailures { throw CameraError(.unavailable, "/dev/video9: no such camera") }
            let camera = cameras.value[min(attempt - openFailures, cameras.value.count - 1)]
            return camera
        },
        onEvent: { event in events.withLock { $0.append(event) } })
    let thread = Thread { capture.run() }
    thread.start()
    let deadline = ContinuousClock.now + .seconds(10)
    while ContinuousClock.now < deadline, !done(events.withLock { $0 }, capture.counts) {
        try? await Task.sleep(for: .milliseconds(2))
    }
    capture.stop()
    var frames: [VideoFrame] = []
    while let frame = await queue.next() { frames.append(frame) }
    return (frames, events.withLock { $0 }, capture.counts)
}

/// Hands a non-Sendable value to a closure the test knows runs on one thread at a time.
private struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

@Suite("Camera capture: negotiation, the buffer cycle, bad frames and reopening")
struct CameraCaptureTests {
    static let grey = CameraMode(pixelFormat: .grey, width: 4, height: 2, framesPerSecond: 30)
    static func packed(_ format: CameraMode) -> CameraFormat {
        CameraFormat(mode: format, bytesPerLine: format.width, frameBytes: format.width * format.height)
    }
    static func frame(_ value: UInt8) -> [UInt8] { [UInt8](repeating: value, count: 8) }
    static let quick = CameraCapture.Settings(
        request: CameraRequest(width: 4, height: 2), bufferCount: 3, frameTimeout: .seconds(5),
        reopenDelay: .milliseconds(10), maximumReopenDelay: .milliseconds(40), badFrameLimit: 3)

    @Test("frames arrive in order with their luminance; every buffer lent is given back; the camera is closed")
    func framesAndBufferCycle() async {
        let camera = ScriptedCamera(
            offered: [Self.grey], steps: (1...10).map { .frame(Self.frame(UInt8($0))) }, format: Self.packed)
        let result = await capture(settings: Self.quick, cameras: [camera]) { _, counts in counts.frames == 10 }
        #expect(result.frames.map(\.index) == Array(0..<10))
        #expect(result.frames.map { $0.image.pixels } == (1...10).map { Self.frame(UInt8($0)) })
        #expect(result.frames.map(\.time) == result.frames.map(\.time).sorted())
        #expect(camera.violations.isEmpty, "\(camera.violations)")
        #expect(camera.lent.isEmpty)
        #expect(camera.closed)
        #expect(result.events.first == .opened(name: "scripted camera", format: Self.packed(Self.grey)))
    }

    @Test("the luminance plane is read with the driver's row padding, and from packed 4:2:2 formats")
    func luminanceLayouts() {
        let withPadding = CameraFormat(mode: Self.grey, bytesPerLine: 6, frameBytes: 12)
        let padded: [UInt8] = [1, 2, 3, 4, 0xEE, 0xEE, 5, 6, 7, 8]
        let image = padded.withUnsafeBytes { bytes in
            withPadding.luminance(of: CapturedBuffer(index: 0, bytes: bytes, bytesUsed: bytes.count))
        }
        #expect(image?.pixels == [1, 2, 3, 4, 5, 6, 7, 8])
        // YU12: the plane first, chroma after it, never read.
        let yu12 = CameraFormat(
            mode: CameraMode(pixelFormat: .yuv420, width: 4, height: 2, framesPerSecond: 30), bytesPerLine: 4,
            frameBytes: 12)
        let planar: [UInt8] = [9, 8, 7, 6, 5, 4, 3, 2, 0x80, 0x80, 0x80, 0x80]
        #expect(
            planar.withUnsafeBytes {
                yu12.luminance(of: CapturedBuffer(index: 0, bytes: $0, bytesUsed: 12))?.pixels
            } == [9, 8, 7, 6, 5, 4, 3, 2])
        // YUYV and UYVY: every other byte, from the first or the second.
        let row: [UInt8] = [10, 0x80, 11, 0x81, 12, 0x82, 13, 0x83, 20, 0x80, 21, 0x81, 22, 0x82, 23, 0x83]
        for (format, expected) in [
            (PixelFormat.yuyv, [UInt8]([10, 11, 12, 13, 20, 21, 22, 23])),
            (.uyvy, [0x80, 0x81, 0x82, 0x83, 0x80, 0x81, 0x82, 0x83]),
        ] {
            let set = CameraFormat(
                mode: CameraMode(pixelFormat: format, width: 4, height: 2, framesPerSecond: 30), bytesPerLine: 8,
                frameBytes: 16)
            #expect(
                row.withUnsafeBytes { set.luminance(of: CapturedBuffer(index: 0, bytes: $0, bytesUsed: 16))?.pixels }
                    == expected, "\(format)")
        }
        // Rows narrower than the image, or a compressed format: not readable at all.
        #expect(CameraFormat(mode: Self.grey, bytesPerLine: 3, frameBytes: 8).luminanceBytesNeeded == nil)
        let mjpeg = CameraMode(pixelFormat: .mjpeg, width: 4, height: 2, framesPerSecond: 30)
        #expect(CameraFormat(mode: mjpeg, bytesPerLine: 4, frameBytes: 8).luminanceBytesNeeded == nil)
    }

    @Test("short and damaged frames are skipped and counted; too many in a row and the camera is reopened")
    func badFrames() async {
        let first = ScriptedCamera(
            offered: [Self.grey],
            steps: [
                .frame(Self.frame(1)), .frame(Self.frame(2), used: 5), .damaged(Self.frame(3)), .frame(Self.frame(4)),
                .frame(Self.frame(5), used: 0), .frame([1, 2]), .damaged(Self.frame(6)),
            ], format: Self.packed)
        let second = ScriptedCamera(offered: [Self.grey], steps: [.frame(Self.frame(7))], format: Self.packed)
        let result = await capture(settings: Self.quick, cameras: [first, second]) { _, counts in
            counts.frames == 3
        }
        #expect(result.frames.map { $0.image.pixels.first } == [1, 4, 7])
        #expect(result.frames.map(\.index) == [0, 1, 2], "indices run on across the reopening")
        #expect(result.counts.badFrames == 5 && result.counts.openings == 2)
        let badReasons = result.events.compactMap { if case .badFrame(let reason) = $0 { reason } else { nil } }
        #expect(badReasons.first == "frame 1 holds 5 bytes, 8 needed")
        #expect(badReasons.contains("the driver marked frame 1 damaged"))
        let failures = result.events.compactMap { if case .failed(let error, _) = $0 { error } else { nil } }
        #expect(failures.map(\.kind) == [.badFrames])
        #expect(failures.first?.message.contains("3 bad frames in a row") == true)
        #expect(first.closed && first.violations.isEmpty && first.lent.isEmpty)
        #expect(second.violations.isEmpty)
    }

    @Test("a camera that vanishes mid-stream is closed and opened again; the frames go on")
    func reopenAfterLoss() async {
        let unplugged = CameraError(.lost, "/dev/video0: the camera stopped (unplugged or a driver error)")
        let first = ScriptedCamera(
            offered: [Self.grey], steps: [.frame(Self.frame(1)), .frame(Self.frame(2)), .fail(unplugged)],
            format: Self.packed)
        let second = ScriptedCamera(
            offered: [Self.grey], steps: [.frame(Self.frame(3)), .frame(Self.frame(4))], format: Self.packed)
        let result = await capture(settings: Self.quick, cameras: [first, second], openFailures: 0) { _, counts in
            counts.frames == 4
        }
        #expect(result.frames.map { $0.image.pixels.first } == [1, 2, 3, 4])
        #expect(result.events.contains(.failed(unplugged, retryIn: .milliseconds(10))))
        #expect(first.closed && first.lent.isEmpty, "the lost camera's buffers are not kept")
        #expect(result.counts.openings == 2)
    }

    @Test("a camera that cannot be opened is tried again, waiting longer each time up to the maximum")
    func backoffWhileOpeningFails() async {
        let camera = ScriptedCamera(offered: [Self.grey], steps: [.frame(Self.frame(1))], format: Self.packed)
        let result = await capture(settings: Self.quick, cameras: [camera], openFailures: 4) { _, counts in
            counts.frames == 1
        }
        let waits = result.events.compactMap { if case .failed(_, let wait) = $0 { wait } else { nil } }
        #expect(waits == [.milliseconds(10), .milliseconds(20), .milliseconds(40), .milliseconds(40)])
        #expect(result.frames.count == 1)
        // Once streaming, the wait starts again from the shortest.
        let lost = CameraError(.lost, "gone")
        let flaky = ScriptedCamera(
            offered: [Self.grey], steps: [.frame(Self.frame(2)), .fail(lost)], format: Self.packed)
        let again = await capture(settings: Self.quick, cameras: [flaky, camera], openFailures: 2) { events, _ in
            events.contains(.failed(lost, retryIn: .milliseconds(10)))
        }
        #expect(again.events.contains(.failed(lost, retryIn: .milliseconds(10))))
    }

    @Test("a camera offering nothing readable, or going quiet, is a clear failure and is tried again")
    func noModeAndStall() async {
        let mjpegOnly = ScriptedCamera(
            offered: [CameraMode(pixelFormat: .mjpeg, width: 1280, height: 720, framesPerSecond: 30)], steps: [],
            format: Self.packed)
        let refused = await capture(settings: Self.quick, cameras: [mjpegOnly]) { events, _ in events.count >= 2 }
        guard case .failed(let error, _) = refused.events.first else {
            Issue.record("no failure: \(refused.events)")
            return
        }
        #expect(error.kind == .noUsableMode)
        #expect(error.message.contains("offers MJPG") && error.message.contains("YU12"), "\(error.message)")

        var settings = Self.quick
        settings.frameTimeout = .milliseconds(50)
        let quiet = ScriptedCamera(offered: [Self.grey], steps: [.frame(Self.frame(1))], format: Self.packed)
        let stalled = await capture(settings: settings, cameras: [quiet]) { events, _ in
            events.contains { if case .failed(let error, _) = $0 { error.kind == .stalled } else { false } }
        }
        #expect(stalled.frames.count >= 1)
        #expect(quiet.closed)
    }

    @Test("a recording plays as a camera: the same frames as the reader's, at its rate, then again from the start")
    func recordingAsCamera() async throws {
        let path = Fixtures.path("video/handheld-320x240-420.y4m")
        let reader = try Y4MReader(contentsOfFile: path)
        var expected: [GrayImage] = []
        while let frame = try reader.nextFrame() { expected.append(frame.image) }
        let queue = FrameQueue(capacity: 1000)
        let events = Mutex<[CameraCapture.Event]>([])
        let capture = CameraCapture(
            settings: CameraCapture.Settings(request: CameraRequest(), reopenDelay: .milliseconds(10)), queue: queue,
            open: { () throws(CameraError) -> any CameraDevice in try RecordedCamera(path: path) },
            onEvent: { event in events.withLock { $0.append(event) } })
        let thread = Thread { capture.run() }
        thread.start()
        let started = ContinuousClock.now
        while capture.counts.frames < expected.count + 1, ContinuousClock.now - started < .seconds(20) {
            try await Task.sleep(for: .milliseconds(10))
        }
        capture.stop()
        var frames: [VideoFrame] = []
        while let frame = await queue.next() { frames.append(frame) }
        #expect(frames.prefix(expected.count).map(\.image) == expected)
        #expect(frames.count > expected.count, "played again after its end")
        // Paced at its 4 frames a second: the last frame of the first play about 1.75 s after the first.
        let span = frames[expected.count - 1].time - frames[0].time
        #expect(span >= .milliseconds(1700), "\(span)")
        let ended = events.withLock { $0 }.compactMap { if case .failed(let error, _) = $0 { error } else { nil } }
        #expect(ended.first?.kind == .ended)
        #expect(ended.first?.message.contains("ended after \(expected.count) frames") == true)
        #expect(throws: CameraError.self) { try RecordedCamera(path: Fixtures.path("video/ticket-aztec.png")) }
    }
}
