import ArgumentParser
import Foundation
import Issuing

/// `farecheck-bench`: the speed figures docs/benchmarks.md reports, measured on this machine. A program of its own, so
/// that benchmark code does not ship in `farecheck`.
@main
struct FarecheckBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "farecheck-bench",
        abstract: BenchCommand.configuration.abstract,
        discussion: BenchCommand.configuration.discussion,
        subcommands: [BenchCommand.self, VideoCommand.self, FleetLoadCommand.self],
        defaultSubcommand: BenchCommand.self
    )
}

/// A failure that stops a measurement: printed as one line, exit status 2.
enum CommandFailure {
    static func exit(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("farecheck-bench: \(message)\n".utf8))
        return ExitCode(2)
    }
}

/// Writes a line to standard output.
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The `farecheck` program the benchmarks run (the daemon, `scan`): built beside this one.
enum FarecheckProgram {
    static let path: String = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        .deletingLastPathComponent().appendingPathComponent("farecheck").path
}
