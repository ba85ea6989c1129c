import FareCore
import ScannerSimulation
import Symbols
import Testing

/// Symbols that are not pristine, as a camera or a worn ticket gives them, must still decode byte for byte.
@Suite struct DistortionTests {
    static let cases: [(String, [ImageDistortion])] = [
        ("scaled down", [.scaledDown(factor: 0.6)]),
        ("rotated 90°", [.rotated90]),
        ("rotated 4°", [.rotated(degrees: 4)]),
        ("rotated 17°", [.rotated(degrees: -17)]),
        ("blurred", [.blurred(sigma: 1.2)]),
        ("noisy", [.noise(amplitude: 28, seed: 11)]),
        ("low contrast", [.lowContrast(dark: 105, light: 150)]),
        ("inverted", [.inverted]),
        ("shadowed", [.shadow(depth: 0.3, angle: 30)]),
        ("JPEG", [.jpeg(quality: 35)]),
        ("rotated, blurred and noisy", [.rotated(degrees: 8), .blurred(sigma: 0.8), .noise(amplitude: 10, seed: 12)]),
    ]

    let scanner = SymbolScanner()

    @Test(arguments: cases.indices)
    func aztecSurvives(index: Int) throws {
        let (name, distortions) = Self.cases[index]
        let payload = Fixture.zlibPayload(260, seed: 21)
        let clean = try SymbolWriter(moduleSize: 5).aztecCode(payload)
        let image = ImageDistortion.apply(distortions, to: clean)
        let symbols = scanner.scan(image)
        #expect(symbols.map(\.bytes) == [payload], "Aztec \(name)")
        #expect(symbols.first?.symbology == .aztec)
    }

    @Test(arguments: cases.indices)
    func qrSurvives(index: Int) throws {
        let (name, distortions) = Self.cases[index]
        let payload = Fixture.base45Text(200, seed: 22)
        let clean = try SymbolWriter(moduleSize: 5).qrCode(payload)
        let image = ImageDistortion.apply(distortions, to: clean)
        let symbols = scanner.scan(image)
        #expect(symbols.map(\.bytes) == [payload], "QR \(name)")
        #expect(symbols.first?.symbology == .qr)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func ticketInAPhotoDecodes(seed: UInt64) throws {
        let aztecPayload = Fixture.zlibPayload(250, seed: seed)
        let aztec = ImageDistortion.photoLike(seed: seed).apply(
            to: try SymbolWriter(moduleSize: 4).aztecCode(aztecPayload))
        #expect(aztec.width == 1280 && aztec.height == 720)
        #expect(scanner.scan(aztec).map(\.bytes) == [aztecPayload])

        let qrPayload = Fixture.base45Text(220, seed: seed)
        let qr = ImageDistortion.photoLike(seed: seed + 100).apply(
            to: try SymbolWriter(moduleSize: 4).qrCode(qrPayload))
        #expect(scanner.scan(qr).map(\.bytes) == [qrPayload])
    }

    @Test(arguments: [UInt64(4), 5])
    func tiltedCameraDecodes(seed: UInt64) throws {
        // A large ticket symbol under perspective: the hardest geometry for zxing 1.4's own Aztec reader.
        let aztecPayload = Fixture.zlibPayload(420, seed: seed)
        let scene = PhotoScene(seed: seed, symbolSize: 0.5...0.55, maxTilt: 4)
        let aztec = ImageDistortion.apply(
            [.photoLike(scene), .perspective(strength: 0.12, seed: seed)],
            to: try SymbolWriter(moduleSize: 4).aztecCode(aztecPayload))
        #expect(scanner.scan(aztec).map(\.bytes) == [aztecPayload])

        let qrPayload = Fixture.base45Text(260, seed: seed)
        let qr = ImageDistortion.apply(
            [.photoLike(scene), .perspective(strength: 0.12, seed: seed)],
            to: try SymbolWriter(moduleSize: 4).qrCode(qrPayload))
        #expect(scanner.scan(qr).map(\.bytes) == [qrPayload])
    }

    @Test func bentTicketDecodes() throws {
        // Paper curled over a hand: rows bow by 3 % of the symbol; zxing 1.4 alone reads neither symbol.
        let scene = PhotoScene(seed: 1, symbolSize: 0.5...0.55)
        let aztecPayload = Fixture.zlibPayload(260, seed: 8)
        let aztec = ImageDistortion.apply(
            [.curled(amplitude: 0.03), .photoLike(scene)],
            to: try SymbolWriter(moduleSize: 4).aztecCode(aztecPayload))
        #expect(scanner.scan(aztec).map(\.bytes) == [aztecPayload])

        let qrPayload = Fixture.base45Text(200, seed: 8)
        let qr = ImageDistortion.apply(
            [.curled(amplitude: 0.03), .photoLike(scene)],
            to: try SymbolWriter(moduleSize: 4).qrCode(qrPayload))
        #expect(scanner.scan(qr).map(\.bytes) == [qrPayload])
    }

    @Test func distortionsAreDeterministic() throws {
        let symbol = try SymbolWriter(moduleSize: 3).qrCode(Array("SEED".utf8))
        let first = ImageDistortion.apply([.noise(amplitude: 20, seed: 5), .photoLike(seed: 9)], to: symbol)
        let second = ImageDistortion.apply([.noise(amplitude: 20, seed: 5), .photoLike(seed: 9)], to: symbol)
        #expect(first == second)
        let other = ImageDistortion.photoLike(seed: 10).apply(to: symbol)
        #expect(other != first)
    }

    @Test func distortionsChangeTheImageAsNamed() throws {
        let symbol = try SymbolWriter(moduleSize: 2).qrCode(Array("SHAPE".utf8))
        let quarter = ImageDistortion.rotated90.apply(to: symbol)
        #expect(quarter.width == symbol.height && quarter[quarter.width - 1 - 10, 12] == symbol[12, 10])
        let half = ImageDistortion.scaledDown(factor: 0.5).apply(to: symbol)
        #expect(half.width == (symbol.width + 1) / 2)
        let inverted = ImageDistortion.inverted.apply(to: symbol)
        #expect(inverted[0, 0] == 0)
        let faded = ImageDistortion.lowContrast(dark: 100, light: 140).apply(to: symbol)
        #expect(faded.pixels.allSatisfy { (100...140).contains($0) })
        let turned = ImageDistortion.rotated(degrees: 30).apply(to: symbol)
        #expect(turned.width > symbol.width)
    }
}
