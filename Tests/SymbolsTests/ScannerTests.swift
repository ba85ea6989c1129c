import FareCore
import ScannerSimulation
import Symbols
import Testing

@Suite struct ScannerTests {
    let scanner = SymbolScanner()

    @Test func imageWithoutASymbolGivesNothing() {
        let blank = GrayImage(width: 320, height: 240, filledWith: 230)
        #expect(scanner.scan(blank).isEmpty)
        // Texture and clutter, but no ticket.
        let clutter = ImageDistortion.apply([.noise(amplitude: 30, seed: 3), .blurred(sigma: 1)], to: blank)
        #expect(scanner.scan(clutter).isEmpty)
    }

    @Test func tinyImagesDoNotTrouble() {
        #expect(scanner.scan(GrayImage(width: 1, height: 1, filledWith: 0)).isEmpty)
        #expect(scanner.scan(GrayImage(width: 7, height: 3, filledWith: 255)).isEmpty)
    }

    @Test func findsAQRAndAnAztecInOneImage() throws {
        let qrPayload = Fixture.base45Text(150, seed: 41)
        let aztecPayload = Fixture.zlibPayload(200, seed: 42)
        let image = Fixture.sideBySide([
            try SymbolWriter(moduleSize: 4).qrCode(qrPayload), try SymbolWriter(moduleSize: 4).aztecCode(aztecPayload),
        ])
        let symbols = scanner.scan(image)
        #expect(Set(symbols.map(\.bytes)) == [qrPayload, aztecPayload])
        #expect(symbols.first { $0.bytes == qrPayload }?.symbology == .qr)
        #expect(symbols.first { $0.bytes == aztecPayload }?.symbology == .aztec)
    }

    @Test func findsTwoTurnedAztecsInOnePhoto() throws {
        let first = Fixture.zlibPayload(150, seed: 43)
        let second = Fixture.zlibPayload(220, seed: 44)
        let image = Fixture.sideBySide([
            ImageDistortion.rotated(degrees: 12).apply(to: try SymbolWriter(moduleSize: 4).aztecCode(first)),
            ImageDistortion.rotated(degrees: -25).apply(to: try SymbolWriter(moduleSize: 4).aztecCode(second)),
        ])
        #expect(Set(scanner.scan(image).map(\.bytes)) == [first, second])
    }

    @Test func theSameSymbolTwiceIsReportedOnce() throws {
        let payload = Array("TWICE".utf8)
        let symbol = try SymbolWriter(moduleSize: 4).qrCode(payload)
        let symbols = scanner.scan(Fixture.sideBySide([symbol, symbol]))
        #expect(symbols.map(\.bytes) == [payload])
    }

    @Test func symbologiesCanBeRestricted() throws {
        let image = try SymbolWriter(moduleSize: 4).aztecCode(Array("ONLY QR WANTED".utf8))
        let qrOnly = SymbolScanner(configuration: .init(symbologies: [.qr]))
        #expect(qrOnly.scan(image).isEmpty)
    }

    @Test func reportsWhereTheSymbolIs() throws {
        let symbol = try SymbolWriter(moduleSize: 4).qrCode(Array("WHERE".utf8))
        let image = Fixture.sideBySide([GrayImage(width: 200, height: symbol.height, filledWith: 255), symbol])
        let found = try #require(scanner.scan(image).first)
        #expect(!found.corners.isEmpty)
        // The symbol is to the right of the blank space.
        #expect(found.corners.allSatisfy { $0.x > 250 })
    }

    @Test func fileErrorsAreThrownNotSwallowed() throws {
        let directory = try Fixture.temporaryDirectory()
        let path = directory + "/broken.png"
        try Fixture.write([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0], to: path)
        #expect(throws: ImageLoadError.self) { try scanner.scan(fileAtPath: path) }
    }
}
