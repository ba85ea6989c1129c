import ArgumentParser
import CommandLineSupport
import FareCore
import Foundation
import Signatures
import Sync
import TrustStore
import ValidationAPI

/// A failure that stops a command before it can answer: printed as one line, exit status 2.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

extension CommandFailure {
    /// Prints the failure (and, with `--json`, its JSON document on standard output) and exits with status 2.
    static func exit(_ message: String) -> ExitCode {
        printError("farecheck: \(message)")
        if JSONErrorDocument.isRequested { printLine(JSONErrorDocument.line(status: .couldNotRun, message: message)) }
        return ExitCode(ExitStatus.couldNotRun.rawValue)
    }
}

/// An error as a person reads it: our own errors' message without the code in brackets that their description
/// adds for logs (`[privateKeyInsteadOfPublicKey]`); anything else as it describes itself.
func readable(_ error: any Error) -> String {
    switch error {
    case let error as SignatureError: error.message
    case let error as SyncError: error.message
    case let error as BundleError: error.message
    default: "\(error)"
    }
}

/// Writes a line to standard error.
func printError(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Writes a line to standard output and flushes it, so pipes see each line as it is made.
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// `--db PATH`, shared by every command that uses the store.
///
/// Only the commands that make a store create one at a path where there is none (`keys generate`, `keys import`,
/// and `sync`, `demo`, `daemon`, which open the store themselves); `revoke` and `staff add` do with `--create`; every
/// other command refuses the path, so that a mistyped `--db` is an error and not a new, empty store. No command
/// makes the journal or its reserve: only the daemon, which journals.
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The trust store (SQLite).",
            discussion: """
                Default: $FARECHECK_DB, else ~/.local/share/farecheck/farecheck.sqlite. Only keys generate, keys \
                import and sync make a store where there is none (revoke and staff add with --create); the other \
                commands refuse such a path.
                """, valueName: "path"))
    var db: String?

    /// The resolved path of the store.
    var path: String { TrustStore.resolvePath(explicit: db) }

    /// Where the path came from, for a message: `--db`, `$FARECHECK_DB` or the default.
    var pathOrigin: String {
        if let db, !db.isEmpty { return "--db" }
        if let variable = ProcessInfo.processInfo.environment["FARECHECK_DB"], !variable.isEmpty {
            return "$FARECHECK_DB"
        }
        return "the default path"
    }

    /// Opens the store, or exits with status 2 and a clear message.
    ///
    /// - Parameters:
    ///   - ifMissing: `.create` for a command that makes a store (it says so on standard error when it does);
    ///     `.refuse` for every other.
    ///   - offeringCreate: Whether the command takes `--create`, which the refusal then names.
    func open(ifMissing: TrustStore.Missing = .refuse, offeringCreate: Bool = false) throws -> TrustStore {
        let existed = FileManager.default.fileExists(atPath: path)
        let store: TrustStore
        do {
            store = try TrustStore(path: path, ifMissing: ifMissing, journal: .usesExisting)
        } catch  where error.code == .noStore {
            let remedy =
                offeringCreate
                ? "pass --create to make a new store there"
                : "`farecheck keys import` or `farecheck keys generate` makes one"
            throw CommandFailure.exit("no store at \(path) (\(pathOrigin)): check the path, or \(remedy)")
        } catch {
            throw CommandFailure.exit(error.description)
        }
        if !existed { printError("farecheck: made a new store at \(path)") }
        return store
    }
}

/// Reads the value of an option that takes a time (`TimeInput`: RFC 3339, a local time or a date in this
/// validator's zone, `now`, `now+2h`): for `@Option(transform:)`, so that a value it refuses is a usage error
/// (exit status 64) naming the option, what is wrong, and the accepted forms.
@Sendable func parseTime(_ text: String) throws -> TimeInput { try TimeInput(option: text) }

/// Says on standard error how a time given without an offset was read, naming the zone: `farecheck: --at
/// 2026-11-29 read as 2026-11-29T00:00:00+01:00 (Europe/Berlin)`. Nothing for an instant or `now…`.
func noteReading(of time: TimeInput?, option: String) {
    guard let reading = time?.reading else { return }
    printError("farecheck: \(option) \(reading)")
}

extension Date {
    /// ISO 8601 in UTC, seconds precision: how farecheck prints dates.
    var iso8601: String { formatted(.iso8601) }
}

/// Reads a whole file as bytes, or exits with status 2 naming the file.
func readFile(_ path: String) throws -> [UInt8] {
    if path == "-" { return Array(FileHandle.standardInput.readDataToEndOfFile()) }
    guard FileManager.default.fileExists(atPath: path) else { throw CommandFailure.exit("\(path): no such file") }
    guard let data = FileManager.default.contents(atPath: path) else {
        throw CommandFailure.exit("\(path): cannot be read")
    }
    return Array(data)
}

/// Encodes a value as one line of JSON with sorted keys.
/// One JSON array of `lines` (each one JSON value, as `jsonLine` writes them): what a list command prints with
/// `--json`, `[]` when the list is empty (issue 52).
func jsonArray(_ lines: [String]) -> String { "[" + lines.joined(separator: ",") + "]" }

func jsonLine(_ value: some Encodable) -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    encoder.dateEncodingStrategy = .custom { date, encoder in
        var container = encoder.singleValueContainer()
        try container.encode(date.iso8601)
    }
    // Encoding our own report types cannot fail.
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
    return String(decoding: data, as: UTF8.self)
}
