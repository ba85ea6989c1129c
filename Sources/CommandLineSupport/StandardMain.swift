import ArgumentParser
import FareCore
import Foundation

extension ParsableCommand {
    /// Runs the command the arguments name, the way both programs run (issue 52):
    /// - one exit status table (`ExitStatus`): a usage error is 64; anything else that stops a command 2, never the
    ///   1 of a verdict other than valid;
    /// - a single-value option given twice is refused, and an unknown option is named with the one meant, also where
    ///   a command's optional argument would otherwise swallow it (`CommandLineCheck`);
    /// - with `--json`, each failure is also a JSON document on standard output.
    ///
    /// - Parameter prefix: The program's name, in front of its messages (`farecheck`).
    public static func standardMain(prefix: String) async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        // The check reads the commands' description (a few milliseconds): only when an option repeats, or when the
        // parser refuses the line.
        let names = arguments.prefix { $0 != "--" }.filter { $0.hasPrefix("--") }.map {
            $0.split(separator: "=", maxSplits: 1).first.map(String.init) ?? $0
        }
        if Set(names).count < names.count,
            let problem = CommandLineCheck.problem(in: arguments, description: _dumpHelp())
        {
            usageError(problem, arguments: arguments, prefix: prefix)
        }
        do {
            var command = try parseAsRoot(arguments)
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            if error is ExitCode || error is CleanExit { exit(withError: error) }
            let status = exitCode(for: error)
            if status == .success { exit(withError: error) }
            let usage = status.rawValue == ExitStatus.usage.rawValue
            if usage, let problem = CommandLineCheck.problem(in: arguments, description: _dumpHelp()) {
                usageError(problem, arguments: arguments, prefix: prefix)
            }
            let message = Self.message(for: error)
            if JSONErrorDocument.isRequested {
                standardOutput(JSONErrorDocument.line(status: usage ? .usage : .couldNotRun, message: message))
            }
            if usage { exit(withError: error) }
            FileHandle.standardError.write(Data("\(prefix): \(message)\n".utf8))
            exit(withError: ExitCode(ExitStatus.couldNotRun.rawValue))
        }
    }

    /// Says `problem` as the argument parser says a usage error, and exits with 64.
    private static func usageError(_ problem: String, arguments: [String], prefix: String) -> Never {
        if JSONErrorDocument.isRequested { standardOutput(JSONErrorDocument.line(status: .usage, message: problem)) }
        let path = ([prefix] + arguments.prefix { !$0.hasPrefix("-") }.prefix(2)).joined(separator: " ")
        FileHandle.standardError.write(Data("Error: \(problem)\n  See '\(path) --help' for more information.\n".utf8))
        exit(withError: ExitCode(ExitStatus.usage.rawValue))
    }

    private static func standardOutput(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
