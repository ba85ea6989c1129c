import CImageCodecs
import SystemCalls

#if canImport(Glibc)
    import Glibc

    /// POSIX `write`, named apart from `GrayImage.write(_:toFile:)`, which hides it inside the extension.
    private let systemWrite = Glibc.write
#elseif canImport(Darwin)
    import Darwin

    /// POSIX `write`, named apart from `GrayImage.write(_:toFile:)`, which hides it inside the extension.
    private let systemWrite = Darwin.write
#endif

/// Why an image could not be encoded or written.
public struct ImageWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence for a person.
    public var message: String
    /// The file, when writing one failed.
    public var path: String?
    /// The `errno` value when the operating system refused the write.
    public var systemErrorNumber: Int32?

    /// Creates an error.
    public init(message: String, path: String? = nil, systemErrorNumber: Int32? = nil) {
        self.message = message
        self.path = path
        self.systemErrorNumber = systemErrorNumber
    }

    /// The message, after the path when there is one.
    public var description: String { path.map { "\($0): \(message)" } ?? message }
}

extension GrayImage {
    /// The image as an 8-bit greyscale PNG file.
    public func pngData() throws(ImageWriteError) -> [UInt8] {
        try encode { pixels, data, size, message, capacity in
            CImageCodecs_encodePNG(pixels, Int32(width), Int32(height), data, size, message, capacity)
        }
    }

    /// The image as a greyscale baseline JPEG file of the given quality (1...100).
    ///
    /// Meant for tests and benchmarks that need photo-like files; symbols for issuing belong in PNG.
    public func jpegData(quality: Int = 90) throws(ImageWriteError) -> [UInt8] {
        try encode { pixels, data, size, message, capacity in
            CImageCodecs_encodeJPEG(
                pixels, Int32(width), Int32(height), 1, Int32(quality), data, size, message, capacity)
        }
    }

    /// The image as a raw PGM (P5) file.
    public func pgmData() -> [UInt8] {
        Array("P5\n\(width) \(height)\n255\n".utf8) + pixels
    }

    /// Writes the image as a PNG file, replacing any file at `path`.
    public func writePNG(toFile path: String) throws(ImageWriteError) {
        try GrayImage.write(try pngData(), toFile: path)
    }

    private func encode(
        _ body: (
            UnsafePointer<UInt8>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>,
            UnsafeMutablePointer<CChar>, Int
        ) -> Int32
    ) throws(ImageWriteError) -> [UInt8] {
        var data: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = pixels.withUnsafeBufferPointer { pixelBuffer in
            message.withUnsafeMutableBufferPointer { text in
                body(pixelBuffer.baseAddress!, &data, &size, text.baseAddress!, text.count)
            }
        }
        defer { CImageCodecs_free(data) }
        guard status == Int32(CIMAGECODECS_OK), let data else {
            let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw ImageWriteError(message: "cannot encode the image: \(detail)")
        }
        return Array(UnsafeBufferPointer(start: data, count: size))
    }

    /// Writes bytes to a file, retrying interrupted and partial writes.
    static func write(_ bytes: [UInt8], toFile path: String) throws(ImageWriteError) {
        let descriptor: Int32
        do {
            descriptor = try systemCall {
                path.withCString { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) }
            }
        } catch {
            throw ImageWriteError(
                message: "cannot create the file: \(String(cString: strerror(error.rawValue)))",
                path: path, systemErrorNumber: error.rawValue)
        }
        var written = 0
        while written < bytes.count {
            let offset = written
            do {
                written += try systemCall {
                    bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                }
            } catch {
                _ = try? systemCall(retryingOnInterrupt: false) { close(descriptor) }
                throw ImageWriteError(
                    message: "cannot write the file: \(String(cString: strerror(error.rawValue)))",
                    path: path, systemErrorNumber: error.rawValue)
            }
        }
        do {
            _ = try systemCall(retryingOnInterrupt: false) { close(descriptor) }
        } catch {
            throw ImageWriteError(
                message: "cannot finish writing the file: \(String(cString: strerror(error.rawValue)))",
                path: path, systemErrorNumber: error.rawValue)
        }
    }
}
