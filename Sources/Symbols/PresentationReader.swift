import FareCore

/// Turns frames into presentations: each frame through the scanner's camera pass, then a ``PresentationTracker``.
///
/// Every frame goes through this, whether it comes from a recording or a camera.
public struct PresentationReader: Sendable {
    /// The scanner each frame goes through; the quick camera pass unless told otherwise.
    public let scanner: SymbolScanner
    private var tracker: PresentationTracker

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - scanner: The scanner for each frame; by default only its first pass
    ///     (``SymbolScanner/Configuration/camera``), which keeps up with a camera where the slower fallbacks would not.
    ///   - absenceForNewPresentation: How long a ticket must be out of view before showing it again is a new
    ///     presentation.
    public init(
        scanner: SymbolScanner = SymbolScanner(configuration: .camera),
        absenceForNewPresentation: Duration = .seconds(2)
    ) {
        self.scanner = scanner
        self.tracker = PresentationTracker(absenceForNewPresentation: absenceForNewPresentation)
    }

    /// The presentations that start in this frame (most frames start none).
    public mutating func presentations(in frame: VideoFrame) -> [Presentation] {
        let seen = scanner.scan(frame.image).map { SeenSymbol(symbology: $0.symbology, bytes: $0.bytes) }
        return tracker.observe(seen, frame: frame.index, at: frame.time)
    }
}

extension SymbolScanner.Configuration {
    /// What a camera source runs on every frame: one pass, zxing's quick settings beside the Aztec locator held to
    /// two bull's-eyes and its two cheapest grids, no zbar. A frame it does not read is followed by the next one
    /// within 33 ms; the still-image ladder (zbar, every grid, the prepared copies) would cost a 720p frame three
    /// times the budget in its slowest frames (docs/camera.md).
    public static var camera: Self { Self(usesFallbacks: false, firstPass: .camera) }
}
