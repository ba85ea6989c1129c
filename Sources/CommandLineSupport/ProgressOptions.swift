import ArgumentParser
import FareCore

/// `--quiet` and `--progress`, for the commands of both programs whose work can take more than two seconds
/// (issue 52).
public struct ProgressOptions: ParsableArguments {
    @Flag(help: "Print no progress on standard error (the answer and errors still are).") public var quiet = false
    @Flag(help: "Show progress from the start (else after two seconds of work).") public var progress = false

    public init() {}

    public func validate() throws {
        if quiet && progress { throw ValidationError("--quiet and --progress cannot be combined") }
    }

    /// A reporter for `task` on standard error, as the options and standard error ask.
    public func reporter(_ task: String) -> ProgressReporter {
        ProgressReporter(
            task: task, output: .forStandardError(quiet: quiet), quietFor: progress ? .zero : .seconds(2))
    }
}
