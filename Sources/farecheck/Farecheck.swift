import ArgumentParser
import CommandLineSupport
import FareCore
import FarecheckVersion
import Foundation

/// The `farecheck` command: offline fare inspection from the command line.
@main
struct Farecheck: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "farecheck",
        abstract: "Offline fare inspection: reads ticket barcodes and tells whether they are genuine and valid now.",
        discussion: """
            The trust store is one SQLite file: --db PATH, else $FARECHECK_DB, else \
            $XDG_DATA_HOME/farecheck/farecheck.sqlite (~/.local/share/farecheck/farecheck.sqlite). Only the commands \
            that make a store (keys generate, keys import, sync, demo, daemon; revoke and staff add with --create) \
            create one where there is none.


            """ + ExitStatus.helpText + """


                Environment:
                  FARECHECK_DB          the trust store, when --db is not given
                  XDG_DATA_HOME, HOME   where the default store lives
                  FARECHECK_SYNC_TOKEN  the device token for sync, when --token-file is not given
                  CREDENTIALS_DIRECTORY  the daemon's PIN secret as a systemd credential (farecheck-pin-secret)
                  NOTIFY_SOCKET, WATCHDOG_USEC  the daemon's readiness and watchdog under systemd (Type=notify)

                Files:
                  /etc/farecheck/farecheck.toml        the daemon's configuration (farecheck.toml(5))
                  /var/lib/farecheck/farecheck.sqlite  the daemon's store, with its journal beside it
                  /run/farecheck/verdicts.sock         the daemon's verdict stream (one JSON line per verdict)

                See also: farecheck-server(1), farecheck.toml(5), /usr/share/doc/farecheck/README.md
                """,
        version: FarecheckVersion.text,
        subcommands: [
            DemoCommand.self, VerifyCommand.self, ScanCommand.self, IssueCommand.self, KeysCommand.self,
            RevokeCommand.self, ScannersCommand.self, DaemonCommand.self, StaffCommand.self,
            SyncCommand.self, LanguagesCommand.self,
        ]
    )

    /// Runs the command the arguments name (`standardMain`: one exit status table, --json errors, repeated and
    /// unknown options refused).
    static func main() async { await standardMain(prefix: "farecheck") }
}
