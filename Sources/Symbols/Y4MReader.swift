import SystemCalls

#if canImport(Glibc)
    import Glibc
#endif

/// Where a frame reader's bytes come from: a file, a pipe, or bytes in memory.
public protocol VideoByteSource: AnyObject {
    /// Reads up to `buffer.count` bytes into `buffer`; 0 only at the end of the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(VideoFrameError) -> Int
}

/// A whole stream held in memory (a fuzzer's input, a test's bytes).
public final class MemoryByteSource: VideoByteSource {
    private let bytes: [UInt8]
    private var offset = 0

    /// Creates a source that yields `bytes` and then ends.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Copies the next bytes; 0 once all have been read.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(VideoFrameError) -> Int {
        let count = min(buffer.count, bytes.count - offset)
        guard count > 0 else { return 0 }
        bytes.withUnsafeBytes { source in
            buffer.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
        }
        offset += count
        return count
    }
}

/// A file or pipe opened for reading, closed when the source goes away.
public final class FileByteSource: VideoByteSource {
    private let descriptor: Int32
    /// The path it was opened from, for messages.
    public let path: String

    /// Opens a file (or a named pipe) for reading.
    ///
    /// - Throws: ``VideoFrameError`` `.unreadable` when it cannot be opened.
    public init(path: String) throws(VideoFrameError) {
        do {
            descriptor = try systemCall { open(path, O_RDONLY | O_CLOEXEC) }
        } catch {
            throw VideoFrameError(code: .unreadable, message: "cannot open: \(error)", path: path)
        }
        self.path = path
    }

    deinit {
        _ = try? systemCall(retryingOnInterrupt: false) { close(descriptor) }
    }

    /// Reads what the file has; 0 at its end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(VideoFrameError) -> Int {
        guard buffer.count > 0 else { return 0 }
        do {
            return try systemCall { Glibc.read(descriptor, buffer.baseAddress, buffer.count) }
        } catch {
            throw VideoFrameError(code: .unreadable, message: "cannot read: \(error)", path: path)
        }
    }
}

/// One frame of a recording or a camera: its luminance as a grey image, its index and its time in the stream.
public struct VideoFrame: Sendable {
    /// 0 for the first frame of the stream.
    public var index: Int
    /// The time from the stream's first frame (from the frame rate for a file, the capture time for a camera).
    public var time: Duration
    /// The luminance plane; the chroma planes are never kept.
    public var image: GrayImage

    /// Creates a frame.
    public init(index: Int, time: Duration, image: GrayImage) {
        self.index = index
        self.time = time
        self.image = image
    }
}

/// Reads the frames of a YUV4MPEG2 (`.y4m`) stream one after another.
///
/// The luminance plane of each frame is read straight into the pixels of the frame's ``GrayImage`` (no copy);
/// chroma is read past. A stream that is not YUV4MPEG2, whose header or frame markers are malformed, or that ends
/// inside a frame gives a ``VideoFrameError`` with a reason, never a crash; one that ends between frames simply
/// ends.
public final class Y4MReader {
    /// The stream's header.
    public let header: Y4MHeader
    /// Frames read so far.
    public private(set) var framesRead = 0

    private let source: any VideoByteSource
    private let path: String?
    /// Bytes read ahead while looking for the end of a header line, handed out before the source is read again.
    private var pending: [UInt8] = []
    private var pendingOffset = 0
    private var chromaScratch: [UInt8] = []

    /// Opens a `.y4m` file and reads its header.
    ///
    /// - Throws: ``VideoFrameError`` when the file cannot be opened or is not a YUV4MPEG2 stream this reader takes.
    public convenience init(contentsOfFile path: String) throws(VideoFrameError) {
        try self.init(source: try FileByteSource(path: path), path: path)
    }

    /// Reads the header from a source.
    ///
    /// - Parameter path: The file the bytes come from, named in errors.
    /// - Throws: ``VideoFrameError`` when the stream is not a YUV4MPEG2 stream this reader takes.
    public init(source: any VideoByteSource, path: String? = nil) throws(VideoFrameError) {
        self.source = source
        self.path = path
        let signature = Array("YUV4MPEG2".utf8)
        let line: [UInt8]
        do throws(VideoFrameError) {
            guard let read = try Self.readLine(source: source, pending: &pending, offset: &pendingOffset) else {
                throw VideoFrameError(code: .notYUV4MPEG2, message: "the file is empty, not a YUV4MPEG2 recording")
            }
            line = read
        } catch let error where error.code == .corrupt || error.code == .truncated {
            // A first line without an end is most likely another kind of file altogether.
            throw VideoFrameError(
                code: .notYUV4MPEG2, message: "no YUV4MPEG2 header line: \(error.message)", path: path)
        } catch {
            throw error.at(path)
        }
        guard line.starts(with: signature) else {
            throw VideoFrameError(
                code: .notYUV4MPEG2,
                message: "not a YUV4MPEG2 recording (it starts \(Y4MHeader.quoted(line.prefix(12)[...]))); "
                    + "convert a video with ffmpeg -i VIDEO -pix_fmt gray OUT.y4m",
                path: path)
        }
        let rest = line.dropFirst(signature.count)
        guard rest.first == UInt8(ascii: " ") else {
            throw VideoFrameError(code: .corrupt, message: "the YUV4MPEG2 header has no fields", path: path)
        }
        do throws(VideoFrameError) {
            header = try Y4MHeader(parameters: rest.dropFirst())
        } catch {
            throw error.at(path)
        }
    }

    /// The next frame, or `nil` when the stream ends after a whole frame.
    ///
    /// - Throws: ``VideoFrameError`` `.corrupt` when the frame marker is broken, `.truncated` when the stream ends
    ///   inside a frame, `.unreadable` when the source fails.
    public func nextFrame() throws(VideoFrameError) -> VideoFrame? {
        let index = framesRead
        do throws(VideoFrameError) {
            guard let marker = try Self.readLine(source: source, pending: &pending, offset: &pendingOffset) else {
                return nil
            }
            let frameSignature = Array("FRAME".utf8)
            guard marker.starts(with: frameSignature),
                marker.count == frameSignature.count || marker[frameSignature.count] == UInt8(ascii: " ")
            else {
                throw VideoFrameError(
                    code: .corrupt,
                    message: "frame \(index) does not start with FRAME but \(Y4MHeader.quoted(marker.prefix(12)[...]))"
                )
            }
            let luminanceCount = header.luminanceByteCount
            var filled = 0
            var failure: VideoFrameError?
            let pixels = [UInt8](unsafeUninitializedCapacity: luminanceCount) { buffer, initialized in
                do throws(VideoFrameError) {
                    filled = try readFully(into: UnsafeMutableRawBufferPointer(buffer))
                } catch {
                    failure = error
                }
                // Whatever was not read is zeroed so the array is whole; the frame is thrown away below.
                if filled < luminanceCount {
                    UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buffer)[filled...])
                        .initializeMemory(as: UInt8.self, repeating: 0)
                }
                initialized = luminanceCount
            }
            if let failure { throw failure }
            guard filled == luminanceCount else { throw truncated(index: index, read: filled) }
            let chromaCount = header.chromaByteCount
            if chromaCount > 0 {
                if chromaScratch.count != chromaCount { chromaScratch = [UInt8](repeating: 0, count: chromaCount) }
                let chromaFilled = try withScratch(&chromaScratch) { buffer throws(VideoFrameError) in
                    try readFully(into: buffer)
                }
                guard chromaFilled == chromaCount else {
                    throw truncated(index: index, read: luminanceCount + chromaFilled)
                }
            }
            framesRead += 1
            return VideoFrame(
                index: index, time: header.frameRate.time(ofFrame: index),
                image: GrayImage(width: header.width, height: header.height, pixels: pixels))
        } catch {
            throw error.at(path)
        }
    }

    private func truncated(index: Int, read: Int) -> VideoFrameError {
        let total = header.luminanceByteCount + header.chromaByteCount
        return VideoFrameError(
            code: .truncated,
            message: "the recording ends inside frame \(index): \(read) of its \(total) bytes are there")
    }

    /// Fills `buffer` from what was read ahead, then from the source; fewer bytes only at the end of the stream.
    private func readFully(into buffer: UnsafeMutableRawBufferPointer) throws(VideoFrameError) -> Int {
        var filled = 0
        let ahead = min(pending.count - pendingOffset, buffer.count)
        if ahead > 0 {
            pending.withUnsafeBytes { bytes in
                buffer.baseAddress!.copyMemory(from: bytes.baseAddress! + pendingOffset, byteCount: ahead)
            }
            pendingOffset += ahead
            filled = ahead
        }
        while filled < buffer.count {
            let count = try source.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
            if count == 0 { break }
            filled += count
        }
        return filled
    }

    /// The bytes up to the next line feed (without it); `nil` when the stream ends before any byte.
    ///
    /// Reads ahead in small blocks; what follows the line stays in `pending` for the frame that comes next.
    private static func readLine(
        source: any VideoByteSource, pending: inout [UInt8], offset: inout Int
    ) throws(VideoFrameError) -> [UInt8]? {
        var line: [UInt8] = []
        while true {
            if offset < pending.count {
                let rest = pending[offset...]
                if let end = rest.firstIndex(of: UInt8(ascii: "\n")) {
                    line += pending[offset..<end]
                    offset = end + 1
                    return line
                }
                line += rest
                offset = pending.count
            }
            guard line.count <= Y4MHeader.maxLineLength else {
                throw VideoFrameError(
                    code: .corrupt, message: "a header line is longer than \(Y4MHeader.maxLineLength) bytes")
            }
            // Small blocks: a frame marker is 6 bytes, and what is read past it is copied once more.
            var block = [UInt8](repeating: 0, count: 64)
            let count = try withScratch(&block) { buffer throws(VideoFrameError) in try source.read(into: buffer) }
            if count == 0 {
                if line.isEmpty { return nil }
                throw VideoFrameError(code: .truncated, message: "the recording ends inside a header line")
            }
            pending = Array(block[..<count])
            offset = 0
        }
    }
}

/// `body` on the bytes of `array`, with its error type kept (the standard library's `withUnsafeMutableBytes`
/// rethrows as `any Error`).
private func withScratch(
    _ array: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(VideoFrameError) -> Int
) throws(VideoFrameError) -> Int {
    var result: Result<Int, VideoFrameError> = .success(0)
    array.withUnsafeMutableBytes { buffer in
        do throws(VideoFrameError) {
            result = .success(try body(buffer))
        } catch {
            result = .failure(error)
        }
    }
    return try result.get()
}

extension VideoFrameError {
    /// The same error, attributed to a file when it is not already.
    func at(_ path: String?) -> VideoFrameError {
        var copy = self
        if copy.path == nil { copy.path = path }
        return copy
    }
}
