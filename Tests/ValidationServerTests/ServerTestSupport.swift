import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import TestSupport
import Testing
import ValidationAPI
import ValidationServer

/// A database the tests can run against: SQLite always, PostgreSQL when `FARECHECK_TEST_POSTGRES_URL` is set.
enum Backend: String, CustomTestStringConvertible, CaseIterable, Sendable {
    case sqlite
    case postgres

    /// The backends available on this machine.
    static var available: [Backend] {
        postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]
    }

    /// A PostgreSQL server whose role may create databases: `postgres://USER:PASSWORD@HOST:PORT/DATABASE`.
    static let postgresURL: String? = {
        let url = ProcessInfo.processInfo.environment["FARECHECK_TEST_POSTGRES_URL"] ?? ""
        return url.isEmpty ? nil : url
    }()

    var testDescription: String { rawValue }
}

/// The result of running a program.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// A scratch directory with a fresh server database of one backend; the database is dropped afterwards.
final class ServerBench: @unchecked Sendable {
    let backend: Backend
    let directory: String
    /// The options that name the database, for every `farecheck-server` command.
    let databaseArguments: [String]
    private let postgresDatabase: String?

    init(_ backend: Backend) throws {
        self.backend = backend
        directory =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("farecheck-server-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            postgresDatabase = nil
            databaseArguments = ["--db", directory + "/server.sqlite"]
            try Self.require(try Self.server(["init"] + databaseArguments, in: directory))
        case .postgres:
            // Each bench gets its own database, made with psql as an admin would.
            let name = "farecheck_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let adminURL = Backend.postgresURL!
            try Self.require(try Self.run("/usr/bin/env", ["psql", adminURL, "-qc", "CREATE DATABASE \(name)"]))
            postgresDatabase = name
            var components = URLComponents(string: adminURL)!
            components.path = "/" + name
            databaseArguments = ["--database-url", components.string!]
            try Self.require(try Self.server(["init"] + databaseArguments, in: directory))
        }
    }

    deinit {
        if let postgresDatabase, let adminURL = Backend.postgresURL {
            _ = try? Self.run(
                "/usr/bin/env", ["psql", adminURL, "-qc", "DROP DATABASE IF EXISTS \(postgresDatabase) WITH (FORCE)"])
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Runs an admin command on this bench's database.
    @discardableResult
    func admin(_ arguments: [String]) throws -> Run {
        // The database options go after the subcommand path (`devices add --db X ID` parses either way).
        try Self.server(arguments + databaseArguments, in: directory)
    }

    /// Runs an admin command that must succeed, and returns its standard output.
    @discardableResult
    func adminOK(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let run = try admin(arguments)
        #expect(run.status == 0, "farecheck-server \(arguments): \(run.stderr)", sourceLocation: sourceLocation)
        return run.stdout
    }

    /// Registers a device and returns its token.
    func addDevice(_ id: String) throws -> String {
        try adminOK(["devices", "add", id, "--role", "gate"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Starts `farecheck-server serve` on a free loopback port, with `extra` arguments (a log level given there
    /// replaces `warning`), under `umask` when given.
    func startServer(
        anchorKey: String? = "\(repositoryRoot)/Keys/demo-anchor.key", extra: [String] = [], umask: String? = nil
    ) throws -> ServerProcess {
        let level = extra.contains("--log-level") ? [] : ["--log-level", "warning"]
        var arguments = ["serve", "--listen", "127.0.0.1:0"] + level + databaseArguments + extra
        if let anchorKey { arguments += ["--anchor-key", anchorKey] }
        return try ServerProcess(arguments: arguments, directory: directory, umask: umask)
    }

    /// The farecheck-server binary SwiftPM built beside this test bundle.
    static let binary = ReferenceServer.binary

    static func server(_ arguments: [String], in directory: String) throws -> Run {
        try run(binary, arguments, in: directory)
    }

    static func require(_ run: Run) throws {
        if run.status != 0 { throw BenchError(description: "setup failed: \(run.stderr)") }
    }

    static func run(_ executable: String, _ arguments: [String], in directory: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var environment = ProcessInfo.processInfo.environment
        // The tests name every database explicitly.
        environment["FARECHECK_SERVER_DB"] = nil
        environment["FARECHECK_SERVER_DATABASE_URL"] = nil
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try startUnblocked(process)
        // Read both pipes while the process runs so that neither fills up and blocks it.
        nonisolated(unsafe) var errorData = Data()
        let group = DispatchGroup()
        group.enter()
        DispatchQueue.global().async {
            errorData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return Run(
            status: process.terminationStatus, stdout: String(decoding: outputData, as: UTF8.self),
            stderr: String(decoding: errorData, as: UTF8.self))
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
}

/// A running `farecheck-server serve`, stopped with SIGTERM when done.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    /// `http://127.0.0.1:PORT`.
    let baseURL: String
    let logPath: String

    /// The port the server listens on.
    var port: Int { Int(baseURL.split(separator: ":").last ?? "") ?? 0 }

    init(arguments: [String], directory: String, umask: String? = nil) throws {
        let name = UUID().uuidString
        let outputPath = directory + "/serve-\(name).out"
        logPath = directory + "/serve-\(name).err"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        if let umask {
            // The shell sets the umask and becomes the server (exec), so that SIGTERM still reaches it.
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "umask \(umask) && exec \"$0\" \"$@\"", ServerBench.binary] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: ServerBench.binary)
            process.arguments = arguments
        }
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        process.standardOutput = FileHandle(forWritingAtPath: outputPath)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        process.standardInput = FileHandle.nullDevice
        try startUnblocked(process)
        // The server prints its address once bound; wait for that line (or for it to die).
        var found: String?
        for _ in 0..<1200 where found == nil && process.isRunning {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listening on "), let end = text[range.upperBound...].firstIndex(of: " ") {
                found = String(text[range.upperBound..<end])
            } else {
                usleep(50_000)
            }
        }
        guard let found else {
            if process.isRunning { process.terminate() }
            let log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            throw BenchError(description: "farecheck-server did not start: \(log)")
        }
        baseURL = found
    }

    /// Stops the server with SIGTERM and waits for it to exit; returns its exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }

    deinit { stop() }

    /// What the server wrote on standard error.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
}

/// A response as the tests look at it.
struct HTTPAnswer {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The body as the API's error document, if it is exactly one.
    var errorBody: ErrorBody? { try? WireFormat.decode(ErrorBody.self, from: body) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try WireFormat.decode(type, from: body) }
}

/// Sends one request to the server, as a validator would.
func send(
    _ method: HTTPMethod, _ url: String, token: String? = nil, body: [UInt8]? = nil,
    headers: [(String, String)] = []
) async throws -> HTTPAnswer {
    var request = HTTPClientRequest(url: url)
    request.method = method
    if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
    for (name, value) in headers { request.headers.add(name: name, value: value) }
    if let body {
        request.headers.add(name: "Content-Type", value: "application/json")
        request.body = .bytes(body)
    }
    let response = try await HTTPClient.shared.execute(request, timeout: .seconds(60))
    let buffer = try await response.body.collect(upTo: 64 << 20)
    return HTTPAnswer(
        status: Int(response.status.code), headers: response.headers.map { ($0.name, $0.value) },
        body: Array(buffer.readableBytesView))
}

extension ServerBench {
    /// The bench's database as the server opens it, for tests of the store itself.
    func location() throws -> StoreLocation {
        switch backend {
        case .sqlite: .sqlite(path: path("server.sqlite"))
        case .postgres: try StoreLocation(db: nil, databaseURL: databaseArguments[1])
        }
    }

    /// Opens the bench's database as the server does and runs `body` with its store.
    func withStore<Result: Sendable>(_ body: (any ServerStore) async throws -> Result) async throws -> Result {
        try await location().withStore(create: false, body)
    }
}
