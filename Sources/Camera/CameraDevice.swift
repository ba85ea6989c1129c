import DeviceSettings
import Symbols

/// A camera as the capture loop drives it: list its modes, start streaming in one, take filled buffers and give them
/// back, close.
///
/// ``V4L2Camera`` is the real one (libv4l2, memory-mapped buffers); ``RecordedCamera`` plays a YUV4MPEG2 recording as
/// if it were a camera, for bench work and demos. ``CameraCapture`` holds the logic (negotiation, the buffer cycle,
/// checking frames, reopening) so that tests drive it through this interface with no camera attached.
public protocol CameraDevice: AnyObject {
    /// The driver's name for the camera (`Integrated Camera`), or the recording's file name.
    var name: String { get }

    /// The modes the camera offers that a request could want: every discrete mode, and for ranges of sizes or
    /// rates their ends and the requested value where it lies inside.
    func modes(near request: CameraRequest) throws(CameraError) -> [CameraMode]

    /// Sets `mode`, maps `bufferCount` buffers, queues them all and starts streaming.
    ///
    /// - Returns: What the driver actually set (it may round the size or the rate).
    func start(_ mode: CameraMode, bufferCount: Int) throws(CameraError) -> CameraFormat

    /// A filled buffer, waiting at most `timeout` for one; `nil` when none came in time. The buffer is the
    /// caller's until it is given back with ``requeue(_:)``.
    func dequeue(timeout: Duration) throws(CameraError) -> CapturedBuffer?

    /// Gives a buffer back to the driver to fill again.
    func requeue(_ buffer: CapturedBuffer) throws(CameraError)

    /// Stops streaming, unmaps the buffers and closes the device. Safe to call more than once.
    func close()
}

/// The frames a started camera delivers.
public struct CameraFormat: Hashable, Sendable, CustomStringConvertible {
    /// Pixel format, size and rate as set.
    public var mode: CameraMode
    /// Bytes from the start of one row of the first plane to the next (at least the row's own bytes).
    public var bytesPerLine: Int
    /// Bytes of a whole frame, as the driver states it.
    public var frameBytes: Int

    /// Creates a format.
    public init(mode: CameraMode, bytesPerLine: Int, frameBytes: Int) {
        self.mode = mode
        self.bytesPerLine = bytesPerLine
        self.frameBytes = frameBytes
    }

    /// `YU12 1280x720 30 fps`.
    public var description: String { mode.description }
}

/// One filled buffer, lent by the camera until it is requeued.
public struct CapturedBuffer {
    /// The driver's index of the buffer.
    public var index: Int
    /// The whole mapped buffer; valid until the buffer is requeued or the camera closed.
    public var bytes: UnsafeRawBufferPointer
    /// How many of its bytes the driver filled.
    public var bytesUsed: Int
    /// The driver flagged the frame as damaged (`V4L2_BUF_FLAG_ERROR`).
    public var isDamaged: Bool

    /// Creates a buffer description.
    public init(index: Int, bytes: UnsafeRawBufferPointer, bytesUsed: Int, isDamaged: Bool = false) {
        self.index = index
        self.bytes = bytes
        self.bytesUsed = bytesUsed
        self.isDamaged = isDamaged
    }
}

/// Why a camera could not be opened or stopped delivering; the sentence says what to do where something can be done.
public struct CameraError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: Sendable, Hashable {
        /// The device node is missing, busy, or not ours to open.
        case unavailable
        /// The node is a video device that does not capture (a camera's metadata node, a codec) or not one at all.
        case notACamera
        /// The camera offers no mode farecheck can read.
        case noUsableMode
        /// The device failed or vanished while streaming (unplugged, driver error).
        case lost
        /// No frame came for too long.
        case stalled
        /// Too many short or damaged frames in a row.
        case badFrames
        /// A recording played to its end.
        case ended
    }

    /// The kind of failure.
    public var kind: Kind
    /// What happened, for a person.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

extension CameraFormat {
    /// The bytes a frame must have for its luminance to be whole, or `nil` when the format is not read or its
    /// geometry is impossible.
    public var luminanceBytesNeeded: Int? {
        let width = mode.width
        let height = mode.height
        guard let layout = mode.pixelFormat.luminanceLayout, width > 0, height > 0,
            width <= Y4MHeader.maxDimension, height <= Y4MHeader.maxDimension
        else { return nil }
        let rowBytes = layout == .plane ? width : 2 * width
        guard bytesPerLine >= rowBytes else { return nil }
        return bytesPerLine * (height - 1) + rowBytes
    }

    /// The frame's luminance as an image: the one copy out of the driver's buffer, so the buffer goes back to the
    /// driver at once and a slow decode never starves the camera. `nil` when the buffer holds less than a whole
    /// frame (a short or malformed frame).
    public func luminance(of buffer: CapturedBuffer) -> GrayImage? {
        guard !buffer.isDamaged, let needed = luminanceBytesNeeded, let layout = mode.pixelFormat.luminanceLayout,
            buffer.bytesUsed >= needed, buffer.bytes.count >= needed, let source = buffer.bytes.baseAddress
        else { return nil }
        let width = mode.width
        let height = mode.height
        let stride = bytesPerLine
        let pixels = [UInt8](unsafeUninitializedCapacity: width * height) { target, initialized in
            let base = target.baseAddress!
            switch layout {
            case .plane where stride == width:
                base.update(from: source.assumingMemoryBound(to: UInt8.self), count: width * height)
            case .plane:
                for row in 0..<height {
                    (base + row * width).update(
                        from: (source + row * stride).assumingMemoryBound(to: UInt8.self), count: width)
                }
            case .interleaved(let offset):
                for row in 0..<height {
                    let line = (source + row * stride + offset).assumingMemoryBound(to: UInt8.self)
                    let out = base + row * width
                    for column in 0..<width { out[column] = line[2 * column] }
                }
            }
            initialized = width * height
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }
}
