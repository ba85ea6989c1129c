import CZlib
import FareCore
import Foundation
import SeededRandom
import Symbols
import TestSupport

/// Payloads and files the tests make for themselves.
enum Fixture {
    /// A fresh directory under the system's temporary directory.
    static func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "farecheck-symbols-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Random bytes from a fixed seed.
    static func randomBytes(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededRandomNumberGenerator(seed: seed)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    /// A zlib stream of about `count` bytes, as a UIC ticket carries: header, then compressed noise.
    static func zlibPayload(_ count: Int, seed: UInt64) -> [UInt8] {
        // Half random, half repetitive text compresses to roughly `count` bytes of high-entropy data.
        var source = randomBytes(count, seed: seed)
        source += Array(String(repeating: "U_HEAD01 0080 ADULT 2ND CLASS ", count: count / 30).utf8)
        var compressedSize = compressBound(UInt(source.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedSize))
        let status = compress2(&compressed, &compressedSize, source, UInt(source.count), 9)
        precondition(status == Z_OK)
        return Array("#UT01".utf8) + Array(compressed.prefix(Int(compressedSize)))
    }

    /// Text as an FC1 ticket in a QR code carries it: `FC1:` and base45 characters.
    static func base45Text(_ count: Int, seed: UInt64) -> [UInt8] {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:".utf8)
        var generator = SeededRandomNumberGenerator(seed: seed)
        return Array("FC1:".utf8)
            + (0..<count).map { _ in alphabet[Int.random(in: 0..<alphabet.count, using: &generator)] }
    }

    /// A real UIC 918.3 ticket payload from the fixture tree.
    static func uicPayload(_ name: String) throws -> [UInt8] { try Fixtures.bytes("uic/\(name).bin") }

    /// Writes bytes to a file.
    static func write(_ bytes: [UInt8], to path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
            throw FixtureError(message: "cannot write \(path)")
        }
    }

    /// Places images side by side on a white canvas with a gap between them.
    static func sideBySide(_ images: [GrayImage], gap: Int = 60) -> GrayImage {
        let width = images.reduce(gap) { $0 + $1.width + gap }
        let height = (images.map(\.height).max() ?? 1) + 2 * gap
        var canvas = GrayImage(width: width, height: height, filledWith: 255)
        var left = gap
        for image in images {
            for y in 0..<image.height {
                for x in 0..<image.width { canvas[left + x, gap + y] = image[x, y] }
            }
            left += image.width + gap
        }
        return canvas
    }
}

struct FixtureError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// A minimal PNG writer for every colour type and bit depth, so the loader is tested on files our own
/// encoder (8-bit grey only) never produces.
enum PNGBuilder {
    enum ColourType: UInt8 {
        case grey = 0
        case rgb = 2
        case palette = 3
        case greyAlpha = 4
        case rgba = 6
    }

    /// A PNG from unfiltered scanlines (each already packed at the bit depth, without the filter byte).
    static func png(
        width: Int, height: Int, colourType: ColourType, bitDepth: UInt8, scanlines: [[UInt8]],
        palette: [UInt8]? = nil, transparency: [UInt8]? = nil, interlaced: Bool = false
    ) -> [UInt8] {
        precondition(!interlaced, "only non-interlaced images are built here")
        var raw: [UInt8] = []
        for line in scanlines { raw += [0] + line }
        var compressedSize = compressBound(UInt(raw.count))
        var compressed = [UInt8](repeating: 0, count: Int(compressedSize))
        precondition(compress2(&compressed, &compressedSize, raw, UInt(raw.count), 6) == Z_OK)
        var header: [UInt8] = []
        header += bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        header += [bitDepth, colourType.rawValue, 0, 0, 0]
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", header)
        if let palette { file += chunk("PLTE", palette) }
        if let transparency { file += chunk("tRNS", transparency) }
        file += chunk("IDAT", Array(compressed.prefix(Int(compressedSize))))
        file += chunk("IEND", [])
        return file
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typeBytes = Array(type.utf8)
        let checked = typeBytes + data
        let crc = UInt32(crc32(0, checked, UInt32(checked.count)))
        return bigEndian(UInt32(data.count)) + checked + bigEndian(crc)
    }
}
