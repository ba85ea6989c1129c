import Symbols
import Testing

@Suite struct WriterTests {
    @Test func base45TextUsesAlphanumericModeAndASmallerSymbol() throws {
        let text = Fixture.base45Text(300, seed: 7)
        let alphanumeric = try SymbolWriter.qrMatrix(text)
        // The same length in lower case cannot use alphanumeric mode.
        let lowerCase = text.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }
        let eightBit = try SymbolWriter.qrMatrix(lowerCase)
        #expect(alphanumeric.width < eightBit.width)
    }

    @Test func higherErrorCorrectionMakesALargerQRCode() throws {
        let payload = Fixture.randomBytes(200, seed: 8)
        let low = try SymbolWriter.qrMatrix(payload, errorCorrection: .low)
        let high = try SymbolWriter.qrMatrix(payload, errorCorrection: .high)
        #expect(high.width > low.width)
    }

    @Test func imagesHaveTheRequestedModuleSizeAndQuietZone() throws {
        let payload = Array("HELLO".utf8)
        let matrix = try SymbolWriter.qrMatrix(payload)
        let image = try SymbolWriter(moduleSize: 5, quietZone: 3).qrCode(payload)
        #expect(image.width == (matrix.width + 6) * 5)
        #expect(image.height == image.width)
        // The quiet zone is white, and the top-left finder pattern's corner module is black.
        #expect(image[14, 14] == 255)
        #expect(image[15, 15] == 0)
        let aztec = try SymbolWriter(moduleSize: 2).aztecCode(payload)
        let aztecMatrix = try SymbolWriter.aztecMatrix(payload)
        #expect(aztec.width == (aztecMatrix.width + 4) * 2)
    }

    @Test func tooMuchDataIsAnErrorNotACrash() {
        let payload = Fixture.randomBytes(5000, seed: 9)
        #expect(throws: SymbolWriteError.self) { try SymbolWriter.aztecMatrix(payload) }
        #expect(throws: SymbolWriteError.self) { try SymbolWriter.qrMatrix(payload, errorCorrection: .high) }
        #expect(throws: SymbolWriteError.self) { try SymbolWriter.qrMatrix([]) }
    }

    @Test func pngDataRoundTripsThroughTheLoader() throws {
        let image = try SymbolWriter(moduleSize: 2).aztecCode(Array("PNG".utf8))
        let loaded = try GrayImage(encoded: try image.pngData())
        #expect(loaded == image)
    }
}
