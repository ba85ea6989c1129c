import Foundation
import TestSupport
import Testing

/// `farecheck scan --video` and `farecheck verify --video` on recordings rendered from issued tickets.
@Suite("farecheck scan and verify --video")
struct VideoCLITests {
    let bench = Workbench()
    /// The Aztec ticket moving (frames 0-7), out of view 1.5 s (8-13), back (14-17), then the QR ticket (18-23).
    let recording = Fixtures.path("video/handheld-320x240-gray.y4m")

    func json(_ run: Run) -> [[String: Any]] { run.jsonLines }

    @Test("--json: one object per presentation, with its first frame, symbology and payload")
    func scanVideoJSON() throws {
        let run = try bench.farecheck(["scan", "--video", recording, "--json"])
        #expect(run.status == 0)
        let objects = json(run)
        #expect(objects.map { $0["frame"] as? Int } == [0, 18])
        #expect(objects.map { $0["symbology"] as? String } == ["aztec", "qr"])
        let aztec = try Fixtures.bytes("video/ticket-aztec.bin")
        let qr = try Fixtures.bytes("video/ticket-qr.bin")
        #expect(
            objects.map { $0["payloadBase64"] as? String }
                == [Data(aztec).base64EncodedString(), Data(qr).base64EncodedString()])
        #expect(run.stderr.contains("24 frames, 2 presentations"))
    }

    @Test("--new-presentation-after: the ticket shown again after a shorter absence is a new presentation")
    func absenceIsConfigurable() throws {
        let run = try bench.farecheck(["scan", "--video", recording, "--json", "--new-presentation-after", "1"])
        #expect(json(run).map { $0["frame"] as? Int } == [0, 14, 18])
        let refused = try bench.farecheck(["scan", "--video", recording, "--new-presentation-after", "0"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("--new-presentation-after"))
    }

    @Test("4:2:0 recordings are read as well as grey ones")
    func yuv420() throws {
        let run = try bench.farecheck(["scan", "--video", Fixtures.path("video/handheld-320x240-420.y4m")])
        #expect(run.status == 0)
        #expect(
            run.text.hasPrefix("\(Fixtures.path("video/handheld-320x240-420.y4m")) frame 0 (0.0 s): aztec, 161 bytes"))
    }

    @Test("a file that is not YUV4MPEG2, or a recording cut inside a frame: a clear error and status 2")
    func badFiles() throws {
        let png = try bench.farecheck(["scan", "--video", Fixtures.path("video/ticket-aztec.png")])
        #expect(png.status == 2)
        #expect(png.stderr.contains("not a YUV4MPEG2 recording"))

        let bytes = try Fixtures.bytes("video/handheld-320x240-gray.y4m")
        let cut = bench.path("cut.y4m")
        try Data(bytes.prefix(100_000)).write(to: URL(fileURLWithPath: cut))
        let truncated = try bench.farecheck(["scan", "--video", cut, "--json"])
        #expect(truncated.status == 2)
        #expect(truncated.stderr.contains("ends inside frame 1"))
        // What was read before the cut is still reported.
        #expect(json(truncated).map { $0["frame"] as? Int } == [0])

        let missing = try bench.farecheck(["scan", "--video", bench.path("nothing.y4m")])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("no such file"))
        #expect(try bench.farecheck(["scan", "--video", recording, Fixtures.path("video/ticket-qr.png")]).status != 0)
    }

    @Test("verify --video: one verdict per presentation")
    func verifyVideo() throws {
        #expect(
            try bench.farecheck([
                "keys", "import", repositoryRoot + "/Keys/demo-transit-es256.pub.pem", "--issuer", "demo-transit",
            ]).status == 0)
        let run = try bench.farecheck([
            "verify", "--video", recording, "--json", "--at", "2027-01-01T00:00:00Z", "--new-presentation-after", "1",
        ])
        #expect(run.status == 0)
        let verdicts = json(run)
        #expect(verdicts.count == 3)
        #expect(verdicts.allSatisfy { $0["verdict"] as? String == "valid" })
        #expect(
            verdicts.map { $0["ticketId"] as? String } == ["0a0a0a0a0a0a0a0a", "0a0a0a0a0a0a0a0a", "0b0b0b0b0b0b0b0b"])

        let expired = try bench.farecheck(["verify", "--video", recording, "--at", "2040-01-01T00:00:00Z"])
        #expect(expired.status == 1)
        #expect(expired.text.components(separatedBy: "EXPIRED").count == 3)
    }
}
