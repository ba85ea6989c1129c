import ArgumentParser
import FareCore
import Foundation
import Issuing
import Symbols
import Synchronization
import Verification

/// `farecheck-bench video`: farecheck's camera path on recorded sequences, beside ZXingReader, zbarimg and the
/// zxing-cpp wheel reading the same frames.
struct VideoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "video",
        abstract: """
            Frames per second, frame-to-verdict latency and presentations recognised on recorded sequences, beside \
            ZXingReader, zbarimg and the zxing-cpp 3.1.1 wheel on the same frames.
            """,
        discussion: """
            Render the sequences first: scripts/make-bench-video.sh DIRECTORY (recordings at 640×480 and 1280×720 \
            and manifest.tsv, which ticket is in view in which frames). For each recording, farecheck's path runs on \
            one task as `farecheck verify --video` does (Y4MReader, the camera pass, PresentationTracker, a verdict \
            against the demo key for each presentation): frames per second, and the time from a frame being \
            available to the verdicts of the presentations it starts (to the decision that it starts none) at p50 \
            and p99. Then the frames are offered at the recording's frame rate through a FrameQueue, as a camera \
            would: frames dropped, capture to verdict. A presentation is recognised when its ticket is read in at \
            least one frame of its range. The anchors read the same frames (written as PGM): ZXingReader and \
            zbarimg as a process per frame, the zxing-cpp wheel (pip install zxing-cpp==3.1.1) in one Python \
            process, read_barcodes timed alone. A missing anchor is skipped.
            """
    )

    @Argument(help: ArgumentHelp("The directory scripts/make-bench-video.sh rendered into.", valueName: "directory"))
    var directory: String = "Benchmarks/.build/bench-video"
    @Option(help: "Frames that may wait for the decoder when frames come in real time.") var queueCapacity: Int = 2
    @Option(help: "The instant the tickets are verified at (ISO 8601).") var at: String = "2027-01-01T00:00:00Z"
    @Option(help: "The Python that has the zxing-cpp wheel.") var python: String = "python3"
    @Option(help: "The wheel's frame reader.") var wheelScript: String = "Benchmarks/zxing-wheel-frames.py"
    @Flag(help: "Skip the anchors (ZXingReader, zbarimg, the zxing-cpp wheel).") var noCompare = false

    func validate() throws {
        guard queueCapacity >= 1 else { throw ValidationError("--queue-capacity must be at least 1") }
    }

    func run() async throws {
        guard let instant = try? Date(at, strategy: .iso8601) else {
            throw ValidationError("--at must be an ISO 8601 instant, e.g. 2027-01-01T00:00:00Z")
        }
        let manifest = try VideoManifest(directory: directory)
        printLine("machine: \(MachineDescription.current)")
        printLine("load average at the start: \(LoadAverage.current)")
        let verifier = try DemoTrust.verifier(at: instant)
        var anchors: [any VideoAnchor] = []
        if !noCompare {
            anchors = [
                ProcessAnchor.zxingReader, ProcessAnchor.zbarimg,
                WheelAnchor(python: python, script: wheelScript),
            ]
        }
        for sequence in manifest.sequences {
            try await SequenceBenchmark(
                sequence: sequence, verifier: verifier, queueCapacity: queueCapacity, anchors: anchors
            ).run()
        }
        printLine("load average at the end: \(LoadAverage.current)")
    }
}

/// What a recording shows a ticket under, as scripts/make-bench-video.sh names it.
enum ViewingCondition: String, CaseIterable {
    case moving
    case motionBlur = "motion-blur"
    case tilted
    case noisy
    case blurred
    case phoneGlare = "phone-glare"
}

/// One ticket in view: the ground truth of presentations recognised.
struct ExpectedPresentation {
    /// The frames it is in view in.
    var frames: ClosedRange<Int>
    var symbology: Symbology
    /// The file its payload was read from (`ticket-N.bin`), to name it.
    var name: String
    var payload: [UInt8]
    var condition: ViewingCondition
}

/// A recording and the presentations it holds.
struct ManifestSequence {
    var path: String
    var presentations: [ExpectedPresentation]

    var name: String { URL(fileURLWithPath: path).lastPathComponent }
}

/// `manifest.tsv` of scripts/make-bench-video.sh: sequence, first frame, last frame, symbology, payload file,
/// condition; one presentation a line, `#` starts a comment.
struct VideoManifest {
    var sequences: [ManifestSequence] = []

    init(directory: String) throws {
        let path = directory + "/manifest.tsv"
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw CommandFailure.exit(
                "\(path) not found: render the sequences first, scripts/make-bench-video.sh \(directory)")
        }
        for (number, line) in text.split(separator: "\n").enumerated() where !line.hasPrefix("#") {
            let fields = line.split(separator: "\t").map(String.init)
            guard fields.count == 6, let first = Int(fields[1]), let last = Int(fields[2]), first <= last,
                let symbology = Symbology(rawValue: fields[3]), let condition = ViewingCondition(rawValue: fields[5]),
                let payload = FileManager.default.contents(atPath: directory + "/" + fields[4])
            else {
                throw CommandFailure.exit("\(path) line \(number + 1) is not a presentation: \(line)")
            }
            let expected = ExpectedPresentation(
                frames: first...last, symbology: symbology, name: fields[4], payload: Array(payload),
                condition: condition)
            let sequencePath = directory + "/" + fields[0]
            if let index = sequences.firstIndex(where: { $0.path == sequencePath }) {
                sequences[index].presentations.append(expected)
            } else {
                sequences.append(ManifestSequence(path: sequencePath, presentations: [expected]))
            }
        }
        guard !sequences.isEmpty else { throw CommandFailure.exit("\(path) lists no presentations") }
    }
}

/// The published demo key as the only trusted key, as after `farecheck keys import Keys/demo-transit-es256.pub.pem`.
enum DemoTrust {
    static func verifier(at instant: Date) throws -> TicketVerifier {
        let demo = DemoKeys.issuingKeys[0]
        let key = try IssuingKey.parse(demo.text, source: demo.file)
        var trust = TrustSnapshot()
        trust.add(
            TrustedKey(
                family: .fc1, issuer: "demo-transit", keyID: KeyID(key.keyID.hexString), algorithm: key.algorithm.name,
                publicKey: key.privateKey.publicKey))
        return TicketVerifier(trust: trust, clock: FixedClock(instant))
    }
}

/// `/proc/loadavg`'s three figures.
enum LoadAverage {
    static var current: String {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

/// Times in milliseconds, summarised.
struct Milliseconds {
    /// In order, smallest first.
    var values: [Double]
    /// As given (in frame order, for a frame's times).
    var unsorted: [Double]

    init(_ values: [Double]) {
        self.values = values.sorted()
        self.unsorted = values
    }

    /// Nearest rank: the smallest value with at least `fraction` of the values at or below it.
    func percentile(_ fraction: Double) -> Double {
        guard !values.isEmpty else { return .nan }
        let rank = Int((fraction * Double(values.count)).rounded(.up))
        return values[Swift.min(Swift.max(rank, 1), values.count) - 1]
    }

    var p50: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
    var max: Double { values.last ?? .nan }
    var mean: Double { values.isEmpty ? .nan : values.reduce(0, +) / Double(values.count) }

    static func of(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
    }

    static func text(_ value: Double) -> String { String(format: value < 10 ? "%.2f" : "%.1f", value) }

    /// `p50 X ms, p99 Y ms`.
    var summary: String { "p50 \(Self.text(p50)) ms, p99 \(Self.text(p99)) ms" }
}

/// What a reader read frame by frame: for each frame, the bytes of each symbol it read, or a tool's whole output
/// (which holds the bytes of every symbol it read).
struct FrameReads {
    var outputs: [[[UInt8]]]

    /// Whether `payload` was read in the frame.
    func holds(_ payload: [UInt8], inFrame index: Int) -> Bool {
        index < outputs.count && outputs[index].contains { $0.holds(payload) }
    }

    /// The frames of `presentation`'s range in which its payload was read.
    func frames(reading presentation: ExpectedPresentation) -> Int {
        presentation.frames.filter { holds(presentation.payload, inFrame: $0) }.count
    }

    /// Reads that hold no payload in view in their frame (a misread, or a ticket read outside its range).
    func strayReads(_ expected: [ExpectedPresentation]) -> Int {
        var stray = 0
        for (index, outputs) in outputs.enumerated() {
            for output in outputs
            where !expected.contains(where: { $0.frames.contains(index) && output.holds($0.payload) }) {
                stray += 1
            }
        }
        return stray
    }
}

extension Array where Element == UInt8 {
    /// Whether `part` occurs in these bytes, in one piece.
    func holds(_ part: [UInt8]) -> Bool {
        guard !part.isEmpty, part.count <= count else { return part.isEmpty }
        for start in 0...(count - part.count) where self[start] == part[0] {
            if self[start..<(start + part.count)].elementsEqual(part) { return true }
        }
        return false
    }
}

/// An anchor: another reader run on the same frames.
protocol VideoAnchor {
    /// Its name in the figures.
    var name: String { get }
    /// Its name in the per-presentation lines.
    var shortName: String { get }
    /// Why it cannot run here, or `nil` when it can.
    func unavailability() -> String?
    /// Reads each frame (PGM files, in order); the time per frame and the payloads read in it.
    func read(frames: [String]) throws -> (times: Milliseconds, reads: FrameReads)
}

/// A command-line reader started once per frame; its time per frame is the whole process, image loading included.
struct ProcessAnchor: VideoAnchor {
    let name: String
    let shortName: String
    let program: String
    let arguments: [String]
    let installation: String

    /// zxing-cpp 1.4 (Debian's zxing-cpp-tools), Aztec and QR only, the symbols' bytes on standard output.
    static let zxingReader = ProcessAnchor(
        name: "ZXingReader 1.4, a process per frame", shortName: "ZXingReader", program: "ZXingReader",
        arguments: ["-bytes", "-format", "Aztec,QRCode"], installation: "apt-get install zxing-cpp-tools")
    /// zbar 0.23 (QR only: zbar has no Aztec reader), the symbols' text on standard output.
    static let zbarimg = ProcessAnchor(
        name: "zbarimg 0.23, a process per frame", shortName: "zbarimg", program: "zbarimg",
        arguments: ["-q", "--raw", "-Sdisable", "-Sqrcode.enable"], installation: "apt-get install zbar-tools")

    func unavailability() -> String? {
        findTool(program) == nil ? "\(program) is not installed (\(installation))" : nil
    }

    func read(frames: [String]) throws -> (times: Milliseconds, reads: FrameReads) {
        guard let path = findTool(program) else { throw CommandFailure.exit("\(program) is not installed") }
        var times: [Double] = []
        var reads: [[[UInt8]]] = []
        for frame in frames {
            let start = ContinuousClock.now
            let output = runToolBytes(path, arguments + [frame]) ?? []
            times.append(Milliseconds.of(ContinuousClock.now - start))
            reads.append(output.isEmpty ? [] : [output])
        }
        return (Milliseconds(times), FrameReads(outputs: reads))
    }
}

/// The zxing-cpp wheel from PyPI, reading every frame in one Python process (`Benchmarks/zxing-wheel-frames.py`).
struct WheelAnchor: VideoAnchor {
    let python: String
    let script: String
    var name: String { "zxing-cpp wheel, in-process per frame" }
    var shortName: String { "zxing-cpp wheel" }

    private var pythonPath: String? {
        guard python.contains("/") else { return findTool(python) }
        return FileManager.default.isExecutableFile(atPath: python) ? python : nil
    }

    func unavailability() -> String? {
        guard let pythonPath else { return "no Python at \(python) (give --python)" }
        guard FileManager.default.fileExists(atPath: script) else {
            return "\(script) not found (run from the repository root, or give --wheel-script)"
        }
        let check = runTool(pythonPath, ["-c", "import numpy, zxingcpp; print('ok')"]) ?? ""
        return check.hasPrefix("ok") ? nil : "the zxing-cpp wheel is not installed (pip install zxing-cpp==3.1.1)"
    }

    func read(frames: [String]) throws -> (times: Milliseconds, reads: FrameReads) {
        guard let pythonPath, let output = runTool(pythonPath, [script] + frames) else {
            throw CommandFailure.exit("\(script) did not run")
        }
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let version = lines.first, version.hasPrefix("zxing-cpp ") else {
            throw CommandFailure.exit("\(script) printed no version line")
        }
        if version != "zxing-cpp 3.1.1" { printLine("    note: the wheel is \(version), not 3.1.1") }
        lines = Array(lines.dropFirst().prefix(frames.count))
        guard lines.count == frames.count else {
            throw CommandFailure.exit("\(script) read \(lines.count) of \(frames.count) frames")
        }
        var times: [Double] = []
        var reads: [[[UInt8]]] = []
        for line in lines {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            guard fields.count == 2, let milliseconds = Double(fields[0]) else {
                throw CommandFailure.exit("\(script) printed an unreadable line: \(line)")
            }
            times.append(milliseconds)
            reads.append(fields[1].split(separator: ",").compactMap { [UInt8](hex: String($0)) })
        }
        return (Milliseconds(times), FrameReads(outputs: reads))
    }
}

extension Array where Element == UInt8 {
    /// Bytes from hexadecimal digits; `nil` unless the text is pairs of digits.
    init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(digits.count / 2)
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = Self.nibble(digits[index]), let low = Self.nibble(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        self = bytes
    }

    private static func nibble(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// The presentations one of farecheck's runs started, matched to the manifest.
struct Recognition {
    /// For each expected presentation, the frame farecheck's presentation of it started in, if any.
    var firstFrames: [Int?]
    /// Presentations that match no expected one (a payload not shown, or read outside its range).
    var stray: Int

    init(_ started: [Presentation], expected: [ExpectedPresentation]) {
        firstFrames = expected.map { presentation in
            started.first { $0.symbol.bytes == presentation.payload && presentation.frames.contains($0.frame) }?.frame
        }
        stray =
            started.filter { presentation in
                !expected.contains { $0.payload == presentation.symbol.bytes && $0.frames.contains(presentation.frame) }
            }.count
    }

    var recognised: Int { firstFrames.compactMap { $0 }.count }
}

/// The figures for one recording.
struct SequenceBenchmark {
    let sequence: ManifestSequence
    let verifier: TicketVerifier
    let queueCapacity: Int
    let anchors: [any VideoAnchor]

    func run() async throws {
        let loadStart = ContinuousClock.now
        let reader: Y4MReader
        var frames: [VideoFrame] = []
        do {
            reader = try Y4MReader(contentsOfFile: sequence.path)
            while let frame = try reader.nextFrame() { frames.append(frame) }
        } catch {
            throw CommandFailure.exit(error.description)
        }
        let loading = Milliseconds.of(ContinuousClock.now - loadStart)
        let header = reader.header
        let expected = sequence.presentations
        let frameRate = Double(frames.count) / seconds(frames.last.map { $0.time } ?? .zero, plusOneFrameOf: frames)
        printLine("")
        printLine(
            "\(sequence.name): \(frames.count) frames, \(header.width)×\(header.height), "
                + "\(String(format: "%.0f", frameRate)) frames/s, \(expected.count) presentations; "
                + "read from the file at \(String(format: "%.0f", Double(frames.count) / loading * 1000)) frames/s")

        warmUp(frames)
        let decoded = try decodeOneTask(frames, expected: expected)
        let realTime = await decodeInRealTime(frames, frameRate: frameRate, expected: expected)

        var anchorResults: [(anchor: any VideoAnchor, times: Milliseconds, reads: FrameReads)] = []
        if !anchors.isEmpty {
            let directory = try writePGMs(frames)
            defer { try? FileManager.default.removeItem(atPath: directory.path) }
            let files = frames.indices.map { directory.appendingPathComponent(String(format: "%05d.pgm", $0)).path }
            for anchor in anchors {
                if let reason = anchor.unavailability() {
                    printLine("  \(anchor.name): skipped, \(reason)")
                    continue
                }
                let (times, reads) = try anchor.read(frames: files)
                anchorResults.append((anchor, times, reads))
            }
        }

        // The figures.
        let frameTimes = decoded.frameTimes
        printLine(
            "  farecheck, one task (Y4M frame → camera pass → tracker → verdict): "
                + "\(String(format: "%.1f", 1000 / frameTimes.mean)) frames/s; frame-to-verdict \(frameTimes.summary), "
                + "max \(Milliseconds.text(frameTimes.max)) ms")
        let inView = Set(expected.flatMap { Array($0.frames) })
        let split = Dictionary(grouping: frameTimes.unsorted.indices) { inView.contains($0) }
        printLine(
            "    frames with a ticket in view: "
                + Milliseconds((split[true] ?? []).map { frameTimes.unsorted[$0] }).summary
                + "; frames without: " + Milliseconds((split[false] ?? []).map { frameTimes.unsorted[$0] }).summary)
        printLine(
            "    frames starting a presentation (to its verdict): \(decoded.verdictTimes.summary); "
                + "verdicts: \(decoded.verdicts.map { "\($0.value) \($0.key.rawValue)" }.sorted().joined(separator: ", "))"
        )
        printLine(
            "    presentations recognised: \(decoded.recognition.recognised)/\(expected.count)"
                + (decoded.recognition.stray > 0 ? ", \(decoded.recognition.stray) stray" : ""))
        printLine(
            "  farecheck, real time (\(String(format: "%.0f", frameRate)) frames/s offered to a FrameQueue of "
                + "\(queueCapacity), decoded on one task): \(realTime.dropped) of \(frames.count) frames dropped; "
                + "capture-to-verdict \(realTime.verdictTimes.summary); presentations recognised "
                + "\(realTime.recognition.recognised)/\(expected.count)")
        for anchor in anchorResults {
            let recognised = expected.filter { anchor.reads.frames(reading: $0) > 0 }.count
            let stray = anchor.reads.strayReads(expected)
            printLine(
                "  \(anchor.anchor.name): \(anchor.times.summary) (mean \(Milliseconds.text(anchor.times.mean)) ms); "
                    + "presentations recognised \(recognised)/\(expected.count)"
                    + (stray > 0 ? ", \(stray) stray reads" : "")
                    + "; mean time per frame, farecheck ÷ it: \(String(format: "%.2f", frameTimes.mean / anchor.times.mean))"
            )
        }
        printLine("  per presentation (farecheck: first frame read, of its range; anchors: frames read of its range):")
        for (index, presentation) in expected.enumerated() {
            var line =
                "    \(presentation.name) \(presentation.symbology.rawValue) \(presentation.condition.rawValue), "
                + "frames \(presentation.frames.lowerBound)-\(presentation.frames.upperBound): farecheck "
            if let first = decoded.recognition.firstFrames[index] {
                line += "from frame \(first)"
            } else {
                line += "not read"
            }
            if realTime.recognition.firstFrames[index] == nil { line += " (real time: not read)" }
            for anchor in anchorResults {
                line +=
                    "; \(anchor.anchor.shortName) \(anchor.reads.frames(reading: presentation))"
            }
            printLine(line)
        }

        // Where a frame's time goes: the camera pass, the one before it and zbar alone, on the same frames.
        printLine("  first passes alone, same frames (where the frame time goes):")
        var zbarAlone = SymbolScanner.Configuration(usesFallbacks: false)
        zbarAlone.engines = [.zbar]
        let variants: [(String, SymbolScanner.Configuration)] = [
            ("the camera pass (zxing quick, the Aztec locator on 2 bull's-eyes, cheapest grids)", .camera),
            (
                "the camera pass before (zxing quick, the Aztec locator on 6 bull's-eyes, every grid, zbar)",
                SymbolScanner.Configuration(usesFallbacks: false)
            ),
            ("zbar alone", zbarAlone),
        ]
        for (label, configuration) in variants {
            let (times, reads) = firstPassAlone(configuration, frames)
            let recognised = expected.filter { reads.frames(reading: $0) > 0 }.count
            printLine(
                "    \(label): \(times.summary) (mean \(Milliseconds.text(times.mean)) ms); presentations recognised "
                    + "\(recognised)/\(expected.count)")
        }

        // The goals of issue 24.
        let best = anchorResults.map { anchor in
            (anchor.anchor.name, expected.filter { anchor.reads.frames(reading: $0) > 0 }.count)
        }.max { $0.1 < $1.1 }
        if header.height == 720 {
            let met = frameTimes.p99 < 33
            printLine(
                "  goal p99 frame-to-verdict < 33 ms at 720p: \(Milliseconds.text(frameTimes.p99)) ms, "
                    + (met ? "met" : "NOT met"))
        }
        if let best {
            let met = decoded.recognition.recognised >= best.1
            printLine(
                "  goal presentations recognised ≥ the best anchor (\(best.0), \(best.1)): "
                    + "\(decoded.recognition.recognised), \(met ? "met" : "NOT met")")
        } else if !anchors.isEmpty {
            printLine("  goal presentations recognised ≥ the best anchor: no anchor ran")
        }
    }

    /// The stream's length: the last frame's time plus one frame.
    private func seconds(_ last: Duration, plusOneFrameOf frames: [VideoFrame]) -> Double {
        let lastSeconds = Milliseconds.of(last) / 1000
        guard frames.count > 1 else { return 1 }
        return lastSeconds + lastSeconds / Double(frames.count - 1)
    }

    /// First-use costs (zxing's tables, the verifier's key) out of the figures: a few frames and a verdict, on a
    /// reader of their own.
    private func warmUp(_ frames: [VideoFrame]) {
        var reader = PresentationReader()
        for frame in frames.prefix(5) { _ = reader.presentations(in: frame) }
        if let payload = sequence.presentations.first?.payload { _ = try? verifier.verify(payload) }
    }

    /// Each frame in turn on this task, as fast as they decode.
    private func decodeOneTask(
        _ frames: [VideoFrame], expected: [ExpectedPresentation]
    ) throws -> (
        frameTimes: Milliseconds, verdictTimes: Milliseconds, verdicts: [VerdictKind: Int], recognition: Recognition
    ) {
        var reader = PresentationReader()
        var frameTimes: [Double] = []
        var verdictTimes: [Double] = []
        var verdicts: [VerdictKind: Int] = [:]
        var started: [Presentation] = []
        frameTimes.reserveCapacity(frames.count)
        for frame in frames {
            let available = ContinuousClock.now
            let presentations = reader.presentations(in: frame)
            for presentation in presentations {
                let verdict = try verifier.verify(presentation.symbol.bytes)
                verdicts[verdict.kind, default: 0] += 1
            }
            let elapsed = Milliseconds.of(ContinuousClock.now - available)
            frameTimes.append(elapsed)
            if !presentations.isEmpty { verdictTimes.append(elapsed) }
            started += presentations
        }
        return (
            Milliseconds(frameTimes), Milliseconds(verdictTimes), verdicts, Recognition(started, expected: expected)
        )
    }

    /// One scanner configuration, frame by frame: the time per frame and what it read.
    private func firstPassAlone(
        _ configuration: SymbolScanner.Configuration, _ frames: [VideoFrame]
    ) -> (times: Milliseconds, reads: FrameReads) {
        let scanner = SymbolScanner(configuration: configuration)
        var times: [Double] = []
        var reads: [[[UInt8]]] = []
        for frame in frames {
            let start = ContinuousClock.now
            let symbols = scanner.scan(frame.image)
            times.append(Milliseconds.of(ContinuousClock.now - start))
            reads.append(symbols.map(\.bytes))
        }
        return (Milliseconds(times), FrameReads(outputs: reads))
    }

    /// The frames offered at the recording's frame rate by a capture thread to a ``FrameQueue``, decoded on this
    /// task with a verdict per presentation, as a camera source runs.
    private func decodeInRealTime(
        _ frames: [VideoFrame], frameRate: Double, expected: [ExpectedPresentation]
    ) async -> (dropped: Int, verdictTimes: Milliseconds, recognition: Recognition) {
        let queue = FrameQueue(capacity: queueCapacity)
        let offered = OfferTimes(count: frames.count)
        let interval = Duration.seconds(1 / frameRate)
        let start = ContinuousClock.now + .milliseconds(20)
        let capture = Thread {
            for (index, frame) in frames.enumerated() {
                let due = start + interval * index
                let wait = due - ContinuousClock.now
                if wait > .zero { Thread.sleep(forTimeInterval: Milliseconds.of(wait) / 1000) }
                offered.record(index)
                queue.offer(frame)
            }
            queue.finish()
        }
        capture.start()
        var reader = PresentationReader()
        var started: [Presentation] = []
        var verdictTimes: [Double] = []
        _ = await queue.decodePresentations(with: &reader) { presentation, frame in
            _ = try? verifier.verify(presentation.symbol.bytes)
            if let capturedAt = offered.instant(of: frame.index) {
                verdictTimes.append(Milliseconds.of(ContinuousClock.now - capturedAt))
            }
            started.append(presentation)
        }
        return (queue.droppedFrames, Milliseconds(verdictTimes), Recognition(started, expected: expected))
    }

    /// The frames as binary PGM files in a new temporary directory, for the anchors.
    private func writePGMs(_ frames: [VideoFrame]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "farecheck-bench-video-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (index, frame) in frames.enumerated() {
            var data = Data("P5\n\(frame.image.width) \(frame.image.height)\n255\n".utf8)
            data.append(contentsOf: frame.image.pixels)
            try data.write(to: directory.appendingPathComponent(String(format: "%05d.pgm", index)))
        }
        return directory
    }
}

/// When the capture thread offered each frame, read by the decoding task.
final class OfferTimes: Sendable {
    private let instants: Mutex<[ContinuousClock.Instant?]>

    init(count: Int) { instants = Mutex(Array(repeating: nil, count: count)) }

    func record(_ index: Int) {
        let now = ContinuousClock.now
        instants.withLock { $0[index] = now }
    }

    func instant(of index: Int) -> ContinuousClock.Instant? { instants.withLock { $0[index] } }
}
