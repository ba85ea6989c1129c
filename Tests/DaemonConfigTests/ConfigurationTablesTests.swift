import DaemonConfig
import DeviceSettings
import FareCore
import Testing

/// Each table of the configuration file read into the model, and what a table that is not right is refused with.
@Suite("Configuration tables")
struct ConfigurationTablesTests {
    /// A scanner, so that the daemon has something to read.
    static let scanner = "[[scanner]]\ndevice = \"auto\"\n"

    @Test("a file with one scanner and nothing else has the documented defaults")
    func defaults() throws {
        let configuration = try DaemonConfiguration.parse(Self.scanner)
        #expect(configuration.mode == .gate)
        #expect(configuration.store == "/var/lib/farecheck/farecheck.sqlite")
        #expect(configuration.formats == Set(TicketFormat.allCases))
        #expect(configuration.prefixes == ["FC1:"])
        #expect(configuration.clockSkew == 120 && configuration.clockFloorTolerance == 300)
        #expect(configuration.replayWindow == 3600 && configuration.singleUseProducts == ["single"])
        #expect(configuration.stdout && configuration.socket == nil)
        #expect(configuration.gateHook == nil && configuration.sync == nil)
        #expect(configuration.httpListen == "127.0.0.1:8080")
        #expect(configuration.sessionTimeout == 8 * 3600 && configuration.pinSecretFile == nil)
        #expect(configuration.imageSources.isEmpty && configuration.cameras.isEmpty)
        let scanner = try #require(configuration.scanners.first)
        #expect(scanner.name == "scanner1" && scanner.device == "auto")
        #expect(scanner.protocolName == .ssi && scanner.baud == 9600 && scanner.layout == "us")
        #expect(scanner.triggerMode == .presentation)
    }

    @Test("the top-level keys and [verification]: mode, validator, store, formats, prefixes, windows, products")
    func topLevelAndVerification() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            mode = "inspector"
            validator = "handheld-17"
            store = "/srv/farecheck/store.sqlite"
            [verification]
            formats = ["vdv-ka"]
            prefixes = ["FC1:", "TEST:"]
            clock_skew = 30
            clock_floor_tolerance = 600
            replay_window = 7200
            single_use_products = ["single", "short-hop"]
            \(Self.scanner)
            """)
        #expect(configuration.mode == .inspector)
        #expect(configuration.validator == "handheld-17")
        #expect(configuration.store == "/srv/farecheck/store.sqlite")
        #expect(configuration.formats == [.vdvKA])
        #expect(configuration.prefixes == ["FC1:", "TEST:"])
        #expect(configuration.clockSkew == 30 && configuration.clockFloorTolerance == 600)
        #expect(configuration.replayWindow == 7200)
        #expect(configuration.singleUseProducts == ["single", "short-hop"])
    }

    @Test("[[scanner]]: every protocol, its speed and layout, names given or counted")
    func scanners() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            [[scanner]]
            device = "/dev/ttyACM0"
            protocol = "raw"
            baud = 115200
            [[scanner]]
            name = "rear-door"
            device = "/dev/input/event3"
            protocol = "wedge"
            layout = "de"
            [[scanner]]
            device = "auto"
            protocol = "hidpos"
            """)
        #expect(configuration.scanners.map(\.name) == ["scanner1", "rear-door", "scanner3"])
        #expect(configuration.scanners.map(\.protocolName) == [.raw, .wedge, .hidpos])
        #expect(configuration.scanners.map(\.baud) == [115_200, 9600, 9600])
        #expect(configuration.scanners.map(\.layout) == ["us", "de", "us"])
    }

    @Test("[[camera]]: size, rate, pixel format and absence read; a recording is told from a camera")
    func cameras() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            [[camera]]
            width = 640
            height = 480
            frame_rate = 15
            pixel_format = "YUYV"
            new_presentation_after = 0.5
            [[camera]]
            name = "bench"
            device = "/srv/bench/door.Y4M"
            """)
        let camera = try #require(configuration.cameras.first)
        #expect(camera.name == "camera1" && camera.device == "/dev/video0" && !camera.isRecording)
        #expect(camera.request == CameraRequest(width: 640, height: 480, pixelFormat: .yuyv, framesPerSecond: 15))
        #expect(camera.newPresentationAfter == 0.5)
        let recording = try #require(configuration.cameras.last)
        #expect(recording.name == "bench" && recording.isRecording)
        // The defaults: 1280 × 720 at 30 frames a second in whatever format suits, 2 s out of view.
        #expect(recording.request == CameraRequest() && recording.request.pixelFormat == nil)
        #expect(recording.newPresentationAfter == 2)
        // A camera alone is something to read: no scanner is needed.
        #expect(configuration.scanners.isEmpty)
    }

    @Test("[[camera]] pixel_format: a format farecheck does not read is refused with the ones it reads")
    func cameraPixelFormat() {
        for text in ["MJPG", "H264", "YUV", "grey"] {
            let refused = refusal(of: "[[camera]]\npixel_format = \"\(text)\"")
            #expect(refused?.key == "camera[1].pixel_format")
            #expect(
                refused?.message
                    == "must be one of GREY, YU12, YV12, NV12, NV21, YUYV, UYVY (got \"\(text)\"; leave it out and "
                    + "libv4l2 converts MJPG and the rest)",
                "\(String(describing: refused))")
        }
        let cases: [(String, String)] = [
            ("[[camera]]\nwidth = 8", "camera[1].width: must be between 16 and 8192"),
            ("[[camera]]\nframe_rate = 0", "camera[1].frame_rate: must be between 1 and 240"),
            ("[[camera]]\ndevice = \"\"", "camera[1].device: must name a video node such as /dev/video0"),
            (
                Self.scanner + "name = \"front\"\n[[camera]]\nname = \"front\"",
                "camera[1].name: \"front\" is used by another scanner or camera"
            ),
        ]
        for (text, expected) in cases {
            #expect(refusal(of: text)?.description.contains(expected) == true, "\(text)")
        }
    }

    @Test("[[source]]: a directory of images, its pace and whether it loops")
    func imageSources() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            [[source]]
            images = "/srv/tickets"
            [[source]]
            name = "slow"
            images = "/srv/other"
            interval = 10
            loop = false
            """)
        #expect(
            configuration.imageSources == [
                .init(name: "bench1", path: "/srv/tickets", interval: 2, loop: true),
                .init(name: "slow", path: "/srv/other", interval: 10, loop: false),
            ])
        #expect(refusal(of: "[[source]]\ninterval = 1")?.description.contains("source[1].images: is required") == true)
    }

    @Test("[output], [gate] and [inspector]: the socket, the hook's command, timeout and verdicts, the session")
    func outputGateInspector() throws {
        let configuration = try DaemonConfiguration.parse(
            """
            \(Self.scanner)
            [output]
            stdout = false
            socket = "/run/farecheck/v.sock"
            [gate]
            command = ["/usr/local/bin/open-gate", "--door", "1"]
            timeout = 0.5
            [inspector]
            session_timeout = 600
            """)
        #expect(!configuration.stdout && configuration.socket == "/run/farecheck/v.sock")
        #expect(
            configuration.gateHook
                == .init(command: ["/usr/local/bin/open-gate", "--door", "1"], timeout: 0.5, verdicts: .only([.valid])))
        #expect(configuration.sessionTimeout == 600)
        // An empty socket path is no socket.
        #expect(try DaemonConfiguration.parse(Self.scanner + "[output]\nsocket = \"\"").socket == nil)
        let cases: [(String, String)] = [
            ("[gate]\ntimeout = 1", "gate.command: is required"),
            ("[gate]\ncommand = [\"\"]", "gate.command: is required"),
            ("[gate]\ncommand = [\"/bin/true\"]\ntimeout = 61", "gate.timeout: must be between 0.01 and 60"),
            ("[inspector]\nsession_timeout = 30", "inspector.session_timeout: must be between 60 and 604800"),
            ("[inspector]\npin_secret_file = \"\"", "inspector.pin_secret_file: must be a file path"),
            ("mode = \"turnstile\"", "mode: must be \"gate\" or \"inspector\" (got \"turnstile\")"),
            ("validator = \"\"", "validator: must not be empty"),
        ]
        for (text, expected) in cases {
            // Keys before the first table header are the file's own, not the scanner's.
            let refused = refusal(of: text + "\n" + Self.scanner)
            #expect(refused?.description.contains(expected) == true, "\(String(describing: refused))")
        }
    }

    @Test("[http] listen: HOST:PORT or [v6]:PORT, a port that exists, or \"\" for no page")
    func listenAddresses() throws {
        for (listen, host, port) in [("0.0.0.0:80", "0.0.0.0", 80), ("[fe80::1]:65535", "fe80::1", 65535)] {
            let configuration = try DaemonConfiguration.parse(Self.scanner + "[http]\nlisten = \"\(listen)\"")
            #expect(configuration.httpAddress?.host == host && configuration.httpAddress?.port == port)
        }
        for listen in ["127.0.0.1:65536", "127.0.0.1:", ":8080", "127.0.0.1:http", "127.0.0.1:-1"] {
            let refused = refusal(of: Self.scanner + "[http]\nlisten = \"\(listen)\"")
            #expect(refused?.key == "http.listen", "\(listen)")
            #expect(refused?.message == "must be HOST:PORT, e.g. 127.0.0.1:8080 (got \"\(listen)\")")
        }
    }

    @Test("a misspelt key is refused in every table, named with its table, before the daemon starts")
    func unknownKeys() {
        let cases: [(String, String)] = [
            ("modus = \"gate\"\n" + Self.scanner, "modus"),
            ("[verification]\nclock_skwe = 10\n" + Self.scanner, "verification.clock_skwe"),
            (Self.scanner + "[[scanner]]\ndevice = \"auto\"\nbaudrate = 9600", "scanner[2].baudrate"),
            ("[[camera]]\nfps = 30", "camera[1].fps"),
            ("[[source]]\nimages = \"/srv\"\nimage = \"/srv\"", "source[1].image"),
            (Self.scanner + "[output]\nsockets = \"/run/v.sock\"", "output.sockets"),
            (Self.scanner + "[gate]\ncommand = [\"/bin/true\"]\ncomand = [\"/bin/true\"]", "gate.comand"),
            (Self.scanner + "[http]\nlisten_on = \"127.0.0.1:1\"", "http.listen_on"),
            (Self.scanner + "[inspector]\nsession = 60", "inspector.session"),
            (
                Self.scanner + "[sync]\nurl = \"https://a.example.org\"\ntoken = \"t\"\nanchors = [\"demo\"]\n"
                    + "intervall = 60",
                "sync.intervall"
            ),
        ]
        for (text, key) in cases {
            let refused = refusal(of: text)
            #expect(refused?.key == key, "\(String(describing: refused))")
            #expect(refused?.message == "unknown key (check the spelling against Config/farecheck.toml)")
        }
    }

    @Test("a key of the wrong kind (a value for a table, a table for a list) names what it must be")
    func wrongShapes() {
        let cases: [(String, String, String)] = [
            ("verification = 1\n" + Self.scanner, "verification", "must be a table ([verification])"),
            ("scanner = \"auto\"", "scanner", "must be an array of tables ([[scanner]])"),
            ("scanner = [\"auto\"]", "scanner", "must hold only tables"),
            (Self.scanner + "[verification]\nprefixes = \"FC1:\"", "verification.prefixes", "must be a list"),
            (Self.scanner + "[verification]\nprefixes = [1]", "verification.prefixes", "must hold only strings"),
            (Self.scanner + "[verification]\nclock_skew = \"2m\"", "verification.clock_skew", "must be a number"),
        ]
        for (text, key, message) in cases {
            let refused = refusal(of: text)
            #expect(refused?.key == key, "\(String(describing: refused))")
            #expect(refused?.message.hasPrefix(message) == true, "\(String(describing: refused))")
        }
    }

    @Test("a file with nothing to read from is refused, naming the tables that would give it something")
    func nothingToRead() {
        let refused = refusal(of: "mode = \"gate\"\n[http]\nlisten = \"127.0.0.1:8080\"")
        #expect(refused?.key == "scanner")
        #expect(refused?.message == "no [[scanner]], [[camera]] or [[source]]: the daemon would have nothing to read")
        #expect(refused?.file == "farecheck.toml")
    }
}
