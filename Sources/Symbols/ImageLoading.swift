import CImageCodecs
import SystemCalls

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The image file formats ``GrayImage`` reads.
public enum ImageFileFormat: String, Sendable, CaseIterable {
    case png
    case jpeg
    /// Netpbm: PBM, PGM and PPM, plain (P1–P3) or raw (P4–P6).
    case pnm

    /// The format announced by a file's first bytes, or `nil` when they belong to none of these.
    public init?(magic bytes: some Collection<UInt8>) {
        let head = Array(bytes.prefix(8))
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
            self = .png
        } else if head.starts(with: [0xFF, 0xD8, 0xFF]) {
            self = .jpeg
        } else if head.count >= 2, head[0] == UInt8(ascii: "P"),
            (UInt8(ascii: "1")...UInt8(ascii: "6")).contains(head[1])
        {
            self = .pnm
        } else {
            return nil
        }
    }

    /// The format a file name's extension suggests (case-insensitive), used to pick files in a directory.
    public init?(pathExtension: String) {
        switch pathExtension.lowercased() {
        case "png": self = .png
        case "jpg", "jpeg", "jpe", "jfif": self = .jpeg
        case "pgm", "ppm", "pbm", "pnm": self = .pnm
        default: return nil
        }
    }

    /// The format a path's extension suggests, or `nil`.
    public init?(path: String) {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return nil }
        self.init(pathExtension: String(name[name.index(after: dot)...]))
    }
}

extension GrayImage {
    /// The largest image accepted by default: 100 megapixels, which is 100 MB of grey pixels.
    ///
    /// Larger files are almost certainly not photos of tickets and could exhaust memory.
    public static let defaultMaxPixels = 100_000_000

    /// Files larger than this are refused before reading (1 GiB).
    static let maxFileBytes = 1 << 30

    /// Loads a PNG, JPEG, PGM or PPM file as greyscale; the format is recognised by content, not by name.
    ///
    /// - Throws: ``ImageLoadError`` when the file cannot be read, is not one of those formats, is corrupt or
    ///   truncated, or has more than `maxPixels` pixels.
    public init(contentsOfFile path: String, maxPixels: Int = GrayImage.defaultMaxPixels) throws(ImageLoadError) {
        let bytes = try GrayImage.readFile(at: path)
        do {
            try self.init(encoded: bytes, maxPixels: maxPixels)
        } catch {
            throw error.at(path: path)
        }
    }

    /// Decodes PNG, JPEG, PGM or PPM bytes as greyscale; the format is recognised by content.
    ///
    /// Colour is mixed to luminance (0.299 R + 0.587 G + 0.114 B); transparency is shown over white.
    ///
    /// - Throws: ``ImageLoadError`` when the bytes are not one of those formats, are corrupt or truncated, or
    ///   the image has more than `maxPixels` pixels.
    public init(encoded bytes: [UInt8], maxPixels: Int = GrayImage.defaultMaxPixels) throws(ImageLoadError) {
        guard !bytes.isEmpty else {
            throw ImageLoadError(code: .truncated, message: "the file is empty")
        }
        switch ImageFileFormat(magic: bytes) {
        case .png:
            self = try GrayImage.decodeWithCodec(bytes, maxPixels: maxPixels, formatName: "PNG", CImageCodecs_decodePNG)
        case .jpeg:
            self = try GrayImage.decodeWithCodec(
                bytes, maxPixels: maxPixels, formatName: "JPEG", CImageCodecs_decodeJPEG)
        case .pnm:
            self = try PNMDecoder.decode(bytes, maxPixels: maxPixels)
        case nil:
            throw ImageLoadError(
                code: .unsupportedFormat,
                message: "not a PNG, JPEG, PGM or PPM image (convert it to PNG to scan it)"
            )
        }
    }

    private typealias CodecDecode = (
        UnsafePointer<UInt8>?, Int, Int64,
        UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>?, UnsafeMutablePointer<Int32>?,
        UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<CChar>?, Int
    ) -> Int32

    private static func decodeWithCodec(
        _ bytes: [UInt8], maxPixels: Int, formatName: String, _ decode: CodecDecode
    ) throws(ImageLoadError) -> GrayImage {
        var pixels: UnsafeMutablePointer<UInt8>? = nil
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = bytes.withUnsafeBufferPointer { buffer in
            message.withUnsafeMutableBufferPointer { text in
                decode(
                    buffer.baseAddress, buffer.count, Int64(maxPixels), &pixels, &width, &height,
                    text.baseAddress, text.count)
            }
        }
        defer { CImageCodecs_free(pixels) }
        guard status == Int32(CIMAGECODECS_OK), let pixels, width > 0, height > 0 else {
            let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw codecError(status: status, detail: detail, formatName: formatName, maxPixels: maxPixels)
        }
        let count = Int(width) * Int(height)
        return GrayImage(
            width: Int(width), height: Int(height),
            pixels: Array(UnsafeBufferPointer(start: pixels, count: count)))
    }

    private static func codecError(status: Int32, detail: String, formatName: String, maxPixels: Int) -> ImageLoadError
    {
        switch status {
        case Int32(CIMAGECODECS_ERROR_TRUNCATED):
            return ImageLoadError(
                code: .truncated,
                message: "the \(formatName) file is truncated (\(detail)); copy it again in full")
        case Int32(CIMAGECODECS_ERROR_UNSUPPORTED):
            return ImageLoadError(
                code: .unsupportedFormat,
                message: "this \(formatName) variant is not supported (\(detail)); convert it to PNG")
        case Int32(CIMAGECODECS_ERROR_TOO_LARGE):
            return ImageLoadError(
                code: .tooLarge,
                message: "the image has more than \(maxPixels) pixels; scale it down first")
        case Int32(CIMAGECODECS_ERROR_MEMORY):
            return ImageLoadError(code: .outOfMemory, message: "not enough memory to decode the \(formatName) image")
        default:
            return ImageLoadError(code: .corrupt, message: "the \(formatName) file is corrupt (\(detail))")
        }
    }

    /// Reads a whole file, retrying reads interrupted by signals.
    static func readFile(at path: String) throws(ImageLoadError) -> [UInt8] {
        let descriptor: Int32
        do {
            descriptor = try systemCall { path.withCString { open($0, O_RDONLY | O_CLOEXEC) } }
        } catch {
            throw systemError(error.rawValue, action: "cannot open", path: path)
        }
        defer { _ = try? systemCall(retryingOnInterrupt: false) { close(descriptor) } }
        var status = stat()
        do {
            _ = try systemCall { fstat(descriptor, &status) }
        } catch {
            throw systemError(error.rawValue, action: "cannot inspect", path: path)
        }
        if (status.st_mode & S_IFMT) == S_IFDIR {
            throw ImageLoadError(
                code: .unreadable, message: "is a directory, not an image file", path: path,
                systemErrorNumber: EISDIR)
        }
        guard Int(status.st_size) <= maxFileBytes else {
            throw ImageLoadError(
                code: .tooLarge, message: "the file is larger than 1 GiB; this is no ticket image",
                path: path)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(max(status.st_size, 0)) + 1)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count: Int
            do {
                count = try systemCall { chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) } }
            } catch {
                throw systemError(error.rawValue, action: "cannot read", path: path)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maxFileBytes {
                throw ImageLoadError(
                    code: .tooLarge, message: "the file is larger than 1 GiB; this is no ticket image",
                    path: path)
            }
        }
        return bytes
    }

    private static func systemError(_ number: Int32, action: String, path: String) -> ImageLoadError {
        let reason = String(cString: strerror(number))
        return ImageLoadError(
            code: .unreadable, message: "\(action) the file: \(reason)", path: path,
            systemErrorNumber: number)
    }
}
