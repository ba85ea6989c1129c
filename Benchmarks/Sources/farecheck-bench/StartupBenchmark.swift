import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `farecheck-bench startup`: whole-process `farecheck scan IMAGE` and `farecheck verify --image IMAGE`, run again and
/// again, beside `farecheck --version` (the floor: the runtime, the libraries and argument parsing, nothing of a
/// verdict) and `ZXingReader` and `zbarimg` on the same image.
///
/// The image and the store come from `farecheck demo` (an ES256 QR ticket and a store that trusts its key). Each
/// program's wall time (spawn to exit, p50 and p95) and CPU time (user + system, from `wait4`) are printed; the wall
/// time includes waiting for the disk (`fsync`), the CPU time does not, and a shared machine's load moves the wall
/// time more.
struct StartupBenchmark {
    var runs: Int
    var compare: Bool

    /// One program's figures.
    struct Timing {
        var wall: [Double] = []
        var cpu: [Double] = []
        var failures = 0
    }

    func run() throws {
        guard let farecheck = ScanBenchmark.ownExecutable() else {
            throw CommandFailure.exit(
                "\(FarecheckProgram.path) not found: build it beside the bench (scripts/bench.sh)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "farecheck-bench-startup-\(getpid())"
        )
        .path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        guard Self.spawn(farecheck, ["demo", "--out", directory]).status == 0 else {
            throw CommandFailure.exit("farecheck demo failed in \(directory)")
        }
        let image = directory + "/valid-es256.png"
        let store = directory + "/demo.sqlite"
        var programs: [(String, String, [String])] = [
            ("farecheck --version", farecheck, ["--version"]),
            ("farecheck scan", farecheck, ["scan", image]),
            ("farecheck verify --image", farecheck, ["verify", "--db", store, "--image", image]),
        ]
        if compare {
            if let zxing = findTool("ZXingReader") { programs.append(("ZXingReader", zxing, [image])) }
            if let zbar = findTool("zbarimg") { programs.append(("zbarimg", zbar, ["-q", image])) }
        }
        printLine(
            "start-up, whole process, \(runs) runs each after 3 unmeasured, interleaved (QR ES256 ticket, 1 image, "
                + "store from `farecheck demo`): wall p50 / p95, CPU (user + system) p50")
        var timings = Array(repeating: Timing(), count: programs.count)
        for run in -3..<runs {
            // Interleaved, so that a neighbour's load falls on every program alike.
            for (index, (_, path, arguments)) in programs.enumerated() {
                let result = Self.spawn(path, arguments)
                guard run >= 0 else { continue }
                if result.status != 0 { timings[index].failures += 1 }
                timings[index].wall.append(result.wall)
                timings[index].cpu.append(result.cpu)
            }
        }
        for (index, (name, _, _)) in programs.enumerated() {
            let timing = timings[index]
            var line =
                "  \(name.padding(toLength: 26, withPad: " ", startingAt: 0)) "
                + String(
                    format: "%6.1f / %6.1f ms   CPU %5.1f ms", Self.percentile(timing.wall, 0.5),
                    Self.percentile(timing.wall, 0.95), Self.percentile(timing.cpu, 0.5))
            if timing.failures > 0 { line += "   (\(timing.failures) runs exited with a failure)" }
            printLine(line)
        }
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded()))]
    }

    /// Runs `path` with standard output and error to /dev/null; its exit status, wall and CPU milliseconds.
    static func spawn(_ path: String, _ arguments: [String]) -> (status: Int32, wall: Double, cpu: Double) {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let start = ContinuousClock.now
        let spawned = withSignalsUnblocked { posix_spawn(&pid, path, &actions, nil, argv, environ) }
        guard spawned == 0 else { return (-1, 0, 0) }
        var status: Int32 = 0
        var usage = rusage()
        while wait4(pid, &status, 0, &usage) < 0 && errno == EINTR {}
        let wall = ScanBenchmark.milliseconds(ContinuousClock.now - start)
        let cpu =
            Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
        // WIFEXITED and WEXITSTATUS are macros: the exit status is the second byte when the low seven bits are 0.
        let exited = status & 0x7F == 0
        return (exited ? (status >> 8) & 0xFF : -1, wall, cpu)
    }
}
