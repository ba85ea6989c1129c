import FareCore

/// Why an image file could not be turned into a ``GrayImage``.
///
/// The message says what is wrong in words a person can act on; `path` names the file when there is one.
public typealias ImageLoadError = CodedError<ImageLoadFailure>

/// The domain of `ImageLoadError`: image files that could not be turned into a ``GrayImage``.
public enum ImageLoadFailure: ErrorDomain {
    /// What an image load error says besides its code and message.
    public struct Details: Hashable, Sendable {
        /// The file, when the image came from one.
        public var path: String?
        /// The `errno` value when the operating system refused to read the file.
        public var systemErrorNumber: Int32?
    }

    /// The message, after the path when there is one.
    public static func description(of error: ImageLoadError) -> String { message(error.message, at: error.path) }
}

extension ErrorCode where Domain == ImageLoadFailure {
    /// The file could not be opened or read (missing, no permission, a directory).
    public static var unreadable: Self { Self("unreadable") }
    /// The bytes are not PNG, JPEG or PNM, or a variant of them this reader does not support.
    public static var unsupportedFormat: Self { Self("unsupported format") }
    /// The file claims to be an image but its content is broken.
    public static var corrupt: Self { Self("corrupt") }
    /// The file ends before the image does (an interrupted copy or download).
    public static var truncated: Self { Self("truncated") }
    /// The image has more pixels than the reader accepts.
    public static var tooLarge: Self { Self("too large") }
    /// Memory for the pixels could not be had.
    public static var outOfMemory: Self { Self("out of memory") }
}

extension CodedError where Domain == ImageLoadFailure {
    /// Creates an error: `message` is a sentence for a person (what is wrong and, where it helps, what to do), `path`
    /// the file when the image came from one, `systemErrorNumber` the `errno` when the system refused to read it.
    public init(code: Code, message: String, path: String? = nil, systemErrorNumber: Int32? = nil) {
        self.init(
            code: code, message: message,
            details: ImageLoadFailure.Details(path: path, systemErrorNumber: systemErrorNumber))
    }

    /// The same error, attributed to a file.
    func at(path: String?) -> ImageLoadError {
        var copy = self
        copy.path = path
        return copy
    }
}

extension ErrorDomain {
    /// `message` after `path` when there is one: how the errors about a file or device read.
    static func message(_ message: String, at path: String?) -> String {
        path.map { "\($0): \(message)" } ?? message
    }
}
