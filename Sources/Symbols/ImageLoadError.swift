/// Why an image file could not be turned into a ``GrayImage``.
///
/// The message says what is wrong in words a person can act on; `path` names the file when there is one.
public struct ImageLoadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure; extensible, so compare with the static members.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The file could not be opened or read (missing, no permission, a directory).
        public static let unreadable = Code("unreadable")
        /// The bytes are not PNG, JPEG or PNM, or a variant of them this reader does not support.
        public static let unsupportedFormat = Code("unsupported format")
        /// The file claims to be an image but its content is broken.
        public static let corrupt = Code("corrupt")
        /// The file ends before the image does (an interrupted copy or download).
        public static let truncated = Code("truncated")
        /// The image has more pixels than the reader accepts.
        public static let tooLarge = Code("too large")
        /// Memory for the pixels could not be had.
        public static let outOfMemory = Code("out of memory")

        /// The code's name, for messages and logs.
        public var description: String { name }
    }

    /// What went wrong.
    public var code: Code
    /// A sentence for a person: what is wrong and, where it helps, what to do.
    public var message: String
    /// The file, when the image came from one.
    public var path: String?
    /// The `errno` value when the operating system refused to read the file.
    public var systemErrorNumber: Int32?

    /// Creates an error.
    public init(code: Code, message: String, path: String? = nil, systemErrorNumber: Int32? = nil) {
        self.code = code
        self.message = message
        self.path = path
        self.systemErrorNumber = systemErrorNumber
    }

    /// The message, after the path when there is one.
    public var description: String {
        if let path { return "\(path): \(message)" }
        return message
    }

    /// The same error, attributed to a file.
    func at(path: String?) -> ImageLoadError {
        var copy = self
        copy.path = path
        return copy
    }
}
