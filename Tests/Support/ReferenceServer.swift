import Foundation

/// The reference validation API (`farecheck-server`) with a SQLite database in a scratch directory: admin
/// commands run on it as an agency would, and `start()` serves it on a free loopback port.
public final class ReferenceServer: @unchecked Sendable {
    public let directory: String
    public var database: String { directory + "/server.sqlite" }
    /// The PostgreSQL database (`postgres://…`) instead of `database`, when made with `postgresAdminURL`.
    public let databaseURL: String?
    /// The PostgreSQL server and the database made on it, to drop when done.
    private let postgres: (adminURL: String, name: String)?
    /// The demo anchor's private key, which signs bundles and deltas.
    public static let demoAnchorKey = repositoryRoot + "/Keys/demo-anchor.key"
    /// The running server, if started.
    public private(set) var process: Process?
    /// `http://127.0.0.1:PORT` (or `https://…`) of the running server.
    public private(set) var baseURL = ""

    /// Makes a scratch directory and an empty server database: a SQLite file, or with `postgresAdminURL` (a
    /// role that may create databases) a fresh PostgreSQL database, dropped when this is.
    public init(postgresAdminURL: String? = nil) throws {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-refserver-\(UUID().uuidString)")
            .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let postgresAdminURL {
            let name = "farecheck_ref_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let made = try Workbench(directory: directory).run(
                "/usr/bin/env", ["psql", postgresAdminURL, "-qc", "CREATE DATABASE \(name)"])
            guard made.status == 0 else { throw DaemonProcess.Failure(message: "psql: \(made.stderr)") }
            var components = URLComponents(string: postgresAdminURL)!
            components.path = "/" + name
            databaseURL = components.string!
            postgres = (postgresAdminURL, name)
        } else {
            databaseURL = nil
            postgres = nil
        }
        try admin(["init"])
    }

    deinit {
        stop()
        if let postgres {
            _ = try? Workbench(directory: directory).run(
                "/usr/bin/env",
                ["psql", postgres.adminURL, "-qc", "DROP DATABASE IF EXISTS \(postgres.name) WITH (FORCE)"])
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// The farecheck-server binary SwiftPM built beside the test bundle.
    public static let binary: String = {
        URL(fileURLWithPath: Workbench.farecheck).deletingLastPathComponent().appendingPathComponent(
            "farecheck-server"
        ).path
    }()

    /// Runs an admin command on this database; throws with its standard error unless it exits 0.
    @discardableResult
    public func admin(_ arguments: [String]) throws -> String {
        let run = try adminRun(arguments)
        guard run.status == 0 else {
            throw DaemonProcess.Failure(message: "farecheck-server \(arguments.joined(separator: " ")): \(run.stderr)")
        }
        return run.text
    }

    /// Runs an admin command on this database and returns how it went.
    public func adminRun(_ arguments: [String]) throws -> Run {
        var environment = ProcessInfo.processInfo.environment
        environment["FARECHECK_SERVER_DB"] = databaseURL == nil ? database : nil
        environment["FARECHECK_SERVER_DATABASE_URL"] = databaseURL
        return try Workbench(directory: directory).run(Self.binary, arguments, environment: environment)
    }

    /// Registers a device and returns its token.
    public func addDevice(_ id: String) throws -> String {
        try admin(["devices", "add", id, "--role", "gate"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Adds an issuer public key (PEM) and publishes a new bundle signed with `anchorKey`.
    public func publishKey(_ pem: String, issuer: String = "demo-transit", anchorKey: String = demoAnchorKey)
        throws
    {
        try admin(["keys", "add", "--issuer", issuer, "--format", "fc1", pem])
        try admin(["keys", "publish", "--anchor-key", anchorKey])
    }

    /// Starts `farecheck-server serve` on a free loopback port (revocations signed by `anchorKey`).
    public func start(anchorKey: String = demoAnchorKey) throws {
        let (process, outputPath, logPath) = try launch(anchorKey: anchorKey, arguments: [])
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            if listening(process, outputPath: outputPath) { return }
            usleep(50_000)
        }
        try failToStart(process, logPath: logPath)
    }

    /// Starts `farecheck-server serve` on a free loopback port with more arguments (e.g. `--tls-cert`), waiting
    /// without blocking; `baseURL` is then `https://…` when TLS is on.
    public func start(anchorKey: String = demoAnchorKey, arguments: [String]) async throws {
        let (process, outputPath, logPath) = try launch(anchorKey: anchorKey, arguments: arguments)
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, process.isRunning {
            if listening(process, outputPath: outputPath) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        try failToStart(process, logPath: logPath)
    }

    private func launch(anchorKey: String, arguments: [String]) throws -> (Process, String, String) {
        stop()
        let name = UUID().uuidString
        let outputPath = directory + "/serve-\(name).out"
        let logPath = directory + "/serve-\(name).err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments =
            [
                "serve", "--listen", "127.0.0.1:0", "--log-level", "warning", "--anchor-key", anchorKey,
            ] + (databaseURL.map { ["--database-url", $0] } ?? ["--db", database]) + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardInput = FileHandle.nullDevice
        try startUnblocked(process)
        return (process, outputPath, logPath)
    }

    /// Whether the server printed its address; if so, records it.
    private func listening(_ process: Process, outputPath: String) -> Bool {
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: " ")
        else { return false }
        baseURL = String(text[range.upperBound..<end])
        self.process = process
        return true
    }

    private func failToStart(_ process: Process, logPath: String) throws -> Never {
        if process.isRunning { process.terminate() }
        let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        throw DaemonProcess.Failure(message: "farecheck-server did not start: \(log)")
    }

    /// Stops the server (SIGTERM) and waits for it.
    public func stop() {
        guard let process else { return }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        self.process = nil
    }

    /// The inspections the server holds, as `inspections list --json` prints them.
    public func inspections() throws -> [[String: Any]] {
        try admin(["inspections", "list", "--json"]).jsonRecords
    }
}
