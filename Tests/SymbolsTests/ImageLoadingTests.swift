import CImageCodecs
import FareCore
import Foundation
import SeededRandom
import Symbols
import Testing

/// PNG, JPEG, PGM and PPM files of every common variant load as the same grey image; broken files give
/// an error that says what is wrong, never a crash.
@Suite struct ImageLoadingTests {
    /// A 4 x 2 test card: black, white, mid grey, and the three primaries' luminance.
    static let red: (UInt8, UInt8, UInt8) = (255, 0, 0)

    @Test func loadsGreyPNGWrittenByItself() throws {
        let directory = try Fixture.temporaryDirectory()
        let image = GrayImage(width: 3, height: 2, pixels: [0, 128, 255, 10, 20, 30])
        let path = directory + "/grey.png"
        try image.writePNG(toFile: path)
        #expect(try GrayImage(contentsOfFile: path) == image)
    }

    @Test func loadsEveryPNGColourType() throws {
        // Palette with 2 colours at 1 bit: black and white.
        let palette = PNGBuilder.png(
            width: 8, height: 1, colourType: .palette, bitDepth: 1, scanlines: [[0b1010_0000]],
            palette: [0, 0, 0, 255, 255, 255])
        #expect(try GrayImage(encoded: palette).pixels == [255, 0, 255, 0, 0, 0, 0, 0])

        // 16-bit grey: the high byte counts.
        let deep = PNGBuilder.png(
            width: 2, height: 1, colourType: .grey, bitDepth: 16, scanlines: [[0x80, 0x00, 0xFF, 0xFF]])
        #expect(try GrayImage(encoded: deep).pixels == [128, 255])

        // 1-bit grey.
        let bits = PNGBuilder.png(width: 3, height: 1, colourType: .grey, bitDepth: 1, scanlines: [[0b0100_0000]])
        #expect(try GrayImage(encoded: bits).pixels == [0, 255, 0])

        // RGB: pure red, green and blue come out at their luminance.
        let rgb = PNGBuilder.png(
            width: 3, height: 1, colourType: .rgb, bitDepth: 8,
            scanlines: [[255, 0, 0, 0, 255, 0, 0, 0, 255]])
        let colours = try GrayImage(encoded: rgb).pixels
        #expect(abs(Int(colours[0]) - 54) <= 24 && abs(Int(colours[1]) - 182) <= 24 && abs(Int(colours[2]) - 18) <= 14)
        #expect(colours[1] > colours[0] && colours[0] > colours[2])

        // RGBA: a transparent pixel shows the white page, an opaque black one stays black.
        let rgba = PNGBuilder.png(
            width: 2, height: 1, colourType: .rgba, bitDepth: 8,
            scanlines: [[0, 0, 0, 0, 0, 0, 0, 255]])
        #expect(try GrayImage(encoded: rgba).pixels == [255, 0])

        // Grey with alpha, half transparent black over white.
        let greyAlpha = PNGBuilder.png(width: 1, height: 1, colourType: .greyAlpha, bitDepth: 8, scanlines: [[0, 128]])
        #expect(try GrayImage(encoded: greyAlpha).pixels == [127])

        // A palette with a transparent entry (tRNS).
        let transparentPalette = PNGBuilder.png(
            width: 2, height: 1, colourType: .palette, bitDepth: 8, scanlines: [[0, 1]],
            palette: [0, 0, 0, 0, 0, 0], transparency: [255, 0]
        )
        #expect(try GrayImage(encoded: transparentPalette).pixels == [0, 255])
    }

    @Test func loadsJPEGInGreyAndColour() throws {
        let directory = try Fixture.temporaryDirectory()
        let symbol = try SymbolWriter(moduleSize: 4).qrCode(Array("JPEG TICKET".utf8))
        let path = directory + "/grey.jpg"
        try Fixture.write(try symbol.jpegData(quality: 90), to: path)
        let loaded = try GrayImage(contentsOfFile: path)
        #expect(loaded.width == symbol.width && loaded.height == symbol.height)
        #expect(SymbolScanner().scan(loaded).map(\.bytes) == [Array("JPEG TICKET".utf8)])

        // A colour JPEG: a red and a blue half.
        var rgb: [UInt8] = []
        for _ in 0..<16 {
            for x in 0..<16 { rgb += x < 8 ? [255, 0, 0] : [0, 0, 255] }
        }
        var data: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        let status = rgb.withUnsafeBufferPointer {
            CImageCodecs_encodeJPEG($0.baseAddress, 16, 16, 3, 95, &data, &size, nil, 0)
        }
        #expect(status == Int32(CIMAGECODECS_OK))
        let bytes = Array(UnsafeBufferPointer(start: data, count: size))
        CImageCodecs_free(data)
        let colour = try GrayImage(encoded: bytes)
        #expect(abs(Int(colour[2, 8]) - 76) <= 10)
        #expect(abs(Int(colour[13, 8]) - 29) <= 10)
    }

    @Test func loadsPlainAndRawPGMAndPPM() throws {
        let expected: [UInt8] = [0, 128, 255, 64]
        // Plain PGM with comments everywhere and maxval 15.
        let plain = "P2\n# made by hand\n2 # width\n2\n15\n0 8\n# a comment between rows\n15 4\n"
        #expect(try GrayImage(encoded: Array(plain.utf8)).pixels == [0, 136, 255, 68])
        // Raw PGM, maxval 255.
        #expect(try GrayImage(encoded: Array("P5\n2 2\n255\n".utf8) + expected).pixels == expected)
        // Raw PGM, 16-bit samples (maxval 1023).
        let deep = Array("P5 2 1 1023\n".utf8) + [0x03, 0xFF, 0x02, 0x00]
        #expect(try GrayImage(encoded: deep).pixels == [255, 128])
        // Plain PPM: red and white.
        let colour = try GrayImage(encoded: Array("P3 2 1 255  255 0 0  255 255 255".utf8))
        #expect(colour.pixels[1] == 255 && abs(Int(colour.pixels[0]) - 76) <= 1)
        // Raw PPM, maxval 100.
        let raw = try GrayImage(encoded: Array("P6\n1 1\n100\n".utf8) + [100, 100, 100])
        #expect(raw.pixels == [255])
        // PBM, plain and raw: 1 is black.
        #expect(try GrayImage(encoded: Array("P1\n3 1\n1 0 1".utf8)).pixels == [0, 255, 0])
        #expect(try GrayImage(encoded: Array("P4\n3 1\n".utf8) + [0b0100_0000]).pixels == [255, 0, 255])
    }

    @Test func pgmDataRoundTrips() throws {
        let image = GrayImage(width: 2, height: 3, pixels: [1, 2, 3, 4, 5, 6])
        #expect(try GrayImage(encoded: image.pgmData()) == image)
    }

    @Test func decodesSymbolsFromEveryFileFormat() throws {
        let directory = try Fixture.temporaryDirectory()
        let payload = Fixture.zlibPayload(120, seed: 31)
        let symbol = try SymbolWriter(moduleSize: 4).aztecCode(payload)
        var ppm = Array("P6\n\(symbol.width) \(symbol.height)\n255\n".utf8)
        for value in symbol.pixels { ppm += [value, value, value] }
        let files: [(String, [UInt8])] = [
            ("ticket.png", try symbol.pngData()), ("ticket.jpg", try symbol.jpegData(quality: 92)),
            ("ticket.pgm", symbol.pgmData()), ("ticket.ppm", ppm),
        ]
        for (name, bytes) in files {
            let path = directory + "/" + name
            try Fixture.write(bytes, to: path)
            #expect(try SymbolScanner().scan(fileAtPath: path).map(\.bytes) == [payload], "\(name)")
        }
    }

    // MARK: - Broken files

    private func loadError(_ bytes: [UInt8]) -> ImageLoadError? {
        do {
            _ = try GrayImage(encoded: bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func truncatedFilesAreReportedAsTruncated() throws {
        let symbol = try SymbolWriter(moduleSize: 3).qrCode(Array("CUT SHORT".utf8))
        let png = try symbol.pngData()
        #expect(loadError(Array(png.prefix(png.count / 2)))?.code == .truncated)
        #expect(loadError(Array(png.prefix(20)))?.code == .truncated)
        let jpeg = try symbol.jpegData(quality: 80)
        #expect(loadError(Array(jpeg.prefix(jpeg.count / 2)))?.code == .truncated)
        #expect(loadError(Array(jpeg.prefix(3)))?.code == .truncated)
        #expect(loadError(Array("P5\n10 10\n255\n".utf8) + [1, 2, 3])?.code == .truncated)
        #expect(loadError(Array("P2 2 2 255 1 2 3".utf8))?.code == .truncated)
        #expect(loadError([])?.code == .truncated)
    }

    @Test func corruptFilesAreReportedAsCorrupt() throws {
        let symbol = try SymbolWriter(moduleSize: 3).qrCode(Array("BROKEN".utf8))
        var png = try symbol.pngData()
        // Damage the compressed pixel data (and so its CRC).
        for index in 60..<min(png.count - 20, 90) { png[index] ^= 0x5A }
        #expect(loadError(png)?.code == .corrupt)
        var jpeg = try symbol.jpegData(quality: 80)
        // Destroy the frame header right after the start marker.
        for index in 2..<min(jpeg.count, 200) { jpeg[index] = 0xFF }
        let jpegError = loadError(jpeg)
        #expect(jpegError?.code == .corrupt || jpegError?.code == .truncated)
        #expect(loadError(Array("P5\n-3 2\n255\n".utf8))?.code == .corrupt)
        #expect(loadError(Array("P2 1 1 7 9".utf8))?.code == .corrupt)
        #expect(loadError(Array("P5 1 1 70000 ".utf8) + [0, 0])?.code == .corrupt)
    }

    @Test func otherFormatsAreUnsupported() {
        let gif = Array("GIF89a".utf8) + [UInt8](repeating: 0, count: 20)
        let error = loadError(gif)
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("PNG") == true)
    }

    @Test func hugeImagesAreRefusedBeforeAllocation() throws {
        // Header only: 200000 x 200000 pixels would be 40 GB.
        let png = PNGBuilder.png(width: 200_000, height: 200_000, colourType: .grey, bitDepth: 8, scanlines: [])
        #expect(loadError(png)?.code == .tooLarge)
        #expect(loadError(Array("P5 200000 200000 255\n".utf8))?.code == .tooLarge)
        let small = try SymbolWriter(moduleSize: 2).qrCode(Array("A".utf8))
        #expect(throws: ImageLoadError.self) { try GrayImage(encoded: small.pngData(), maxPixels: 100) }
    }

    @Test func missingFilesAndDirectoriesNameThePath() throws {
        let directory = try Fixture.temporaryDirectory()
        do {
            _ = try GrayImage(contentsOfFile: directory + "/nothing.png")
            Issue.record("a missing file loaded")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.path == directory + "/nothing.png")
            #expect(error.description.contains("nothing.png"))
        }
        #expect(throws: ImageLoadError.self) { try GrayImage(contentsOfFile: directory) }
    }

    @Test func aMissingFileLogsItsPathThenWhyAndKeepsTheSystemsErrorNumber() throws {
        let path = try Fixture.temporaryDirectory() + "/nothing.pgm"
        let error = #expect(throws: ImageLoadError.self) { try GrayImage(contentsOfFile: path) }
        #expect(error?.code.name == "unreadable")
        #expect(error?.systemErrorNumber == ENOENT)
        #expect(error.map { $0.description == "\(path): \($0.message)" } == true)
    }

    @Test func randomBytesAreRefusedAsBrokenImagesWithAReason() {
        var generator = SeededRandomNumberGenerator(seed: 99)
        let headers: [[UInt8]] = [
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], [0xFF, 0xD8, 0xFF], Array("P5".utf8), Array("P3".utf8),
        ]
        for round in 0..<200 {
            let header = headers[round % headers.count]
            let tail = (0..<Int.random(in: 0...400, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            // Either an image, or what `farecheck scan` reports for a broken file: corrupt, truncated, a variant
            // it does not read, or too large, with a sentence saying so; never a crash, never another kind.
            do {
                _ = try GrayImage(encoded: header + tail)
            } catch {
                #expect(
                    [.corrupt, .truncated, .unsupportedFormat, .tooLarge].contains(error.code),
                    "round \(round): \(error)")
                #expect(!error.message.isEmpty)
                #expect(error.path == nil)
            }
        }
    }

    @Test func fileFormatIsRecognisedByContentAndExtension() {
        #expect(ImageFileFormat(magic: [0x89, 0x50, 0x4E, 0x47, 0, 0]) == .png)
        #expect(ImageFileFormat(magic: [0xFF, 0xD8, 0xFF, 0xE0]) == .jpeg)
        #expect(ImageFileFormat(magic: Array("P6\n".utf8)) == .pnm)
        #expect(ImageFileFormat(magic: Array("GIF8".utf8)) == nil)
        #expect(ImageFileFormat(path: "/tickets/IMG_0001.JPG") == .jpeg)
        #expect(ImageFileFormat(path: "scan.pgm") == .pnm)
        #expect(ImageFileFormat(path: "notes.txt") == nil)
        #expect(ImageFileFormat(path: ".png") == nil)
    }
}
