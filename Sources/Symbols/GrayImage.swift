/// An 8-bit greyscale image: what the symbol readers work on and the writers produce.
///
/// Pixels are stored row after row without padding; 0 is black and 255 is white.
public struct GrayImage: Sendable, Hashable {
    /// Width in pixels.
    public let width: Int
    /// Height in pixels.
    public let height: Int
    /// `width * height` luminance values, row after row.
    public var pixels: [UInt8]

    /// Creates an image from its pixels.
    ///
    /// - Precondition: `width` and `height` are positive and `pixels.count == width * height`.
    public init(width: Int, height: Int, pixels: [UInt8]) {
        precondition(width > 0 && height > 0, "an image has at least one pixel")
        precondition(pixels.count == width * height, "pixel count \(pixels.count) is not \(width) x \(height)")
        self.width = width
        self.height = height
        self.pixels = pixels
    }

    /// Creates an image of one uniform shade.
    public init(width: Int, height: Int, filledWith value: UInt8) {
        self.init(width: width, height: height, pixels: [UInt8](repeating: value, count: width * height))
    }

    /// The luminance at column `x`, row `y`.
    public subscript(x: Int, y: Int) -> UInt8 {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    /// Width times height.
    public var pixelCount: Int { width * height }
}
