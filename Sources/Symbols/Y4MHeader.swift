/// The stream header of a YUV4MPEG2 (`.y4m`) file: frame size, chroma layout and frame rate.
///
/// Only what ffmpeg writes for 8-bit grey and 4:2:0 video is taken (`-pix_fmt gray` gives `Cmono`, `yuv420p` gives
/// `C420jpeg`, `C420mpeg2`, `C420paldv` or `C420`); anything else is refused with a reason rather than misread.
public struct Y4MHeader: Sendable, Hashable {
    /// How the chroma planes follow the luminance plane in each frame.
    public enum ChromaLayout: Sendable, Hashable {
        /// Two planes, each half the width and half the height (rounded up), after the luminance.
        case yuv420
        /// No chroma: the frame is the luminance plane alone.
        case mono
    }

    /// A frame rate as the file states it, `numerator / denominator` frames per second.
    public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
        /// Frames in `denominator` seconds; positive.
        public var numerator: Int
        /// Seconds that `numerator` frames take; positive.
        public var denominator: Int

        /// The time from the first frame to frame `index`.
        public func time(ofFrame index: Int) -> Duration {
            .seconds(Double(index) * Double(denominator) / Double(numerator))
        }

        /// `30000:1001` as `29.97 fps`.
        public var description: String {
            let rate = Double(numerator) / Double(denominator)
            return "\((rate * 100).rounded() / 100) fps"
        }
    }

    /// Frames wider or taller than this are refused (8K UHD is 7680 × 4320).
    public static let maxDimension = 8192
    /// Frames with more pixels than this are refused.
    public static let maxPixels = 36_000_000
    /// A header line longer than this is not one a real file has.
    static let maxLineLength = 1024

    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int
    /// The chroma planes that follow the luminance in each frame.
    public var chroma: ChromaLayout
    /// Frames per second.
    public var frameRate: FrameRate

    /// Bytes of the luminance plane: the grey image a frame gives.
    public var luminanceByteCount: Int { width * height }

    /// Bytes of the chroma planes after the luminance, which the reader skips.
    public var chromaByteCount: Int {
        switch chroma {
        case .yuv420: 2 * ((width + 1) / 2) * ((height + 1) / 2)
        case .mono: 0
        }
    }

    /// Reads the header line, without its `YUV4MPEG2 ` signature and its line feed.
    ///
    /// - Throws: ``VideoFrameError`` `.corrupt` for a malformed or missing field, `.unsupported` for a colour
    ///   space other than 8-bit grey or 4:2:0, `.tooLarge` for frames beyond ``maxDimension`` or ``maxPixels``.
    public init(parameters: ArraySlice<UInt8>) throws(VideoFrameError) {
        var width: Int?
        var height: Int?
        var rate: FrameRate?
        // The format's default when no C field is given.
        var chroma = ChromaLayout.yuv420
        for token in parameters.split(separator: UInt8(ascii: " "), omittingEmptySubsequences: false) {
            guard let tag = token.first else {
                throw VideoFrameError(code: .corrupt, message: "the YUV4MPEG2 header has two spaces in a row")
            }
            let value = token.dropFirst()
            switch tag {
            case UInt8(ascii: "W"): width = try Self.dimension(value, name: "width (W)")
            case UInt8(ascii: "H"): height = try Self.dimension(value, name: "height (H)")
            case UInt8(ascii: "F"):
                guard let (numerator, denominator) = Self.ratio(value), numerator > 0, denominator > 0 else {
                    throw VideoFrameError(
                        code: .corrupt,
                        message: "the frame rate (F) is \(Self.quoted(value)), not two positive numbers like 30:1")
                }
                rate = FrameRate(numerator: numerator, denominator: denominator)
            case UInt8(ascii: "C"): chroma = try Self.chromaLayout(value)
            case UInt8(ascii: "I"):
                // Progressive or interlaced: the luminance plane is whole either way.
                guard value.count == 1, "ptbm?".utf8.contains(value[value.startIndex]) else {
                    throw VideoFrameError(
                        code: .corrupt, message: "the interlacing (I) is \(Self.quoted(value)), not p, t, b, m or ?")
                }
            case UInt8(ascii: "A"):
                guard Self.ratio(value) != nil else {
                    throw VideoFrameError(
                        code: .corrupt,
                        message: "the pixel aspect (A) is \(Self.quoted(value)), not two numbers like 1:1")
                }
            case UInt8(ascii: "X"):
                // Application data (ffmpeg's XYSCSS=420JPEG): carries nothing the luminance needs.
                break
            default:
                throw VideoFrameError(
                    code: .corrupt, message: "the YUV4MPEG2 header has an unknown field \(Self.quoted(token))")
            }
        }
        guard let width, let height else {
            throw VideoFrameError(code: .corrupt, message: "the YUV4MPEG2 header lacks the width (W) or height (H)")
        }
        guard let rate else {
            throw VideoFrameError(code: .corrupt, message: "the YUV4MPEG2 header lacks the frame rate (F)")
        }
        guard width * height <= Self.maxPixels else {
            throw VideoFrameError(
                code: .tooLarge,
                message: "frames of \(width) × \(height) have more than \(Self.maxPixels / 1_000_000) megapixels")
        }
        self.width = width
        self.height = height
        self.chroma = chroma
        self.frameRate = rate
    }

    private static func dimension(_ value: ArraySlice<UInt8>, name: String) throws(VideoFrameError) -> Int {
        guard let number = decimal(value), number > 0 else {
            throw VideoFrameError(code: .corrupt, message: "the \(name) is \(quoted(value)), not a positive number")
        }
        guard number <= maxDimension else {
            throw VideoFrameError(code: .tooLarge, message: "the \(name) \(number) is more than \(maxDimension) pixels")
        }
        return number
    }

    private static func chromaLayout(_ value: ArraySlice<UInt8>) throws(VideoFrameError) -> ChromaLayout {
        switch String(decoding: value, as: UTF8.self) {
        case "420jpeg", "420mpeg2", "420paldv", "420": return .yuv420
        case "mono": return .mono
        default:
            throw VideoFrameError(
                code: .unsupported,
                message: "colour space \(quoted(value)) is not read; record 8-bit 4:2:0 or grey "
                    + "(ffmpeg -pix_fmt yuv420p or -pix_fmt gray)")
        }
    }

    /// Digits only, at most nine of them (no sign, no overflow).
    private static func decimal(_ value: ArraySlice<UInt8>) -> Int? {
        guard !value.isEmpty, value.count <= 9 else { return nil }
        var number = 0
        for byte in value {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            number = number * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return number
    }

    private static func ratio(_ value: ArraySlice<UInt8>) -> (Int, Int)? {
        let parts = value.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false)
        guard parts.count == 2, let numerator = decimal(parts[0]), let denominator = decimal(parts[1]) else {
            return nil
        }
        return (numerator, denominator)
    }

    /// A field's bytes for a message: printable ASCII as it is, anything else escaped, cut at 40 bytes.
    static func quoted(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for byte in bytes.prefix(40) {
            if (0x20..<0x7F).contains(byte) {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let digits = Array("0123456789abcdef")
                text += "\\x\(digits[Int(byte >> 4)])\(digits[Int(byte & 0x0F)])"
            }
        }
        return "\"" + text + (bytes.count > 40 ? "…" : "") + "\""
    }
}
