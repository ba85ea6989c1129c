/// A plane-to-plane projective map: how a flat symbol's module grid lies in a photo.
public struct Homography: Sendable {
    /// Row-major 3 x 3 matrix with the last element 1.
    var matrix: [Double]

    /// Maps a point.
    @inline(__always)
    public func apply(_ x: Double, _ y: Double) -> (x: Double, y: Double) {
        let w = matrix[6] * x + matrix[7] * y + matrix[8]
        return ((matrix[0] * x + matrix[1] * y + matrix[2]) / w, (matrix[3] * x + matrix[4] * y + matrix[5]) / w)
    }

    /// The least-squares homography taking each `source` point to its `target` (at least four pairs).
    ///
    /// Both point sets are normalised (centred, unit mean distance) first so that the linear system is well
    /// conditioned whatever the pixel scale.
    public static func fit(from source: [(x: Double, y: Double)], to target: [(x: Double, y: Double)]) -> Homography? {
        guard source.count == target.count, source.count >= 4 else { return nil }
        let sourceFrame = Normalisation(source)
        let targetFrame = Normalisation(target)
        // Unknowns h0...h7 of the normalised map, h8 = 1: two equations per pair, solved by normal equations.
        var normal = [Double](repeating: 0, count: 64)
        var right = [Double](repeating: 0, count: 8)
        for index in source.indices {
            let (x, y) = sourceFrame.map(source[index])
            let (u, v) = targetFrame.map(target[index])
            let rows: [([Double], Double)] = [
                ([x, y, 1, 0, 0, 0, -u * x, -u * y], u),
                ([0, 0, 0, x, y, 1, -v * x, -v * y], v),
            ]
            for (row, value) in rows {
                for i in 0..<8 {
                    right[i] += row[i] * value
                    for j in 0..<8 { normal[i * 8 + j] += row[i] * row[j] }
                }
            }
        }
        guard let solution = solve(normal, right, size: 8) else { return nil }
        // Undo the normalisations: H = T_target^-1 * N * T_source.
        let combined = multiply(targetFrame.inverseMatrix, multiply(solution + [1], sourceFrame.matrix))
        guard abs(combined[8]) > 1e-12 else { return nil }
        return Homography(matrix: combined.map { $0 / combined[8] })
    }

    /// Moves a point set's centroid to the origin and scales its mean distance from it to 1.
    private struct Normalisation {
        let centreX: Double
        let centreY: Double
        let scale: Double

        init(_ points: [(x: Double, y: Double)]) {
            let count = Double(points.count)
            centreX = points.reduce(0) { $0 + $1.x } / count
            centreY = points.reduce(0) { $0 + $1.y } / count
            let centreX = self.centreX
            let centreY = self.centreY
            let meanDistance =
                points.reduce(0) {
                    $0 + (($1.x - centreX) * ($1.x - centreX) + ($1.y - centreY) * ($1.y - centreY)).squareRoot()
                } / count
            scale = meanDistance > 1e-12 ? 1 / meanDistance : 1
        }

        func map(_ point: (x: Double, y: Double)) -> (Double, Double) {
            ((point.x - centreX) * scale, (point.y - centreY) * scale)
        }

        var matrix: [Double] { [scale, 0, -scale * centreX, 0, scale, -scale * centreY, 0, 0, 1] }
        var inverseMatrix: [Double] { [1 / scale, 0, centreX, 0, 1 / scale, centreY, 0, 0, 1] }
    }

    private static func multiply(_ a: [Double], _ b: [Double]) -> [Double] {
        var product = [Double](repeating: 0, count: 9)
        for row in 0..<3 {
            for column in 0..<3 {
                var sum = 0.0
                for k in 0..<3 { sum += a[row * 3 + k] * b[k * 3 + column] }
                product[row * 3 + column] = sum
            }
        }
        return product
    }

    /// Gaussian elimination with partial pivoting; `nil` when the system is singular.
    static func solve(_ matrix: [Double], _ vector: [Double], size: Int) -> [Double]? {
        var a = matrix
        var b = vector
        for column in 0..<size {
            var pivot = column
            for row in column + 1..<size where abs(a[row * size + column]) > abs(a[pivot * size + column]) {
                pivot = row
            }
            guard abs(a[pivot * size + column]) > 1e-12 else { return nil }
            if pivot != column {
                for k in 0..<size { a.swapAt(column * size + k, pivot * size + k) }
                b.swapAt(column, pivot)
            }
            for row in column + 1..<size {
                let factor = a[row * size + column] / a[column * size + column]
                guard factor != 0 else { continue }
                for k in column..<size { a[row * size + k] -= factor * a[column * size + k] }
                b[row] -= factor * b[column]
            }
        }
        var solution = [Double](repeating: 0, count: size)
        for row in stride(from: size - 1, through: 0, by: -1) {
            var sum = b[row]
            for k in row + 1..<size { sum -= a[row * size + k] * solution[k] }
            solution[row] = sum / a[row * size + row]
        }
        return solution
    }
}

/// Where each module of a symbol lies in a photo: a homography, plus a smooth bend for paper that is not
/// flat (a bent ticket bows its rows, which no single homography follows).
struct SymbolGeometry: Sendable {
    var homography: Homography
    /// Pixel offsets added to the homography as quadratic polynomials in the module coordinates (scaled by
    /// 1/16): six coefficients for x, then six for y. Empty for a flat symbol.
    var bend: [Double] = []

    init(_ homography: Homography) {
        self.homography = homography
    }

    /// The homography and the bend that best fit measured points (module coordinates to pixels).
    ///
    /// The bend is what the homography misses at those points, smoothed into a quadratic surface: enough for
    /// a ticket curled over a hand or a table edge, and it extends sensibly past the outermost measurement.
    init?(fitting modulePoints: [(x: Double, y: Double)], to imagePoints: [(x: Double, y: Double)]) {
        guard let homography = Homography.fit(from: modulePoints, to: imagePoints) else { return nil }
        self.homography = homography
        guard modulePoints.count >= 10 else { return }
        var normal = [Double](repeating: 0, count: 36)
        var rightX = [Double](repeating: 0, count: 6)
        var rightY = [Double](repeating: 0, count: 6)
        for (module, point) in zip(modulePoints, imagePoints) {
            let plain = homography.apply(module.x, module.y)
            let basis = Self.basis(module.x, module.y)
            for i in 0..<6 {
                rightX[i] += basis[i] * (point.x - plain.x)
                rightY[i] += basis[i] * (point.y - plain.y)
                for j in 0..<6 { normal[i * 6 + j] += basis[i] * basis[j] }
            }
        }
        // A little ridge keeps the surface flat where the points say nothing.
        for i in 0..<6 { normal[i * 6 + i] += 0.5 }
        guard let bendX = Homography.solve(normal, rightX, size: 6),
            let bendY = Homography.solve(normal, rightY, size: 6)
        else { return }
        bend = bendX + bendY
    }

    private static func basis(_ u: Double, _ v: Double) -> [Double] {
        let x = u / 16
        let y = v / 16
        return [1, x, y, x * x, x * y, y * y]
    }

    /// The bend's pixel offset at module coordinates (u, v).
    func correction(_ u: Double, _ v: Double) -> (dx: Double, dy: Double) {
        guard bend.count == 12 else { return (0, 0) }
        let basis = Self.basis(u, v)
        var dx = 0.0
        var dy = 0.0
        for i in 0..<6 {
            dx += bend[i] * basis[i]
            dy += bend[6 + i] * basis[i]
        }
        return (dx, dy)
    }

    /// The pixel position of module coordinates (u, v).
    func apply(_ u: Double, _ v: Double) -> (x: Double, y: Double) {
        let point = homography.apply(u, v)
        let (dx, dy) = correction(u, v)
        return (point.x + dx, point.y + dy)
    }
}
