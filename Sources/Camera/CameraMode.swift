import DeviceSettings

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
