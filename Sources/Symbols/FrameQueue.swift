import FareCore
import Synchronization

/// The frames between a capture thread and the decoder: bounded, newest kept, oldest dropped and counted.
///
/// A camera delivers frames at its own pace whether or not decoding keeps up. The capture side ``offer(_:)``s each
/// frame without ever blocking; when ``capacity`` frames already wait, the oldest is dropped (an inspector wants the
/// ticket in view now, not the one from a second ago) and ``droppedFrames`` counts it, for the daemon's metric. The
/// decoder side awaits ``next()`` on its own task, off the capture thread. One decoder at a time.
public final class FrameQueue: Sendable {
    private struct State {
        var frames: [VideoFrame] = []
        var waiting: CheckedContinuation<VideoFrame?, Never>?
        var isFinished = false
        var dropped = 0
    }

    /// Frames that may wait for the decoder; at least 1.
    public let capacity: Int
    private let state = Mutex(State())

    /// Creates a queue.
    ///
    /// - Parameter capacity: Frames that may wait for the decoder (2 by default: the one being captured
    ///   while the decoder works, and one more).
    public init(capacity: Int = 2) {
        precondition(capacity >= 1, "a frame queue holds at least one frame")
        self.capacity = capacity
    }

    /// Frames dropped so far because the decoder was behind.
    public var droppedFrames: Int { state.withLock { $0.dropped } }

    /// Hands a frame to the decoder without waiting; drops the oldest waiting frame when the queue is full.
    ///
    /// - Returns: Whether a frame was dropped to make room. A frame offered after ``finish()`` is ignored.
    @discardableResult
    public func offer(_ frame: VideoFrame) -> Bool {
        let (waiter, dropped): (CheckedContinuation<VideoFrame?, Never>?, Bool) = state.withLock { state in
            guard !state.isFinished else { return (nil, false) }
            if let waiter = state.waiting {
                state.waiting = nil
                return (waiter, false)
            }
            var dropped = false
            if state.frames.count >= capacity {
                state.frames.removeFirst()
                state.dropped += 1
                dropped = true
            }
            state.frames.append(frame)
            return (nil, dropped)
        }
        // Resumed outside the lock: the decoder's task may run at once.
        waiter?.resume(returning: frame)
        return dropped
    }

    /// Ends the stream: the decoder gets the frames still waiting, then `nil`.
    public func finish() {
        let waiter = state.withLock { state in
            state.isFinished = true
            defer { state.waiting = nil }
            return state.frames.isEmpty ? state.waiting : nil
        }
        waiter?.resume(returning: nil)
    }

    /// The oldest waiting frame, waiting for one when there is none; `nil` once the stream has ended and every frame
    /// was taken.
    public func next() async -> VideoFrame? {
        await withCheckedContinuation { continuation in
            let ready: VideoFrame?? = state.withLock { state in
                if !state.frames.isEmpty { return .some(state.frames.removeFirst()) }
                if state.isFinished { return .some(nil) }
                precondition(state.waiting == nil, "one decoder at a time takes frames from a queue")
                state.waiting = continuation
                return .none
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

extension FrameQueue {
    /// Takes frames until the stream ends and turns them into presentations, on the calling task (never the capture
    /// thread); `body` gets each presentation with the frame it started in.
    ///
    /// - Returns: The frames decoded (those offered less those dropped).
    public func decodePresentations(
        with reader: inout PresentationReader, _ body: (Presentation, VideoFrame) -> Void
    ) async -> Int {
        var decoded = 0
        while let frame = await next() {
            decoded += 1
            for presentation in reader.presentations(in: frame) { body(presentation, frame) }
        }
        return decoded
    }
}
