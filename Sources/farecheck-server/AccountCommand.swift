import ArgumentParser
import FareCore
import Foundation
import ValidationServer

/// A kind of account the server keeps, each with a command of its own: `devices` (the validators that call the API)
/// and `operators` (the people who read the report).
///
/// The commands are one shape, `AccountCommand`: `add` prints a fresh token once, `revoke` refuses the account from
/// now on, `list` shows every account. A kind states only what differs: its words, what `add` takes beside the
/// name, and the store's calls.
protocol AccountKind {
    /// What `add` takes beside the name (a device's role); `NoAccountOptions` for nothing.
    associatedtype AddOptions: ParsableArguments

    /// The kind's words: the command's name, what an account is called, the help.
    static var words: AccountWords { get }

    /// Adds the account `name` with `options` and returns its token and how it was added, as the message after it
    /// says (`registered as a gate`).
    static func add(_ name: String, _ options: AddOptions, on store: any ServerStore) async throws -> (
        token: String, added: String
    )

    /// Revokes the account `name` and returns what else that did (`2 first-use claims withdrawn`), or `nil` when
    /// there is no such account.
    static func revoke(_ name: String, on store: any ServerStore) async throws -> [String]?

    /// Every account, in the store's order.
    static func list(on store: any ServerStore) async throws -> [AccountListing]
}

/// The words of an account command: its name, what an account and its name are called, and its help (the abstract
/// of the command and of each subcommand, their discussions, empty for none, and the help of the name argument).
struct AccountWords {
    /// The command's name (`devices`).
    var command: String
    /// What one account is called in messages (`device`).
    var noun: String
    /// What the name of an account is called: the argument's value name in help (`<id>`) and its field in
    /// `list --json`.
    var name: String
    var abstract: String
    var add: String
    var addDiscussion = ""
    /// The help of `add`'s name argument.
    var addName: String
    var revoke: String
    var revokeDiscussion = ""
    /// The help of `revoke`'s name argument.
    var revokeName: String
    var list: String
}

/// One account as `list` shows it: its name, state and creation time, and between the last two the kind's own
/// fields (a device's role).
struct AccountListing {
    var name: String
    var revoked: Bool
    var createdAt: Date
    var fields: [(key: String, value: String)] = []
}

/// What `add` takes beside the name, for a kind that takes nothing.
struct NoAccountOptions: ParsableArguments {}

/// `devices`, `operators`: add, revoke and list the accounts of one kind.
struct AccountCommand<Kind: AccountKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: Kind.words.command, abstract: Kind.words.abstract,
            subcommands: [Add.self, Revoke.self, List.self])
    }

    /// `add NAME`: prints the token on standard output, and on standard error that it is not shown again.
    struct Add: StoreCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "add", abstract: Kind.words.add, discussion: Kind.words.addDiscussion)
        }

        @OptionGroup var database: DatabaseOptions

        @Argument(help: ArgumentHelp(Kind.words.addName, valueName: Kind.words.name))
        var name: String

        @OptionGroup var options: Kind.AddOptions

        func run(on store: any ServerStore) async throws {
            let (token, added) = try await Kind.add(name, options, on: store)
            say(token)
            let note =
                "farecheck-server: \(Kind.words.noun) \(PrintableText(name)) \(added); the token above is not shown again.\n"
            FileHandle.standardError.write(Data(note.utf8))
        }
    }

    /// `revoke NAME`.
    struct Revoke: StoreCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(
                commandName: "revoke", abstract: Kind.words.revoke, discussion: Kind.words.revokeDiscussion)
        }

        @OptionGroup var database: DatabaseOptions

        @Argument(help: ArgumentHelp(Kind.words.revokeName, valueName: Kind.words.name))
        var name: String

        func run(on store: any ServerStore) async throws {
            guard let consequences = try await Kind.revoke(name, on: store) else {
                // `fail` escapes the whole message: the name goes in as it was typed, escaped once.
                fail("There is no \(Kind.words.noun) \(name) (see `farecheck-server \(Kind.words.command) list`).")
            }
            say((["\(Kind.words.noun) \(PrintableText(name)) revoked"] + consequences).joined(separator: "; "))
        }
    }

    /// `list`: a line per account (name, state, the kind's fields, creation time; tab-separated), or one JSON array.
    struct List: StoreCommand {
        static var configuration: CommandConfiguration {
            CommandConfiguration(commandName: "list", abstract: Kind.words.list)
        }

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array, an object per record ([] for none).")
        var json = false

        func run(on store: any ServerStore) async throws {
            let list = JSONList()
            for account in try await Kind.list(on: store) {
                let state = account.revoked ? "revoked" : "active"
                let created = account.createdAt.formatted(.iso8601)
                if json {
                    var object: [String: Any] = [Kind.words.name: account.name, "state": state, "createdAt": created]
                    for field in account.fields { object[field.key] = field.value }
                    list.append(object)
                } else {
                    let fields = [account.name, state] + account.fields.map(\.value) + [created]
                    say(fields.map(PrintableText.escaped).joined(separator: "\t"))
                }
            }
            if json { list.finish() }
        }
    }
}
