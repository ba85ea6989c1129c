import ArgumentParser
import FareCore
import Foundation
import ValidationAPI
import ValidationServer

/// `first-uses`: the fleet's first uses of single-use tickets, and the conflicts found among them.
struct FirstUses: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "first-uses",
        abstract: "Show the single-use tickets two devices both passed (first uses in conflict), or forget old ones.",
        subcommands: [Conflicts.self, Prune.self, Forget.self, Withdrawals.self]
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

        @Flag(help: "One JSON array, an object per record ([] for none).") var json = false

        @Option(help: "At most this many conflicts.") var limit = 1000

        func run(on store: any ServerStore) async throws {
            let conflicts = try await store.firstUseConflicts(limit: max(0, limit))
            if !json, conflicts.isEmpty { say("No first-use conflicts: no single-use ticket passed two devices.") }
            let list = JSONList()
            defer { if json { list.finish() } }
            for conflict in conflicts {
                if json {
                    var line: [String: Any] = [
                        "ticketID": conflict.ticketID.hexString, "format": conflict.format, "issuer": conflict.issuer,
                        "device": conflict.deviceID, "inspectionID": conflict.inspectionID.rawValue,
                        "usedAt": conflict.usedAt.formatted(.iso8601), "firstDevice": conflict.firstDeviceID,
                        "firstUsedAt": conflict.firstUsedAt.formatted(.iso8601),
                        "foundAt": conflict.foundAt.formatted(.iso8601),
                    ]
                    if let first = conflict.firstInspectionID { line["firstInspectionID"] = first.rawValue }
                    list.append(line)
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

    /// `first-uses prune --older-than DAYS`.
    struct Prune: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Forget the first uses recorded, and the conflicts found, more than DAYS days ago.",
            discussion: """
                The server keeps every single-use ticket's first use, so that the fleet refuses it a second time; \
                the table grows by one row for each single ticket passed. A ticket forgotten here can be claimed \
                again: choose DAYS longer than any single-use product is valid. Dates are the server's own (when it recorded a \
                first use), never a device's clock. At least \(Self.minimumDays) days: validators are offered, and \
                keep, the first uses of the last \(Self.minimumDays) days.
                """)

        /// Validators are offered (and keep) a week of first uses: the server keeps at least as much.
        static let minimumDays = Int(FirstUseDelta.retentionMilliseconds / 86_400_000)

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var age: PruneAge

        func validate() throws {
            try age.require(
                atLeast: Self.minimumDays,
                because: "validators are offered, and keep, the first uses of the last \(Self.minimumDays) days")
        }

        func run(on store: any ServerStore) async throws {
            let before = age.horizon
            let pruned = try await store.pruneFirstUses(recordedBefore: before)
            say(
                "forgot \(pruned.firstUses) first uses and \(pruned.conflicts) conflicts recorded before "
                    + before.formatted(.iso8601))
        }
    }

    /// `first-uses forget --device ID [--since T]`.
    struct Forget: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "forget",
            abstract: "Withdraw a device's first-use claims that no other device confirmed (e.g. a device found lost).",
            discussion: """
                Each claim is withdrawn from the fleet: gates forget it with their next sync, and the ticket passes \
                again. A claim another device confirmed (by passing the same ticket after it) stays. `devices revoke` \
                does the same for every claim of the device. The withdrawals are listed by `first-uses withdrawals`.
                """)

        @OptionGroup var database: DatabaseOptions

        @Option(help: ArgumentHelp("The device whose claims to withdraw.", valueName: "id"))
        var device: String

        @Option(
            help: ArgumentHelp(
                "Only the claims recorded from this time on.", discussion: TimeInput.optionHelp, valueName: "time"),
            transform: parseTime)
        var since: TimeInput?

        func validate() throws {
            if let since, !WireFormat.dateRange.contains(since.date) {
                throw ValidationError(
                    "--since \(since.date.formatted(.iso8601)) lies outside the times the server keeps "
                        + "(\(WireFormat.dateRange.lowerBound.formatted(.iso8601)) to "
                        + "\(WireFormat.dateRange.upperBound.formatted(.iso8601)))")
            }
        }

        func run(on store: any ServerStore) async throws {
            noteReading(of: since, option: "--since")
            let withdrawn = try await store.withdrawFirstUses(
                ofDevice: device, since: since?.date, reason: "an operator forgot the claims of \(device)", at: Date())
            say(
                "withdrew \(withdrawn.count) first-use claim\(withdrawn.count == 1 ? "" : "s") of "
                    + "\(PrintableText(device))")
        }
    }

    /// `first-uses withdrawals`.
    struct Withdrawals: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "withdrawals",
            abstract: "List the first uses withdrawn (revoked devices, `first-uses forget`), newest first.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array, an object per record ([] for none).") var json = false

        @Option(help: "At most this many withdrawals.") var limit = 1000

        func run(on store: any ServerStore) async throws {
            let withdrawals = try await store.firstUseWithdrawals(limit: max(0, limit))
            if !json, withdrawals.isEmpty { say("No first use was withdrawn.") }
            let list = JSONList()
            defer { if json { list.finish() } }
            for record in withdrawals {
                let withdrawal = record.withdrawal
                if json {
                    list.append([
                        "ticketID": withdrawal.ticketID.hexString, "format": withdrawal.format,
                        "issuer": withdrawal.issuer, "device": withdrawal.device,
                        "withdrawnAt": withdrawal.withdrawnAt.formatted(.iso8601), "reason": record.reason,
                    ])
                } else {
                    say(
                        "\(PrintableText(withdrawal.issuer))/\(withdrawal.ticketID.hexString): claimed by "
                            + "\(PrintableText(withdrawal.device)), withdrawn \(withdrawal.withdrawnAt.formatted(.iso8601)) "
                            + "(\(PrintableText(record.reason)))")
                }
            }
        }
    }
}
