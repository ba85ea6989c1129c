import Foundation
import ScannerSimulation
import Scanners
import TestSupport
import Testing

@Suite("farecheck scanners")
struct ScannersCLITests {
    let bench = Workbench()

    @Test("listen --protocol ssi --verify --json: a simulated SSI scanner on a pseudo-terminal, one verdict per scan")
    func listenToSSI() throws {
        let key = bench.path("k.key")
        #expect(try bench.farecheck(["keys", "generate", "--issuer", "demo-transit", "--out", key]).status == 0)
        #expect(
            try bench.farecheck(["issue", "--key", key, "--barcode", "aztec", "--payload-out", bench.path("t.bin")])
                .status == 0)
        let payload = Array(try #require(FileManager.default.contents(atPath: bench.path("t.bin"))))
        #expect(payload.count < 250)

        let terminal = try PseudoTerminal()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Workbench.farecheck)
        process.arguments = [
            "scanners", "listen", "--device", terminal.replicaPath, "--protocol", "ssi", "--verify", "--json", "--db",
            bench.db,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try startUnblocked(process)
        defer {
            process.terminate()
            process.waitUntilExit()
            terminal.close()
        }
        let collector = OutputCollector(output.fileHandleForReading)

        // The scanner's side: ACK every host command; after SCAN_ENABLE, send one decode.
        var pending: [UInt8] = []
        var enabled = false
        var sent = false
        var commands: [UInt8] = []
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline, collector.lines.isEmpty {
            if case .bytes(let bytes) = try terminal.read(timeout: .milliseconds(50)) { pending += bytes }
            while let first = pending.first, first == 0 { pending.removeFirst() }  // wake-up bytes
            while let length = pending.first.map(Int.init), pending.count >= length + 2 {
                let frame = Array(pending.prefix(length + 2))
                pending.removeFirst(length + 2)
                let opcode = frame[1]
                commands.append(opcode)
                if opcode == SSIOpcode.scanEnable.rawValue { enabled = true }
                if opcode != SSIOpcode.commandAck.rawValue {
                    try terminal.write(SSIFrame(opcode: .commandAck, source: .decoder).encoded)
                }
            }
            if enabled, !sent {
                try terminal.write(SSIFrame(opcode: .decodeData, source: .decoder, data: [0x2D] + payload).encoded)
                sent = true
            }
        }
        #expect(commands.contains(SSIOpcode.paramSend.rawValue))
        #expect(commands.contains(SSIOpcode.scanEnable.rawValue))
        let line = try #require(collector.lines.first)
        let scan = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(scan["device"] as? String == terminal.replicaPath)
        #expect(scan["symbology"] as? String == "aztec")
        #expect(scan["payloadBase64"] as? String == Data(payload).base64EncodedString())
        #expect(scan["receivedAt"] is String)
        let verdict = try #require(scan["verdict"] as? [String: Any])
        #expect(verdict["verdict"] as? String == "valid")
        // The good-verdict beep follows the verdict.
        let beepDeadline = Date().addingTimeInterval(5)
        while Date() < beepDeadline, !commands.contains(SSIOpcode.beep.rawValue) {
            if case .bytes(let bytes) = try terminal.read(timeout: .milliseconds(50)) { pending += bytes }
            while let length = pending.first.map(Int.init), length > 0, pending.count >= length + 2 {
                commands.append(pending[1])
                if pending[1] != SSIOpcode.commandAck.rawValue {
                    try terminal.write(SSIFrame(opcode: .commandAck, source: .decoder).encoded)
                }
                pending.removeFirst(length + 2)
            }
        }
        #expect(commands.contains(SSIOpcode.beep.rawValue))
    }

    @Test("list explains why nothing is found")
    func listNothing() throws {
        for node in ["class/hidraw", "class/tty", "class/input"] {
            try FileManager.default.createDirectory(
                atPath: bench.path("sys/\(node)"), withIntermediateDirectories: true)
        }
        let run = try bench.farecheck(["scanners", "list", "--sysfs", bench.path("sys")])
        #expect(run.status == 1)
        #expect(run.text.lowercased().contains("no usb barcode scanners found"))
        let noSysfs = try bench.farecheck(["scanners", "list", "--sysfs", bench.path("absent")])
        #expect(noSysfs.status == 1)
        #expect(noSysfs.text.contains("sysfs"))
    }

    @Test("list shows cameras: video nodes that are not cameras are left out, one that cannot be opened says why")
    func listCameras() throws {
        for node in ["class/hidraw", "class/tty", "class/input"] {
            try FileManager.default.createDirectory(
                atPath: bench.path("sys/\(node)"), withIntermediateDirectories: true)
        }
        let dev = bench.path("dev")
        try FileManager.default.createDirectory(atPath: dev, withIntermediateDirectories: true)
        // A plain file and /dev/null under camera names: neither answers V4L2, so neither is a camera.
        _ = FileManager.default.createFile(atPath: dev + "/video0", contents: Data())
        try FileManager.default.createSymbolicLink(atPath: dev + "/video1", withDestinationPath: "/dev/null")
        let none = try bench.farecheck(["scanners", "list", "--sysfs", bench.path("sys"), "--dev", dev])
        #expect(none.status == 1)
        // With --json, nothing found is an empty array.
        let noneJSON = try bench.farecheck(["scanners", "list", "--sysfs", bench.path("sys"), "--dev", dev, "--json"])
        #expect(noneJSON.status == 1 && noneJSON.text == "[]\n", "\(noneJSON.text)")
        #expect(none.text.contains("No cameras found (no video node under \(dev) captures video)"), "\(none.text)")
        #expect(!none.text.contains("libv4l2"), "libv4l2's own complaints stay out of the output: \(none.text)")
        // A camera node that vanished as it was listed (unplugged): listed, with the reason.
        try FileManager.default.createSymbolicLink(atPath: dev + "/video2", withDestinationPath: bench.path("gone"))
        let gone = try bench.farecheck(["scanners", "list", "--sysfs", bench.path("sys"), "--dev", dev, "--json"])
        #expect(gone.status == 0)
        // One JSON array (issue 52), its one row the camera.
        #expect(gone.jsonLines.count == 1 && gone.text.hasPrefix("["), "\(gone.text)")
        let row = try #require(gone.jsonLines.first, "\(gone.text)")
        #expect(row["kind"] as? String == "camera" && row["node"] as? String == dev + "/video2")
        #expect((row["problem"] as? String)?.contains("no such camera (is it plugged in?)") == true)
    }
}
