import FareCore

/// A point in image pixels.
public struct SymbolPoint: Sendable, Hashable, Codable {
    /// Column, from the left edge.
    public var x: Int
    /// Row, from the top edge.
    public var y: Int

    /// Creates a point.
    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// The decoding library that read a symbol.
public enum DecodingEngine: String, Sendable, Hashable, Codable, CaseIterable {
    /// zxing-cpp 3.1.1: Aztec, QR, Micro QR, Data Matrix, PDF417.
    case zxing
    /// zbar 0.23: QR only.
    case zbar
}

/// One symbol found in an image: its kind and its payload, byte for byte.
public struct DecodedSymbol: Sendable, Hashable {
    /// The kind of symbol.
    public var symbology: Symbology
    /// The payload exactly as encoded: no character set conversion, binary data intact.
    public var bytes: [UInt8]
    /// The library that read it first.
    public var engine: DecodingEngine
    /// The scanner pass that found it (for example `fast`, `try-harder`, `equalized`): tells which fallback
    /// an image needed.
    public var pass: String
    /// The symbol's corners in the scanned image's pixels, as far as the engine reports them.
    public var corners: [SymbolPoint]

    /// Creates a decoded symbol.
    public init(symbology: Symbology, bytes: [UInt8], engine: DecodingEngine, pass: String, corners: [SymbolPoint] = [])
    {
        self.symbology = symbology
        self.bytes = bytes
        self.engine = engine
        self.pass = pass
        self.corners = corners
    }
}
