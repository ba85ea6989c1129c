import Daemon
import FareCore
import Foundation
import Glibc
import TestSupport
import Testing
import TrustStore

/// The daemon's camera source, on a recording played as a camera (no camera exists here): the same capture loop,
/// frame queue, presentations and pipeline as a V4L2 camera.
@Suite("farecheck daemon with a camera source", .serialized)
struct DaemonCameraTests {
    /// The recording: the Aztec day ticket in view, out of view for 1.5 s, back, then the QR single ticket.
    let recording = Fixtures.path("video/handheld-320x240-gray.y4m")

    @Test("one verdict per presentation, replay rules on presentations, frames counted, the journal has each verdict")
    func recordingAsCamera() async throws {
        let setup = try DaemonBench()
        #expect(
            try setup.bench.farecheck([
                "keys", "import", repositoryRoot + "/Keys/demo-transit-es256.pub.pem", "--issuer", "demo-transit",
            ]).status == 0)
        let config = setup.bench.path("camera.toml")
        try """
        mode = "gate"
        validator = "test-gate"
        store = "\(setup.bench.db)"

        [verification]
        single_use_products = ["day"]

        [[camera]]
        name = "handheld"
        device = "\(recording)"
        new_presentation_after = 1

        [output]
        stdout = true

        [http]
        listen = "127.0.0.1:0"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.start(config: config)
        // The camera starts with the daemon: its verdicts are read from standard output, which misses none.
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, daemon.stdout.lines.count < 3 { try await Task.sleep(for: .milliseconds(50)) }
        let events = try daemon.stdout.lines.prefix(3).map { try setup.event($0) }
        // 24 frames at 4 a second: the Aztec ticket, again after 1.5 s out of view (a new presentation, refused as
        // a second use of a single-use product), then the QR ticket. Ninety frames of one ticket would be one line.
        #expect(events.map(\.verdict) == [.valid, .replayed, .valid], "\(daemon.stderr.text)")
        #expect(events.map(\.product) == ["day", "day", "single"])
        #expect(events.allSatisfy { $0.device == "handheld" })

        let port = try #require(daemon.httpPort)
        let metrics = try await LoopbackHTTP.request(port: port, "GET", "/metrics")
        let samples = try PrometheusText.samples(metrics.text)
        #expect((samples[#"farecheck_camera_frames_total{camera="handheld"}"#] ?? 0) >= 18, "\(metrics.text)")
        #expect(samples[#"farecheck_scanner_connected{scanner="handheld"}"#] != nil)
        #expect(await daemon.stderr.waitFor("streaming GREY 320x240 4.0 fps"), "\(daemon.stderr.text)")

        #expect(await daemon.stop(signal: SIGTERM, timeout: 5) == 0, "\(daemon.stderr.text)")
        let journal = try TrustStore(path: setup.bench.db).inspectionJournal.allInspections()
        #expect(Set(events.map(\.id)).isSubset(of: Set(journal.map(\.id))))
        #expect(journal.allSatisfy { $0.source == "handheld" })
    }

    @Test("a camera faster than decoding: the oldest waiting frames are dropped and counted, the newest decoded")
    func droppedFramesAreCounted() async throws {
        let setup = try DaemonBench()
        // The same recording declared at 2,000 frames a second: far more than a frame's decoding allows.
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: recording)))
        let header = Array("F4:1 ".utf8)
        let at = try #require(bytes.firstRange(of: header))
        bytes.replaceSubrange(at, with: Array("F2000:1 ".utf8))
        let fast = setup.bench.path("fast.y4m")
        try Data(bytes).write(to: URL(fileURLWithPath: fast))
        let config = setup.bench.path("camera.toml")
        try """
        mode = "inspector"
        validator = "test-handheld"
        store = "\(setup.bench.db)"

        [[camera]]
        name = "fast"
        device = "\(fast)"

        [http]
        listen = "127.0.0.1:0"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.start(config: config)
        let port = try #require(daemon.httpPort)
        var samples: [String: Double] = [:]
        let deadline = Date().addingTimeInterval(15)
        repeat {
            try await Task.sleep(for: .milliseconds(200))
            let metrics = try await LoopbackHTTP.request(port: port, "GET", "/metrics")
            samples = try PrometheusText.samples(metrics.text)
        } while Date() < deadline && (samples[#"farecheck_camera_frames_dropped_total{camera="fast"}"#] ?? 0) < 10
        let dropped = samples[#"farecheck_camera_frames_dropped_total{camera="fast"}"#] ?? 0
        let decoded = samples[#"farecheck_camera_frames_total{camera="fast"}"#] ?? 0
        #expect(dropped >= 10, "\(samples)")
        #expect(decoded > 0)
        #expect(await daemon.stop(signal: SIGTERM, timeout: 5) == 0, "\(daemon.stderr.text)")
    }

    @Test("a camera that is missing or a recording that is not one: a clear error, the daemon keeps running")
    func missingCameraKeepsRunning() async throws {
        let setup = try DaemonBench()
        let notARecording = setup.bench.path("clip.y4m")
        try Data("GIF89a not a recording\n".utf8).write(to: URL(fileURLWithPath: notARecording))
        let config = setup.bench.path("camera.toml")
        try """
        mode = "inspector"
        validator = "test-handheld"
        store = "\(setup.bench.db)"

        [[camera]]
        name = "gone"
        device = "\(setup.bench.path("video7"))"

        [[camera]]
        name = "clip"
        device = "\(notARecording)"

        [http]
        listen = "127.0.0.1:0"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try await DaemonProcess.start(config: config)
        let port = try #require(daemon.httpPort)
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline, !daemon.stderr.text.contains("not a YUV4MPEG2 recording") {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(await daemon.stderr.waitFor("gone: \(setup.bench.path("video7")): no such camera (is it plugged in?)"))
        #expect(daemon.stderr.text.contains("not a YUV4MPEG2 recording"), "\(daemon.stderr.text)")
        // Health says which camera is not there and why; the daemon itself stays up.
        let health = try await LoopbackHTTP.request(port: port, "GET", "/healthz")
        #expect(health.status == 503 && health.text.contains("degraded"), "\(health.text)")
        #expect(health.text.contains("no such camera"), "\(health.text)")
        #expect(daemon.process.isRunning)
        #expect(await daemon.stop(signal: SIGTERM, timeout: 5) == 0)
    }

    @Test("camera settings are checked at start")
    func badCameraSettings() throws {
        let bench = Workbench()
        let cases: [(String, String)] = [
            ("[[camera]]\npixel_format = \"MJPG\"", "camera[1].pixel_format: must be one of GREY, YU12"),
            ("[[camera]]\nwidth = 5", "camera[1].width"),
            ("[[camera]]\nframe_rate = 0", "camera[1].frame_rate"),
            ("[[camera]]\nfocus = 3", "camera[1].focus: unknown key"),
            ("[[camera]]\n[[camera]]\nname = \"camera1\"", "is used by another scanner or camera"),
        ]
        for (text, expected) in cases {
            let path = bench.path("bad.toml")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let run = try bench.farecheck(["daemon", "--config", path, "--check"])
            #expect(run.status == 2, "\(text)")
            #expect(run.stderr.contains(expected), "\(run.stderr)")
        }
        // (--check opens the store and binds the page's port: both the bench's own.)
        try "store = \"\(bench.db)\"\n[[camera]]\n[output]\nsocket = \"\"\n[http]\nlisten = \"127.0.0.1:0\"\n"
            .write(toFile: bench.path("ok.toml"), atomically: true, encoding: .utf8)
        #expect(try bench.farecheck(["daemon", "--config", bench.path("ok.toml"), "--check"]).status == 0)
    }
}
