import DeviceSettings
import FareCore
import Foundation
import SyncConfig
import Verification

/// Everything `farecheck daemon` is told by its configuration file (TOML; see `Config/farecheck.toml` for every
/// key with its meaning and default).
///
/// This file is the model; `DaemonConfiguration+TOML.swift` reads it from TOML text (strictly: an unknown key, a
/// value of the wrong type or out of range is refused at start with the key and the reason, so a typo never leaves
/// a gate half-configured), and `DaemonConfiguration+Files.swift` reads the files it names.
public struct DaemonConfiguration: Sendable, Equatable {
    /// One scanner to open.
    public struct Scanner: Sendable, Equatable {
        /// A name for logs, metrics and the journal (default `scanner1`, `scanner2`, …).
        public var name: String
        /// The device node, or `auto` for the first attached scanner that speaks ``protocolName``.
        public var device: String
        public var protocolName: ScannerProtocolName
        /// Serial speed (ssi, raw).
        public var baud: Int
        /// Keyboard layout of a wedge scanner (`us`, `de`).
        public var layout: String
        /// The trigger mode an SSI scanner is set to at every connect (`trigger_mode`; default `presentation`).
        public var triggerMode: SSITriggerMode

        public init(
            name: String, device: String, protocolName: ScannerProtocolName, baud: Int = 9600, layout: String = "us",
            triggerMode: SSITriggerMode = .presentation
        ) {
            self.name = name
            self.device = device
            self.protocolName = protocolName
            self.baud = baud
            self.layout = layout
            self.triggerMode = triggerMode
        }
    }

    /// A bench source: image files fed through the pipeline as if scanned, for demos and bench tests.
    public struct ImageSource: Sendable, Equatable {
        public var name: String
        /// A directory of PNG/JPEG/PNM images (or one image file).
        public var path: String
        /// Seconds between two images.
        public var interval: Double
        /// Start again from the first image after the last.
        public var loop: Bool

        public init(name: String, path: String, interval: Double, loop: Bool) {
            self.name = name
            self.path = path
            self.interval = interval
            self.loop = loop
        }
    }

    /// A camera (V4L2) whose frames are decoded into presentations; or a YUV4MPEG2 recording played as one.
    public struct Camera: Sendable, Equatable {
        /// A name for logs, metrics and the journal (default `camera1`, `camera2`, …).
        public var name: String
        /// The video node (`/dev/video0`), or a `.y4m` recording played at its own rate for bench work.
        public var device: String
        /// The size, pixel format and rate wanted; the nearest the camera offers is taken.
        public var request: CameraRequest
        /// Seconds a ticket must be out of view before showing it again counts as a new presentation.
        public var newPresentationAfter: Double

        public init(
            name: String, device: String, request: CameraRequest = CameraRequest(), newPresentationAfter: Double = 2
        ) {
            self.name = name
            self.device = device
            self.request = request
            self.newPresentationAfter = newPresentationAfter
        }

        /// Whether ``device`` names a recording rather than a camera.
        public var isRecording: Bool { device.lowercased().hasSuffix(".y4m") }
    }

    /// The gate hook: a command run for each verdict (e.g. the relay that opens the gate).
    public struct GateHook: Sendable, Equatable {
        /// The program and its arguments (no shell).
        public var command: [String]
        /// Seconds before the command is killed.
        public var timeout: Double
        /// The verdicts that run it (default: only `valid`); `["*"]` in the file for every verdict.
        public var verdicts: Verdicts
        /// Whether `FARECHECK_EVENT` carries holder data (`holder_data`, default `false`): a relay needs the verdict,
        /// not the passenger's name.
        public var holderData: Bool

        public init(
            command: [String], timeout: Double = 2, verdicts: Verdicts = .only([.valid]), holderData: Bool = false
        ) {
            self.command = command
            self.timeout = timeout
            self.verdicts = verdicts
            self.holderData = holderData
        }

        /// The verdicts that run the hook: every one, or those listed.
        public enum Verdicts: Sendable, Equatable {
            /// Every verdict (`"*"` in the list).
            case every
            /// Only the kinds listed (none for an empty list).
            case only(Set<VerdictKind>)

            /// The wildcard that stands for every verdict in `[gate] verdicts`.
            public static let wildcard = "*"

            /// The verdicts a `[gate] verdicts` list names: each a verdict kind's name (as in the event line), or
            /// `"*"` for every verdict.
            ///
            /// - Throws: the first name that is neither, as a sentence naming it and every accepted name; a name
            ///   that matched no verdict used to leave the gate shut without a word.
            public init(names: [String]) throws(UnknownName) {
                var kinds: Set<VerdictKind> = []
                var every = false
                for name in names {
                    if name == Self.wildcard {
                        every = true
                    } else if let kind = VerdictKind(rawValue: name) {
                        kinds.insert(kind)
                    } else {
                        throw UnknownName(name: name)
                    }
                }
                self = every ? .every : .only(kinds)
            }

            /// Whether a verdict of `kind` runs the hook.
            public func contains(_ kind: VerdictKind) -> Bool {
                switch self {
                case .every: true
                case .only(let kinds): kinds.contains(kind)
                }
            }

            /// A name in `[gate] verdicts` that is no verdict.
            public struct UnknownName: Error, Equatable, CustomStringConvertible {
                /// The name as written.
                public var name: String

                /// `unknown verdict "vaild" (known: valid, …, or "*" for every verdict)`.
                public var description: String {
                    "unknown verdict \"\(name)\" (known: \(VerdictKind.allNames), "
                        + "or \"\(Verdicts.wildcard)\" for every verdict)"
                }
            }
        }
    }

    /// Sync with the online validation API (`[sync]`): the settings the `Sync` module builds its client from,
    /// defined below both so that neither imports the other.
    public typealias Sync = SyncSettings

    /// The page's settings beyond its listen address (`[http]`).
    public struct HTTPSettings: Sendable, Equatable {
        /// The host names the page answers to (`hosts`); `nil`: the listen address and the localhost names (for a
        /// wildcard address also the host name and the interfaces' addresses).
        public var hosts: [String]? = nil
        /// A second listener that serves the page over TLS (`tls_listen`, `HOST:PORT`), with `tls_cert` and
        /// `tls_key`; the session cookie is then `Secure` there.
        public var tlsListen: String? = nil
        public var tlsCertificate: String? = nil
        public var tlsKey: String? = nil
        /// Whether a gate's page shows holder data (`gate_holder_data`); an inspector's page shows it to the
        /// logged-in session only.
        public var gateHolderData = false
        /// The page's language (`language`: a tag such as `da`, of a built-in language or a catalog in
        /// ``languagesDirectory``); `nil`: the browser's, else English. The switch on the page overrides it for that
        /// browser.
        public var language: LanguageTag? = nil
        /// The agency's catalogs (`languages_dir`): each `LANG.json` adds a language or overrides a built-in one.
        public var languagesDirectory = "/etc/farecheck/languages"
        /// Whether `languages_dir` was written (a missing directory is then said; the default may be absent).
        public var languagesDirectoryConfigured = false
        /// The time zone the page says dates and times in (`time_zone`, an IANA name such as `Europe/Berlin`);
        /// `nil`: the validator's own (`TZ`, `/etc/localtime`).
        public var timeZone: String? = nil
        /// Connections served at once (`max_connections`).
        public var maxConnections = 64
        /// Seconds from a request's first byte until it is read in full (`request_timeout`).
        public var requestTimeout: Double = 10
        /// Seconds a kept-alive connection may stay idle (`idle_timeout`).
        public var idleTimeout: Double = 60
        /// Seconds a TLS handshake may take (`handshake_timeout`).
        public var handshakeTimeout: Double = 10

        public init() {}

        /// The host and port of ``tlsListen``.
        public var tlsAddress: (host: String, port: Int)? {
            tlsListen.flatMap { DaemonConfiguration.splitAddress($0) }
        }
    }

    /// `gate` or `inspector`.
    public var mode: InspectionMode = .gate
    /// This validator's name (vehicle and door, or handheld id): shown on the page and sent with inspections.
    public var validator: String = ProcessInfo.processInfo.hostName
    /// The SQLite store.
    public var store: String = "/var/lib/farecheck/farecheck.sqlite"

    /// Payload formats accepted; others get the verdict `unsupported`. Default: every format farecheck reads.
    public var formats: Set<TicketFormat> = Set(TicketFormat.allCases)
    /// Text prefixes accepted for FC1 base45 payloads.
    public var prefixes: [String] = ["FC1:"]
    /// Seconds the clock may be off when checking validity windows.
    public var clockSkew: Double = 120
    /// Seconds the device clock may read earlier than the trusted-time floor before the verdicts that depend on
    /// the instant become `clock-untrusted` (`clock_floor_tolerance`); also how far ahead of the device clock a
    /// signing time or a server's `Date` may be and still move the floor.
    public var clockFloorTolerance: Double = 300
    /// Seconds within which a ticket seen again counts as seen before (or replayed, at a gate).
    public var replayWindow: Double = 3600
    /// Products that may pass a gate only once within the replay window.
    public var singleUseProducts: [String] = ["single"]
    /// Whether tickets signed by test keys (UK RSP6 keys the published list marks `is_test`) are judged as tickets,
    /// with the warning `test-key` (`accept_test_keys`): for a test bench, never in service (default false).
    public var acceptTestKeys = false

    public var scanners: [Scanner] = []
    public var imageSources: [ImageSource] = []
    public var cameras: [Camera] = []

    /// Write each verdict as a JSON line on standard output.
    public var stdout: Bool = true
    /// A unix socket that streams each verdict as a JSON line to every connected client; `nil` for none.
    public var socket: String? = nil
    public var gateHook: GateHook? = nil
    /// The HTTP listen address (`127.0.0.1:8080`); `nil` to serve no HTTP.
    public var httpListen: String? = "127.0.0.1:8080"
    public var http = HTTPSettings()
    /// Idle seconds after which an inspector's session ends (inspector mode).
    public var sessionTimeout: Double = 8 * 3600
    /// The file holding the secret mixed into PIN hashes (`[inspector] pin_secret_file`); `nil`: the systemd
    /// credential `farecheck-pin-secret` if the daemon was given one, else none.
    public var pinSecretFile: String? = nil
    /// The shortest PIN a login accepts without a warning in the log (`[inspector] min_pin_length`).
    public var minimumPINLength = 6
    /// Failed logins (per staff id, and per client address) that lock further attempts (`lockout_failures`).
    public var lockoutFailures = 5
    /// Seconds of the first lock; each further one doubles, up to an hour (`lockout_seconds`).
    public var lockoutSeconds: Double = 60
    /// Whether verdict lines on standard output and log lines carry holder data (`[log] holder_data`).
    public var logHolderData = false
    /// Sync with the validation API; `nil` (no `[sync]` table) for a validator that is only ever updated by hand.
    public var sync: Sync? = nil

    /// The default configuration file.
    public static let defaultPath = "/etc/farecheck/farecheck.toml"

    /// The name of the systemd credential that holds the PIN secret (`LoadCredential=farecheck-pin-secret:…`).
    public static let pinSecretCredential = "farecheck-pin-secret"

    /// The PIN secret's file: `explicit` if given, else the systemd credential when `$CREDENTIALS_DIRECTORY` has
    /// it, else `nil`.
    public static func pinSecretPath(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        if let explicit, !explicit.isEmpty { return explicit }
        guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else { return nil }
        let path = directory + "/" + pinSecretCredential
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    public init() {}

    /// The host and port of ``httpListen``.
    public var httpAddress: (host: String, port: Int)? {
        guard let httpListen else { return nil }
        return Self.splitAddress(httpListen)
    }

    /// `HOST:PORT` (or `[v6]:PORT`) split in two; `nil` when it is not one.
    public static func splitAddress(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            return nil
        }
        return (host, port)
    }
}

/// A configuration that cannot be used: which file, which key, and why.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    /// The configuration file.
    public var file: String
    /// The key, dotted (`gate.timeout`, `scanner[2].protocol`), when one key is at fault.
    public var key: String?
    /// Why, and what would be accepted.
    public var message: String

    public var description: String {
        if let key { return "\(file): \(key): \(message)" }
        return "\(file): \(message)"
    }
}
