import ArgumentParser
import FarecheckVersion
import Foundation

/// The `farecheck` command: offline fare inspection from the command line.
@main
struct Farecheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "farecheck",
        abstract: "Offline fare inspection: reads ticket barcodes and tells whether they are genuine and valid now.",
        discussion: """
            Exit status: 0 when the answer is yes (a valid ticket, a symbol found), 1 when it is no \
            (any other verdict), 2 when the command itself could not run (no such file, unreadable \
            store), 64 for a usage error.

            The trust store is one SQLite file: --db PATH, else $FARECHECK_DB, else \
            $XDG_DATA_HOME/farecheck/farecheck.sqlite (~/.local/share/farecheck/farecheck.sqlite).
            """,
        version: FarecheckVersion.text,
        subcommands: [
            DemoCommand.self, VerifyCommand.self, ScanCommand.self, IssueCommand.self, KeysCommand.self,
            RevokeCommand.self, ScannersCommand.self, DaemonCommand.self, StaffCommand.self,
            SyncCommand.self,
        ]
    )
}
