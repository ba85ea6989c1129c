import CQREncode
import CZXing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why a payload could not be written as a symbol.
public struct SymbolWriteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A sentence for a person: what went wrong and what to change.
    public var message: String
    /// The encoder (zxing-cpp) got these bytes wrong; other bytes, such as a payload signed again, will do.
    public var isEncoderFault: Bool

    /// Creates an error.
    public init(message: String, isEncoderFault: Bool = false) {
        self.message = message
        self.isEncoderFault = isEncoderFault
    }

    /// The message.
    public var description: String { message }
}

/// A symbol's grid of modules, before it is drawn: `true` is a dark module.
public struct SymbolMatrix: Sendable, Hashable {
    /// Modules across.
    public let width: Int
    /// Modules down.
    public let height: Int
    /// `width * height` modules, row after row; `true` is dark.
    public let modules: [Bool]

    /// Creates a matrix.
    ///
    /// - Precondition: `modules.count == width * height`.
    public init(width: Int, height: Int, modules: [Bool]) {
        precondition(width > 0 && height > 0 && modules.count == width * height)
        self.width = width
        self.height = height
        self.modules = modules
    }

    /// Whether the module at column `x`, row `y` is dark.
    public subscript(x: Int, y: Int) -> Bool { modules[y * width + x] }

    /// Draws the matrix: black modules of `moduleSize` x `moduleSize` pixels on white, surrounded by a
    /// white quiet zone `quietZone` modules wide.
    public func rendered(moduleSize: Int, quietZone: Int) -> GrayImage {
        precondition(moduleSize > 0 && quietZone >= 0)
        let border = quietZone * moduleSize
        let imageWidth = width * moduleSize + 2 * border
        let imageHeight = height * moduleSize + 2 * border
        var image = GrayImage(width: imageWidth, height: imageHeight, filledWith: 255)
        image.pixels.withUnsafeMutableBufferPointer { pixels in
            for y in 0..<height {
                for x in 0..<width where modules[y * width + x] {
                    for row in 0..<moduleSize {
                        let start = (border + y * moduleSize + row) * imageWidth + border + x * moduleSize
                        for column in 0..<moduleSize { pixels[start + column] = 0 }
                    }
                }
            }
        }
        return image
    }
}

/// Writes payloads as QR (through libqrencode) and Aztec (through zxing-cpp) symbols, for issuing
/// tickets and for tests.
///
/// Payload bytes are carried exactly: binary data (zlib, COSE) round trips through any reader that returns
/// raw bytes.
public struct SymbolWriter: Sendable, Hashable {
    /// QR error correction: how much of the symbol may be lost and still read.
    public enum QRErrorCorrection: Sendable, Hashable, CaseIterable {
        /// About 7 % of codewords can be restored.
        case low
        /// About 15 %: the default, a good balance for tickets on screens and paper.
        case medium
        /// About 25 %.
        case quartile
        /// About 30 %: for worn paper tickets, at the cost of a denser symbol.
        case high
    }

    /// Aztec error correction as a share of the symbol, in steps of 12.5 %.
    public struct AztecErrorCorrection: Sendable, Hashable {
        /// zxing's 0...8 level, or -1 for zxing's default.
        let level: Int32

        /// zxing's default: 33 % of the symbol for error correction (ISO/IEC 24778 recommends 23 % + 3 words).
        public static let standard = AztecErrorCorrection(level: -1)

        private init(level: Int32) {
            self.level = level
        }

        /// At least about `percent` % of the symbol for error correction, rounded to the nearest 12.5 % step.
        public init(percent: Int) {
            self.level = Int32(min(8, max(0, (percent * 8 + 50) / 100)))
        }
    }

    /// Pixels per module edge.
    public var moduleSize: Int
    /// White border in modules, or `nil` for each symbology's own (4 for QR as its standard requires,
    /// 2 for Aztec, which needs none but reads better with some).
    public var quietZone: Int?

    /// Creates a writer that draws `moduleSize` pixels per module.
    public init(moduleSize: Int = 4, quietZone: Int? = nil) {
        precondition(moduleSize > 0, "a module is at least one pixel")
        self.moduleSize = moduleSize
        self.quietZone = quietZone
    }

    /// The payload as a QR code image.
    ///
    /// Uses alphanumeric mode when every byte is in QR's alphanumeric set (digits, upper-case letters, space
    /// and `$%*+-./:`), as base45 text such as `FC1:…` is, which makes the symbol about a quarter smaller;
    /// numeric mode for digits only; otherwise 8-bit mode.
    public func qrCode(
        _ payload: [UInt8], errorCorrection: QRErrorCorrection = .medium
    ) throws(SymbolWriteError) -> GrayImage {
        try SymbolWriter.qrMatrix(payload, errorCorrection: errorCorrection)
            .rendered(moduleSize: moduleSize, quietZone: quietZone ?? 4)
    }

    /// The payload as an Aztec code image.
    public func aztecCode(
        _ payload: [UInt8], errorCorrection: AztecErrorCorrection = .standard
    ) throws(SymbolWriteError) -> GrayImage {
        try SymbolWriter.aztecMatrix(payload, errorCorrection: errorCorrection)
            .rendered(moduleSize: moduleSize, quietZone: quietZone ?? 2)
    }

    /// The QR code's modules; see ``qrCode(_:errorCorrection:)`` for the choice of mode.
    public static func qrMatrix(
        _ payload: [UInt8], errorCorrection: QRErrorCorrection = .medium
    ) throws(SymbolWriteError) -> SymbolMatrix {
        guard !payload.isEmpty else { throw SymbolWriteError(message: "a QR code needs at least one byte") }
        let level: QRecLevel =
            switch errorCorrection {
            case .low: QR_ECLEVEL_L
            case .medium: QR_ECLEVEL_M
            case .quartile: QR_ECLEVEL_Q
            case .high: QR_ECLEVEL_H
            }
        let mode: QRencodeMode
        if payload.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) {
            mode = QR_MODE_NUM
        } else if payload.allSatisfy(isQRAlphanumeric) {
            mode = QR_MODE_AN
        } else {
            mode = QR_MODE_8
        }
        // Version 0: libqrencode picks the smallest version that holds the data.
        guard let input = QRinput_new2(0, level) else {
            throw SymbolWriteError(message: "libqrencode could not start a symbol: out of memory")
        }
        defer { QRinput_free(input) }
        let appended = payload.withUnsafeBufferPointer { QRinput_append(input, mode, Int32($0.count), $0.baseAddress) }
        guard appended == 0 else {
            throw SymbolWriteError(message: "libqrencode rejected the payload: \(String(cString: strerror(errno)))")
        }
        guard let code = QRcode_encodeInput(input) else {
            let reason =
                errno == ERANGE
                ? "\(payload.count) bytes do not fit in a QR code at this error correction level"
                : "libqrencode failed: \(String(cString: strerror(errno)))"
            throw SymbolWriteError(message: reason)
        }
        defer { QRcode_free(code) }
        let size = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour; the other bits describe its role.
        let modules = (0..<size * size).map { code.pointee.data[$0] & 1 == 1 }
        return SymbolMatrix(width: size, height: size, modules: modules)
    }

    /// The Aztec code's modules (compact or full-range, whichever is smallest for the payload).
    public static func aztecMatrix(
        _ payload: [UInt8], errorCorrection: AztecErrorCorrection = .standard
    ) throws(SymbolWriteError) -> SymbolMatrix {
        var modules: UnsafeMutablePointer<UInt8>? = nil
        var width: Int32 = 0
        var height: Int32 = 0
        var message = [CChar](repeating: 0, count: 256)
        let status = payload.withUnsafeBufferPointer { bytes in
            message.withUnsafeMutableBufferPointer { text in
                CZXing_write(
                    bytes.baseAddress, bytes.count, UInt32(CZXING_FORMAT_AZTEC), errorCorrection.level,
                    &modules, &width, &height, text.baseAddress, text.count)
            }
        }
        defer { CZXing_freeMatrix(modules) }
        guard status == Int32(CZXING_OK), let modules else {
            let detail = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw SymbolWriteError(message: "cannot write \(payload.count) bytes as an Aztec code: \(detail)")
        }
        let count = Int(width) * Int(height)
        let matrix = SymbolMatrix(
            width: Int(width), height: Int(height),
            modules: (0..<count).map { modules[$0] != 0 })
        // zxing-cpp 1.4's Aztec encoder occasionally writes a wrong byte when binary data runs into its
        // text modes (seen: 0x7D after 0xF7 came back as 0x7E). A ticket that cannot be read back as issued is
        // worse than none: read the symbol back and refuse it, so the issuer can sign again.
        let image = matrix.rendered(moduleSize: 2, quietZone: 2)
        let readBack = ZXingEngine.read(image, options: .init(symbologies: [.aztec], isPure: true))
        guard readBack.contains(where: { $0.bytes == payload }) else {
            throw SymbolWriteError(
                message: "zxing-cpp's Aztec encoder wrote these \(payload.count) bytes wrongly (they do not read back "
                    + "as written); a payload with other bytes, e.g. signed again, will encode correctly",
                isEncoderFault: true)
        }
        return matrix
    }

    /// Whether a byte is in QR's 45-character alphanumeric set.
    static func isQRAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        case UInt8(ascii: " "), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "*"), UInt8(ascii: "+"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"):
            true
        default: false
        }
    }
}
