import FareCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Finds Aztec bull's-eyes in a photo and resamples each symbol onto a clean, upright grid.
///
/// zxing-cpp 1.4 estimates an Aztec symbol's geometry from four points on the bull's-eye and extrapolates
/// it to the whole symbol; on large symbols a pixel of error there lands a module off at the edges, so it
/// fails on many photos turned by a few degrees, slightly blurred or at a non-integer scale. This fits the
/// geometry (a homography, so mild perspective is fine) to hundreds of sub-pixel edge points on the
/// bull's-eye rings instead, and renders what it sees as a pure image that zxing then reads reliably.
struct AztecLocator {
    /// A bull's-eye seen in the image: its centre and the apparent module size, in pixels.
    struct Candidate: Sendable {
        var x: Double
        var y: Double
        var moduleSize: Double
        var hits: Int
    }

    /// The photo, at full resolution: the geometry is fitted and the grid sampled here.
    let image: GrayImage
    /// The photo as searched for bull's-eyes: shrunk when large, because a bull's-eye big enough to decode
    /// stays findable and the search costs time in proportion to the pixels.
    private let searchImage: GrayImage
    /// Pixels of `image` per pixel of `searchImage`.
    private let searchScale: Int
    /// `searchImage` as 1 for dark, 0 for light, from a threshold against the local mean.
    private let dark: [UInt8]

    /// Prepares a search; images above `searchPixels` pixels are searched at a reduced size.
    init(image: GrayImage, searchPixels: Int = 3_000_000) {
        self.image = image
        var scale = 1
        while image.pixelCount / (scale * scale) > searchPixels { scale += 1 }
        searchScale = scale
        searchImage = scale == 1 ? image : image.downscaled(by: scale)
        dark = AztecLocator.binarize(searchImage)
    }

    /// A local-mean threshold, computed on blocks as zxing's hybrid binarizer does: each pixel is compared
    /// with the mean of the 5 x 5 blocks around its own, so uneven light does not matter.
    static func binarize(_ image: GrayImage) -> [UInt8] {
        let width = image.width
        let height = image.height
        // Blocks of about 1/90 of the shorter side (at least 8 pixels): the window then spans a few modules of
        // any symbol big enough to be read.
        let blockSize = max(8, min(width, height) / 90)
        let blocksAcross = (width + blockSize - 1) / blockSize
        let blocksDown = (height + blockSize - 1) / blockSize
        var means = [Int](repeating: 0, count: blocksAcross * blocksDown)
        var sums = [Int](repeating: 0, count: blocksAcross)
        var lows = [UInt8](repeating: 255, count: blocksAcross)
        var highs = [UInt8](repeating: 0, count: blocksAcross)
        image.pixels.withUnsafeBufferPointer { pixels in
            for blockY in 0..<blocksDown {
                let top = blockY * blockSize
                let bottom = min(height, top + blockSize)
                for index in 0..<blocksAcross {
                    sums[index] = 0
                    lows[index] = 255
                    highs[index] = 0
                }
                // Row by row, so the pixels are read in memory order.
                for y in top..<bottom {
                    let row = pixels.baseAddress! + y * width
                    for blockX in 0..<blocksAcross {
                        let left = blockX * blockSize
                        let right = min(width, left + blockSize)
                        var sum = 0
                        var low: UInt8 = 255
                        var high: UInt8 = 0
                        for x in left..<right {
                            let value = row[x]
                            sum &+= Int(value)
                            low = min(low, value)
                            high = max(high, value)
                        }
                        sums[blockX] &+= sum
                        lows[blockX] = min(lows[blockX], low)
                        highs[blockX] = max(highs[blockX], high)
                    }
                }
                for blockX in 0..<blocksAcross {
                    let area = (min(width, (blockX + 1) * blockSize) - blockX * blockSize) * (bottom - top)
                    // A flat block (paper, background) has no dark pixels: put its threshold below its darkest.
                    means[blockY * blocksAcross + blockX] =
                        highs[blockX] &- lows[blockX] <= 24 ? Int(lows[blockX]) - 8 : sums[blockX] / area
                }
            }
        }
        var bits = [UInt8](repeating: 0, count: width * height)
        image.pixels.withUnsafeBufferPointer { pixels in
            bits.withUnsafeMutableBufferPointer { output in
                for blockY in 0..<blocksDown {
                    for blockX in 0..<blocksAcross {
                        var total = 0
                        var count = 0
                        for neighbourY in max(0, blockY - 2)...min(blocksDown - 1, blockY + 2) {
                            for neighbourX in max(0, blockX - 2)...min(blocksAcross - 1, blockX + 2) {
                                total += means[neighbourY * blocksAcross + neighbourX]
                                count += 1
                            }
                        }
                        let threshold = UInt8(clamping: total / count)
                        let left = blockX * blockSize
                        let right = min(width, left + blockSize)
                        let top = blockY * blockSize
                        for y in top..<min(height, top + blockSize) {
                            let start = y * width
                            for x in (start + left)..<(start + right) {
                                output[x] = pixels[x] < threshold ? 1 : 0
                            }
                        }
                    }
                }
            }
        }
        return bits
    }

    // MARK: - Finding bull's-eyes

    /// Whether nine runs, alternating and with a dark one in the middle, look like a line through a
    /// bull's-eye: the seven inner runs one module each, the outer two at least half a module.
    private static func isBullseye(_ runs: ArraySlice<Int>) -> Double? {
        let base = runs.startIndex
        var inner = 0
        for index in 1...7 { inner += runs[base + index] }
        let module = Double(inner) / 7
        guard module >= 1.2 else { return nil }
        for index in 1...7 where abs(Double(runs[base + index]) - module) > module * 0.6 + 0.5 { return nil }
        for index in 1...6 {
            let pair = Double(runs[base + index] + runs[base + index + 1])
            if abs(pair - 2 * module) > module * 0.5 + 0.5 { return nil }
        }
        guard Double(runs[base]) >= module * 0.5, Double(runs[base + 8]) >= module * 0.5 else { return nil }
        return module
    }

    /// Run lengths through (x, y) in both directions along (dx, dy), checked against the bull's-eye pattern.
    ///
    /// Returns the offset of the centre run's middle from (x, y) in steps, and the module size in steps.
    private func crossCheck(x: Int, y: Int, dx: Int, dy: Int, expected: Double) -> (offset: Double, module: Double)? {
        guard x >= 0, y >= 0, x < searchImage.width, y < searchImage.height, dark[y * searchImage.width + x] == 1 else {
            return nil
        }
        let limit = Int(expected * 3) + 3
        func runs(sign: Int) -> [Int]? {
            // The centre run's part on this side (including the start pixel), then four more runs.
            var lengths: [Int] = []
            var colour: UInt8 = 1
            var length = 0
            var px = x
            var py = y
            while lengths.count < 5 {
                if px < 0 || py < 0 || px >= searchImage.width || py >= searchImage.height {
                    // The outermost dark ring may touch the border; anything else is not a bull's-eye.
                    if lengths.count == 4 && colour == 1 && length > 0 {
                        lengths.append(length)
                        break
                    }
                    return nil
                }
                let value = dark[py * searchImage.width + px]
                if value == colour {
                    length += 1
                    if length > limit {
                        if lengths.count == 4 {
                            lengths.append(length)
                            break
                        }
                        return nil
                    }
                } else {
                    lengths.append(length)
                    colour = value
                    length = 1
                }
                px += dx * sign
                py += dy * sign
            }
            return lengths
        }
        guard let forward = runs(sign: 1), let backward = runs(sign: -1) else { return nil }
        let centre = forward[0] + backward[0] - 1
        let pattern = Array(backward[1...4].reversed()) + [centre] + Array(forward[1...4])
        guard let module = AztecLocator.isBullseye(pattern[...]) else { return nil }
        return (Double(forward[0] - backward[0]) / 2, module)
    }

    /// Bull's-eye centres, strongest first; at most `limit`.
    func candidates(limit: Int = 6) -> [Candidate] {
        let width = searchImage.width
        let height = searchImage.height
        var found: [Candidate] = []
        var runs = [Int](repeating: 0, count: 9)
        for y in 0..<height {
            // Run lengths of the row so far; the last nine are checked whenever a run ends.
            var count = 0
            var colour = dark[y * width]
            var length = 0
            var start = 0
            var starts = [Int](repeating: 0, count: 9)
            for x in 0...width {
                let value: UInt8 = x < width ? dark[y * width + x] : 2
                if value == colour {
                    length += 1
                    continue
                }
                for index in 0..<8 {
                    runs[index] = runs[index + 1]
                    starts[index] = starts[index + 1]
                }
                runs[8] = length
                starts[8] = start
                count += 1
                // The run that just ended is the outer dark one, so the window's middle run is dark too.
                if count >= 9, colour == 1, let module = AztecLocator.isBullseye(runs[0...8]) {
                    let centreX = Double(starts[4]) + Double(runs[4] - 1) / 2
                    if let candidate = verify(x: centreX, y: Double(y), module: module) {
                        if let existing = found.firstIndex(where: {
                            abs($0.x - candidate.x) < 3 * $0.moduleSize && abs($0.y - candidate.y) < 3 * $0.moduleSize
                        }) {
                            found[existing].hits += 1
                        } else {
                            found.append(candidate)
                        }
                    }
                }
                colour = value
                length = 1
                start = x
            }
        }
        let scale = Double(searchScale)
        return found.sorted { $0.hits > $1.hits }.prefix(limit).map { candidate in
            // Pixel centres: x_full + 0.5 = (x_search + 0.5) * scale.
            Candidate(
                x: (candidate.x + 0.5) * scale - 0.5, y: (candidate.y + 0.5) * scale - 0.5,
                moduleSize: candidate.moduleSize * scale, hits: candidate.hits)
        }
    }

    /// Confirms a horizontal hit vertically and diagonally and centres it.
    private func verify(x: Double, y: Double, module: Double) -> Candidate? {
        let column = Int(x.rounded())
        guard let vertical = crossCheck(x: column, y: Int(y), dx: 0, dy: 1, expected: module) else { return nil }
        let centreY = y + vertical.offset
        guard let horizontal = crossCheck(x: column, y: Int(centreY.rounded()), dx: 1, dy: 0, expected: module) else {
            return nil
        }
        let centreX = Double(column) + horizontal.offset
        let row = Int(centreY.rounded())
        let diagonalExpected = max(module, vertical.module) * 1.5
        guard crossCheck(x: Int(centreX.rounded()), y: row, dx: 1, dy: 1, expected: diagonalExpected) != nil,
            crossCheck(x: Int(centreX.rounded()), y: row, dx: 1, dy: -1, expected: diagonalExpected) != nil
        else { return nil }
        return Candidate(x: centreX, y: centreY, moduleSize: (horizontal.module + vertical.module) / 2, hits: 1)
    }

    // MARK: - Geometry

    /// An edge point on a bull's-eye ring: where a ray from the centre crosses from one ring to the next.
    private struct EdgePoint {
        var x: Double
        var y: Double
        /// Half the side of the ring boundary's square, in modules (0.5, 1.5, ...).
        var radius: Double
    }

    /// The map from module coordinates (origin at the bull's-eye centre, one unit per module) to image
    /// pixels, fitted to the ring edges around a candidate; `nil` when the rings do not fit a square grid.
    ///
    /// Returns the affine fit (right for a flat ticket seen square on, and the most stable) and the
    /// projective one (for a tilted camera); both come from the same edge points.
    func geometry(of candidate: Candidate) -> (affine: Homography?, projective: Homography?) {
        let rayCount = 144
        let module = candidate.moduleSize
        let reach = module * 8 * 1.45
        let step = 0.25
        var crossingsByRay: [[(x: Double, y: Double)]] = []
        crossingsByRay.reserveCapacity(rayCount)
        for ray in 0..<rayCount {
            let angle = Double(ray) * 2 * Double.pi / Double(rayCount)
            let directionX = cos(angle)
            let directionY = sin(angle)
            let sampleCount = Int(reach / step)
            var profile = [Double](repeating: 0, count: sampleCount)
            for index in 0..<sampleCount {
                let distance = Double(index) * step
                profile[index] = image.bilinearSample(
                    x: candidate.x + directionX * distance,
                    y: candidate.y + directionY * distance, outside: 255)
            }
            // Threshold halfway between the dark and light rings seen on this ray near the centre.
            let inner = profile.prefix(min(sampleCount, Int(module * 4.6 / step))).sorted()
            guard inner.count > 8 else {
                crossingsByRay.append([])
                continue
            }
            let low = inner[inner.count / 10]
            let high = inner[inner.count * 9 / 10]
            guard high - low > 12 else {
                crossingsByRay.append([])
                continue
            }
            let threshold = (low + high) / 2
            var crossings: [(x: Double, y: Double)] = []
            var isDark = profile[0] < threshold
            for index in 1..<sampleCount where (profile[index] < threshold) != isDark {
                // Sub-pixel position by linear interpolation between the two samples.
                let before = profile[index - 1]
                let after = profile[index]
                let fraction = (threshold - before) / (after - before)
                let distance = (Double(index - 1) + fraction) * step
                crossings.append((candidate.x + directionX * distance, candidate.y + directionY * distance))
                isDark.toggle()
                if crossings.count == 7 { break }
            }
            crossingsByRay.append(crossings)
        }

        // First fit: the edges every Aztec symbol has (rings 1.5 to 3.5; 0.5 is too small to place well),
        // assigned by order along the ray.
        var points: [EdgePoint] = []
        for crossings in crossingsByRay where crossings.count >= 4 {
            for index in 1...3 {
                points.append(EdgePoint(x: crossings[index].x, y: crossings[index].y, radius: Double(index) + 0.5))
            }
        }
        guard points.count >= 40 else { return (nil, nil) }
        guard var inverse = fitInverse(points, around: candidate, sidesFrom: nil, projective: false) else {
            return (nil, nil)
        }
        for _ in 0..<2 {
            guard let refined = fitInverse(points, around: candidate, sidesFrom: inverse, projective: false) else {
                return (nil, nil)
            }
            inverse = refined
        }

        // Second fit: add every crossing that lies where a ring edge should (outer rings of a full-range
        // symbol, and the compact one's outer edge where the mode message is light), and drop outliers.
        var accepted: [EdgePoint] = []
        for crossings in crossingsByRay {
            for (index, crossing) in crossings.enumerated() where index >= 1 {
                let (u, v) = inverse.apply(crossing.x, crossing.y)
                let chebyshev = max(abs(u), abs(v))
                let ring = (chebyshev - 0.5).rounded() + 0.5
                guard ring >= 1.5, ring <= 6.5, abs(chebyshev - ring) < 0.2 else { continue }
                // Near the corners a ray grazes two sides at once; leave those out.
                guard abs(abs(u) - abs(v)) > 0.15 else { continue }
                accepted.append(EdgePoint(x: crossing.x, y: crossing.y, radius: ring))
            }
        }
        guard accepted.count >= 60 else { return (nil, nil) }
        func finalFit(projective: Bool) -> Homography? {
            guard let final = fitInverse(accepted, around: candidate, sidesFrom: inverse, projective: projective) else {
                return nil
            }
            // The residual in modules says whether this was a real bull's-eye.
            var squares = 0.0
            for point in accepted {
                let (u, v) = final.apply(point.x, point.y)
                let error = max(abs(u), abs(v)) - point.radius
                squares += error * error
            }
            guard (squares / Double(accepted.count)).squareRoot() < 0.12 else { return nil }
            return invert(final)
        }
        return (finalFit(projective: false), finalFit(projective: true))
    }

    /// Fits G, the map from image pixels to module coordinates, so that each edge point lands on its ring's
    /// square: on side u = ±r or v = ±r. Each point gives one equation linear in G's entries.
    ///
    /// Sides come from the angle around the centre for the first fit (the square's orientation found by a
    /// search), then from the previous fit.
    private func fitInverse(
        _ points: [EdgePoint], around candidate: Candidate, sidesFrom previous: Homography?, projective: Bool
    ) -> Homography? {
        let scale = 1 / candidate.moduleSize
        var orientation = 0.0
        if previous == nil {
            orientation = bestOrientation(points, around: candidate)
        }
        var normal = [Double](repeating: 0, count: 64)
        var right = [Double](repeating: 0, count: 8)
        var used = 0
        for point in points {
            let x = (point.x - candidate.x) * scale
            let y = (point.y - candidate.y) * scale
            // Which side: 0 is u = +r, 1 is v = +r, 2 is u = -r, 3 is v = -r.
            let side: Int
            if let previous {
                let (u, v) = previous.apply(point.x, point.y)
                if abs(abs(u) - abs(v)) < 0.1 { continue }
                side = abs(u) > abs(v) ? (u > 0 ? 0 : 2) : (v > 0 ? 1 : 3)
            } else {
                var relative = atan2(y, x) - orientation
                relative = relative - 2 * Double.pi * (relative / (2 * Double.pi)).rounded(.down)
                let quarter = relative / (Double.pi / 2)
                let nearest = quarter.rounded()
                // Only points well inside a side: corners are ambiguous until the first fit.
                guard abs(quarter - nearest) < 0.3 else { continue }
                side = Int(nearest) % 4
            }
            let target = side < 2 ? point.radius : -point.radius
            // u = (g0 x + g1 y + g2) / (g6 x + g7 y + 1) = target, and likewise v with g3, g4, g5.
            var row = [Double](repeating: 0, count: 8)
            if side % 2 == 0 {
                row[0] = x
                row[1] = y
                row[2] = 1
            } else {
                row[3] = x
                row[4] = y
                row[5] = 1
            }
            row[6] = -target * x
            row[7] = -target * y
            for i in 0..<8 {
                right[i] += row[i] * target
                for j in 0..<8 { normal[i * 8 + j] += row[i] * row[j] }
            }
            used += 1
        }
        guard used >= 24 else { return nil }
        var g: [Double]
        if projective {
            guard let solution = Homography.solve(normal, right, size: 8) else { return nil }
            g = solution
        } else {
            // Affine: the first six unknowns only (g6 = g7 = 0).
            let reduced = (0..<6).flatMap { i in (0..<6).map { j in normal[i * 8 + j] } }
            guard let solution = Homography.solve(reduced, Array(right.prefix(6)), size: 6) else { return nil }
            g = solution + [0, 0]
        }
        // Compose with the normalisation (pixels to centred, module-scaled coordinates).
        let matrix = [
            g[0] * scale, g[1] * scale, g[2] - (g[0] * candidate.x + g[1] * candidate.y) * scale,
            g[3] * scale, g[4] * scale, g[5] - (g[3] * candidate.x + g[4] * candidate.y) * scale,
            g[6] * scale, g[7] * scale, 1 - (g[6] * candidate.x + g[7] * candidate.y) * scale,
        ]
        return Homography(matrix: matrix)
    }

    /// The rotation of the rings' squares (0 ..< 90 degrees) that best explains the edge points' distances.
    private func bestOrientation(_ points: [EdgePoint], around candidate: Candidate) -> Double {
        // Offsets from the centre and distances, once; each orientation then costs a few multiplications.
        let offsets = points.map { (x: $0.x - candidate.x, y: $0.y - candidate.y, radius: $0.radius) }
        let distances = offsets.map { ($0.x * $0.x + $0.y * $0.y).squareRoot() }
        var shapes = [Double](repeating: 0, count: points.count)
        func cost(_ orientation: Double) -> Double {
            // A point on a square of half-side r, turned by o, at distance d along direction a lies where
            // d * max(|cos(a - o)|, |sin(a - o)|) = r * module; the cosines come from rotating the offset.
            let cosine = cos(orientation)
            let sine = sin(orientation)
            var sumDistanceShape = 0.0
            var sumShapeShape = 0.0
            for index in offsets.indices {
                let offset = offsets[index]
                let along = abs(offset.x * cosine + offset.y * sine)
                let across = abs(-offset.x * sine + offset.y * cosine)
                let shape = offset.radius * distances[index] / max(max(along, across), 1e-9)
                shapes[index] = shape
                sumDistanceShape += distances[index] * shape
                sumShapeShape += shape * shape
            }
            let module = sumDistanceShape / sumShapeShape
            var total = 0.0
            for index in offsets.indices {
                let error = distances[index] - module * shapes[index]
                total += error * error
            }
            return total
        }
        var best = (angle: 0.0, cost: Double.infinity)
        for degree in 0..<90 {
            let angle = Double(degree) * Double.pi / 180
            let value = cost(angle)
            if value < best.cost { best = (angle, value) }
        }
        for tenth in -10...10 {
            let angle = best.angle + Double(tenth) * Double.pi / 1800
            let value = cost(angle)
            if value < best.cost { best = (angle, value) }
        }
        return best.angle
    }

    /// The inverse of a homography's matrix.
    private func invert(_ homography: Homography) -> Homography? {
        let m = homography.matrix
        let a = m[4] * m[8] - m[5] * m[7]
        let b = m[5] * m[6] - m[3] * m[8]
        let c = m[3] * m[7] - m[4] * m[6]
        let determinant = m[0] * a + m[1] * b + m[2] * c
        guard abs(determinant) > 1e-15 else { return nil }
        let inverse = [
            a, m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
            b, m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
            c, m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3],
        ].map { $0 / determinant }
        guard abs(inverse[8]) > 1e-15 else { return nil }
        return Homography(matrix: inverse.map { $0 / inverse[8] })
    }

    // MARK: - Reference grid

    /// The geometry corrected with a full-range symbol's reference grid, or `nil` when no grid is seen.
    ///
    /// The bull's-eye spans 13 modules, a ticket's symbol 60 or more, so small errors of a fit to the rings
    /// (perspective above all) grow fourfold at the symbol's edge, and a bent ticket follows no homography
    /// at all. Full-range symbols carry lines of alternating modules every 16 modules from the centre;
    /// where two cross, the pattern is known. Crossings are found from the centre outwards, each by a local
    /// search around where the crossings found so far predict it. The homography is fitted again to them
    /// and the bull's-eye, with a smooth bend for what it still misses (see ``SymbolGeometry``).
    func refinedWithReferenceGrid(_ start: Homography) -> SymbolGeometry? {
        // Contrast seen on the bull's-eye: light rings 1, 3, 5 against dark rings 0, 2, 4.
        func brightness(_ point: (x: Double, y: Double)) -> Double {
            image.bilinearSample(x: point.x, y: point.y, outside: 255)
        }
        var darkSum = 0.0
        var lightSum = 0.0
        for ring in 0...5 {
            for (u, v) in [(Double(ring), 0.0), (-Double(ring), 0), (0, Double(ring)), (0, -Double(ring))] {
                if ring % 2 == 0 {
                    darkSum += brightness(start.apply(u, v))
                } else {
                    lightSum += brightness(start.apply(u, v))
                }
            }
        }
        let contrast = (lightSum - darkSum) / 12
        guard contrast > 10 else { return nil }

        var moduleCorners: [(x: Double, y: Double)] = []
        var imageCorners: [(x: Double, y: Double)] = []
        // The bull's-eye's own outline anchors the fit where it is most reliable.
        for (u, v) in [(-5.5, -5.5), (5.5, -5.5), (5.5, 5.5), (-5.5, 5.5), (0, -5.5), (5.5, 0), (0, 5.5), (-5.5, 0)] {
            moduleCorners.append((u, v))
            imageCorners.append(start.apply(u, v))
        }
        // Expected colours around a crossing: dark at even steps along both lines, light at odd ones.
        let arms: [(Double, Double, Bool)] = (-3...3).flatMap { step -> [(Double, Double, Bool)] in
            let isDark = step % 2 == 0
            return step == 0 ? [(0, 0, true)] : [(Double(step), 0, isDark), (0, Double(step), isDark)]
        }
        // What has been measured so far predicts the next crossing; it starts as the bull's-eye's fit.
        var prediction = SymbolGeometry(start)
        var crossings = 0
        // Crossings up to 48 modules out (symbols of up to 97 x 97 modules, beyond any ticket's), ring by ring.
        for ring in 1...3 {
            var measured = 0
            for a in -ring...ring {
                for b in -ring...ring where max(abs(a), abs(b)) == ring {
                    let u = Double(16 * a)
                    let v = Double(16 * b)
                    func sample(_ su: Double, _ sv: Double) -> Double { brightness(prediction.apply(su, sv)) }
                    var best = (score: -Double.infinity, du: 0.0, dv: 0.0)
                    // Coarse steps of 0.2 modules, then 0.05 around the best.
                    for (stepSize, reach) in [(0.2, 3), (0.05, 2)] {
                        let (originU, originV) = (best.score.isFinite ? best.du : 0, best.score.isFinite ? best.dv : 0)
                        for stepU in -reach...reach {
                            for stepV in -reach...reach {
                                let du = originU + Double(stepU) * stepSize
                                let dv = originV + Double(stepV) * stepSize
                                var score = 0.0
                                for (armU, armV, isDark) in arms {
                                    let value = sample(u + armU + du, v + armV + dv)
                                    score += isDark ? -value : value
                                }
                                if score > best.score { best = (score, du, dv) }
                            }
                        }
                    }
                    // 6 light and 7 dark modules: a real crossing scores about 6.5 contrasts.
                    let normalised = best.score / Double(arms.count) / contrast * 2
                    guard normalised > 0.6, abs(best.du) < 0.65, abs(best.dv) < 0.65 else { continue }
                    moduleCorners.append((u, v))
                    imageCorners.append(prediction.apply(u + best.du, v + best.dv))
                    measured += 1
                    crossings += 1
                }
            }
            guard measured > 0, let updated = SymbolGeometry(fitting: moduleCorners, to: imageCorners) else { break }
            prediction = updated
        }
        guard crossings >= 2 else { return nil }
        return prediction
    }

    // MARK: - Resampling

    /// Modules each way from the centre in a rectified image: enough for a full-range symbol of 27 layers
    /// (125 x 125 modules); tickets use 10 to 15.
    static let rectifiedRadius = 62
    /// Pixels per module in a rectified image: whole pixels, so zxing's grid lands exactly.
    static let rectifiedModuleSize = 3

    /// Where a pixel of a rectified image lies in the photo.
    static func photoPoint(ofRectified point: SymbolPoint, geometry: SymbolGeometry) -> SymbolPoint {
        let u = (Double(point.x) + 0.5) / Double(rectifiedModuleSize) - 0.5 - Double(rectifiedRadius)
        let v = (Double(point.y) + 0.5) / Double(rectifiedModuleSize) - 0.5 - Double(rectifiedRadius)
        let mapped = geometry.apply(u, v)
        // Clamped: Int() of a non-finite or huge value would trap.
        func pixel(_ value: Double) -> Int { value.isFinite ? Int(max(-1e9, min(1e9, value)).rounded()) : 0 }
        return SymbolPoint(x: pixel(mapped.x), y: pixel(mapped.y))
    }

    /// The symbol around a bull's-eye, resampled upright at `pixelsPerModule`, `radius` modules each way
    /// from the centre (what lies outside the photo is white). The bull's-eye is exactly in the middle.
    func rectified(
        _ geometry: SymbolGeometry, radius: Int = Self.rectifiedRadius,
        pixelsPerModule: Int = Self.rectifiedModuleSize
    ) -> GrayImage {
        let side = 2 * radius + 1
        var modules = [UInt8](repeating: 255, count: side * side)
        // Five samples per module (centre and four around it) average out noise without reaching a neighbour.
        let offsets = [(0.0, 0.0), (-0.22, -0.22), (0.22, -0.22), (-0.22, 0.22), (0.22, 0.22)]
        for row in 0..<side {
            for column in 0..<side {
                let u = Double(column - radius)
                let v = Double(row - radius)
                // The bend varies slowly: once per module is enough.
                let correction = geometry.correction(u, v)
                var sum = 0.0
                for (du, dv) in offsets {
                    let point = geometry.homography.apply(u + du, v + dv)
                    sum += image.bilinearSample(x: point.x + correction.dx, y: point.y + correction.dy, outside: 255)
                }
                modules[row * side + column] = UInt8(clamping: Int((sum / Double(offsets.count)).rounded()))
            }
        }
        let pixelSide = side * pixelsPerModule
        var pixels = [UInt8](repeating: 255, count: pixelSide * pixelSide)
        for row in 0..<side {
            for column in 0..<side {
                let value = modules[row * side + column]
                for dy in 0..<pixelsPerModule {
                    let start = (row * pixelsPerModule + dy) * pixelSide + column * pixelsPerModule
                    for dx in 0..<pixelsPerModule { pixels[start + dx] = value }
                }
            }
        }
        return GrayImage(width: pixelSide, height: pixelSide, pixels: pixels)
    }
}

extension AztecLocator {
    /// Every Aztec symbol whose bull's-eye this finds and zxing then reads from the resampled grid.
    ///
    /// - Parameters:
    ///   - limit: The most bull's-eyes tried, strongest first.
    ///   - exhaustive: Whether bull's-eyes are searched at up to 3 megapixels and each gets every geometry and
    ///     binariser (a still image), or searched at up to 0.5 megapixels with only the affine and projective grids
    ///     and one binariser (a camera frame, where the next frame comes in 33 ms).
    static func read(
        _ image: GrayImage, symbologies: Set<Symbology>, limit: Int = 6, exhaustive: Bool = true
    ) -> [EngineSymbol] {
        guard symbologies.contains(.aztec) else { return [] }
        // A camera frame's bull's-eyes are searched at up to 0.5 megapixels (a 720p frame at half size); the grids
        // are still read from the frame itself.
        let locator = exhaustive ? AztecLocator(image: image) : AztecLocator(image: image, searchPixels: 500_000)
        var found: [EngineSymbol] = []
        for candidate in locator.candidates(limit: limit) {
            if let symbol = locator.decode(candidate, exhaustive: exhaustive) { found.append(symbol) }
        }
        return found
    }

    /// The symbol around one bull's-eye, trying geometries from the cheapest: affine (a flat ticket seen
    /// square on), projective (a tilted camera), and corrected by the reference grid (large symbols, where
    /// small errors grow towards the edges, and bent paper); the last only when `exhaustive`.
    func decode(_ candidate: Candidate, exhaustive: Bool = true) -> EngineSymbol? {
        let (affine, projective) = geometry(of: candidate)
        if let affine, let symbol = decode(candidate, geometry: SymbolGeometry(affine), exhaustive: exhaustive) {
            return symbol
        }
        guard let projective else { return nil }
        if let symbol = decode(candidate, geometry: SymbolGeometry(projective), exhaustive: exhaustive) {
            return symbol
        }
        guard exhaustive, let refined = refinedWithReferenceGrid(projective) else { return nil }
        if let symbol = decode(candidate, geometry: refined) { return symbol }
        // The plain refitted homography, in case a correction was measured wrong.
        return decode(candidate, geometry: SymbolGeometry(refined.homography))
    }

    private func decode(_ candidate: Candidate, geometry: SymbolGeometry, exhaustive: Bool = true) -> EngineSymbol? {
        let pure = rectified(geometry)
        // Upright, with whole pixels per module, zxing's own detector places the grid exactly; its "pure"
        // mode would also need nothing but the symbol in the picture, and ticket text may be there.
        let attempts: [(isPure: Bool, binarizer: ZXingEngine.Options.Binarizer)] = [
            (false, .localAverage), (true, .localAverage), (false, .globalHistogram),
        ]
        for (isPure, binarizer) in attempts.prefix(exhaustive ? attempts.count : 1) {
            var options = ZXingEngine.Options(symbologies: [.aztec], tryDownscale: false, isPure: isPure)
            options.binarizer = binarizer
            guard var symbol = ZXingEngine.read(pure, options: options).first else { continue }
            // Report where the symbol is in the photo, not in the resampled grid.
            symbol.corners = symbol.corners.map { Self.photoPoint(ofRectified: $0, geometry: geometry) }
            return symbol
        }
        return nil
    }
}
