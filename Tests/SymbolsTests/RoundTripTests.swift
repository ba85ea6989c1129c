import FareCore
import Symbols
import Testing

/// Payloads written as symbols and read back must come out byte for byte.
@Suite struct RoundTripTests {
    let scanner = SymbolScanner()

    @Test func qrCarriesBinaryBytesExactly() throws {
        // NUL, 0xFF and bytes that are not UTF-8: a text-converting reader would change them.
        let payload: [UInt8] = [0x00, 0xFF, 0x00, 0xC3, 0x28, 0x80, 0xFE] + Fixture.randomBytes(150, seed: 1) + [0x00]
        let image = try SymbolWriter(moduleSize: 4).qrCode(payload)
        let symbols = scanner.scan(image)
        #expect(symbols.map(\.bytes) == [payload])
        #expect(symbols.first?.symbology == .qr)
    }

    @Test func zbarReadsBinaryQRBytesExactly() throws {
        // zbar alone: by default it would turn these bytes into UTF-8 text.
        let payload: [UInt8] = [0x00, 0xFF, 0x9C, 0x78] + Fixture.randomBytes(100, seed: 2)
        let image = try SymbolWriter(moduleSize: 4).qrCode(payload)
        let zbarOnly = SymbolScanner(configuration: .init(engines: [.zbar], usesFallbacks: false))
        let found = zbarOnly.scan(image)
        #expect(found.map(\.bytes) == [payload])
        #expect(found.first?.engine == .zbar)
    }

    @Test func qrCarriesBase45Text() throws {
        let payload = Fixture.base45Text(240, seed: 3)
        let image = try SymbolWriter(moduleSize: 3).qrCode(payload)
        #expect(scanner.scan(image).map(\.bytes) == [payload])
    }

    @Test(arguments: [300, 450, 600])
    func aztecCarriesZlibBytesExactly(size: Int) throws {
        let payload = Fixture.zlibPayload(size, seed: UInt64(size))
        let image = try SymbolWriter(moduleSize: 3).aztecCode(payload)
        let symbols = scanner.scan(image)
        #expect(symbols.map(\.bytes) == [payload])
        #expect(symbols.first?.symbology == .aztec)
    }

    @Test func aztecCarriesNulAndFFBytes() throws {
        let payload: [UInt8] = [0x00, 0x00, 0xFF, 0xFF, 0x00] + Fixture.randomBytes(40, seed: 4) + [0xFF]
        let image = try SymbolWriter(moduleSize: 4).aztecCode(payload)
        #expect(scanner.scan(image).map(\.bytes) == [payload])
    }

    @Test(arguments: ["db-city-mobil-v1-sha1", "db-supersparpreis-v2-sha256", "db-deutschland-ticket-2025"])
    func aztecCarriesRealUICTickets(name: String) throws {
        let payload = try Fixture.uicPayload(name)
        let image = try SymbolWriter(moduleSize: 3).aztecCode(payload)
        #expect(scanner.scan(image).map(\.bytes) == [payload])
    }

    @Test(arguments: [SymbolWriter.AztecErrorCorrection.standard, .init(percent: 25), .init(percent: 75)])
    func aztecErrorCorrectionLevelsRoundTrip(level: SymbolWriter.AztecErrorCorrection) throws {
        let payload = Fixture.zlibPayload(200, seed: 5)
        let image = try SymbolWriter(moduleSize: 3).aztecCode(payload, errorCorrection: level)
        #expect(scanner.scan(image).map(\.bytes) == [payload])
    }

    @Test(arguments: SymbolWriter.QRErrorCorrection.allCases)
    func qrErrorCorrectionLevelsRoundTrip(level: SymbolWriter.QRErrorCorrection) throws {
        let payload = Fixture.base45Text(120, seed: 6)
        let image = try SymbolWriter(moduleSize: 3).qrCode(payload, errorCorrection: level)
        #expect(scanner.scan(image).map(\.bytes) == [payload])
    }
}
