import DeviceSettings
import FareCore
import Foundation
import Symbols
import Synchronization

/// The capture loop of a camera source: opens the camera, chooses its mode, cycles its buffers, checks each frame
/// and hands it to a ``FrameQueue``; reopens the camera when it fails or disappears. Runs on a thread of its own
/// (``run()`` blocks) so that decoding, on the other side of the queue, never delays a buffer's return.
///
/// Every buffer taken from the camera is given back before the next is taken, whatever the frame held. A frame
/// whose buffer holds less than its luminance plane, or that the driver flagged as damaged, is counted and skipped;
/// ``Settings/badFrameLimit`` of them in a row, no frame for ``Settings/frameTimeout``, or any error of the device is
/// the camera lost: it is closed and opened again after ``Settings/reopenDelay`` (doubling up to
/// ``Settings/maximumReopenDelay`` while it keeps failing). Frame indices and times run on across reopenings, so the
/// presentations after them follow on from those before.
public final class CameraCapture: Sendable {
    /// How the loop behaves.
    public struct Settings: Sendable, Hashable {
        /// The mode wanted.
        public var request: CameraRequest
        /// Buffers mapped from the driver.
        public var bufferCount: Int
        /// No frame for this long is a camera lost.
        public var frameTimeout: Duration
        /// Wait before opening again after a failure.
        public var reopenDelay: Duration
        /// The wait doubles while opening keeps failing, up to this.
        public var maximumReopenDelay: Duration
        /// Short or damaged frames in a row that count as a camera lost.
        public var badFrameLimit: Int

        /// Creates settings; the defaults suit a handheld's camera.
        public init(
            request: CameraRequest = CameraRequest(), bufferCount: Int = 4, frameTimeout: Duration = .seconds(3),
            reopenDelay: Duration = .seconds(1), maximumReopenDelay: Duration = .seconds(16), badFrameLimit: Int = 30
        ) {
            self.request = request
            self.bufferCount = bufferCount
            self.frameTimeout = frameTimeout
            self.reopenDelay = reopenDelay
            self.maximumReopenDelay = maximumReopenDelay
            self.badFrameLimit = badFrameLimit
        }
    }

    /// What happens to the camera, for logs, status and metrics.
    public enum Event: Sendable, Equatable {
        /// Streaming in this format.
        case opened(name: String, format: CameraFormat)
        /// The camera could not be opened or was lost; it is tried again after `retryIn`.
        case failed(CameraError, retryIn: Duration)
        /// One short or damaged frame was skipped.
        case badFrame(String)
    }

    /// Counts since the capture began.
    public struct Counts: Sendable, Hashable {
        /// Frames handed to the queue.
        public var frames = 0
        /// Short or damaged frames skipped.
        public var badFrames = 0
        /// Times the camera was opened.
        public var openings = 0
    }

    private let settings: Settings
    private let queue: FrameQueue
    private let open: @Sendable () throws(CameraError) -> any CameraDevice
    private let onEvent: @Sendable (Event) -> Void
    private let state = Mutex((counts: Counts(), stopped: false))

    /// Creates a capture loop.
    ///
    /// - Parameters:
    ///   - open: Opens the camera (a ``V4L2Camera``, a ``RecordedCamera``); called again at each reopening.
    ///   - queue: Where the frames go; finished when the loop stops.
    ///   - onEvent: Told of openings, failures and skipped frames, on the capture thread.
    public init(
        settings: Settings, queue: FrameQueue, open: @escaping @Sendable () throws(CameraError) -> any CameraDevice,
        onEvent: @escaping @Sendable (Event) -> Void = { _ in }
    ) {
        self.settings = settings
        self.queue = queue
        self.open = open
        self.onEvent = onEvent
    }

    /// The counts so far.
    public var counts: Counts { state.withLock { $0.counts } }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    /// Ends the loop: it returns within a fraction of a second, closing the camera and finishing the queue.
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// Captures until ``stop()``. Blocks: run it on a thread of its own.
    public func run() {
        defer { queue.finish() }
        let started = ContinuousClock.now
        var nextIndex = 0
        var delay = settings.reopenDelay
        while !isStopped {
            do throws(CameraError) {
                let camera = try open()
                defer { camera.close() }
                state.withLock { $0.counts.openings += 1 }
                try stream(
                    camera, started: started, nextIndex: &nextIndex, onStreaming: { delay = settings.reopenDelay })
            } catch {
                onEvent(.failed(error, retryIn: delay))
                pause(delay)
                delay = min(delay * 2, settings.maximumReopenDelay)
            }
        }
    }

    /// Streams from an opened camera until it fails or the loop is stopped.
    private func stream(
        _ camera: any CameraDevice, started: ContinuousClock.Instant, nextIndex: inout Int, onStreaming: () -> Void
    ) throws(CameraError) {
        let offered = try camera.modes(near: settings.request)
        guard let mode = CameraNegotiation.choose(settings.request, from: offered) else {
            let formats = Set(offered.map(\.pixelFormat.description)).sorted().joined(separator: ", ")
            let wanted =
                settings.request.pixelFormat.map { "\($0)" }
                ?? PixelFormat.readable.map(\.description).joined(separator: ", ")
            throw CameraError(
                .noUsableMode,
                "\(camera.name) offers \(formats.isEmpty ? "no formats" : formats), none of \(wanted)")
        }
        let format = try camera.start(mode, bufferCount: settings.bufferCount)
        guard format.luminanceBytesNeeded != nil else {
            throw CameraError(
                .noUsableMode,
                "\(camera.name) set \(format) (\(format.bytesPerLine) bytes a row), which farecheck cannot read")
        }
        onEvent(.opened(name: camera.name, format: format))
        onStreaming()
        var badInARow = 0
        var lastFrame = ContinuousClock.now
        while !isStopped {
            guard let buffer = try camera.dequeue(timeout: min(.milliseconds(200), settings.frameTimeout)) else {
                if ContinuousClock.now - lastFrame >= settings.frameTimeout {
                    throw CameraError(.stalled, "\(camera.name): no frame for \(settings.frameTimeout)")
                }
                continue
            }
            let now = ContinuousClock.now
            lastFrame = now
            let image = format.luminance(of: buffer)
            try camera.requeue(buffer)
            guard let image else {
                badInARow += 1
                state.withLock { $0.counts.badFrames += 1 }
                let reason =
                    buffer.isDamaged
                    ? "the driver marked frame \(nextIndex) damaged"
                    : "frame \(nextIndex) holds \(buffer.bytesUsed) bytes, \(format.luminanceBytesNeeded ?? 0) needed"
                onEvent(.badFrame(reason))
                if badInARow >= settings.badFrameLimit {
                    throw CameraError(.badFrames, "\(camera.name): \(badInARow) bad frames in a row (\(reason))")
                }
                continue
            }
            badInARow = 0
            state.withLock { $0.counts.frames += 1 }
            queue.offer(VideoFrame(index: nextIndex, time: now - started, image: image))
            nextIndex += 1
        }
    }

    /// Waits, waking early when the loop is stopped.
    private func pause(_ duration: Duration) {
        let until = ContinuousClock.now + duration
        while !isStopped, ContinuousClock.now < until {
            let left = Double((until - ContinuousClock.now).wholeMicroseconds) / 1e6
            Thread.sleep(forTimeInterval: max(0, min(0.05, left)))
        }
    }
}
