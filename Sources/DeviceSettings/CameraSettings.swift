/// A V4L2 pixel format, named by its four-character code (`GREY`, `YU12`, `MJPG`, ...).
public struct PixelFormat: Hashable, Sendable, CustomStringConvertible {
    /// The code as V4L2 stores it: the four characters, first in the lowest byte (`v4l2_fourcc`).
    public let code: UInt32

    /// The format with this code, as a driver reports it.
    public init(code: UInt32) {
        self.code = code
    }

    /// The format named by four ASCII characters; `nil` for anything else.
    public init?(fourCC: String) {
        let bytes = Array(fourCC.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) else { return nil }
        code = bytes.enumerated().reduce(0) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
    }

    /// 8-bit grey: the frame is the luminance plane.
    public static let grey = PixelFormat(fourCC: "GREY")!
    /// Planar 4:2:0, Y then U then V (what libv4l2 converts every camera format to).
    public static let yuv420 = PixelFormat(fourCC: "YU12")!
    /// Planar 4:2:0, Y then V then U.
    public static let yvu420 = PixelFormat(fourCC: "YV12")!
    /// 4:2:0 with a luminance plane, then interleaved U and V.
    public static let nv12 = PixelFormat(fourCC: "NV12")!
    /// 4:2:0 with a luminance plane, then interleaved V and U.
    public static let nv21 = PixelFormat(fourCC: "NV21")!
    /// Packed 4:2:2 (Y, U, Y, V): luminance every other byte.
    public static let yuyv = PixelFormat(fourCC: "YUYV")!
    /// Motion JPEG: each frame a JPEG image.
    public static let mjpeg = PixelFormat(fourCC: "MJPG")!

    /// Whether each frame starts with a whole 8-bit luminance plane, `width` bytes a row, that the decoder can read
    /// in place (no conversion, no copy).
    public var startsWithLuminancePlane: Bool {
        [Self.grey, .yuv420, .yvu420, .nv12, .nv21].contains(self)
    }

    /// The four characters, or the code in hexadecimal when they are not printable.
    public var description: String {
        let bytes = (0..<4).map { UInt8(truncatingIfNeeded: code >> (8 * $0)) }
        guard bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) else { return "0x" + String(code, radix: 16) }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension PixelFormat {
    /// Packed 4:2:2 (U, Y, V, Y): luminance every other byte, from the second.
    public static let uyvy = PixelFormat(fourCC: "UYVY")!

    /// Where the luminance of a frame in this format is, or `nil` for formats farecheck does not read itself
    /// (compressed ones such as `MJPG`, which libv4l2 offers converted to `YU12` instead).
    public var luminanceLayout: LuminanceLayout? {
        if startsWithLuminancePlane { return .plane }
        if self == .yuyv { return .interleaved(offset: 0) }
        if self == .uyvy { return .interleaved(offset: 1) }
        return nil
    }

    /// The formats farecheck reads, for messages.
    public static let readable: [PixelFormat] = [.grey, .yuv420, .yvu420, .nv12, .nv21, .yuyv, .uyvy]
}

/// Where a frame's 8-bit luminance values are.
public enum LuminanceLayout: Hashable, Sendable {
    /// The frame starts with the luminance plane, one byte a pixel, rows `bytesPerLine` apart.
    case plane
    /// Luminance in every other byte from `offset` (packed 4:2:2), rows `bytesPerLine` apart.
    case interleaved(offset: Int)
}

/// What the configuration asks of a camera; the driver may offer something else.
public struct CameraRequest: Hashable, Sendable {
    /// Wanted width in pixels.
    public var width: Int
    /// Wanted height in pixels.
    public var height: Int
    /// The pixel format required, or `nil` for the best one offered.
    public var pixelFormat: PixelFormat?
    /// Wanted frames per second.
    public var framesPerSecond: Double

    /// Creates a request; the defaults suit a handheld: 1280 × 720 at 30 frames a second, any format.
    public init(width: Int = 1280, height: Int = 720, pixelFormat: PixelFormat? = nil, framesPerSecond: Double = 30) {
        self.width = width
        self.height = height
        self.pixelFormat = pixelFormat
        self.framesPerSecond = framesPerSecond
    }
}
