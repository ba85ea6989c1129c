import FareCore
import Foundation
import Symbols
import Synchronization
import TestSupport
import Testing

/// The queue between capture and decoding never grows without bound: when decoding is slower than the camera the
/// oldest frames are dropped and counted, and the newest frame is always the one decoded next.
@Suite struct FrameQueueTests {
    static func frame(_ index: Int) -> VideoFrame {
        VideoFrame(index: index, time: .milliseconds(index * 33), image: GrayImage(width: 2, height: 2, filledWith: 0))
    }

    @Test func fullQueueDropsTheOldestAndCountsIt() async {
        let queue = FrameQueue(capacity: 2)
        var dropped: [Bool] = []
        for index in 0..<10 { dropped.append(queue.offer(Self.frame(index))) }
        queue.finish()
        #expect(dropped == [false, false] + [Bool](repeating: true, count: 8))
        #expect(queue.droppedFrames == 8)
        var left: [Int] = []
        while let frame = await queue.next() { left.append(frame.index) }
        #expect(left == [8, 9])
    }

    @Test func waitingDecoderGetsTheFrameAtOnceAndEndsWithTheStream() async {
        let queue = FrameQueue(capacity: 1)
        async let first = queue.next()
        // Give the decoder time to wait; an offered frame then goes straight to it, not into the queue.
        try? await Task.sleep(for: .milliseconds(50))
        #expect(queue.offer(Self.frame(7)) == false)
        #expect(await first?.index == 7)
        queue.finish()
        #expect(await queue.next() == nil)
        #expect(queue.offer(Self.frame(8)) == false)
        #expect(await queue.next() == nil)
    }

    @Test("a capture thread faster than decoding: frames dropped and counted, the newest decoded, tickets still read")
    func captureFasterThanDecoding() async throws {
        let path = Fixtures.path("video/handheld-320x240-gray.y4m")
        let queue = FrameQueue(capacity: 2)
        let offered = Mutex(0)
        // The camera: a thread of its own that never waits for the decoder, frames as fast as the file gives them
        // (a fraction of a millisecond each; decoding one takes milliseconds).
        let capture = Thread {
            // The reader belongs to the capture thread alone, as a camera's device would.
            guard let reader = try? Y4MReader(contentsOfFile: path) else { return queue.finish() }
            while let frame = try? reader.nextFrame() {
                queue.offer(frame)
                offered.withLock { $0 += 1 }
            }
            queue.finish()
        }
        capture.start()
        var presentations = PresentationReader(absenceForNewPresentation: .seconds(2))
        var started: [Presentation] = []
        let decoded = await queue.decodePresentations(with: &presentations) { presentation, frame in
            #expect(presentation.frame == frame.index)
            started.append(presentation)
        }
        #expect(offered.withLock { $0 } == 24)
        #expect(decoded + queue.droppedFrames == 24)
        #expect(queue.droppedFrames > 0, "decoding kept up with reading: nothing was dropped")
        // Presentations come in frame order; the newest frame is never the one dropped, so the QR ticket shown last
        // is read however many frames before it were dropped.
        #expect(started.map(\.frame) == started.map(\.frame).sorted())
        #expect(started.last?.symbol.symbology == .qr)
    }
}
