import ArgumentParser
import FareCore
import Foundation
import TrustStore

/// A failure that stops a command before it can answer: printed as one line, exit status 2.
struct CommandFailure: Error, CustomStringConvertible {
    var message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

extension CommandFailure {
    /// Prints the failure and exits with status 2.
    static func exit(_ message: String) -> ExitCode {
        printError("farecheck: \(message)")
        return ExitCode(2)
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
struct StoreOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The trust store (SQLite).",
            discussion: "Default: $FARECHECK_DB, else ~/.local/share/farecheck/farecheck.sqlite.", valueName: "path"))
    var db: String?

    /// The resolved path of the store.
    var path: String { TrustStore.resolvePath(explicit: db) }

    /// Opens the store, or exits with status 2 and a clear message.
    func open() throws -> TrustStore {
        do {
            return try TrustStore(path: path)
        } catch {
            throw CommandFailure.exit(error.description)
        }
    }
}

/// Dates on the command line: ISO 8601 (`2026-11-22T08:00:00Z`, `2026-11-22T08:00:00+01:00`,
/// `2026-11-22` for midnight UTC), or `now`, or `now+2h` / `now-30m` / `now+1d`.
struct DateArgument: ExpressibleByArgument, Sendable {
    var date: Date

    init(date: Date) { self.date = date }

    init?(argument: String) {
        guard let date = Self.parse(argument) else { return nil }
        self.date = date
    }

    static func parse(_ text: String, now: Date = Date()) -> Date? {
        if text == "now" { return now }
        if text.hasPrefix("now+") || text.hasPrefix("now-") {
            let sign: Double = text.dropFirst(3).first == "+" ? 1 : -1
            let body = text.dropFirst(4)
            guard let unit = body.last, let amount = Double(body.dropLast()) else { return nil }
            let seconds: Double
            switch unit {
            case "s": seconds = amount
            case "m": seconds = amount * 60
            case "h": seconds = amount * 3600
            case "d": seconds = amount * 86400
            default: return nil
            }
            return now.addingTimeInterval(sign * seconds)
        }
        if let date = try? Date(text, strategy: .iso8601) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle().year().month().day()) { return date }
        if let date = try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)) {
            return date
        }
        return nil
    }

    static var defaultValueDescription: String { "ISO 8601 date" }
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
