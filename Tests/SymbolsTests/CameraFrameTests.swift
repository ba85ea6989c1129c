import FareCore
import ScannerSimulation
import Symbols
import Testing

/// A frame must never kill the process: camera-like frames (small, tilted, under perspective, blurred, noisy,
/// badly lit) of Aztec and QR tickets go through the scanner's camera pass one after another in this process.
/// Debian's zxing-cpp 1.4 aborted on such frames (an assertion in its Aztec detector); what farecheck links now
/// must give a symbol or nothing for each, and never a wrong payload. (Thousands more such frames, and a fuzz target
/// over recorded frames, are in docs/camera.md and `fuzz-y4m`; this is the part that runs with every test.)
@Suite struct CameraFrameTests {
    /// The pass a camera source runs on every frame.
    let scanner = SymbolScanner(configuration: .init(usesFallbacks: false))

    static func frame(_ index: Int, symbol: GrayImage) -> GrayImage {
        let seed = UInt64(index)
        // From comfortable to hopeless: a growing share of the frames are too small, blurred or noisy to read.
        let hardness = Double(index % 10) / 10
        let scene = PhotoScene(
            width: 320, height: 240, seed: seed, symbolSize: (0.7 - 0.4 * hardness)...(0.8 - 0.4 * hardness),
            maxTilt: 25, blur: (0.3 + 1.5 * hardness)...(0.4 + 1.5 * hardness), noise: 2...(3 + 15 * hardness),
            minimumLight: 0.5)
        return ImageDistortion.apply(
            [.photoLike(scene), .perspective(strength: 0.03 + 0.12 * hardness, seed: seed)], to: symbol)
    }

    @Test("camera-like frames: each gives its own payload or nothing, and the process lives")
    func cameraLikeFramesNeverKillTheProcess() throws {
        let aztecPayload = Fixture.zlibPayload(160, seed: 31)
        let qrPayload = Fixture.base45Text(140, seed: 32)
        let aztec = try SymbolWriter(moduleSize: 2).aztecCode(aztecPayload)
        let qr = try SymbolWriter(moduleSize: 2).qrCode(qrPayload)
        var read = 0
        let frames = 60
        for index in 0..<frames {
            let isAztec = index % 3 != 0
            let symbols = scanner.scan(Self.frame(index, symbol: isAztec ? aztec : qr))
            #expect(symbols.allSatisfy { $0.bytes == (isAztec ? aztecPayload : qrPayload) }, "frame \(index)")
            if !symbols.isEmpty { read += 1 }
        }
        // The easy half is read; the hardest frames are not, and must not be "read" as something else.
        #expect(read >= frames / 3, "\(read) of \(frames) frames read")
        #expect(read < frames, "every frame read: the hard ones are not hard")
    }
}
