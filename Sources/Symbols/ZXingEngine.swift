import CZXing
import FareCore

/// A symbol as one engine reported it, before deduplication.
struct EngineSymbol: Sendable {
    var symbology: Symbology
    var bytes: [UInt8]
    /// Corners in the pixels of the image the engine saw.
    var corners: [SymbolPoint]
}

/// zxing-cpp 3.1.1 through the CZXing shim.
enum ZXingEngine {
    /// What zxing should try on one image; mirrors `CZXingReadOptions`.
    struct Options: Sendable, Hashable {
        enum Binarizer: Int32, Sendable {
            case localAverage = 0
            case globalHistogram = 1
            case fixedThreshold = 2
        }

        var symbologies: Set<Symbology>
        var tryHarder = false
        var tryRotate = false
        var tryDownscale = true
        var isPure = false
        var binarizer = Binarizer.localAverage
        var downscaleThreshold: Int32 = 0
        var downscaleFactor: Int32 = 0
    }

    static func formatBits(_ symbologies: Set<Symbology>) -> UInt32 {
        var bits: UInt32 = 0
        for symbology in symbologies {
            switch symbology {
            case .aztec, .aztecRune: bits |= UInt32(CZXING_FORMAT_AZTEC)
            case .qr: bits |= UInt32(CZXING_FORMAT_QR)
            case .microQR: bits |= UInt32(CZXING_FORMAT_MICRO_QR)
            case .dataMatrix: bits |= UInt32(CZXING_FORMAT_DATA_MATRIX)
            case .pdf417: bits |= UInt32(CZXING_FORMAT_PDF417)
            case .other: bits |= UInt32(CZXING_FORMAT_OTHER)
            }
        }
        return bits
    }

    static func symbology(format: UInt32, byteCount: Int) -> Symbology {
        switch Int(format) {
        case Int(CZXING_FORMAT_AZTEC): return .aztec
        case Int(CZXING_FORMAT_QR): return .qr
        case Int(CZXING_FORMAT_MICRO_QR): return .microQR
        case Int(CZXING_FORMAT_DATA_MATRIX): return .dataMatrix
        case Int(CZXING_FORMAT_PDF417): return .pdf417
        default: return .other
        }
    }

    /// Every symbol zxing finds with these options; empty when it finds none or fails.
    static func read(_ image: GrayImage, options: Options) -> [EngineSymbol] {
        var native = CZXing_defaultReadOptions()
        native.formats = formatBits(options.symbologies)
        native.tryHarder = options.tryHarder ? 1 : 0
        native.tryRotate = options.tryRotate ? 1 : 0
        native.tryDownscale = options.tryDownscale ? 1 : 0
        native.isPure = options.isPure ? 1 : 0
        native.binarizer = options.binarizer.rawValue
        native.downscaleThreshold = options.downscaleThreshold
        native.downscaleFactor = options.downscaleFactor

        var symbols: UnsafeMutablePointer<CZXingSymbol>? = nil
        var count = 0
        let status = image.pixels.withUnsafeBufferPointer { pixels in
            CZXing_read(
                pixels.baseAddress, Int32(image.width), Int32(image.height), Int32(image.width), &native,
                &symbols, &count, nil, 0)
        }
        defer { CZXing_freeSymbols(symbols, count) }
        // A failure inside zxing (only ever an exception on a pathological image) means "nothing found here";
        // the other engine and passes still get their chance.
        guard status == Int32(CZXING_OK), let symbols else { return [] }
        return (0..<count).map { index in
            let symbol = symbols[index]
            let bytes =
                symbol.byteCount > 0 ? Array(UnsafeBufferPointer(start: symbol.bytes, count: symbol.byteCount)) : []
            let corners = withUnsafeBytes(of: symbol.corners) { raw in
                let values = raw.bindMemory(to: Int32.self)
                return (0..<4).map { SymbolPoint(x: Int(values[2 * $0]), y: Int(values[2 * $0 + 1])) }
            }
            return EngineSymbol(
                symbology: symbology(format: symbol.format, byteCount: bytes.count), bytes: bytes,
                corners: corners)
        }
    }
}
