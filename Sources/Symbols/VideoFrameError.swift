/// Why recorded or captured frames could not be read.
///
/// The message says what is wrong in words a person can act on; `path` names the file or device when there is one.
public struct VideoFrameError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extensible, so compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file or device could not be opened or read (missing, no permission, gone).
        public static let unreadable = Code("unreadable")
        /// The bytes are not YUV4MPEG2 at all.
        public static let notYUV4MPEG2 = Code("not YUV4MPEG2")
        /// YUV4MPEG2, but a variant this reader does not take (4:4:4, 10-bit, interlaced field order we cannot use).
        public static let unsupported = Code("unsupported")
        /// A header or frame marker is broken.
        public static let corrupt = Code("corrupt")
        /// The stream ends inside a frame (an interrupted recording or copy).
        public static let truncated = Code("truncated")
        /// The frames are larger than the reader accepts.
        public static let tooLarge = Code("too large")

        /// The code's name, for messages and logs.
        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a person: what is wrong and, where it helps, what to do.
    public var message: String
    /// The file or device, when the frames came from one.
    public var path: String?

    /// Creates an error.
    public init(code: Code, message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    /// The message, after the path when there is one.
    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }
}
