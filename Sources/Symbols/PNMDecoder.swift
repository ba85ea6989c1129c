/// Netpbm images (PBM, PGM, PPM; plain and raw) to greyscale.
///
/// Written in Swift because the format is small and has no widely installed C library.
enum PNMDecoder {
    /// Decodes P1–P6, with comments anywhere in the header and any maxval from 1 to 65535.
    static func decode(_ bytes: [UInt8], maxPixels: Int) throws(ImageLoadError) -> GrayImage {
        var reader = HeaderReader(bytes: bytes)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "P") else {
            throw ImageLoadError(code: .unsupportedFormat, message: "not a PNM image")
        }
        let kind = Int(bytes[1]) - Int(UInt8(ascii: "0"))
        guard (1...6).contains(kind) else {
            throw ImageLoadError(code: .unsupportedFormat, message: "unknown PNM variant P\(kind)")
        }
        reader.offset = 2
        let width = try reader.headerNumber("width")
        let height = try reader.headerNumber("height")
        let isBitmap = kind == 1 || kind == 4
        let maxValue = isBitmap ? 1 : try reader.headerNumber("maximum value")
        guard width > 0, height > 0 else {
            throw ImageLoadError(code: .corrupt, message: "the PNM header gives a size of \(width) x \(height)")
        }
        guard maxValue >= 1, maxValue <= 65535 else {
            throw ImageLoadError(code: .corrupt, message: "the PNM maximum value \(maxValue) is outside 1...65535")
        }
        let (pixelCount, overflow) = width.multipliedReportingOverflow(by: height)
        guard !overflow, pixelCount <= maxPixels else {
            throw ImageLoadError(
                code: .tooLarge, message: "the image has more than \(maxPixels) pixels; scale it down first")
        }
        let channels = (kind == 3 || kind == 6) ? 3 : 1
        let sampleCount = width * height * channels
        var samples = [Int](repeating: 0, count: sampleCount)

        switch kind {
        case 1, 2, 3:
            for index in 0..<sampleCount {
                let value = kind == 1 ? try reader.plainBit() : try reader.plainNumber()
                guard value <= maxValue else {
                    throw ImageLoadError(
                        code: .corrupt, message: "a PNM sample \(value) exceeds the maximum \(maxValue)")
                }
                samples[index] = value
            }
        case 4:
            // Exactly one whitespace byte separates the header from the packed rows.
            let start = reader.offset + 1
            let rowBytes = (width + 7) / 8
            guard start + rowBytes * height <= bytes.count else { throw truncated() }
            for y in 0..<height {
                for x in 0..<width {
                    let byte = bytes[start + y * rowBytes + x / 8]
                    samples[y * width + x] = Int((byte >> (7 - UInt8(x % 8))) & 1)
                }
            }
        default:
            let start = reader.offset + 1
            let bytesPerSample = maxValue > 255 ? 2 : 1
            guard start + sampleCount * bytesPerSample <= bytes.count else { throw truncated() }
            for index in 0..<sampleCount {
                let position = start + index * bytesPerSample
                let value =
                    bytesPerSample == 2
                    ? Int(bytes[position]) << 8 | Int(bytes[position + 1]) : Int(bytes[position])
                guard value <= maxValue else {
                    throw ImageLoadError(
                        code: .corrupt, message: "a PNM sample \(value) exceeds the maximum \(maxValue)")
                }
                samples[index] = value
            }
        }

        var pixels = [UInt8](repeating: 0, count: width * height)
        if isBitmap {
            // In PBM 1 is black.
            for index in pixels.indices { pixels[index] = samples[index] == 1 ? 0 : 255 }
        } else if channels == 1 {
            for index in pixels.indices { pixels[index] = scaled(samples[index], maxValue) }
        } else {
            for index in pixels.indices {
                let red = scaled(samples[3 * index], maxValue)
                let green = scaled(samples[3 * index + 1], maxValue)
                let blue = scaled(samples[3 * index + 2], maxValue)
                pixels[index] = luminance(red: red, green: green, blue: blue)
            }
        }
        return GrayImage(width: width, height: height, pixels: pixels)
    }

    private static func scaled(_ value: Int, _ maxValue: Int) -> UInt8 {
        maxValue == 255 ? UInt8(value) : UInt8((value * 255 + maxValue / 2) / maxValue)
    }

    fileprivate static func truncated() -> ImageLoadError {
        ImageLoadError(code: .truncated, message: "the PNM file ends before the image does; copy it again in full")
    }

    /// Reads whitespace-separated decimal numbers and skips `#` comments.
    private struct HeaderReader {
        let bytes: [UInt8]
        var offset = 0

        private static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x0B || byte == 0x0C
        }

        private mutating func skipSpaceAndComments() {
            while offset < bytes.count {
                if Self.isSpace(bytes[offset]) {
                    offset += 1
                } else if bytes[offset] == UInt8(ascii: "#") {
                    while offset < bytes.count, bytes[offset] != 0x0A, bytes[offset] != 0x0D { offset += 1 }
                } else {
                    return
                }
            }
        }

        mutating func headerNumber(_ what: String) throws(ImageLoadError) -> Int {
            skipSpaceAndComments()
            guard offset < bytes.count else { throw PNMDecoder.truncated() }
            let value = try digits(what)
            // The header's last number must be followed by whitespace (then the raw data starts).
            guard offset < bytes.count else { throw PNMDecoder.truncated() }
            guard Self.isSpace(bytes[offset]) || bytes[offset] == UInt8(ascii: "#") else {
                throw ImageLoadError(code: .corrupt, message: "the PNM header's \(what) is not a number")
            }
            return value
        }

        mutating func plainNumber() throws(ImageLoadError) -> Int {
            skipSpaceAndComments()
            guard offset < bytes.count else { throw PNMDecoder.truncated() }
            return try digits("sample")
        }

        /// Plain PBM allows the 0s and 1s to run together without spaces.
        mutating func plainBit() throws(ImageLoadError) -> Int {
            skipSpaceAndComments()
            guard offset < bytes.count else { throw PNMDecoder.truncated() }
            let byte = bytes[offset]
            guard byte == UInt8(ascii: "0") || byte == UInt8(ascii: "1") else {
                throw ImageLoadError(code: .corrupt, message: "a PBM pixel is neither 0 nor 1")
            }
            offset += 1
            return Int(byte - UInt8(ascii: "0"))
        }

        private mutating func digits(_ what: String) throws(ImageLoadError) -> Int {
            var value = 0
            var count = 0
            while offset < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[offset]) {
                value = value * 10 + Int(bytes[offset] - UInt8(ascii: "0"))
                count += 1
                offset += 1
                // Ten digits already exceed any size or sample we accept; stop before overflowing.
                if count > 10 {
                    throw ImageLoadError(code: .corrupt, message: "the PNM \(what) is absurdly large")
                }
            }
            guard count > 0 else {
                throw ImageLoadError(code: .corrupt, message: "the PNM \(what) is not a number")
            }
            return value
        }
    }
}

/// Luminance of an sRGB colour with the ITU-R BT.601 weights that zxing and libjpeg use.
@inline(__always)
func luminance(red: UInt8, green: UInt8, blue: UInt8) -> UInt8 {
    let weighted: Int = 306 * Int(red) + 601 * Int(green) + 117 * Int(blue)
    return UInt8((weighted + 512) >> 10)
}
