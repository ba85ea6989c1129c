import ArgumentParser
import CommandLineSupport
import FareCore
import FarecheckVersion
import Foundation
import ValidationServer

/// `farecheck-server`: the reference online validation API and its admin commands.
@main
struct FarecheckServer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "farecheck-server",
        abstract: "The reference server of farecheck's online validation API (API/openapi.yaml).",
        discussion: """
            Serves signed key bundles, signed revocation deltas, inspection uploads and online checks to \
            validators, from a SQLite file (--db, default server.sqlite) or a PostgreSQL database \
            (--database-url postgres://USER:PASSWORD@HOST:PORT/DATABASE). The admin commands work on the same \
            database, also while the server runs.


            """ + ExitStatus.helpText + """


                Environment:
                  FARECHECK_SERVER_DB            the SQLite database, when --db is not given
                  FARECHECK_SERVER_DATABASE_URL  the PostgreSQL database, when --database-url is not given

                Files:
                  /etc/farecheck-server/                   the anchor key, TLS certificates (see Systemd/README.md)
                  /var/lib/farecheck-server/server.sqlite  the database under systemd (StateDirectory)

                See also: farecheck(1), farecheck.toml(5), /usr/share/doc/farecheck/docs/server.md
                """,
        version: FarecheckVersion.text,
        subcommands: [
            Serve.self, Init.self, Devices.self, Keys.self, Revoke.self, Unrevoke.self, Revocations.self,
            Inspections.self, FirstUses.self, Operators.self, Trust.self,
        ]
    )

    /// Runs the command the arguments name (`standardMain`: the exit status table both programs share, --json
    /// errors, repeated and unknown options refused).
    static func main() async { await standardMain(prefix: "farecheck-server") }
}

/// Where the database is: the same two options on every command.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "The SQLite database file (default: server.sqlite, or $FARECHECK_SERVER_DB).")
    var db: String?

    @Option(
        name: .customLong("database-url"),
        help: """
            A PostgreSQL database instead: postgres://USER:PASSWORD@HOST:PORT/DATABASE \
            (or $FARECHECK_SERVER_DATABASE_URL).
            """
    )
    var databaseURL: String?

    /// The location named by the options, else by the environment, else `server.sqlite`.
    func location() throws(ServerError) -> StoreLocation {
        let environment = ProcessInfo.processInfo.environment
        if db == nil && databaseURL == nil {
            if let url = environment["FARECHECK_SERVER_DATABASE_URL"], !url.isEmpty {
                return try StoreLocation(db: nil, databaseURL: url)
            }
            if let path = environment["FARECHECK_SERVER_DB"], !path.isEmpty {
                return try StoreLocation(db: path, databaseURL: nil)
            }
        }
        return try StoreLocation(db: db, databaseURL: databaseURL)
    }
}

/// `--older-than DAYS`, of the prune commands: what was recorded longer ago than that goes.
struct PruneAge: ParsableArguments {
    @Option(
        name: .customLong("older-than"),
        help: ArgumentHelp("Forget what is older than this many days.", valueName: "days"))
    var days: Int

    /// The moment before which rows go: `days` days before now.
    var horizon: Date { Date().addingTimeInterval(-Double(days) * 86_400) }

    /// The most days `--older-than` takes: a hundred years, far beyond any retention, and a horizon every
    /// database stores.
    static let maximumDays = 36_525

    /// Refuses fewer than `minimum` days, saying `why`, and more than `maximumDays`.
    func require(atLeast minimum: Int, because why: String) throws {
        guard days >= minimum else {
            throw ValidationError("--older-than must be at least \(minimum) day\(minimum == 1 ? "" : "s"): \(why).")
        }
        guard days <= Self.maximumDays else {
            throw ValidationError(
                "--older-than \(days): at most \(Self.maximumDays) days (a hundred years); to forget everything, "
                    + "choose a number of days longer than the oldest record.")
        }
    }
}

/// A command that works on the database and reports failures as one line on standard error, exit status 2.
protocol StoreCommand: AsyncParsableCommand {
    var database: DatabaseOptions { get }
    /// Whether a missing SQLite file is created.
    var createsDatabase: Bool { get }
    func run(on store: any ServerStore) async throws
}

extension StoreCommand {
    var createsDatabase: Bool { false }

    func run() async throws {
        do {
            let location = try database.location()
            let exposed = location.exposureWarning
            try await location.withStore(create: createsDatabase) { store in
                // Opening narrowed a database others could read; one it could not narrow is still named.
                if let warning = location.exposureWarning {
                    FileHandle.standardError.write(Data("farecheck-server: warning: \(warning)\n".utf8))
                } else if exposed != nil {
                    let note =
                        "farecheck-server: \(location) was readable by every user of this machine: now only by its "
                        + "owner (and its group, if it had read access)\n"
                    FileHandle.standardError.write(Data(note.utf8))
                }
                try await run(on: store)
            }
        } catch let error as ServerError {
            fail(error.message)
        } catch let error as ExitCode {
            throw error
        } catch let error as CleanExit {
            throw error
        } catch {
            fail("\(error)")
        }
    }
}

/// Prints a message on standard error and exits with status 2; control characters in it (from a device id or a
/// record, say) are escaped.
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("farecheck-server: \(PrintableText(message))\n".utf8))
    if JSONErrorDocument.isRequested {
        say(terminalSafeJSON(JSONErrorDocument.line(status: .couldNotRun, message: message)))
    }
    Foundation.exit(ExitStatus.couldNotRun.rawValue)
}

/// JSON text with nothing in it that a terminal acts on: the JSON writers escape C0 control characters inside
/// strings, but not DEL, the C1 controls (U+009B starts an escape sequence on many terminals), the line and
/// paragraph separators or the format characters (bidirectional controls, zero-width ones); these become `\uXXXX`
/// escapes (UTF-16 units, as JSON counts them), which decode to the same text. Newlines outside strings (pretty
/// printing) are kept.
func terminalSafeJSON(_ json: String) -> String {
    func escapes(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A: false
        case 0x00...0x1F, 0x7F...0x9F: true
        default: PrintableText.isInvisibleFormatting(scalar)
        }
    }
    guard json.unicodeScalars.contains(where: escapes) else { return json }
    var result = ""
    for scalar in json.unicodeScalars {
        if escapes(scalar) {
            for unit in String(scalar).utf16 {
                let hex = String(unit, radix: 16, uppercase: true)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

/// Reads the value of an option that takes a time (`TimeInput`, the reading `farecheck` uses too), for
/// `@Option(transform:)`: a value it refuses is a usage error (exit status 64) naming the option.
@Sendable func parseTime(_ text: String) throws -> TimeInput { try TimeInput(option: text) }

/// Says on standard error how a time given without an offset was read, naming the zone.
func noteReading(of time: TimeInput?, option: String) {
    guard let reading = time?.reading else { return }
    FileHandle.standardError.write(Data("farecheck-server: \(option) \(reading)\n".utf8))
}

/// Prints a line on standard output at once, also when it is a pipe (tests read the port this way).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
