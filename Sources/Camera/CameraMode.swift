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

/// One way a camera can deliver frames: a pixel format at a size and a frame rate.
public struct CameraMode: Hashable, Sendable, CustomStringConvertible {
    /// How the pixels of a frame are laid out.
    public var pixelFormat: PixelFormat
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// Frames per second.
    public var framesPerSecond: Double

    /// Creates a mode.
    public init(pixelFormat: PixelFormat, width: Int, height: Int, framesPerSecond: Double) {
        self.pixelFormat = pixelFormat
        self.width = width
        self.height = height
        self.framesPerSecond = framesPerSecond
    }

    /// `YU12 1280x720 30 fps`.
    public var description: String {
        "\(pixelFormat) \(width)x\(height) \((framesPerSecond * 100).rounded() / 100) fps"
    }
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

/// Chooses, among the modes a camera offers, the one to open it in.
public enum CameraNegotiation {
    /// The best offered mode for a request, or `nil` when none has the required pixel format or any format farecheck
    /// reads (``PixelFormat/luminanceLayout``: compressed formats such as `MJPG` are taken as libv4l2 offers them
    /// converted, `YU12`).
    ///
    /// In order: the required pixel format (when one is), else a format whose frames start with the luminance plane
    /// (decoded in place) before one that needs converting; then the size (the requested one, else the smallest that
    /// covers it, else the largest there is: a ticket's modules need pixels); then the frame rate (the requested one,
    /// else the slowest above it, else the fastest there is).
    public static func choose(_ request: CameraRequest, from offered: [CameraMode]) -> CameraMode? {
        let candidates = offered.filter { mode in
            request.pixelFormat.map { mode.pixelFormat == $0 } ?? true && mode.pixelFormat.luminanceLayout != nil
                && mode.width > 0 && mode.height > 0 && mode.framesPerSecond > 0
        }
        return candidates.min { rank($0, request).lexicographicallyPrecedes(rank($1, request)) }
    }

    /// Smaller is better; compared field by field.
    private static func rank(_ mode: CameraMode, _ request: CameraRequest) -> [Double] {
        let format: Double = mode.pixelFormat.startsWithLuminancePlane ? 0 : 1
        let covers = mode.width >= request.width && mode.height >= request.height
        let area = Double(mode.width * mode.height)
        // Covering sizes first, smallest first; then the rest, largest first.
        let size: [Double] = covers ? [0, area] : [1, -area]
        let fast = mode.framesPerSecond >= request.framesPerSecond
        let rate: [Double] = fast ? [0, mode.framesPerSecond] : [1, -mode.framesPerSecond]
        return [format] + size + rate
    }
}
