import ArgumentParser
import FareCore
import Foundation
import ValidationServer

/// `operators`: the people allowed to read the operator report (`/report`).
struct Operators: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "operators",
        abstract: "Add, revoke and list operators, who read the report at /report (not devices).",
        subcommands: [Add.self, Revoke.self, List.self]
    )

    /// `operators add NAME`.
    struct Add: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "add",
            abstract: "Add an operator and print its token (shown once; only its hash is kept).",
            discussion: """
                The operator logs in to /report with the token, or sends it as `Authorization: Bearer TOKEN` to \
                /report.csv and /report.json. The token opens the report only: it is refused by the validation \
                API, as a device's token is refused by the report.
                """)

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The operator's name, e.g. alex@agency.example.")
        var name: String

        func run(on store: any ServerStore) async throws {
            let token = try await store.registerOperator(name: name)
            say(token)
            FileHandle.standardError.write(
                Data(
                    "farecheck-server: operator \(PrintableText(name)) added; the token above is not shown again.\n"
                        .utf8))
        }
    }

    /// `operators revoke NAME`.
    struct Revoke: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "revoke",
            abstract: "Revoke an operator: its token and its open sessions are refused from now on.")

        @OptionGroup var database: DatabaseOptions

        @Argument(help: "The operator's name.")
        var name: String

        func run(on store: any ServerStore) async throws {
            guard try await store.revokeOperator(name: name) else {
                fail("There is no operator \(name) (see `farecheck-server operators list`).")
            }
            say("operator \(PrintableText(name)) revoked")
        }
    }

    /// `operators list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List operators: name, state, creation time.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array, an object per record ([] for none).")
        var json = false

        func run(on store: any ServerStore) async throws {
            let list = JSONList()
            for account in try await store.operators() {
                let state = account.revoked ? "revoked" : "active"
                let created = account.createdAt.formatted(.iso8601)
                if json {
                    list.append(["name": account.name, "state": state, "createdAt": created])
                } else {
                    say("\(PrintableText(account.name))\t\(state)\t\(created)")
                }
            }
            if json { list.finish() }
        }
    }
}
