import ArgumentParser
import FareCore
import Foundation
import ValidationServer

/// `first-uses`: the fleet's first uses of single-use tickets, and the conflicts found among them.
struct FirstUses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "first-uses",
        abstract: "Show the single-use tickets two devices both passed (first uses in conflict).",
        subcommands: [Conflicts.self]
    )

    /// `first-uses conflicts`.
    struct Conflicts: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "conflicts",
            abstract: "List the tickets a device passed after another device's first use, newest first.",
            discussion: """
                A gate that is offline (or whose online check failed) can pass a single-use ticket another gate \
                passed before; its upload shows it, and the server keeps it here: when and where each device \
                passed the ticket. Exit status 0 with or without conflicts.
                """)

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON object per line.") var json = false

        @Option(help: "At most this many conflicts.") var limit = 1000

        func run(on store: any ServerStore) async throws {
            let conflicts = try await store.firstUseConflicts(limit: max(0, limit))
            if !json, conflicts.isEmpty { say("No first-use conflicts: no single-use ticket passed two devices.") }
            for conflict in conflicts {
                if json {
                    var line: [String: Any] = [
                        "ticketID": conflict.ticketID.hexString, "format": conflict.format, "issuer": conflict.issuer,
                        "device": conflict.deviceID, "inspectionID": conflict.inspectionID,
                        "usedAt": conflict.usedAt.formatted(.iso8601), "firstDevice": conflict.firstDeviceID,
                        "firstUsedAt": conflict.firstUsedAt.formatted(.iso8601),
                        "foundAt": conflict.foundAt.formatted(.iso8601),
                    ]
                    if let first = conflict.firstInspectionID { line["firstInspectionID"] = first }
                    say(jsonLine(line))
                } else {
                    // Every field but the dates came from a device: escaped, so that none can act on the terminal.
                    say(
                        "\(PrintableText(conflict.issuer))/\(conflict.ticketID.hexString): passed "
                            + "\(PrintableText(conflict.deviceID)) at \(conflict.usedAt.formatted(.iso8601)) "
                            + "after \(PrintableText(conflict.firstDeviceID)) at "
                            + "\(conflict.firstUsedAt.formatted(.iso8601)) (inspection "
                            + "\(PrintableText(conflict.inspectionID)), found \(conflict.foundAt.formatted(.iso8601)))")
                }
            }
        }
    }
}
