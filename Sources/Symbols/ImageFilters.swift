#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Pixel operations shared by the scanner's fallbacks and ``ImageDistortion``.
///
/// Loops run over unsafe buffers because they touch every pixel of images up to 100 megapixels.
extension GrayImage {
    /// Light and dark swapped: light-on-dark symbols (a phone in dark mode) become dark-on-light.
    public func inverted() -> GrayImage {
        var copy = self
        copy.pixels.withUnsafeMutableBufferPointer { buffer in
            for index in buffer.indices { buffer[index] = 255 &- buffer[index] }
        }
        return copy
    }

    /// Applies a lookup table to every pixel.
    public func mapped(_ table: [UInt8]) -> GrayImage {
        precondition(table.count == 256)
        var copy = self
        table.withUnsafeBufferPointer { lookup in
            copy.pixels.withUnsafeMutableBufferPointer { buffer in
                for index in buffer.indices { buffer[index] = lookup[Int(buffer[index])] }
            }
        }
        return copy
    }

    /// How many pixels have each value.
    func histogram() -> [Int] {
        var counts = [Int](repeating: 0, count: 256)
        pixels.withUnsafeBufferPointer { buffer in
            counts.withUnsafeMutableBufferPointer { histogram in
                for value in buffer { histogram[Int(value)] += 1 }
            }
        }
        return counts
    }

    /// The darkest `fraction` of pixels become black and the lightest become white, the rest spread linearly.
    func contrastStretched(clipping fraction: Double = 0.01) -> GrayImage {
        let counts = histogram()
        let clip = Int(Double(pixelCount) * fraction)
        var low = 0
        var seen = 0
        while low < 255, seen + counts[low] <= clip {
            seen += counts[low]
            low += 1
        }
        var high = 255
        seen = 0
        while high > 0, seen + counts[high] <= clip {
            seen += counts[high]
            high -= 1
        }
        guard high > low else { return self }
        let table = (0..<256).map { value -> UInt8 in
            let stretched = (value - low) * 255 / (high - low)
            return UInt8(clamping: stretched)
        }
        return mapped(table)
    }

    /// Global histogram equalisation: every shade gets an equal share of the range.
    func equalized() -> GrayImage {
        let counts = histogram()
        var cumulative = 0
        let firstNonZero = counts.firstIndex { $0 > 0 } ?? 0
        let floor = counts[firstNonZero]
        let total = pixelCount - floor
        guard total > 0 else { return self }
        let table = counts.map { count -> UInt8 in
            cumulative += count
            return UInt8(clamping: max(0, cumulative - floor) * 255 / total)
        }
        return mapped(table)
    }

    /// Resampled to a new size: area averaging where it shrinks (no aliasing of fine modules), linear
    /// interpolation where it grows.
    public func resized(width newWidth: Int, height newHeight: Int) -> GrayImage {
        precondition(newWidth > 0 && newHeight > 0)
        if newWidth == width && newHeight == height { return self }
        // Separable: rows first into floats, then columns.
        let horizontal = GrayImage.resampleWeights(from: width, to: newWidth)
        let vertical = GrayImage.resampleWeights(from: height, to: newHeight)
        var rows = [Float](repeating: 0, count: newWidth * height)
        pixels.withUnsafeBufferPointer { source in
            rows.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    let sourceRow = y * width
                    let targetRow = y * newWidth
                    for x in 0..<newWidth {
                        var sum: Float = 0
                        for (index, weight) in horizontal[x] { sum += Float(source[sourceRow + index]) * weight }
                        target[targetRow + x] = sum
                    }
                }
            }
        }
        var output = [UInt8](repeating: 0, count: newWidth * newHeight)
        rows.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for y in 0..<newHeight {
                    let weights = vertical[y]
                    for x in 0..<newWidth {
                        var sum: Float = 0
                        for (index, weight) in weights { sum += source[index * newWidth + x] * weight }
                        target[y * newWidth + x] = UInt8(clamping: Int((sum + 0.5).rounded(.down)))
                    }
                }
            }
        }
        return GrayImage(width: newWidth, height: newHeight, pixels: output)
    }

    /// For each output position, the input positions and weights that make it.
    private static func resampleWeights(from sourceSize: Int, to targetSize: Int) -> [[(Int, Float)]] {
        let scale = Double(sourceSize) / Double(targetSize)
        return (0..<targetSize).map { target in
            if scale > 1 {
                // Shrinking: average the input span [start, end) with partial weights at its ends.
                let start = Double(target) * scale
                let end = start + scale
                var weights: [(Int, Float)] = []
                var position = Int(start.rounded(.down))
                while Double(position) < end, position < sourceSize {
                    let overlap = min(end, Double(position + 1)) - max(start, Double(position))
                    if overlap > 0 { weights.append((position, Float(overlap / scale))) }
                    position += 1
                }
                return weights
            } else {
                // Growing: linear interpolation between the two nearest input centres.
                let centre = (Double(target) + 0.5) * scale - 0.5
                let left = Int(centre.rounded(.down))
                let fraction = Float(centre - Double(left))
                let first = min(max(left, 0), sourceSize - 1)
                let second = min(max(left + 1, 0), sourceSize - 1)
                return [(first, 1 - fraction), (second, fraction)]
            }
        }
    }

    /// Shrunk by an integer factor, each output pixel the mean of a factor x factor block.
    func downscaled(by factor: Int) -> GrayImage {
        resized(width: max(1, width / factor), height: max(1, height / factor))
    }

    /// A separable Gaussian blur with standard deviation `sigma` in pixels.
    public func gaussianBlurred(sigma: Double) -> GrayImage {
        guard sigma > 0.05 else { return self }
        let radius = max(1, Int((3 * sigma).rounded(.up)))
        var kernel = (-radius...radius).map { Float(exp(-Double($0 * $0) / (2 * sigma * sigma))) }
        let total = kernel.reduce(0, +)
        kernel = kernel.map { $0 / total }
        var temporary = [Float](repeating: 0, count: pixelCount)
        let width = self.width
        let height = self.height
        pixels.withUnsafeBufferPointer { source in
            temporary.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    let row = y * width
                    for x in 0..<width {
                        var sum: Float = 0
                        for offset in -radius...radius {
                            let sampleX = min(max(x + offset, 0), width - 1)
                            sum += Float(source[row + sampleX]) * kernel[offset + radius]
                        }
                        target[row + x] = sum
                    }
                }
            }
        }
        var output = [UInt8](repeating: 0, count: pixelCount)
        temporary.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                for y in 0..<height {
                    for x in 0..<width {
                        var sum: Float = 0
                        for offset in -radius...radius {
                            let sampleY = min(max(y + offset, 0), height - 1)
                            sum += source[sampleY * width + x] * kernel[offset + radius]
                        }
                        target[y * width + x] = UInt8(clamping: Int((sum + 0.5).rounded(.down)))
                    }
                }
            }
        }
        return GrayImage(width: width, height: height, pixels: output)
    }

    /// Unsharp masking: edges softened by focus blur or motion become steep again.
    func sharpened(sigma: Double = 1.0, amount: Double = 1.5) -> GrayImage {
        let blurred = gaussianBlurred(sigma: sigma)
        var output = pixels
        let gain = Float(amount)
        blurred.pixels.withUnsafeBufferPointer { soft in
            output.withUnsafeMutableBufferPointer { target in
                for index in target.indices {
                    let original = Float(target[index])
                    let sharpened = original + (original - Float(soft[index])) * gain
                    target[index] = UInt8(clamping: Int(sharpened.rounded()))
                }
            }
        }
        return GrayImage(width: width, height: height, pixels: output)
    }

    /// Turned a quarter turn clockwise.
    public func rotatedClockwise() -> GrayImage {
        var output = [UInt8](repeating: 0, count: pixelCount)
        let width = self.width
        let height = self.height
        pixels.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                // The new image is `height` wide: old row y becomes new column height - 1 - y.
                for y in 0..<height {
                    for x in 0..<width {
                        target[x * height + (height - 1 - y)] = source[y * width + x]
                    }
                }
            }
        }
        return GrayImage(width: height, height: width, pixels: output)
    }

    /// Bilinear sample at a real-valued position; outside the image gives `outside`.
    @inline(__always)
    public func bilinearSample(x: Double, y: Double, outside: Double) -> Double {
        // A degenerate geometry can ask for points at infinity; Int() of those would trap.
        guard x > -2, y > -2, x < Double(width + 1), y < Double(height + 1) else { return outside }
        let left = Int(x.rounded(.down))
        let top = Int(y.rounded(.down))
        let fractionX = x - Double(left)
        let fractionY = y - Double(top)
        if left >= 0, top >= 0, left + 1 < width, top + 1 < height {
            let index = top * width + left
            let upper = Double(pixels[index]) * (1 - fractionX) + Double(pixels[index + 1]) * fractionX
            let lower = Double(pixels[index + width]) * (1 - fractionX) + Double(pixels[index + width + 1]) * fractionX
            return upper * (1 - fractionY) + lower * fractionY
        }
        func value(_ column: Int, _ row: Int) -> Double {
            guard column >= 0, row >= 0, column < width, row < height else { return outside }
            return Double(pixels[row * width + column])
        }
        let upper = value(left, top) * (1 - fractionX) + value(left + 1, top) * fractionX
        let lower = value(left, top + 1) * (1 - fractionX) + value(left + 1, top + 1) * fractionX
        return upper * (1 - fractionY) + lower * fractionY
    }
}
