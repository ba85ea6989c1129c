import DaemonConfig
import FareCore
import Foundation
import Glibc
import NIOCore
import NIOPosix
import Presentation
import TrustStore

/// What `farecheck daemon --check` tries before it says a configuration is usable: what the daemon will do at start,
/// done once and undone. It opens (or makes) the store and the journal, binds each listener and lets it go, looks
/// for each device and file, and warns when the store holds no key (every scan would read `unknown-key`).
///
/// A daemon already running on the same store holds its listeners and devices: the check says so and leaves them
/// alone rather than reporting them in use.
public enum DaemonPreflight {
    /// One thing the check found.
    public enum Finding: Sendable, Equatable, CustomStringConvertible {
        /// The daemon would not start, or not do its work: the configuration is not usable.
        case problem(String)
        /// The daemon would start, but something deserves a look (an absent scanner, an empty store).
        case warning(String)
        /// What the check did not try, and why.
        case note(String)

        public var description: String {
            switch self {
            case .problem(let text): text
            case .warning(let text): "warning: \(text)"
            case .note(let text): "note: \(text)"
            }
        }

        public var isProblem: Bool {
            if case .problem = self { return true }
            return false
        }
    }

    /// Tries what the daemon does at start with `configuration`; the findings in the order the daemon meets them.
    public static func run(_ configuration: DaemonConfiguration) async -> [Finding] {
        var findings: [Finding] = []
        let running = DaemonLock.holder(of: configuration.store)
        if let running {
            findings.append(
                .note(
                    "a daemon (pid \(running)) runs on the store \(configuration.store): its listeners and devices "
                        + "are in use by it and were not tried"))
        }
        findings += store(configuration, running: running != nil)
        if running == nil {
            findings += await listeners(configuration)
        }
        findings += devices(configuration)
        findings += files(configuration)
        return findings
    }

    /// Opens the store (making it and the journal, as the daemon does, when no daemon runs on it) and counts its
    /// keys.
    static func store(_ configuration: DaemonConfiguration, running: Bool) -> [Finding] {
        let store: TrustStore
        do {
            store = try TrustStore(
                path: configuration.store, ifMissing: running ? .refuse : .create,
                journal: running ? .usesExisting : .journals)
        } catch {
            return [.problem("store: \(error.description)")]
        }
        if (try? store.hasKeys()) == false {
            let until =
                configuration.sync == nil
                ? "; import keys first (`farecheck keys import`, or configure [sync])"
                : " until the first sync round brings keys"
            return [.warning("the store \(configuration.store) holds no keys: every scan reads unknown-key\(until)")]
        }
        return []
    }

    /// Binds each listener and lets it go; makes the verdict socket's directory.
    static func listeners(_ configuration: DaemonConfiguration) async -> [Finding] {
        var findings: [Finding] = []
        if let socket = configuration.socket {
            let directory = (socket as NSString).deletingLastPathComponent
            if !directory.isEmpty {
                try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                if access(directory, W_OK) != 0 {
                    let code = errno
                    findings.append(
                        .problem(
                            "[output] socket \(socket): cannot make a socket in \(directory) (\(NetworkErrorText.systemReason(code))); "
                                + "under systemd, RuntimeDirectory=farecheck makes /run/farecheck"))
                }
            }
        }
        let addresses: [(address: (host: String, port: Int)?, setting: String)] = [
            (configuration.httpAddress, "[http] listen (or --http)"),
            (configuration.http.tlsAddress, "[http] tls_listen"),
        ]
        for (address, setting) in addresses {
            guard let address else { continue }
            do {
                let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .bind(host: address.host, port: address.port).get()
                try? await channel.close()
            } catch let error as IOError {
                findings.append(
                    .problem(
                        NetworkErrorText.listening(
                            on: "\(address.host):\(address.port)", errno: error.errnoCode, setting: setting)))
            } catch {
                findings.append(.problem("\(setting): cannot listen on \(address.host):\(address.port): \(error)"))
            }
        }
        return findings
    }

    /// Looks for each scanner's, camera's and bench source's device or file.
    static func devices(_ configuration: DaemonConfiguration) -> [Finding] {
        var findings: [Finding] = []
        let fileManager = FileManager.default
        for scanner in configuration.scanners where scanner.device != "auto" {
            if !fileManager.fileExists(atPath: scanner.device) {
                findings.append(
                    .warning(
                        "scanner \(scanner.name): \(scanner.device) is absent now; the daemon starts without it and "
                            + "opens it when it appears"))
            } else if access(scanner.device, R_OK | W_OK) != 0 {
                let code = errno
                findings.append(
                    .problem(
                        "scanner \(scanner.name): \(scanner.device): \(NetworkErrorText.systemReason(code)) for this user (the udev rules "
                            + "in Udev/ give the farecheck group access)"))
            }
        }
        for camera in configuration.cameras {
            if !fileManager.fileExists(atPath: camera.device) {
                let absent =
                    camera.isRecording
                    ? .problem("camera \(camera.name): there is no recording at \(camera.device)")
                    : Finding.warning(
                        "camera \(camera.name): \(camera.device) is absent now; the daemon starts without it and "
                            + "opens it when it appears")
                findings.append(absent)
            } else if access(camera.device, R_OK) != 0 {
                let code = errno
                findings.append(
                    .problem(
                        "camera \(camera.name): \(camera.device): \(NetworkErrorText.systemReason(code)) for this user")
                )
            }
        }
        for source in configuration.imageSources {
            if !fileManager.fileExists(atPath: source.path) {
                findings.append(.problem("source \(source.name): there is no image or directory at \(source.path)"))
            } else if access(source.path, R_OK) != 0 {
                let code = errno
                findings.append(
                    .problem(
                        "source \(source.name): \(source.path): \(NetworkErrorText.systemReason(code)) for this user"))
            }
        }
        return findings
    }

    /// Reads the page's TLS certificate and key, and looks for the gate hook's program.
    static func files(_ configuration: DaemonConfiguration) -> [Finding] {
        var findings: [Finding] = []
        let http = configuration.http
        if http.tlsAddress != nil, let certificate = http.tlsCertificate, let key = http.tlsKey {
            do {
                _ = try PageTLS.context(certificateFile: certificate, keyFile: key)
            } catch {
                findings.append(.problem("[http] tls_cert, tls_key (\(certificate), \(key)): \(error)"))
            }
        }
        if let program = configuration.gateHook?.command.first, access(program, X_OK) != 0 {
            let code = errno
            let relative =
                program.hasPrefix("/")
                ? ""
                : " (a relative path is taken from the daemon's working directory, / under systemd; no PATH search)"
            findings.append(.problem("[gate] command: \(program): \(NetworkErrorText.systemReason(code))\(relative)"))
        }
        findings += languages(configuration.http)
        return findings
    }

    /// The page's catalogs as the daemon will load them: a refused one is a problem (the daemon goes on without it),
    /// one with entries missing a warning, and a note naming every language the page will speak.
    static func languages(_ http: DaemonConfiguration.HTTPSettings) -> [Finding] {
        let loaded = pageLanguages(http)
        let spoken = loaded.languages.catalogs.map { "\($0.about.language) (\($0.about.name))" }
        return loaded.findings + [.note("the inspector page speaks \(spoken.joined(separator: ", "))")]
    }

    /// The built-in catalogs and `[http] languages_dir`'s, and what loading them found: a refused catalog and a
    /// configured language with no catalog (problems), a catalog with entries missing (a warning). The daemon loads
    /// them with this at start and logs the findings; `--check` prints them.
    static func pageLanguages(_ http: DaemonConfiguration.HTTPSettings) -> (
        languages: PageLanguages, findings: [Finding]
    ) {
        let languages = PageLanguages.load(
            directory: http.languagesDirectory, required: http.languagesDirectoryConfigured)
        var findings: [Finding] = languages.findings.map { $0.refused ? .problem("\($0)") : .warning("\($0)") }
        if let language = http.language, !languages.speaks(language) {
            findings.append(
                .problem(
                    "[http] language \"\(language)\": no catalog, built in or in \(http.languagesDirectory) (the page "
                        + "would speak the browser's language)"))
        }
        return (languages, findings)
    }
}
