import ArgumentParser
import Daemon
import DaemonConfig
import Foundation
import Logging
import Scanners
import Signatures
import SystemCalls
import TrustFollowing
import Verification

// The log level is an option of the daemon; swift-log's type is not ours, so the conformance is retroactive.
// swift-format-ignore: AvoidRetroactiveConformances
extension Logger.Level: @retroactive ExpressibleByArgument {}

/// `farecheck daemon`: the long-running validator for gates and handhelds.
struct DaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "daemon",
        abstract:
            "Run the validator: scanners in, verdicts out (journal, beep, JSON lines, socket, gate hook, web page).",
        discussion: """
            Reads the configuration file (TOML; every key is documented in Config/farecheck.toml), opens the \
            store and the scanners, and inspects every scan until SIGTERM or SIGINT. Each verdict is written to \
            the journal in the store before the scanner beeps, the page shows it, or the gate opens.

            --demo needs no configuration, no hardware and no keys: it creates a demo store with the embedded \
            demo keys, renders the demo tickets (valid, expired, not yet valid, revoked, forged, tampered) as \
            images and feeds them through the pipeline one every two seconds, with the inspector page on \
            http://127.0.0.1:8080/ (change with --http).

            Under systemd (Type=notify) the daemon reports READY=1 once every listener is bound and pets the \
            watchdog. Exit status 0 after a clean shutdown, 2 when it cannot start (bad configuration, store \
            or socket unusable).
            """
    )

    @Option(help: ArgumentHelp("The configuration file.", valueName: "path"))
    var config: String?
    @Flag(help: "Run on embedded demo data: demo keys, demo ticket images, no hardware.") var demo = false
    @Option(
        help: ArgumentHelp(
            "The HTTP listen address, overriding the configuration (port 0: any free port).", valueName: "host:port"))
    var http: String?
    @Option(
        help: ArgumentHelp(
            "A directory for --demo's store and images (default: a new temporary one).", valueName: "path"))
    var out: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info
    @Flag(
        help: ArgumentHelp(
            "Check the configuration and exit (status 0 when it is usable, 2 when not).",
            discussion: """
                Tries what the daemon does at start: opens (or makes) the store and the journal, binds each listener \
                and lets it go, looks for each scanner, camera and bench source and reads each file; warns when the \
                store holds no keys. With a daemon already running on the store, its listeners and devices are left \
                alone.
                """))
    var check = false

    func validate() throws {
        if demo, config != nil { throw ValidationError("--demo and --config cannot be combined") }
        if let http, !http.isEmpty, DaemonConfiguration.splitAddress(http) == nil {
            throw ValidationError("--http must be HOST:PORT, e.g. 127.0.0.1:8080")
        }
    }

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "farecheck")
        var configuration: DaemonConfiguration
        if demo {
            configuration = try demoConfiguration()
        } else {
            do {
                configuration = try DaemonConfiguration.load(path: config ?? DaemonConfiguration.defaultPath)
            } catch {
                throw CommandFailure.exit("bad configuration: \(error.description)")
            }
        }
        if let http { configuration.httpListen = http.isEmpty ? nil : http }
        // A stand-alone gate following its publishers: `[[trust.source]]` of the same file, read by the server's reader.
        var trustSources = TrustFollowingConfiguration()
        if !demo {
            do {
                trustSources = try TrustFollowingConfiguration.load(path: config ?? DaemonConfiguration.defaultPath)
            } catch {
                throw CommandFailure.exit("bad configuration: \(error.message)")
            }
        }
        if check {
            if !trustSources.sources.isEmpty {
                let house = GateTrustHandOver.housePath(store: configuration.store)
                let names = trustSources.sources.map { "\($0.name) (\($0.kind.rawValue), every \($0.period))" }
                printLine(
                    "following \(trustSources.sources.count) trust source(s) itself: \(names.joined(separator: ", ")); "
                        + "its rounds and held changes in \(house) (farecheck-server trust status --db \(house))")
            }
            if let sync = configuration.sync {
                do {
                    _ = try sync.resolve(file: config ?? DaemonConfiguration.defaultPath)
                } catch {
                    throw CommandFailure.exit("bad configuration: \(error.description)")
                }
            }
            if let path = DaemonConfiguration.pinSecretPath(explicit: configuration.pinSecretFile) {
                do {
                    _ = try PINSecret(file: path)
                } catch {
                    throw CommandFailure.exit("bad configuration: [inspector] pin_secret_file: \(error.message)")
                }
            }
            let file = demo ? nil : config ?? DaemonConfiguration.defaultPath
            for warning in configuration.securityWarnings(file: file) { printError("warning: \(warning)") }
            // What the daemon does at start, tried: the store and journal, each listener, device and file.
            let findings = await DaemonPreflight.run(configuration)
            for finding in findings { printError("farecheck: \(finding)") }
            let problems = findings.filter(\.isProblem).count
            if problems > 0 {
                throw CommandFailure.exit(
                    "\(config ?? DaemonConfiguration.defaultPath): not usable (\(problems) "
                        + "\(problems == 1 ? "problem" : "problems") above)")
            }
            printLine("\(config ?? DaemonConfiguration.defaultPath): configuration is usable")
            return
        }
        do {
            try await FarecheckDaemon(configuration: configuration, trustSources: trustSources, logger: logger).run()
        } catch let error as CommandFailure {
            throw CommandFailure.exit(error.message)
        } catch let error as ExitCode {
            throw error
        } catch let error as DaemonStartError {
            throw CommandFailure.exit(error.message)
        } catch {
            throw CommandFailure.exit("the daemon stopped: \(error)")
        }
    }

    private func demoConfiguration() throws -> DaemonConfiguration {
        let directory = try out ?? Self.privateDirectory()
        if let out, !FileManager.default.fileExists(atPath: out) {
            do {
                try FileManager.default.createDirectory(
                    atPath: out, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw CommandFailure.exit("cannot create \(out): \(error)")
            }
        }
        let images = directory + "/tickets"
        // Made here, not found: a directory or link planted at this path by another user is refused (mkdir fails),
        // never written through.
        do {
            _ = try systemCall { mkdir(images, 0o700) }
        } catch {
            guard out != nil, error.rawValue == EEXIST, Self.isOwnDirectory(images) else {
                throw CommandFailure.exit("cannot create \(images): \(String(cString: strerror(error.rawValue)))")
            }
        }
        let storePath = directory + "/demo.sqlite"
        _ = try DemoCommand.prepare(directory: images, storePath: storePath)
        var configuration = DaemonConfiguration()
        configuration.mode = .gate
        configuration.validator = "demo-gate"
        configuration.store = storePath
        configuration.imageSources = [.init(name: "demo-bench", path: images, interval: 2, loop: true)]
        configuration.socket = directory + "/verdicts.sock"
        configuration.httpListen = "127.0.0.1:8080"
        printError("farecheck daemon --demo: store \(storePath), ticket images in \(images)")
        return configuration
    }

    /// A new directory only this user can enter, with a name nobody can guess beforehand (`mkdtemp`), under
    /// `$TMPDIR` (or /tmp): another user cannot plant a file or a symbolic link in it ahead of the demo.
    static func privateDirectory() throws -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/farecheck-demo-XXXXXXXX").utf8CString)
        do {
            _ = try systemCall { template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } }
        } catch {
            throw CommandFailure.exit(
                "cannot create a private directory in \(base): \(String(cString: strerror(error.rawValue)))")
        }
        // mkdtemp wrote the directory's name into the template.
        let made = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        // mkdtemp makes it 0700 whatever the umask; said again in case a libc differs.
        _ = try? systemCall { chmod(made, 0o700) }
        return made
    }

    /// Whether `path` is a real directory (not a link) owned by this user.
    static func isOwnDirectory(_ path: String) -> Bool {
        var status = stat()
        guard (try? systemCall({ lstat(path, &status) })) != nil else { return false }
        return status.st_mode & 0o170000 == 0o040000 && status.st_uid == getuid()
    }
}
