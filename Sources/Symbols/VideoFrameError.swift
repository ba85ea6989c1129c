import FareCore

/// Why recorded or captured frames could not be read.
///
/// The message says what is wrong in words a person can act on; `path` names the file or device when there is one.
public typealias VideoFrameError = CodedError<VideoFrameFailure>

/// The domain of `VideoFrameError`: recorded or captured frames that could not be read.
public enum VideoFrameFailure: ErrorDomain {
    /// What a video frame error says besides its code and message.
    public struct Details: Hashable, Sendable {
        /// The file or device, when the frames came from one.
        public var path: String?
    }

    /// The message, after the path when there is one.
    public static func description(of error: VideoFrameError) -> String { message(error.message, at: error.path) }
}

extension ErrorCode where Domain == VideoFrameFailure {
    /// The file or device could not be opened or read (missing, no permission, gone).
    public static var unreadable: Self { Self("unreadable") }
    /// The bytes are not YUV4MPEG2 at all.
    public static var notYUV4MPEG2: Self { Self("not YUV4MPEG2") }
    /// YUV4MPEG2, but a variant this reader does not take (4:4:4, 10-bit, interlaced field order we cannot use).
    public static var unsupported: Self { Self("unsupported") }
    /// A header or frame marker is broken.
    public static var corrupt: Self { Self("corrupt") }
    /// The stream ends inside a frame (an interrupted recording or copy).
    public static var truncated: Self { Self("truncated") }
    /// The frames are larger than the reader accepts.
    public static var tooLarge: Self { Self("too large") }
}

extension CodedError where Domain == VideoFrameFailure {
    /// Creates an error: `message` is a sentence for a person (what is wrong and, where it helps, what to do), `path`
    /// the file or device, when the frames came from one.
    public init(code: Code, message: String, path: String? = nil) {
        self.init(code: code, message: message, details: VideoFrameFailure.Details(path: path))
    }
}
