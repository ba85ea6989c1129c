import Dispatch
import FareCore
import Synchronization

/// Finds and decodes every Aztec, QR, Micro QR, Data Matrix and PDF417 symbol in an image.
///
/// Two engines read each image: zxing-cpp (all those symbologies) and zbar (QR), because each reads
/// some photographs the other cannot. A cheap pass runs first; only when it finds nothing do slower
/// passes follow, each on a prepared copy of the image (inverted, contrast stretched, equalised,
/// sharpened, rescaled, ...). Results are deduplicated by symbology and bytes.
public struct SymbolScanner: Sendable {
    /// What to look for and how hard.
    public struct Configuration: Sendable, Hashable {
        /// The symbologies to report. Defaults to the 2D matrix symbologies used on tickets.
        public var symbologies: Set<Symbology>
        /// The decoding libraries to use; both by default. Without zxing only QR codes can be found.
        public var engines: Set<DecodingEngine>
        /// Whether to try the slower fallback passes when the first pass finds nothing.
        public var usesFallbacks: Bool
        /// Whether a pass may run its two engines on two threads at once.
        public var runsEnginesInParallel: Bool
        /// Whether the first pass runs zbar beside zxing even when zxing finds something.
        ///
        /// Off by default: zbar takes about three times as long as zxing, and it rarely reads a QR code that
        /// zxing misses in the same image. On, an image holding several QR codes yields every one that
        /// either engine reads on its own.
        public var readsWithBothEngines: Bool
        /// What the first pass reads with.
        public var firstPass: FirstPass

        /// What the first pass of a scan reads with.
        public enum FirstPass: Sendable, Hashable {
            /// zxing's quick settings with farecheck's Aztec locator beside it (and zbar when there are no fallbacks
            /// or both engines are wanted): a still image, where slower passes follow when it finds nothing.
            case still
            /// zxing's quick settings beside the Aztec locator held to its two strongest bull's-eyes and its two
            /// cheapest grids, no zbar: a camera frame, where the next frame is the fallback and the whole frame has
            /// 33 ms (docs/camera.md).
            case camera
        }

        /// Creates a configuration.
        public init(
            symbologies: Set<Symbology> = [.aztec, .qr, .microQR, .dataMatrix, .pdf417],
            engines: Set<DecodingEngine> = [.zxing, .zbar],
            usesFallbacks: Bool = true,
            runsEnginesInParallel: Bool = true,
            readsWithBothEngines: Bool = false,
            firstPass: FirstPass = .still
        ) {
            self.symbologies = symbologies
            self.engines = engines
            self.usesFallbacks = usesFallbacks
            self.runsEnginesInParallel = runsEnginesInParallel
            self.readsWithBothEngines = readsWithBothEngines
            self.firstPass = firstPass
        }
    }

    /// The configuration in use.
    public var configuration: Configuration

    /// Passes left out by name, to measure what each one contributes.
    var skippedPasses: Set<String> = []

    /// Creates a scanner.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Decodes every symbol in an image file (PNG, JPEG, PGM or PPM).
    ///
    /// - Throws: ``ImageLoadError`` when the file cannot be read as an image. Finding nothing is not an error.
    public func scan(fileAtPath path: String) throws(ImageLoadError) -> [DecodedSymbol] {
        scan(try GrayImage(contentsOfFile: path))
    }

    /// Decodes every symbol in an image; empty when there is none.
    public func scan(_ image: GrayImage) -> [DecodedSymbol] {
        var collector = SymbolCollector(symbologies: configuration.symbologies)
        for pass in passes(for: image) where !skippedPasses.contains(pass.name) {
            run(pass, on: image, into: &collector)
            if !collector.symbols.isEmpty { break }
        }
        return collector.symbols
    }

    /// One way of reading a prepared image.
    enum Reader: Sendable {
        /// zxing-cpp with these options.
        case zxing(ZXingEngine.Options)
        /// zbar for QR, optionally also trying light-on-dark codes.
        case zbar(testsInverted: Bool)
        /// Our own bull's-eye finder and resampler, then zxing on the clean grid, for at most this many bull's-eyes,
        /// each with every geometry and binariser or (not `exhaustive`) the two cheapest grids and one binariser.
        case aztecLocator(candidates: Int, exhaustive: Bool)
    }

    /// One attempt: an optional preparation of the image, then readers on the result.
    struct Pass: Sendable {
        var name: String
        /// Makes the image this pass reads and the factor from its pixels back to the original's; `nil` skips
        /// the pass (for example, upscaling an image that is already large).
        var prepare: @Sendable (GrayImage) -> (image: GrayImage, scale: Double)?
        var readers: [Reader]
    }

    /// The ladder of passes, cheapest first; each later pass only runs when all before it found nothing.
    ///
    /// Every fallback here earned its place on generated hard cases (photo-like scenes with blur, noise, dim
    /// light, dark mode, JPEG, shadows, tilt, perspective, small symbols): leaving any one out loses images
    /// that no other pass reads.
    func passes(for image: GrayImage) -> [Pass] {
        let symbologies = configuration.symbologies
        let useZBar = configuration.engines.contains(.zbar) && symbologies.contains(.qr)
        let useZXing = configuration.engines.contains(.zxing)
        // The locator hands its resampled grid to zxing.
        let aztec = symbologies.contains(.aztec) && useZXing
        let original: @Sendable (GrayImage) -> (image: GrayImage, scale: Double)? = { ($0, 1) }
        // zxing's quick settings (every other row, no rotated copies) read an easy photo in half the time
        // of ZXingReader's; its settings (every row, rotations, downscaled copies) come next, so nothing
        // ZXingReader reads is missed.
        let quick = ZXingEngine.Options(symbologies: symbologies)
        let thorough = ZXingEngine.Options(symbologies: symbologies, tryHarder: true, tryRotate: true)
        var histogram = thorough
        histogram.binarizer = .globalHistogram
        func readers(
            _ zxing: [ZXingEngine.Options], zbar: Bool, locator: Bool, candidates: Int = 6, exhaustive: Bool = true
        ) -> [Reader] {
            var list: [Reader] = []
            if useZXing { list += zxing.map { .zxing($0) } }
            if zbar && useZBar { list.append(.zbar(testsInverted: false)) }
            if locator && aztec && !skippedPasses.contains("locator") {
                list.append(.aztecLocator(candidates: candidates, exhaustive: exhaustive))
            }
            return list
        }
        // First: zxing and our Aztec locator side by side; zbar is three times slower than both, so it waits.
        let zbarFirst = configuration.readsWithBothEngines || !configuration.usesFallbacks
        var passes: [Pass]
        switch configuration.firstPass {
        case .still:
            passes = [Pass(name: "fast", prepare: original, readers: readers([quick], zbar: zbarFirst, locator: true))]
        case .camera:
            passes = [
                Pass(
                    name: "fast", prepare: original,
                    readers: readers([quick], zbar: false, locator: true, candidates: 2, exhaustive: false))
            ]
        }
        guard configuration.usesFallbacks else { return passes }
        passes.append(
            Pass(
                name: "thorough", prepare: original,
                readers: readers([thorough, histogram], zbar: true, locator: false))
        )
        // Prepared copies of the image, each read by all three readers. Each earned its place on generated
        // hard cases: leaving it out loses images that no other pass reads. Large photos are prepared at
        // up to 4 megapixels: the passes above already read them at full resolution, and zbar and the
        // filters cost time in proportion to the pixels.
        let variants: [(String, @Sendable (GrayImage) -> GrayImage?)] = [
            // Light-on-dark symbols: a phone in dark mode, a negative print.
            ("inverted", { $0.inverted() }),
            // Faded prints, dim screens, under- or overexposed photos.
            ("equalized", { $0.equalized() }),
            // Focus and motion blur that leave edges too soft to binarise.
            ("sharpened", { $0.sharpened() }),
            // Symbols so small that modules are one or two pixels: interpolation gives the binarisers room.
            (
                "upscaled-2",
                { image in
                    guard image.pixelCount <= 2_100_000 else { return nil }
                    return image.resized(width: image.width * 2, height: image.height * 2)
                }
            ),
        ]
        for (name, prepare) in variants {
            passes.append(
                Pass(
                    name: name,
                    prepare: { image in
                        let (workingCopy, scale) = SymbolScanner.workingCopy(of: image, maxPixels: 4_000_000)
                        guard let prepared = prepare(workingCopy) else { return nil }
                        return (prepared, scale * Double(workingCopy.width) / Double(prepared.width))
                    }, readers: readers([thorough], zbar: true, locator: true)))
        }
        return passes
    }

    private func run(_ pass: Pass, on original: GrayImage, into collector: inout SymbolCollector) {
        guard !pass.readers.isEmpty, let (image, scale) = pass.prepare(original) else { return }
        let symbologies = configuration.symbologies
        let jobs = pass.readers.map { reader in
            { @Sendable () -> ([EngineSymbol], DecodingEngine) in
                switch reader {
                case .zxing(let options): (ZXingEngine.read(image, options: options), .zxing)
                case .zbar(let inverted): (ZBarEngine.read(image, testInverted: inverted), .zbar)
                case .aztecLocator(let candidates, let exhaustive):
                    (
                        AztecLocator.read(image, symbologies: symbologies, limit: candidates, exhaustive: exhaustive),
                        .zxing
                    )
                }
            }
        }
        let results = configuration.runsEnginesInParallel ? inParallel(jobs) : jobs.map { $0() }
        for (symbols, engine) in results {
            collector.add(symbols, engine: engine, pass: pass.name, scale: scale)
        }
    }
}

extension SymbolScanner {
    /// The image shrunk by a whole factor until it has at most `maxPixels`, and that factor.
    static func workingCopy(of image: GrayImage, maxPixels: Int) -> (GrayImage, Double) {
        var factor = 1
        while image.pixelCount / (factor * factor) > maxPixels { factor += 1 }
        return factor == 1 ? (image, 1) : (image.downscaled(by: factor), Double(factor))
    }
}

/// Runs jobs on as many threads as there are jobs and waits for all; results in the jobs' order.
private func inParallel<Result: Sendable>(_ jobs: [@Sendable () -> Result]) -> [Result] {
    guard jobs.count > 1 else { return jobs.map { $0() } }
    let results = Mutex<[Int: Result]>([:])
    DispatchQueue.concurrentPerform(iterations: jobs.count) { index in
        let value = jobs[index]()
        results.withLock { $0[index] = value }
    }
    return results.withLock { stored in jobs.indices.map { stored[$0]! } }
}

/// Keeps the first sighting of each (symbology, bytes) pair, in the order found.
struct SymbolCollector {
    let symbologies: Set<Symbology>
    private(set) var symbols: [DecodedSymbol] = []
    private var seen: Set<SymbolKey> = []

    private struct SymbolKey: Hashable {
        var symbology: Symbology
        var bytes: [UInt8]
    }

    init(symbologies: Set<Symbology>) {
        self.symbologies = symbologies
    }

    mutating func add(_ found: [EngineSymbol], engine: DecodingEngine, pass: String, scale: Double) {
        for symbol in found where symbologies.contains(symbol.symbology) {
            guard seen.insert(SymbolKey(symbology: symbol.symbology, bytes: symbol.bytes)).inserted else { continue }
            let corners = symbol.corners.map {
                SymbolPoint(x: Int((Double($0.x) * scale).rounded()), y: Int((Double($0.y) * scale).rounded()))
            }
            symbols.append(
                DecodedSymbol(
                    symbology: symbol.symbology, bytes: symbol.bytes, engine: engine,
                    pass: pass, corners: corners))
        }
    }
}
