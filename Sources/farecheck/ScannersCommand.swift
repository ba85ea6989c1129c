import ArgumentParser
import Camera
import Daemon
import DeviceSettings
import FareCore
import Foundation
import Presentation
import Scanners
import Signatures
import TrustStore
import Verification

extension ScannerProtocolName: ExpressibleByArgument {}
extension SSITriggerMode: ExpressibleByArgument {}

/// `farecheck scanners`: find attached barcode scanners and read from one.
struct ScannersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scanners",
        abstract: "List attached barcode scanners, or listen to one and print each scan.",
        subcommands: [List.self, Listen.self]
    )

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract:
                "Show the scanners (Zebra 05e0, Honeywell 0c2e, Datalogic 05f9, Newland 1eab, or --id) and cameras attached.",
            discussion: """
                Cameras are the video nodes that capture by streaming, with the modes libv4l2 offers (pixel format, \
                size, frames per second) for a [[camera]] in the daemon's configuration. Exit status 0 when at least \
                one scanner or camera was found, 1 when none (with the reason).
                """
        )

        @Option(
            name: .customLong("id"),
            help: "Also treat this USB vendor:product as a scanner (e.g. 1234:5678; repeatable).")
        var ids: [String] = []
        @Option(name: .customLong("sysfs"), help: "The sysfs root to look in.") var sysfs: String = "/sys"
        @Option(name: .customLong("dev"), help: "The device directory.") var dev: String = "/dev"
        @Flag(help: "One JSON array: an object per scanner node and camera ([] for none).") var json = false

        struct Row: Encodable {
            var node: String
            var kind: String
            var protocols: [String]
            var usb: String
            var manufacturer: String?
            var product: String?
            var serial: String?
            var access: String
        }

        struct CameraRow: Encodable {
            var node: String
            var kind = "camera"
            var name: String?
            var modes: [String]
            var problem: String?
        }

        func run() throws {
            var extra: [USBDeviceID] = []
            for text in ids {
                guard let id = USBDeviceID(text) else {
                    throw ValidationError("--id must be vendor:product in hex, e.g. 05e0:1900")
                }
                extra.append(id)
            }
            let result = ScannerDiscovery(sysfsRoot: sysfs, deviceRoot: dev, additionalIDs: extra).discover()
            let rows = result.scanners.map { scanner in
                Row(
                    node: scanner.node, kind: scanner.kind.rawValue, protocols: scanner.protocols.map(\.rawValue),
                    usb: "\(scanner.usb.id)", manufacturer: scanner.usb.manufacturer, product: scanner.usb.product,
                    serial: scanner.usb.serial, access: "\(scanner.access)"
                )
            }
            let cameras = CameraDiscovery.discover(deviceRoot: dev)
            let cameraRows = cameras.map { camera in
                CameraRow(
                    node: camera.node, name: camera.name, modes: camera.modes.map(\.description),
                    problem: camera.problem)
            }
            if json {
                // One array, scanners then cameras; [] when there is neither.
                printLine(jsonArray(rows.map { jsonLine($0) } + cameraRows.map { jsonLine($0) }))
            } else if rows.isEmpty {
                printLine(result.explanation ?? "No scanners found.")
            } else {
                for row in rows {
                    let name = [row.manufacturer, row.product].compactMap { $0 }.joined(separator: " ")
                    printLine(
                        "\(row.node)  \(row.kind)  \(row.protocols.joined(separator: "|"))  \(row.usb) \(name)\(row.serial.map { " serial \($0)" } ?? "")  [\(row.access)]"
                    )
                }
                if let explanation = result.explanation { printLine(explanation) }
            }
            if !json {
                if cameras.isEmpty { printLine("No cameras found (no video node under \(dev) captures video).") }
                for camera in cameras { printLine(Self.describe(camera)) }
            }
            if rows.isEmpty && cameras.isEmpty { throw ExitCode(1) }
        }

        /// A camera as a line, then a line per pixel format with its sizes and rates, largest first.
        static func describe(_ camera: CameraDiscovery.Found) -> String {
            if let problem = camera.problem { return "\(camera.node)  camera  cannot be opened: \(problem)" }
            var lines = ["\(camera.node)  camera  \(camera.name ?? "")"]
            let formats = Dictionary(grouping: camera.modes, by: \.pixelFormat)
            for format in formats.keys.sorted(by: { $0.description < $1.description }) {
                let sizes = Dictionary(grouping: formats[format] ?? [], by: { [$0.width, $0.height] })
                let described = sizes.sorted { $0.key[0] * $0.key[1] > $1.key[0] * $1.key[1] }.map { size, modes in
                    let rates = modes.map(\.framesPerSecond).sorted(by: >).map { "\(($0 * 100).rounded() / 100)" }
                    return "\(size[0])x\(size[1]) at \(rates.joined(separator: "/")) fps"
                }
                let read = format.luminanceLayout == nil ? " (not read by farecheck)" : ""
                lines.append("    \(format)\(read): \(described.joined(separator: ", "))")
            }
            return lines.joined(separator: "\n")
        }
    }

    struct Listen: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "listen",
            abstract: "Read scans from one scanner and print each as it arrives (Ctrl-C to stop).",
            discussion: """
                The scanner is reopened when it is unplugged and comes back. Protocols: ssi (Zebra SSI over \
                serial/ttyACM), raw (suffix-framed serial), hidpos and snapi (hidraw), wedge (input event \
                node; text payloads only, as a keyboard cannot type arbitrary bytes). With --verify each scan \
                is verified against the store and the scanner beeps good or bad where the protocol allows.
                """
        )

        @Option(help: "The device node, e.g. /dev/ttyACM0, /dev/hidraw2, /dev/input/event5.") var device: String
        @Option(name: .customLong("protocol"), help: "ssi, raw, hidpos, snapi or wedge.") var scannerProtocol:
            ScannerProtocolName
        @Option(help: "Serial speed (ssi, raw).") var baud: Int = 9600
        @Option(help: "Keyboard layout of a wedge scanner: us or de.") var layout: String = "us"
        @Option(help: "Trigger mode an ssi scanner is set to: presentation, level or host.")
        var triggerMode: SSITriggerMode = .presentation
        @Flag(help: "Verify each scan and print the verdict.") var verify = false
        @Flag(help: "One JSON object per line per scan, flushed as each arrives.") var json = false
        @OptionGroup var verification: VerificationOptions
        @OptionGroup var store: StoreOptions

        struct Line: Encodable {
            var device: String
            var symbology: String
            var byteCount: Int
            var payloadBase64: String
            var receivedAt: Date
            var verdict: VerdictEvent?
        }

        func run() async throws {
            let verifier = verify ? try verification.verifier(store: try store.open()) : nil
            guard let keyboard = KeyboardLayout.named(layout) else {
                throw ValidationError("--layout must be us or de")
            }
            var settings = SerialSettings()
            settings.baudRate = baud
            let reader = ScannerReader(
                device: device, log: { printError("farecheck: \($0)") },
                open: ScannerOpener.opener(
                    device: device, protocol: scannerProtocol, settings: settings, layout: keyboard,
                    triggerMode: triggerMode, log: { printError("farecheck: \($0)") })
            )
            for try await scan in reader {
                var report: VerdictEvent?
                if let verifier {
                    let verdict = try verifier.verify(scan.payload)
                    report = VerdictEvent.report(
                        Inspection(
                            source: scan.source, receivedAt: scan.receivedAt, symbology: scan.symbology,
                            payloadByteCount: scan.payload.count,
                            payloadDigest: digest(.sha256, scan.payload), verdict: verdict))
                    await reader.signal(verdict.isValid ? .good : .bad)
                }
                if json {
                    printLine(
                        jsonLine(
                            Line(
                                device: scan.device, symbology: scan.symbology.rawValue, byteCount: scan.payload.count,
                                payloadBase64: Data(scan.payload).base64EncodedString(), receivedAt: scan.receivedAt,
                                verdict: report
                            )))
                } else {
                    printLine(
                        "\(scan.receivedAt.iso8601) \(scan.device) \(scan.symbology.rawValue) \(scan.payload.count) bytes: \(PayloadText.describe(scan.payload))"
                    )
                    if let report { printLine(report.text) }
                }
            }
        }
    }
}

/// A payload for a person: the text when it is printable, else hex.
enum PayloadText {
    static func describe(_ payload: [UInt8]) -> String {
        if payload.allSatisfy({ (0x20...0x7E).contains($0) }) { return String(decoding: payload, as: UTF8.self) }
        return "hex " + payload.hexString
    }
}
