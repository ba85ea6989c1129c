import FareCore
import Foundation
import Issuing
import ScannerSimulation
import Symbols
import TicketFormats

/// The scan figure: one 1280×720 photo-like image with one ticket, farecheck beside the reference tools.
struct ScanBenchmark {
    var runs: Int
    var compare: Bool

    func run() throws {
        let key = try IssuingKey.parse(DemoKeys.issuingKeys[0].text, source: DemoKeys.issuingKeys[0].file)
        let now = Date()
        let claims = FC1.Claims(
            issuer: "demo-transit", ticketID: Array(0..<16), issuedAt: now, validFrom: now,
            validUntil: now.addingTimeInterval(86400),
            product: "day", zones: ["A", "B"], category: "adult", holder: "ID ****1234"
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-bench-\(getpid())")
            .path
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        printLine(
            "scan time, 1280×720 photo-like image with one ticket, median of \(runs) runs (whole process, PNG decode included):"
        )
        for barcode in BarcodeKind.allCases {
            let payload = try key.payload(for: claims, barcode: barcode)
            let symbol = try barcode.image(payload, moduleSize: 4)
            let scene = ImageDistortion.photoLike(seed: 7).apply(to: symbol)
            let path = "\(directory)/\(barcode.rawValue)-photo.png"
            try scene.writePNG(toFile: path)

            let scanner = SymbolScanner()
            var inProcess: [Double] = []
            var found = false
            for _ in 0..<runs {
                let start = ContinuousClock.now
                let symbols = try scanner.scan(fileAtPath: path)
                inProcess.append(Self.milliseconds(ContinuousClock.now - start))
                found = symbols.contains { $0.bytes == payload }
            }
            printLine(
                "  \(barcode.rawValue) (\(payload.count) bytes): in-process scan \(Self.median(inProcess)) ms, decoded: \(found ? "yes" : "NO")"
            )
            guard compare else { continue }
            var tools: [(String, String, [String])] = []
            if let own = Self.ownExecutable() { tools.append(("farecheck scan", own, ["scan", path])) }
            if let zxing = findTool("ZXingReader") { tools.append(("ZXingReader", zxing, [path])) }
            if let zbar = findTool("zbarimg") { tools.append(("zbarimg", zbar, ["-q", path])) }
            for (name, executable, arguments) in tools {
                var times: [Double] = []
                var output = ""
                for _ in 0..<runs {
                    let start = ContinuousClock.now
                    output = runTool(executable, arguments) ?? ""
                    times.append(Self.milliseconds(ContinuousClock.now - start))
                }
                let decoded = !output.isEmpty && !output.contains("No barcode") && !output.contains("Error")
                printLine(
                    "    \(name.padding(toLength: 15, withPad: " ", startingAt: 0)) \(Self.median(times)) ms, decoded: \(decoded ? "yes" : "no")"
                )
            }
        }
    }

    static func milliseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func median(_ values: [Double]) -> String {
        let sorted = values.sorted()
        return String(format: "%.1f", sorted.isEmpty ? 0 : sorted[sorted.count / 2])
    }

    static func ownExecutable() -> String? {
        FileManager.default.isExecutableFile(atPath: FarecheckProgram.path) ? FarecheckProgram.path : nil
    }
}
