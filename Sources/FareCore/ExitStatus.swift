import Foundation

/// The exit statuses of both programs: one table, printed in each `--help` and in the man pages (issue 52).
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// The command did what was asked; for a verdict, the ticket is valid.
    case done = 0
    /// The answer is no: a verdict other than valid, no symbol found, a demo ticket judged unexpectedly.
    case no = 1
    /// The command could not run: no such file, no store, a server that cannot be reached, a bad configuration.
    case couldNotRun = 2
    /// A usage error: an unknown or repeated option, a value the option refuses (as `EX_USAGE` in sysexits.h).
    case usage = 64

    /// The table as `--help` prints it, under the heading the man pages turn into their EXIT STATUS section.
    public static let helpText = """
        Exit status:
          0   done; for a verdict: valid
          1   the answer is no: a verdict other than valid, no symbol found
          2   could not run: no such file, no store, a server that cannot be reached, a bad configuration
          64  usage error: an unknown or repeated option, a value the option refuses
        """
}

/// The error document `--json` prints on standard output when a command fails (issue 52): with `--json`, standard
/// output always holds JSON, also when there is no answer: `{"error":{"code":"could-not-run","message":"…"}}`.
public enum JSONErrorDocument {
    /// Whether this process was asked for JSON (`--json` among its arguments, before a `--`).
    public static var isRequested: Bool {
        CommandLine.arguments.dropFirst().prefix { $0 != "--" }.contains("--json")
    }

    /// The document for a failure with `status` (2: `could-not-run`, 64: `usage`) and its message.
    public static func line(status: ExitStatus, message: String) -> String {
        let code = status == .usage ? "usage" : "could-not-run"
        let document = ["error": ["code": code, "message": message]]
        guard
            let data = try? JSONSerialization.data(
                withJSONObject: document, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return #"{"error":{"code":"could-not-run","message":""}}"# }
        return String(decoding: data, as: UTF8.self)
    }
}
