import DeviceSettings
import FareCore
import Foundation
import Symbols

/// A YUV4MPEG2 recording played as a camera, at its own frame rate: the daemon's camera source on a file, for
/// bench work and demos, through the same capture loop and decoding as a camera. It offers one mode (`GREY`, the
/// recording's size and rate) and one buffer; at the end of the recording, or a frame cut short, it reports the
/// camera lost, so the capture loop plays it again after its reopen delay, as it would reopen a camera.
public final class RecordedCamera: CameraDevice {
    public let name: String
    private let reader: Y4MReader
    private let storage: UnsafeMutableRawBufferPointer
    private var started: ContinuousClock.Instant?
    private var next = 0

    /// Opens a recording.
    ///
    /// - Throws: ``CameraError`` `.unavailable` when the file cannot be read as a recording.
    public init(path: String) throws(CameraError) {
        do {
            reader = try Y4MReader(contentsOfFile: path)
        } catch {
            throw CameraError(.unavailable, error.description)
        }
        name = path
        storage = .allocate(byteCount: reader.header.luminanceByteCount, alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
    }

    deinit { storage.deallocate() }

    /// The recording's one mode.
    public var mode: CameraMode {
        let rate = reader.header.frameRate
        return CameraMode(
            pixelFormat: .grey, width: reader.header.width, height: reader.header.height,
            framesPerSecond: Double(rate.numerator) / Double(rate.denominator))
    }

    public func modes(near request: CameraRequest) throws(CameraError) -> [CameraMode] { [mode] }

    public func start(_ mode: CameraMode, bufferCount: Int) throws(CameraError) -> CameraFormat {
        started = .now
        return CameraFormat(mode: self.mode, bytesPerLine: self.mode.width, frameBytes: storage.count)
    }

    public func dequeue(timeout: Duration) throws(CameraError) -> CapturedBuffer? {
        guard let started else { throw CameraError(.lost, "\(name): not started") }
        let due = started + reader.header.frameRate.time(ofFrame: next)
        let wait = due - .now
        if wait > timeout {
            sleep(timeout)
            return nil
        }
        if wait > .zero { sleep(wait) }
        let frame: VideoFrame?
        do {
            frame = try reader.nextFrame()
        } catch {
            throw CameraError(.lost, error.description)
        }
        guard let frame else { throw CameraError(.ended, "\(name): the recording ended after \(next) frames") }
        next += 1
        frame.image.pixels.withUnsafeBytes { storage.copyMemory(from: $0) }
        return CapturedBuffer(index: 0, bytes: UnsafeRawBufferPointer(storage), bytesUsed: storage.count)
    }

    public func requeue(_ buffer: CapturedBuffer) throws(CameraError) {}

    public func close() {}

    private func sleep(_ duration: Duration) {
        Thread.sleep(forTimeInterval: Double(duration.wholeMicroseconds) / 1e6)
    }
}
