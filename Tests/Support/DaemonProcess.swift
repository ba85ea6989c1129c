import Foundation
import Glibc
import ScannerSimulation

/// A `farecheck daemon` child process with a configuration file of its own, for end-to-end tests.
public final class DaemonProcess {
    public let process = Process()
    public let stdout: OutputCollector
    public let stderr: OutputCollector

    /// Starts `farecheck daemon --config <config>` with `environment` added, and waits until it logs that it is
    /// ready (or gives up after `timeout`, throwing with what it printed). The deadline is generous: a debug build
    /// beside `stress-ng --cpu 2` took more than 30 s to print its first line (issue 53). Waits with `Task.sleep`, never holding
    /// one of the few threads that every test shares.
    ///
    /// Under `clock` (a wrong wall clock), the `faketime` wrapper is the child, and the daemon its child in turn:
    /// signals go to the daemon (``pid``).
    public static func start(
        config: String, arguments: [String] = [], environment: [String: String] = [:], clock: FakeTime? = nil,
        timeout: Double = 120
    ) async throws -> DaemonProcess {
        try await start(
            arguments: ["daemon", "--config", config] + arguments, environment: environment, clock: clock,
            timeout: timeout)
    }

    /// Starts `farecheck` with exactly `arguments` (e.g. `daemon --demo`) and waits until it is ready.
    public static func start(
        arguments: [String], environment: [String: String] = [:], clock: FakeTime? = nil, timeout: Double = 120
    ) async throws -> DaemonProcess {
        let daemon = try DaemonProcess(arguments: arguments, environment: environment, clock: clock)
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if daemon.stderr.lines.contains(where: { $0.contains("ready in") }) { return daemon }
            if !daemon.process.isRunning {
                throw Failure(
                    message: "the daemon exited with \(daemon.process.terminationStatus): \(daemon.stderr.text)")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw Failure(message: "the daemon did not get ready: \(daemon.stderr.text)")
    }

    private let wrapped: Bool

    private init(arguments: [String], environment: [String: String], clock: FakeTime?) throws {
        let command = clock?.command(Workbench.farecheck, arguments) ?? (Workbench.farecheck, arguments)
        wrapped = clock != nil
        process.executableURL = URL(fileURLWithPath: command.executable)
        process.arguments = command.arguments
        process.environment = ProcessInfo.processInfo.environment.merging(clock?.environment ?? [:]) { $1 }
            .merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        stdout = OutputCollector(out.fileHandleForReading)
        stderr = OutputCollector(err.fileHandleForReading)
        try startUnblocked(process)
    }

    /// The HTTP port from the ready line (`http://127.0.0.1:PORT/`), if it serves HTTP. (Only that line: others may
    /// name other addresses, such as a sync server's.)
    public var httpPort: Int? {
        for line in stderr.lines where line.contains("ready in") {
            guard let range = line.range(of: "http://127.0.0.1:") else { continue }
            let digits = line[range.upperBound...].prefix { $0.isNumber }
            return Int(digits)
        }
        return nil
    }

    /// The body of `GET path` on the daemon's HTTP port, or `nil` when it cannot be had within `timeout` seconds.
    public func get(_ path: String, timeout: Double = 10) async -> String? {
        guard let port = httpPort else { return nil }
        return try? await LoopbackHTTP.request(port: port, "GET", path, timeout: .seconds(timeout)).text
    }

    /// Waits until the daemon counts at least `count` clients on its verdict socket (from `/healthz`): from
    /// then on every verdict reaches them.
    public func waitForSocketClients(_ count: Int = 1, timeout: Double = 10) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let body = await get("/healthz"),
                let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                let clients = object["socketClients"] as? Int, clients >= count
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The daemon's process id: the child, or under a `FakeTime` clock the wrapper's child (which the wrapper
    /// waits for, and whose exit status it passes on).
    public var pid: pid_t {
        guard wrapped else { return process.processIdentifier }
        let wrapper = process.processIdentifier
        let children = (try? String(contentsOfFile: "/proc/\(wrapper)/task/\(wrapper)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").first.flatMap { pid_t($0) } ?? wrapper
    }

    /// Sends `signal` and waits up to `timeout` seconds; returns the exit status, or `nil` if it did not exit.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) async -> Int32? {
        kill(pid, signal)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { try? await Task.sleep(for: .milliseconds(5)) }
        if process.isRunning {
            kill(pid, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning {
            kill(pid, SIGKILL)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// Connects to the daemon's verdict socket at `path`, retrying while it is not there yet; when it never is, the
    /// error says whether the daemon still runs and what it printed (a bare "no such file" tells nothing).
    public func connectSocket(path: String, timeout: Double = 10) async throws -> LineSocket {
        do {
            return try await LineSocket.connect(path: path, timeout: timeout)
        } catch {
            let state = process.isRunning ? "still runs" : "exited with \(process.terminationStatus)"
            throw Failure(message: "\(error); the daemon \(state) and printed: \(stderr.text)")
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
        public init(message: String) { self.message = message }
    }
}

/// The daemon's verdict socket, as tests read it.
public typealias LineSocket = VerdictSocketClient
