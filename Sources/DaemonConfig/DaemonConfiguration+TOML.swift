import DeviceSettings
import FareCore
import Foundation
import TOMLDocument
import Verification

// Reading the configuration from TOML text (TOMLReader, TOMLTableReader): pure, no file is opened, so it is tested and fuzzed on
// text.

extension DaemonConfiguration {
    /// Parses and checks configuration text; `file` names it in errors.
    public static func parse(_ text: String, file: String = "farecheck.toml") throws(ConfigurationError)
        -> DaemonConfiguration
    {
        let table: TOMLTable
        do {
            table = try TOMLReader.read(text)
        } catch {
            throw ConfigurationError(file: file, key: nil, message: "\(error.message) (line \(error.line))")
        }
        var reader = TableReader(document: table, file: file)
        var configuration = DaemonConfiguration()
        if let mode = try reader.string("mode") {
            guard let parsed = InspectionMode(rawValue: mode) else {
                throw reader.error("mode", "must be \"gate\" or \"inspector\" (got \"\(mode)\")")
            }
            configuration.mode = parsed
        }
        if let validator = try reader.string("validator") {
            guard !validator.isEmpty else { throw reader.error("validator", "must not be empty") }
            configuration.validator = validator
        }
        if let store = try reader.string("store") {
            guard !store.isEmpty else { throw reader.error("store", "must be a file path") }
            configuration.store = store
        }

        if var verification = try reader.table("verification") {
            if let formats = try verification.strings("formats") {
                var accepted: Set<TicketFormat> = []
                for name in formats {
                    guard let format = TicketFormat(name: name) else {
                        throw verification.error(
                            "formats", "unknown format \"\(name)\" (known: \(TicketFormat.allNames))")
                    }
                    accepted.insert(format)
                }
                configuration.formats = accepted
            }
            if let prefixes = try verification.strings("prefixes") { configuration.prefixes = prefixes }
            if let skew = try verification.number("clock_skew", in: 0...86400) { configuration.clockSkew = skew }
            if let tolerance = try verification.number("clock_floor_tolerance", in: 0...86400) {
                configuration.clockFloorTolerance = tolerance
            }
            if let window = try verification.number("replay_window", in: 0...(30 * 86400)) {
                configuration.replayWindow = window
            }
            if let products = try verification.strings("single_use_products") {
                configuration.singleUseProducts = products
            }
            if let accept = try verification.bool("accept_test_keys") { configuration.acceptTestKeys = accept }
            try verification.finish()
        }

        for (index, var entry) in try reader.tables("scanner").enumerated() {
            let name = try entry.string("name") ?? "scanner\(index + 1)"
            guard let device = try entry.string("device"), !device.isEmpty else {
                throw entry.error("device", "is required: a device node such as /dev/ttyACM0, or \"auto\"")
            }
            let protocolText = try entry.string("protocol") ?? "ssi"
            guard let protocolName = ScannerProtocolName(rawValue: protocolText) else {
                throw entry.error(
                    "protocol", "must be one of ssi, raw, hidpos, snapi, wedge (got \"\(protocolText)\")")
            }
            let baud = try entry.number("baud", in: 300...921_600).map { Int($0) } ?? 9600
            let layout = try entry.string("layout") ?? "us"
            guard ["us", "de"].contains(layout) else { throw entry.error("layout", "must be \"us\" or \"de\"") }
            var triggerMode = SSITriggerMode.presentation
            if let text = try entry.string("trigger_mode") {
                guard let mode = SSITriggerMode(rawValue: text) else {
                    throw entry.error(
                        "trigger_mode", "must be \"presentation\", \"level\" or \"host\" (got \"\(text)\")")
                }
                // Only SSI sets a scanner's mode; accepting the key elsewhere would promise what is not done.
                guard protocolName == .ssi else {
                    throw entry.error("trigger_mode", "applies to ssi scanners only (this one is \(protocolText))")
                }
                triggerMode = mode
            }
            if configuration.scanners.contains(where: { $0.name == name }) {
                throw entry.error("name", "\"\(name)\" is used by another scanner")
            }
            try entry.finish()
            configuration.scanners.append(
                Scanner(
                    name: name, device: device, protocolName: protocolName, baud: baud, layout: layout,
                    triggerMode: triggerMode))
        }

        for (index, var entry) in try reader.tables("source").enumerated() {
            let name = try entry.string("name") ?? "bench\(index + 1)"
            guard let path = try entry.string("images"), !path.isEmpty else {
                throw entry.error("images", "is required: a directory of ticket images")
            }
            let interval = try entry.number("interval", in: 0...3600) ?? 2
            let loop = try entry.bool("loop") ?? true
            try entry.finish()
            configuration.imageSources.append(ImageSource(name: name, path: path, interval: interval, loop: loop))
        }

        for (index, var entry) in try reader.tables("camera").enumerated() {
            let name = try entry.string("name") ?? "camera\(index + 1)"
            let device = try entry.string("device") ?? "/dev/video0"
            guard !device.isEmpty else {
                throw entry.error("device", "must name a video node such as /dev/video0, or a .y4m recording")
            }
            var request = CameraRequest()
            if let width = try entry.number("width", in: 16...8192) { request.width = Int(width) }
            if let height = try entry.number("height", in: 16...8192) { request.height = Int(height) }
            if let rate = try entry.number("frame_rate", in: 1...240) { request.framesPerSecond = rate }
            if let text = try entry.string("pixel_format") {
                guard let format = PixelFormat(fourCC: text), format.luminanceLayout != nil else {
                    let readable = PixelFormat.readable.map(\.description).joined(separator: ", ")
                    throw entry.error(
                        "pixel_format",
                        "must be one of \(readable) (got \"\(text)\"; leave it out and libv4l2 converts MJPG and the rest)"
                    )
                }
                request.pixelFormat = format
            }
            let absence = try entry.number("new_presentation_after", in: 0.1...86_400) ?? 2
            if configuration.scanners.contains(where: { $0.name == name })
                || configuration.cameras.contains(where: { $0.name == name })
            {
                throw entry.error("name", "\"\(name)\" is used by another scanner or camera")
            }
            try entry.finish()
            configuration.cameras.append(
                Camera(name: name, device: device, request: request, newPresentationAfter: absence))
        }

        if var output = try reader.table("output") {
            if let stdout = try output.bool("stdout") { configuration.stdout = stdout }
            if let socket = try output.string("socket") { configuration.socket = socket.isEmpty ? nil : socket }
            try output.finish()
        }

        if var gate = try reader.table("gate") {
            guard let command = try gate.strings("command"), let program = command.first, !program.isEmpty else {
                throw gate.error(
                    "command", "is required: the program and its arguments, e.g. [\"/usr/local/bin/open-gate\"]")
            }
            let timeout = try gate.number("timeout", in: 0.01...60) ?? 2
            var verdicts = GateHook.Verdicts.only([.valid])
            if let names = try gate.strings("verdicts") {
                do {
                    verdicts = try GateHook.Verdicts(names: names)
                } catch {
                    throw gate.error("verdicts", error.description)
                }
            }
            let holderData = try gate.bool("holder_data") ?? false
            try gate.finish()
            configuration.gateHook = GateHook(
                command: command, timeout: timeout, verdicts: verdicts, holderData: holderData)
        }

        if var http = try reader.table("http") {
            if let listen = try http.string("listen") {
                if listen.isEmpty {
                    configuration.httpListen = nil
                } else {
                    guard splitAddress(listen) != nil else {
                        throw http.error("listen", "must be HOST:PORT, e.g. 127.0.0.1:8080 (got \"\(listen)\")")
                    }
                    configuration.httpListen = listen
                }
            }
            configuration.http = try parseHTTP(&http)
            try http.finish()
        }

        if var inspector = try reader.table("inspector") {
            if let timeout = try inspector.number("session_timeout", in: 60...(7 * 86400)) {
                configuration.sessionTimeout = timeout
            }
            if let secret = try inspector.string("pin_secret_file") {
                guard !secret.isEmpty else { throw inspector.error("pin_secret_file", "must be a file path") }
                configuration.pinSecretFile = secret
            }
            if let length = try inspector.number("min_pin_length", in: 4...64) {
                configuration.minimumPINLength = Int(length)
            }
            if let failures = try inspector.number("lockout_failures", in: 1...100) {
                configuration.lockoutFailures = Int(failures)
            }
            if let seconds = try inspector.number("lockout_seconds", in: 1...86400) {
                configuration.lockoutSeconds = seconds
            }
            try inspector.finish()
        }

        if var log = try reader.table("log") {
            if let holder = try log.bool("holder_data") { configuration.logHolderData = holder }
            try log.finish()
        }

        if var table = try reader.table("sync") {
            let sync = try parseSync(&table)
            // Replay detection reads the journal back over the replay window: the journal keeps at least that.
            if sync.journalKeepDays > 0, Double(sync.journalKeepDays) * 86400 < configuration.replayWindow {
                throw table.error(
                    "journal_keep_days",
                    "must cover [verification] replay_window (\(Int(configuration.replayWindow)) s), which replay "
                        + "detection reads back from the journal (or 0 to keep every inspection)")
            }
            configuration.sync = sync
        }
        // `[trust]` and its `[[trust.source]]` entries are read by TrustFollowing's reader (the server's too), which
        // `farecheck daemon` runs on the same file: a stand-alone gate following its publishers itself.
        if reader.contains("trust") { _ = try reader.table("trust") }
        try reader.finish()

        if configuration.scanners.isEmpty, configuration.imageSources.isEmpty, configuration.cameras.isEmpty {
            throw ConfigurationError(
                file: file, key: "scanner",
                message: "no [[scanner]], [[camera]] or [[source]]: the daemon would have nothing to read")
        }
        return configuration
    }

    private static func parseHTTP(_ http: inout TableReader) throws(ConfigurationError) -> HTTPSettings {
        var settings = HTTPSettings()
        if let hosts = try http.strings("hosts") {
            guard !hosts.isEmpty, hosts.allSatisfy({ !$0.isEmpty && !$0.contains("/") && !$0.contains(" ") }) else {
                throw http.error(
                    "hosts", "must list host names or addresses, e.g. [\"handheld-17.local\", \"10.0.0.17\"]")
            }
            settings.hosts = hosts
        }
        if let listen = try http.string("tls_listen") {
            guard splitAddress(listen) != nil else {
                throw http.error("tls_listen", "must be HOST:PORT, e.g. 0.0.0.0:8443 (got \"\(listen)\")")
            }
            settings.tlsListen = listen
        }
        settings.tlsCertificate = try http.string("tls_cert")
        settings.tlsKey = try http.string("tls_key")
        if settings.tlsListen != nil, settings.tlsCertificate == nil || settings.tlsKey == nil {
            throw http.error(
                settings.tlsCertificate == nil ? "tls_cert" : "tls_key",
                "is required with tls_listen: the page's certificate chain and its private key (PEM)")
        }
        if settings.tlsListen == nil, settings.tlsCertificate != nil || settings.tlsKey != nil {
            throw http.error("tls_listen", "is required with tls_cert and tls_key: the address to serve TLS on")
        }
        if let holder = try http.bool("gate_holder_data") { settings.gateHolderData = holder }
        if let code = try http.string("language") {
            guard let language = LanguageTag(code) else {
                throw http.error(
                    "language",
                    "must be a language tag such as \"da\" or \"de-AT\", of a built-in language or a catalog in "
                        + "languages_dir (got \"\(code)\")")
            }
            settings.language = language
        }
        if let directory = try http.string("languages_dir") {
            guard !directory.isEmpty else { throw http.error("languages_dir", "must be a directory path") }
            settings.languagesDirectory = directory
            settings.languagesDirectoryConfigured = true
        }
        if let zone = try http.string("time_zone") {
            guard TimeZone(identifier: zone) != nil else {
                throw http.error("time_zone", "must be a time zone name such as \"Europe/Berlin\" (got \"\(zone)\")")
            }
            settings.timeZone = zone
        }
        if let cap = try http.number("max_connections", in: 1...10000) { settings.maxConnections = Int(cap) }
        if let timeout = try http.number("request_timeout", in: 1...300) { settings.requestTimeout = timeout }
        if let timeout = try http.number("idle_timeout", in: 1...3600) { settings.idleTimeout = timeout }
        if let timeout = try http.number("handshake_timeout", in: 1...300) { settings.handshakeTimeout = timeout }
        return settings
    }

    private static func parseSync(_ table: inout TableReader) throws(ConfigurationError) -> Sync {
        // One server (`url`), or several replicas on one database (`urls`), failed over to in this order.
        let urlKey: String
        let urls: [String]
        switch (try table.string("url"), try table.strings("urls")) {
        case (nil, nil):
            throw table.error(
                "url",
                "is required (or urls): the validation API's base URL, e.g. \"https://validation.example.org\"")
        case (.some, .some):
            throw table.error("urls", "give url (one server) or urls (several), not both")
        case (let url?, nil):
            guard !url.isEmpty else {
                throw table.error(
                    "url", "is required: the validation API's base URL, e.g. \"https://validation.example.org\"")
            }
            (urlKey, urls) = ("url", [url])
        case (nil, let list?):
            guard !list.isEmpty else {
                throw table.error(
                    "urls", "must name at least one server, e.g. [\"https://a.example.org\", \"https://b.example.org\"]"
                )
            }
            (urlKey, urls) = ("urls", list)
        }
        var parsedURLs: [(url: String, scheme: String, host: String)] = []
        for url in urls {
            guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), let host = parsed.host,
                scheme == "https" || scheme == "http"
            else {
                throw table.error(urlKey, "must be an https:// URL (http:// only for a test server), got \"\(url)\"")
            }
            if parsedURLs.contains(where: { $0.url == url }) {
                throw table.error(urlKey, "names \"\(url)\" twice")
            }
            parsedURLs.append((url, scheme, host))
        }
        let deviceID = try table.string("device_id")
        let token = try table.string("token")
        let tokenFile = try table.string("token_file")
        switch (token, tokenFile) {
        case (nil, nil):
            throw table.error(
                "token_file", "is required (or token): the device token from `farecheck-server devices add`")
        case (.some, .some):
            throw table.error("token", "give token or token_file, not both")
        default: break
        }
        guard let anchors = try table.strings("anchors"), !anchors.isEmpty else {
            throw table.error(
                "anchors", "is required: the PEM files of the agency's trust anchors (\"demo\" for the demo anchor)")
        }
        var sync = Sync(url: urls[0], token: token, tokenFile: tokenFile, anchors: anchors)
        sync.urls = urls
        sync.deviceID = deviceID
        if let allow = try table.bool("allow_demo_anchor") { sync.allowDemoAnchor = allow }
        if let interval = try table.number("interval", in: 1...86400) { sync.interval = interval }
        if let online = try table.bool("online_check") { sync.onlineCheck = online }
        if let deadline = try table.number("online_deadline_ms", in: 10...10000) {
            sync.onlineDeadlineMilliseconds = Int(deadline)
        }
        if let stale = try table.number("stale_after", in: 1...(365 * 86400)) { sync.staleAfter = stale }
        if let days = try table.number("journal_keep_days", in: 0...3650) {
            guard days == days.rounded() else {
                throw table.error("journal_keep_days", "must be a whole number of days")
            }
            sync.journalKeepDays = Int(days)
        }
        if let cap = try table.number("max_body_bytes", in: 1024...Double(1 << 30)) { sync.maximumBodyBytes = Int(cap) }
        if let timeout = try table.number("request_timeout", in: 1...600) { sync.requestTimeout = timeout }
        sync.caFile = try table.string("ca_file")
        sync.clientCertificate = try table.string("client_cert")
        sync.clientKey = try table.string("client_key")
        switch (sync.clientCertificate, sync.clientKey) {
        case (.some, nil):
            throw table.error("client_key", "is required with client_cert: the client certificate's private key (PEM)")
        case (nil, .some):
            throw table.error("client_cert", "is required with client_key: the client certificate (PEM)")
        default: break
        }
        for (url, scheme, host) in parsedURLs where scheme != "https" {
            // The device token and every inspection would cross the network readable and changeable by anyone
            // on the way: plain http only for a server on this machine (a test server).
            guard isLoopback(host) else {
                throw table.error(
                    urlKey, "must be https:// (plain http:// only for a server on loopback), got \"\(url)\"")
            }
            if sync.clientCertificate != nil {
                throw table.error(
                    "client_cert",
                    "needs an https:// url: a client certificate is never sent over plain http (\"\(url)\")")
            }
            if sync.caFile != nil {
                throw table.error(
                    "ca_file", "needs an https:// url: plain http has no certificate to check (\"\(url)\")")
            }
        }
        try table.finish()
        return sync
    }
}

/// Whether `host` (from a URL or an address) is this machine's loopback: `localhost`, 127.0.0.0/8 or `::1`.
public func isLoopback(_ host: String) -> Bool {
    var name = host.lowercased()
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
    let octets = name.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
}

/// Reads one TOML table of the configuration, refusing leftover keys (typos) with where they are documented.
private typealias TableReader = TOMLTableReader<ConfigurationError>

extension TOMLTableReader where Failure == ConfigurationError {
    /// A reader of the document `table` of `file`, its errors naming the file and the key.
    fileprivate init(document table: TOMLTable, file: String) {
        self.init(table: table, unknownKeyHint: "check the spelling against Config/farecheck.toml") { problem in
            ConfigurationError(file: file, key: problem.key, message: problem.message)
        }
    }
}
