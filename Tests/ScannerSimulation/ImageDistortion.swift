import FareCore
import SeededRandom
import Symbols

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ways to make a clean generated symbol look like one a camera or scanner saw.
///
/// Used by the tests and by the benchmark to build hard images whose payload is known. Every distortion
/// is deterministic: randomness comes from an explicit seed.
public enum ImageDistortion: Sendable, Hashable, CustomStringConvertible {
    /// Shrunk by `factor` (0 < factor ≤ 1) with area averaging, as a distant camera sees it.
    case scaledDown(factor: Double)
    /// Turned a quarter turn clockwise.
    case rotated90
    /// Turned by any angle (counter-clockwise for positive degrees), bilinear, on a white canvas large
    /// enough for the whole image.
    case rotated(degrees: Double)
    /// Gaussian blur of standard deviation `sigma` pixels: focus blur.
    case blurred(sigma: Double)
    /// Gaussian noise of standard deviation `amplitude` grey levels: a dim sensor.
    case noise(amplitude: Double, seed: UInt64)
    /// Black becomes `dark` and white `light`: a faded print or a dim screen.
    case lowContrast(dark: UInt8, light: UInt8)
    /// Light and dark swapped: a phone in dark mode.
    case inverted
    /// A shadow: brightness falls linearly to `depth` (0...1, 1 is none) across the image at `angle` degrees.
    case shadow(depth: Double, angle: Double)
    /// Saved and loaded as JPEG of this quality: block artefacts and ringing.
    case jpeg(quality: Int)
    /// Paper bent over a curve: rows bow by up to `amplitude` times the image height, most in the middle.
    case curled(amplitude: Double)
    /// A camera not square to the ticket: each corner of the image moves inwards by up to `strength`
    /// (0...0.3) of the image size, chosen from `seed`, and the picture is warped to match.
    case perspective(strength: Double, seed: UInt64)
    /// The image as a ticket in a camera photo; see ``PhotoScene``.
    case photoLike(PhotoScene)

    /// A 1280 x 720 photo-like scene with default settings.
    public static func photoLike(seed: UInt64) -> ImageDistortion {
        .photoLike(PhotoScene(seed: seed))
    }

    /// A short name for tables and test output.
    public var description: String {
        switch self {
        case .scaledDown(let factor): "scaled-\(factor)"
        case .rotated90: "rotated-90"
        case .rotated(let degrees): "rotated-\(degrees)"
        case .blurred(let sigma): "blur-\(sigma)"
        case .noise(let amplitude, _): "noise-\(amplitude)"
        case .lowContrast(let dark, let light): "contrast-\(dark)-\(light)"
        case .inverted: "inverted"
        case .shadow(let depth, let angle): "shadow-\(depth)-\(angle)"
        case .jpeg(let quality): "jpeg-\(quality)"
        case .perspective(let strength, _): "perspective-\(strength)"
        case .curled(let amplitude): "curled-\(amplitude)"
        case .photoLike(let scene): "photo-\(scene.width)x\(scene.height)-\(scene.seed)"
        }
    }

    /// The distorted image.
    public func apply(to image: GrayImage) -> GrayImage {
        switch self {
        case .scaledDown(let factor):
            precondition(factor > 0 && factor <= 1, "scale factor must be in (0, 1]")
            return image.resized(
                width: max(1, Int((Double(image.width) * factor).rounded())),
                height: max(1, Int((Double(image.height) * factor).rounded())))
        case .rotated90:
            return image.rotatedClockwise()
        case .rotated(let degrees):
            return ImageDistortion.rotate(image, degrees: degrees, background: 255)
        case .blurred(let sigma):
            return image.gaussianBlurred(sigma: sigma)
        case .noise(let amplitude, let seed):
            var generator = SeededRandomNumberGenerator(seed: seed)
            var copy = image
            for index in copy.pixels.indices {
                let value = Double(copy.pixels[index]) + generator.nextGaussian(standardDeviation: amplitude)
                copy.pixels[index] = UInt8(clamping: Int(value.rounded()))
            }
            return copy
        case .lowContrast(let dark, let light):
            let table = (0..<256).map { value in
                UInt8(clamping: Int(dark) + (Int(light) - Int(dark)) * value / 255)
            }
            return image.mapped(table)
        case .inverted:
            return image.inverted()
        case .shadow(let depth, let angle):
            let radians = angle * Double.pi / 180
            let directionX = cos(radians)
            let directionY = sin(radians)
            let extent = abs(directionX) * Double(image.width) + abs(directionY) * Double(image.height)
            let origin = min(0, directionX * Double(image.width)) + min(0, directionY * Double(image.height))
            var copy = image
            for y in 0..<image.height {
                for x in 0..<image.width {
                    let along = (Double(x) * directionX + Double(y) * directionY - origin) / max(extent, 1)
                    let gain = 1 - (1 - depth) * along
                    copy[x, y] = UInt8(clamping: Int((Double(image[x, y]) * gain).rounded()))
                }
            }
            return copy
        case .jpeg(let quality):
            guard let data = try? image.jpegData(quality: quality),
                let decoded = try? GrayImage(encoded: data)
            else { return image }
            return decoded
        case .perspective(let strength, let seed):
            return ImageDistortion.warp(image, strength: strength, seed: seed)
        case .curled(let amplitude):
            // Each column moves down by a sine of its position: a bow across the page.
            var result = GrayImage(width: image.width, height: image.height, filledWith: 255)
            let lift = amplitude * Double(image.height)
            for x in 0..<image.width {
                let shift = lift * sin(Double.pi * (Double(x) + 0.5) / Double(image.width))
                for y in 0..<image.height {
                    let value = image.bilinearSample(x: Double(x), y: Double(y) - shift, outside: 255)
                    result[x, y] = UInt8(clamping: Int(value.rounded()))
                }
            }
            return result
        case .photoLike(let scene):
            return scene.render(symbol: image)
        }
    }

    /// A keystone warp: the output's corners show the input at corners moved in by random amounts.
    static func warp(_ image: GrayImage, strength: Double, seed: UInt64) -> GrayImage {
        var random = SeededRandomNumberGenerator(seed: seed)
        let width = Double(image.width)
        let height = Double(image.height)
        let limit = min(max(strength, 0), 0.3)
        func inset() -> Double { Double.random(in: 0...limit, using: &random) }
        // Where each output corner looks in the input: the corners pulled inwards, so the input's centre
        // is magnified unevenly as a tilted camera sees it.
        let output: [(x: Double, y: Double)] = [(0, 0), (width, 0), (width, height), (0, height)]
        let input: [(x: Double, y: Double)] = [
            (inset() * width, inset() * height), (width - inset() * width, inset() * height),
            (width - inset() * width, height - inset() * height), (inset() * width, height - inset() * height),
        ]
        guard let map = Homography.fit(from: output, to: input) else { return image }
        var result = GrayImage(width: image.width, height: image.height, filledWith: 255)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let source = map.apply(Double(x) + 0.5, Double(y) + 0.5)
                let value = image.bilinearSample(x: source.x - 0.5, y: source.y - 0.5, outside: 255)
                result[x, y] = UInt8(clamping: Int(value.rounded()))
            }
        }
        return result
    }

    /// Applies several distortions in order.
    public static func apply(_ distortions: [ImageDistortion], to image: GrayImage) -> GrayImage {
        distortions.reduce(image) { $1.apply(to: $0) }
    }

    /// Rotation about the centre with bilinear sampling onto a canvas that holds the whole result.
    static func rotate(_ image: GrayImage, degrees: Double, background: UInt8) -> GrayImage {
        let radians = degrees * Double.pi / 180
        let cosine = cos(radians)
        let sine = sin(radians)
        let newWidth = Int((abs(Double(image.width) * cosine) + abs(Double(image.height) * sine)).rounded(.up))
        let newHeight = Int((abs(Double(image.width) * sine) + abs(Double(image.height) * cosine)).rounded(.up))
        var output = GrayImage(width: max(newWidth, 1), height: max(newHeight, 1), filledWith: background)
        let centreX = Double(image.width) / 2
        let centreY = Double(image.height) / 2
        let newCentreX = Double(output.width) / 2
        let newCentreY = Double(output.height) / 2
        for y in 0..<output.height {
            for x in 0..<output.width {
                // Inverse mapping: where in the source does this output pixel's centre come from?
                let dx = Double(x) + 0.5 - newCentreX
                let dy = Double(y) + 0.5 - newCentreY
                let sourceX = cosine * dx - sine * dy + centreX - 0.5
                let sourceY = sine * dx + cosine * dy + centreY - 0.5
                let value = image.bilinearSample(x: sourceX, y: sourceY, outside: Double(background))
                output[x, y] = UInt8(clamping: Int(value.rounded()))
            }
        }
        return output
    }
}

/// A generated camera photo of a ticket: the symbol on a paper ticket or phone screen, slightly turned,
/// on a textured, unevenly lit table with clutter, then focus blur and sensor noise.
///
/// No perspective: the camera looks straight down. Everything random comes from `seed`.
public struct PhotoScene: Sendable, Hashable {
    /// Scene width in pixels.
    public var width: Int
    /// Scene height in pixels.
    public var height: Int
    /// Seed of every random choice.
    public var seed: UInt64
    /// The symbol's side as a share of the scene's shorter side, chosen at random in this range.
    public var symbolSize: ClosedRange<Double>
    /// Largest turn of the ticket, in degrees either way.
    public var maxTilt: Double
    /// Focus blur, standard deviation in pixels, chosen in this range.
    public var blur: ClosedRange<Double>
    /// Sensor noise, standard deviation in grey levels, chosen in this range.
    public var noise: ClosedRange<Double>
    /// Darkest share of full brightness where light falls off across the scene.
    public var minimumLight: Double

    /// Creates a scene description; the defaults make an easy, typical photo.
    public init(
        width: Int = 1280, height: Int = 720, seed: UInt64, symbolSize: ClosedRange<Double> = 0.35...0.55,
        maxTilt: Double = 8, blur: ClosedRange<Double> = 0.5...0.9, noise: ClosedRange<Double> = 2...4,
        minimumLight: Double = 0.75
    ) {
        self.width = width
        self.height = height
        self.seed = seed
        self.symbolSize = symbolSize
        self.maxTilt = maxTilt
        self.blur = blur
        self.noise = noise
        self.minimumLight = minimumLight
    }

    /// Renders the scene around a symbol image (dark modules on white, with or without quiet zone).
    public func render(symbol: GrayImage) -> GrayImage {
        var random = SeededRandomNumberGenerator(seed: seed)
        var canvas = [Double](repeating: 0, count: width * height)
        paintTable(&canvas, random: &random)
        paintClutter(&canvas, random: &random)
        placeTicket(symbol, on: &canvas, random: &random)
        light(&canvas, random: &random)
        var image = GrayImage(
            width: width, height: height,
            pixels: canvas.map { UInt8(clamping: Int($0.rounded())) })
        image = image.gaussianBlurred(sigma: Double.random(in: blur, using: &random))
        let amplitude = Double.random(in: noise, using: &random)
        for index in image.pixels.indices {
            let value = Double(image.pixels[index]) + random.nextGaussian(standardDeviation: amplitude)
            image.pixels[index] = UInt8(clamping: Int(value.rounded()))
        }
        return image
    }

    /// A mid-grey surface with a gradient and a blotchy texture at two scales (wood, fabric, a desk).
    private func paintTable(_ canvas: inout [Double], random: inout SeededRandomNumberGenerator) {
        let base = Double.random(in: 90...170, using: &random)
        let slopeX = Double.random(in: -40...40, using: &random) / Double(width)
        let slopeY = Double.random(in: -40...40, using: &random) / Double(height)
        let coarse = valueNoise(cells: 8, amplitude: 30, random: &random)
        let fine = valueNoise(cells: 60, amplitude: 12, random: &random)
        for y in 0..<height {
            for x in 0..<width {
                let index = y * width + x
                canvas[index] = base + slopeX * Double(x) + slopeY * Double(y) + coarse[index] + fine[index]
            }
        }
    }

    /// Smooth random values: a grid of `cells` across, interpolated bilinearly, centred on zero.
    private func valueNoise(cells: Int, amplitude: Double, random: inout SeededRandomNumberGenerator) -> [Double] {
        let columns = cells + 2
        let rows = cells * height / max(width, 1) + 3
        let grid = (0..<columns * rows).map { _ in Double.random(in: -amplitude...amplitude, using: &random) }
        let cellSize = Double(width) / Double(cells)
        var values = [Double](repeating: 0, count: width * height)
        for y in 0..<height {
            let gridY = Double(y) / cellSize
            let row = min(Int(gridY), rows - 2)
            let fractionY = gridY - Double(row)
            for x in 0..<width {
                let gridX = Double(x) / cellSize
                let column = min(Int(gridX), columns - 2)
                let fractionX = gridX - Double(column)
                let top = grid[row * columns + column] * (1 - fractionX) + grid[row * columns + column + 1] * fractionX
                let bottom =
                    grid[(row + 1) * columns + column] * (1 - fractionX)
                    + grid[(row + 1) * columns + column + 1] * fractionX
                values[y * width + x] = top * (1 - fractionY) + bottom * fractionY
            }
        }
        return values
    }

    /// Rectangles, bars and lines of print: the things next to a ticket on a desk, some with sharp edges
    /// and square corners that look like finder patterns to a detector.
    private func paintClutter(_ canvas: inout [Double], random: inout SeededRandomNumberGenerator) {
        let count = Int.random(in: 12...24, using: &random)
        for _ in 0..<count {
            let shade = Double.random(in: 10...250, using: &random)
            let boxWidth = Int.random(in: 8...max(9, width / 6), using: &random)
            let boxHeight = Int.random(in: 4...max(5, height / 6), using: &random)
            let left = Int.random(in: -boxWidth / 2...width - boxWidth / 2, using: &random)
            let top = Int.random(in: -boxHeight / 2...height - boxHeight / 2, using: &random)
            let kind = Int.random(in: 0..<3, using: &random)
            for y in max(0, top)..<min(height, top + boxHeight) {
                for x in max(0, left)..<min(width, left + boxWidth) {
                    switch kind {
                    case 0:
                        canvas[y * width + x] = shade
                    case 1:
                        // Lines of small print.
                        if (y - top) % 9 < 5 && ((x - left) / 5) % 3 != 2 { canvas[y * width + x] = shade * 0.3 }
                    default:
                        // A frame.
                        if y - top < 3 || top + boxHeight - y <= 3 || x - left < 3 || left + boxWidth - x <= 3 {
                            canvas[y * width + x] = shade
                        }
                    }
                }
            }
        }
    }

    /// The symbol on a paper ticket or a phone screen, scaled, turned and put somewhere in the scene.
    private func placeTicket(_ symbol: GrayImage, on canvas: inout [Double], random: inout SeededRandomNumberGenerator)
    {
        let shorter = Double(min(width, height))
        let side = shorter * Double.random(in: symbolSize, using: &random)
        let scale = side / Double(max(symbol.width, symbol.height))
        let symbolWidth = Double(symbol.width) * scale
        let symbolHeight = Double(symbol.height) * scale
        let isPhone = Bool.random(using: &random)
        // The ticket: a margin around the symbol, more below it for text; a phone adds a dark bezel.
        let margin = side * 0.12
        let ticketWidth = symbolWidth + 2 * margin
        let ticketHeight = symbolHeight + 2 * margin + side * 0.3
        let bezel = isPhone ? side * 0.06 : 0
        let outerWidth = ticketWidth + 2 * bezel
        let outerHeight = ticketHeight + 2 * bezel
        let paper =
            isPhone ? Double.random(in: 235...252, using: &random) : Double.random(in: 215...245, using: &random)
        let ink = Double.random(in: 5...40, using: &random)
        let tilt = Double.random(in: -maxTilt...maxTilt, using: &random) * Double.pi / 180
        let cosine = cos(tilt)
        let sine = sin(tilt)
        let diagonalWidth = abs(outerWidth * cosine) + abs(outerHeight * sine)
        let diagonalHeight = abs(outerWidth * sine) + abs(outerHeight * cosine)
        let centreX = Double.random(
            in: diagonalWidth / 2...max(diagonalWidth / 2, Double(width) - diagonalWidth / 2),
            using: &random)
        let centreY = Double.random(
            in: diagonalHeight / 2...max(diagonalHeight / 2, Double(height) - diagonalHeight / 2),
            using: &random)
        let textSeed = random.next()

        let left = max(0, Int(centreX - diagonalWidth / 2) - 2)
        let right = min(width, Int(centreX + diagonalWidth / 2) + 3)
        let top = max(0, Int(centreY - diagonalHeight / 2) - 2)
        let bottom = min(height, Int(centreY + diagonalHeight / 2) + 3)
        // Four samples per pixel give the ticket's edges and the modules anti-aliased borders.
        let offsets = [(-0.25, -0.25), (0.25, -0.25), (-0.25, 0.25), (0.25, 0.25)]
        for y in top..<bottom {
            for x in left..<right {
                var sum = 0.0
                var covered = 0
                for (offsetX, offsetY) in offsets {
                    let dx = Double(x) + 0.5 + offsetX - centreX
                    let dy = Double(y) + 0.5 + offsetY - centreY
                    // Into the ticket's own frame, origin at its top-left outer corner.
                    let u = cosine * dx + sine * dy + outerWidth / 2
                    let v = -sine * dx + cosine * dy + outerHeight / 2
                    guard u >= 0, v >= 0, u < outerWidth, v < outerHeight else { continue }
                    covered += 1
                    let innerU = u - bezel
                    let innerV = v - bezel
                    if innerU < 0 || innerV < 0 || innerU >= ticketWidth || innerV >= ticketHeight {
                        sum += 25
                        continue
                    }
                    let symbolU = innerU - margin
                    let symbolV = innerV - margin
                    if symbolU >= 0, symbolV >= 0, symbolU < symbolWidth, symbolV < symbolHeight {
                        let value = symbol.bilinearSample(
                            x: symbolU / scale - 0.5, y: symbolV / scale - 0.5,
                            outside: 255)
                        sum += ink + (paper - ink) * value / 255
                    } else if innerV > margin + symbolHeight + side * 0.05,
                        PhotoScene.isPrint(
                            u: innerU - margin, v: innerV - margin - symbolHeight, seed: textSeed,
                            width: symbolWidth, unit: side / 60)
                    {
                        sum += ink + 30
                    } else {
                        sum += paper
                    }
                }
                guard covered > 0 else { continue }
                let index = y * width + x
                canvas[index] = (canvas[index] * Double(offsets.count - covered) + sum) / Double(offsets.count)
            }
        }
    }

    /// Whether a point below the symbol is part of a line of printed text (blocky "words").
    private static func isPrint(u: Double, v: Double, seed: UInt64, width: Double, unit: Double) -> Bool {
        guard u >= 0, u < width, unit > 0 else { return false }
        let line = Int(v / (unit * 3))
        guard line < 3, v.truncatingRemainder(dividingBy: unit * 3) < unit * 1.6 else { return false }
        let character = Int(u / (unit * 1.3))
        var generator = SeededRandomNumberGenerator(seed: seed &+ UInt64(line * 1000 + character))
        // About one character in six is a space.
        return generator.next() % 6 != 0 && u.truncatingRemainder(dividingBy: unit * 1.3) < unit
    }

    /// Uneven light: a soft falloff from a random bright point, as from a desk lamp.
    private func light(_ canvas: inout [Double], random: inout SeededRandomNumberGenerator) {
        let lampX = Double.random(in: 0...Double(width), using: &random)
        let lampY = Double.random(in: 0...Double(height), using: &random)
        let reach = Double(max(width, height)) * Double.random(in: 0.8...1.6, using: &random)
        let peak = Double.random(in: 0.95...1.05, using: &random)
        for y in 0..<height {
            for x in 0..<width {
                let distance = ((Double(x) - lampX) * (Double(x) - lampX) + (Double(y) - lampY) * (Double(y) - lampY))
                    .squareRoot()
                let gain = max(minimumLight, peak - (peak - minimumLight) * min(1, distance / reach))
                canvas[y * width + x] *= gain
            }
        }
    }
}
