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

@Suite("Aztec writer self-check")
struct AztecWriterSelfCheckTests {
    /// A real FC1 ticket (zlib bytes) that zxing-cpp 1.4's Aztec encoder wrote wrongly: byte 143, 0x7D after
    /// 0xF7, read back as 0x7E from the symbol with every decoder, which broke the zlib check. The writer's self-check
    /// refused it then; zxing-cpp 3.1.1 encodes it right.
    static let misencoded = [UInt8](
        hex:
            "78da01a3005cffd2844da201260448a6615e0f615889bba0584ea6016c64656d6f2d7472616e736974041a6b052549051a6b03d3c9061a6b0282490743de301163746b74a4617063646179617a82614161426163656164756c7461686b4944202a2a2a2a3132333458406cc2635adbdd5974ce1872a9e068140ebad494061f28fcb9aeff311b2e9e0be0453c5d09f77d1c5f5af2aeca4aace81c34f97d8a7aa92f6d8ff95eb4c513b8115a03414d"
    )!

    @Test("the ticket zxing-cpp 1.4 wrote wrongly is written and reads back exactly")
    func formerlyMisencodedPayloadReadsBack() throws {
        let image = try SymbolWriter(moduleSize: 4).aztecCode(Self.misencoded)
        #expect(SymbolScanner().scan(image).first?.bytes == Self.misencoded)
    }

    @Test("the same payload without the troublesome byte is written and reads back exactly")
    func neighbourEncodes() throws {
        var other = Self.misencoded
        other[143] = 0x41
        let image = try SymbolWriter(moduleSize: 4).aztecCode(other)
        #expect(SymbolScanner().scan(image).first?.bytes == other)
    }
}
