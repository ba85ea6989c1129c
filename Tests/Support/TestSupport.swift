import Foundation

/// The result of running the `farecheck` binary.
public struct Run {
    public var status: Int32
    public var stdout: [UInt8]
    public var stderr: String
    public var text: String { String(decoding: stdout, as: UTF8.self) }

    /// Standard output's JSON records (`jsonRecords`): a list command's array, or a stream's lines.
    public var jsonLines: [[String: Any]] { text.jsonRecords }
}

extension StringProtocol {
    /// The records of a `--json` output: the elements of the one JSON array a list command prints (`[]` when
    /// empty), or the JSON lines of a stream (scan, verify, a scanner's scans); a JSON error document is a record
    /// too.
    public var jsonRecords: [[String: Any]] {
        let trimmed = trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("["), let array = try? JSONSerialization.jsonObject(with: Data(trimmed.utf8)) as? [Any] {
            return array.compactMap { $0 as? [String: Any] }
        }
        return split(separator: "\n").compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
    }
}

/// Runs programs, with a scratch directory and a store of its own.
public final class Workbench {
    public let directory: String
    public var db: String { directory + "/store.sqlite" }

    private let ownsDirectory: Bool

    public init() {
        directory =
            FileManager.default.temporaryDirectory.appendingPathComponent("farecheck-cli-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        ownsDirectory = true
    }

    /// A bench that runs programs in an existing directory, and leaves it in place.
    public init(directory: String) {
        self.directory = directory
        ownsDirectory = false
    }

    deinit { if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) } }

    /// The farecheck binary SwiftPM built beside this test bundle.
    public static let farecheck: String = {
        let bundle = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for candidate in [
            bundle, bundle.deletingLastPathComponent(), bundle.deletingLastPathComponent().deletingLastPathComponent(),
        ] {
            let path = candidate.appendingPathComponent("farecheck").path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return bundle.appendingPathComponent("farecheck").path
    }()

    public func path(_ name: String) -> String { directory + "/" + name }

    /// Gives this bench an empty store, as a validator has before its first keys: `farecheck` refuses a store path
    /// where there is none (only the commands that put keys in make one), and makes a store of an empty file.
    @discardableResult
    public func withEmptyStore() -> Workbench {
        _ = FileManager.default.createFile(atPath: db, contents: nil)
        return self
    }

    /// Runs `farecheck` with `--db` pointing at this bench's store where the command takes one; under `clock`, a
    /// wrong wall clock (`FakeTime`).
    @discardableResult
    public func farecheck(
        _ arguments: [String], stdin: [UInt8]? = nil, useStore: Bool = true, clock: FakeTime? = nil
    ) throws -> Run {
        var environment = ProcessInfo.processInfo.environment.merging(clock?.environment ?? [:]) { $1 }
        if useStore { environment["FARECHECK_DB"] = db }
        let command = clock?.command(Self.farecheck, arguments) ?? (Self.farecheck, arguments)
        return try run(command.executable, command.arguments, stdin: stdin, environment: environment)
    }

    public func run(
        _ executable: String, _ arguments: [String], stdin: [UInt8]? = nil, environment: [String: String]? = nil
    )
        throws -> Run
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try startUnblocked(process)
        if let stdin { input.fileHandleForWriting.write(Data(stdin)) }
        try input.fileHandleForWriting.close()
        // Read both pipes concurrently with the process so neither fills up and blocks it.
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
            status: process.terminationStatus, stdout: Array(outputData),
            stderr: String(decoding: errorData, as: UTF8.self))
    }

    /// Runs a shell command line (for openssl and other reference tools).
    @discardableResult
    public func shell(_ command: String) throws -> Run {
        try run("/bin/sh", ["-c", command])
    }
}

/// Locates the repository (for files such as Keys/) from this source file.
public let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

/// Starts a child with every signal unblocked on the spawning thread.
///
/// The child inherits this thread's signal mask; the test runner's threads block most signals, and a
/// farecheck that cannot see SIGTERM or SIGALRM behaves unlike one started from a shell.
public func startUnblocked(_ process: Process) throws {
    var all = sigset_t()
    var previous = sigset_t()
    sigfillset(&all)
    pthread_sigmask(SIG_UNBLOCK, &all, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    try process.run()
}

/// Collects a child's standard output as it arrives, on a thread of its own.
public final class OutputCollector: @unchecked Sendable {
    // Guarded by `lock`: written by the reading thread, read by the test.
    private var buffer: [UInt8] = []
    private let lock = NSLock()

    public init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            while true {
                let data = handle.availableData
                if data.isEmpty { return }
                lock.withLock { buffer.append(contentsOf: data) }
            }
        }
    }

    /// Everything so far, as text.
    public var text: String { String(decoding: lock.withLock { buffer }, as: UTF8.self) }

    /// Complete lines so far.
    public var lines: [String] {
        let bytes = lock.withLock { buffer }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Whether `text` shows up within `timeout` seconds: for what a child writes from work of its own (a sync round
    /// at start), which a loaded machine may finish after the test's next step.
    public func waitFor(_ text: String, timeout: Double = 20) async -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !self.text.contains(text) {
            if Date() > deadline { return false }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }
}
