import CV4L2
import DeviceSettings
import FareCore
import SystemCalls
import SystemPackage

#if canImport(Glibc)
    import Glibc
#endif

/// A V4L2 camera through libv4l2: the device calls are in `CV4L2` (one thin C file), this class only strings them
/// together. Everything that decides anything (which mode, what a frame must hold, when to reopen) is in
/// ``CameraNegotiation`` and ``CameraCapture``, tested without a camera.
public final class V4L2Camera: CameraDevice {
    /// The device node.
    public let path: String
    public let name: String
    private var descriptor: Int32
    private var buffers: [UnsafeMutableRawBufferPointer] = []
    private var isStreaming = false

    /// Opens a video node and checks that it captures video by streaming.
    ///
    /// - Throws: ``CameraError`` `.unavailable` with the reason (missing, no permission, busy, not a camera).
    public init(path: String) throws(CameraError) {
        self.path = path
        do {
            descriptor = try systemCallReturningNegatedErrno { CV4L2_open(path) }
        } catch .inappropriateIOCTLForDevice {
            throw CameraError(.notACamera, "\(path): not a camera that streams video")
        } catch {
            throw CameraError(.unavailable, "\(path): \(Self.explain(error))")
        }
        var card = [CChar](repeating: 0, count: 64)
        var streams: Int32 = 0
        let result = CV4L2_capabilities(descriptor, &card, card.count, &streams)
        guard result == 0, streams != 0 else {
            _ = CV4L2_close(descriptor)
            if result == 0 || result == -ENOTTY {
                throw CameraError(.notACamera, "\(path): not a camera that streams video")
            }
            throw CameraError(.unavailable, "\(path): \(Errno(rawValue: -result))")
        }
        name = String(decoding: card.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    deinit { close() }

    public func modes(near request: CameraRequest) throws(CameraError) -> [CameraMode] {
        var modes: [CameraMode] = []
        for formatIndex in UInt32(0)..<64 {
            var code: UInt32 = 0
            var emulated: Int32 = 0
            guard CV4L2_pixelFormat(descriptor, formatIndex, &code, &emulated) == 0 else { break }
            for sizeIndex in UInt32(0)..<256 {
                var range = (UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0), UInt32(0))
                guard
                    CV4L2_frameSize(
                        descriptor, code, sizeIndex, &range.0, &range.1, &range.2, &range.3, &range.4, &range.5)
                        == 0
                else { break }
                let sizes = CameraModeCandidates.sizes(
                    width: SizeRange(Int(range.0), Int(range.1), step: Int(range.2)),
                    height: SizeRange(Int(range.3), Int(range.4), step: Int(range.5)), near: request)
                for (width, height) in sizes {
                    var rates: [Double] = []
                    for intervalIndex in UInt32(0)..<64 {
                        var numerator: UInt32 = 0
                        var denominator: UInt32 = 0
                        guard
                            CV4L2_frameInterval(
                                descriptor, code, UInt32(width), UInt32(height), intervalIndex, &numerator,
                                &denominator) == 0, numerator > 0
                        else { break }
                        rates.append(Double(denominator) / Double(numerator))
                    }
                    // A driver that lists no intervals streams at whatever rate it has: offer it as the request's.
                    if rates.isEmpty { rates = [request.framesPerSecond] }
                    for rate in Set(rates) {
                        modes.append(
                            CameraMode(
                                pixelFormat: PixelFormat(code: code), width: width, height: height,
                                framesPerSecond: rate))
                    }
                }
            }
        }
        return modes
    }

    public func start(_ mode: CameraMode, bufferCount: Int) throws(CameraError) -> CameraFormat {
        var code = mode.pixelFormat.code
        var width = UInt32(mode.width)
        var height = UInt32(mode.height)
        var bytesPerLine: UInt32 = 0
        var frameBytes: UInt32 = 0
        try check("set the format \(mode)") {
            CV4L2_setFormat(descriptor, &code, &width, &height, &bytesPerLine, &frameBytes)
        }
        // Microsecond precision of the rate is plenty; a driver without rate control keeps its own.
        var numerator: UInt32 = 1000
        var denominator = UInt32((mode.framesPerSecond * 1000).rounded())
        try check("set \(mode.framesPerSecond) frames a second") {
            CV4L2_setFrameInterval(descriptor, &numerator, &denominator)
        }
        let granted = try check("request \(bufferCount) buffers") {
            CV4L2_requestBuffers(descriptor, UInt32(bufferCount))
        }
        guard granted > 0 else { throw CameraError(.unavailable, "\(path): the driver granted no buffers") }
        for index in 0..<granted {
            var start: UnsafeMutableRawPointer?
            var length = 0
            try check("map buffer \(index)") { CV4L2_mapBuffer(descriptor, UInt32(index), &start, &length) }
            buffers.append(UnsafeMutableRawBufferPointer(start: start, count: length))
            try check("queue buffer \(index)") { CV4L2_queueBuffer(descriptor, UInt32(index)) }
        }
        try check("start streaming") { CV4L2_stream(descriptor, 1) }
        isStreaming = true
        let rate = numerator > 0 && denominator > 0 ? Double(denominator) / Double(numerator) : mode.framesPerSecond
        return CameraFormat(
            mode: CameraMode(
                pixelFormat: PixelFormat(code: code), width: Int(width), height: Int(height), framesPerSecond: rate),
            bytesPerLine: Int(bytesPerLine), frameBytes: Int(frameBytes))
    }

    public func dequeue(timeout: Duration) throws(CameraError) -> CapturedBuffer? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(clamping: timeout.wholeMicroseconds / 1000)
        let ready: Int32
        do {
            ready = try systemCall { poll(&poller, 1, milliseconds) }
        } catch {
            throw CameraError(.lost, "\(path): waiting for a frame: \(error)")
        }
        if ready == 0 { return nil }
        if poller.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0, poller.revents & Int16(POLLIN) == 0 {
            throw CameraError(.lost, "\(path): the camera stopped (unplugged or a driver error)")
        }
        var index: UInt32 = 0
        var used: UInt32 = 0
        var damaged: Int32 = 0
        var sequence: UInt32 = 0
        let result = CV4L2_dequeueBuffer(descriptor, &index, &used, &damaged, &sequence)
        if result == -EAGAIN || result == -EINTR { return nil }
        guard result == 0 else { throw CameraError(.lost, "\(path): taking a frame: \(Errno(rawValue: -result))") }
        guard Int(index) < buffers.count else {
            throw CameraError(.lost, "\(path): the driver returned buffer \(index) of \(buffers.count)")
        }
        return CapturedBuffer(
            index: Int(index), bytes: UnsafeRawBufferPointer(buffers[Int(index)]), bytesUsed: Int(used),
            isDamaged: damaged != 0)
    }

    public func requeue(_ buffer: CapturedBuffer) throws(CameraError) {
        let result = CV4L2_queueBuffer(descriptor, UInt32(buffer.index))
        guard result == 0 else {
            throw CameraError(.lost, "\(path): giving back a frame: \(Errno(rawValue: -result))")
        }
    }

    public func close() {
        guard descriptor >= 0 else { return }
        if isStreaming { _ = CV4L2_stream(descriptor, 0) }
        for buffer in buffers { _ = CV4L2_unmapBuffer(buffer.baseAddress, buffer.count) }
        buffers = []
        if isStreaming { _ = CV4L2_requestBuffers(descriptor, 0) }
        isStreaming = false
        _ = CV4L2_close(descriptor)
        descriptor = -1
    }

    /// Runs a CV4L2 call; a failure becomes ``CameraError`` `.unavailable` naming the step.
    @discardableResult
    private func check(_ step: String, _ call: () -> Int32) throws(CameraError) -> Int {
        let result = call()
        guard result >= 0 else {
            throw CameraError(.unavailable, "\(path): could not \(step): \(Errno(rawValue: -result))")
        }
        return Int(result)
    }

    private static func explain(_ error: Errno) -> String {
        switch error {
        case .noSuchFileOrDirectory, .noSuchAddressOrDevice: "no such camera (is it plugged in?)"
        case .permissionDenied: "permission denied (the daemon's user needs the video group)"
        case .resourceBusy: "busy: another program is using the camera"
        default: "\(error)"
        }
    }
}

/// A range of frame widths or heights a driver offers: `min...max` in steps (`step` 0 for one discrete value).
public struct SizeRange: Hashable, Sendable {
    public var min: Int
    public var max: Int
    public var step: Int

    public init(_ min: Int, _ max: Int, step: Int) {
        self.min = min
        self.max = max
        self.step = step
    }

    /// The value in the range nearest to `wanted`, on its steps.
    public func nearest(to wanted: Int) -> Int {
        guard step > 0, max > min else { return min }
        let clamped = Swift.min(Swift.max(wanted, min), max)
        return min + ((clamped - min) / step) * step
    }
}

/// The modes to consider among ranges a driver offers.
public enum CameraModeCandidates {
    /// A discrete size as it is; for a range its smallest, its largest and the one nearest the request.
    public static func sizes(width: SizeRange, height: SizeRange, near request: CameraRequest) -> [(Int, Int)] {
        guard width.step > 0 || height.step > 0 else { return [(width.min, height.min)] }
        var sizes = [
            (width.min, height.min), (width.max, height.max),
            (width.nearest(to: request.width), height.nearest(to: request.height)),
        ]
        var seen = Set<[Int]>()
        sizes.removeAll { !seen.insert([$0.0, $0.1]).inserted }
        return sizes
    }
}
