import ArgumentParser
import FareCore
import Foundation
import Signatures
import TrustFollowing
import ValidationServer

/// `--config FILE`, of the trust commands: where the `[[trust.source]]` entries are.
struct TrustConfigOption: ParsableArguments {
    @Option(
        name: .customLong("config"),
        help: ArgumentHelp("The server's configuration file, with its [[trust.source]] entries.", valueName: "file"))
    var config: String

    /// The sources the file names, or exits with the reader's message.
    func sources() -> TrustFollowingConfiguration {
        do {
            return try TrustFollowingConfiguration.load(path: config)
        } catch {
            fail(error.message)
        }
    }
}

/// `--anchor-key FILE`, of the trust commands that may change keys.
struct TrustAnchorKeyOption: ParsableArguments {
    @Option(
        name: .customLong("anchor-key"),
        help: "The trust anchor's private key (PEM), to sign a new key bundle when keys change.")
    var path: String?

    /// The key, if one was given.
    func key() throws(ServerError) -> PrivateKey? { try path.map(readAnchorKey) }
}

/// `trust`: the publishers the server follows, what it holds from each, and the changes held for an operator.
struct Trust: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trust",
        abstract: "Show the trust publishers the server follows, fetch one now, and decide the changes held.",
        discussion: """
            `serve --config FILE` fetches each [[trust.source]] on its period. A change the guard rails refuse (a \
            key list dropping too many keys, a blocklist going back or shrinking) is held: `trust pending` lists \
            it, `trust approve ID` applies it, `trust reject ID` refuses it for good. See docs/trust-sources.md.
            """,
        subcommands: [Status.self, Fetch.self, Pending.self, Approve.self, Reject.self]
    )

    /// `trust status`.
    struct Status: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "status",
            abstract: "Per source: the last attempt, the last success, the version held, its age, and the last error.",
            discussion: "Exit status 0 when every source is current, 1 when one is stale.")

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var trust: TrustConfigOption
        @Flag(help: "One JSON array, an object per source.") var json = false

        func run(on store: any ServerStore) async throws {
            let sources = trust.sources()
            let states = Dictionary(
                try await store.trustSourceStates().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let now = Date()
            var anyStale = false
            let list = JSONList()
            if !json, sources.sources.isEmpty { say("The configuration names no [[trust.source]].") }
            for source in sources.sources {
                let state = states[source.name]
                let age = state?.age(at: now)
                let stale = state?.isStale(after: source.staleAfter, at: now) ?? false
                anyStale = anyStale || stale
                if json {
                    var line: [String: Any] = [
                        "name": source.name, "kind": source.kind.rawValue, "stale": stale,
                        "failures": state?.failures ?? 0,
                    ]
                    if let value = state?.lastAttempt { line["lastAttempt"] = value.formatted(.iso8601) }
                    if let value = state?.lastSuccess { line["lastSuccess"] = value.formatted(.iso8601) }
                    if let value = state?.lastChange { line["lastChange"] = value.formatted(.iso8601) }
                    if let value = state?.version { line["version"] = value }
                    if let age { line["ageSeconds"] = Int(age) }
                    if let value = state?.lastError { line["lastError"] = value }
                    list.append(line)
                } else {
                    let when =
                        state?.lastSuccess.map { "last success \($0.formatted(.iso8601)) (\(Self.age(age ?? 0)) ago)" }
                        ?? (state?.lastAttempt == nil ? "never fetched" : "never succeeded")
                    var line =
                        "\(source.name) (\(source.kind.rawValue)): \(stale ? "STALE" : "current"); \(when); version "
                        + "\(state?.version.map { PrintableText($0).description } ?? "none")"
                    if let error = state?.lastError {
                        line += "; last attempt failed (\(state?.failures ?? 1) in a row): \(PrintableText(error))"
                    }
                    say(line)
                }
            }
            if json { list.finish() }
            let pending = try await store.trustChanges(pendingOnly: true)
            if !json, !pending.isEmpty {
                say("\(pending.count) change\(pending.count == 1 ? "" : "s") held for an operator: trust pending")
            }
            if anyStale { throw ExitCode(1) }
        }

        static func age(_ seconds: TimeInterval) -> String {
            switch seconds {
            case ..<120: "\(Int(seconds)) s"
            case ..<7_200: "\(Int(seconds / 60)) min"
            case ..<172_800: "\(Int(seconds / 3_600)) h"
            default: "\(Int(seconds / 86_400)) days"
            }
        }
    }

    /// `trust fetch`.
    struct Fetch: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "fetch",
            abstract: "Run one round of every source (or of SOURCE) now: fetch, check, apply or hold.",
            discussion: """
                Prints one line per source: applied, unchanged, held (with the change's number) or failed (with \
                why; the trust is then as it was). With --dry-run nothing is written: the line says what would \
                change. Exit status 0 when no round failed, 1 when one did.
                """)

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var trust: TrustConfigOption
        @OptionGroup var anchor: TrustAnchorKeyOption
        @Flag(name: .customLong("dry-run"), help: "Say what would change; change nothing.") var dryRun = false
        @Argument(help: "The source to fetch (default: every source).") var source: String?

        func run(on store: any ServerStore) async throws {
            let sources = trust.sources()
            let chosen: [TrustSourceConfiguration]
            if let source {
                guard let found = sources.source(named: source) else {
                    fail(
                        "No source \(PrintableText(source)) in \(trust.config) (it names "
                            + "\(sources.sources.map(\.name).joined(separator: ", ")))."
                    )
                }
                chosen = [found]
            } else {
                chosen = sources.sources
            }
            let follower = TrustFollower(store: store, anchorKey: try anchor.key())
            var failed = false
            for source in chosen {
                let outcome = await follower.run(source, dryRun: dryRun)
                failed = failed || outcome.kind == .failed
                say(PrintableText(outcome.line).description)
            }
            if failed { throw ExitCode(1) }
        }
    }

    /// `trust pending`.
    struct Pending: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "pending", abstract: "List the changes held for an operator (with --all, decided ones too).")

        @OptionGroup var database: DatabaseOptions
        @Flag(help: "Changes approved and rejected too.") var all = false
        @Flag(help: "One JSON array, an object per change.") var json = false

        func run(on store: any ServerStore) async throws {
            let changes = try await store.trustChanges(pendingOnly: !all)
            if !json, changes.isEmpty { say("No change is held.") }
            let list = JSONList()
            for change in changes {
                if json {
                    var line: [String: Any] = [
                        "id": change.id, "source": change.source, "heldAt": change.heldAt.formatted(.iso8601),
                        "reason": change.reason, "summary": change.summary, "decision": change.decision.rawValue,
                        "contentSHA256": change.contentDigest, "bytes": change.content.count,
                    ]
                    if let version = change.version { line["version"] = version }
                    if let decided = change.decidedAt { line["decidedAt"] = decided.formatted(.iso8601) }
                    list.append(line)
                } else {
                    say(
                        "\(change.id) \(change.source) held \(change.heldAt.formatted(.iso8601)) "
                            + "[\(change.decision.rawValue)]: \(PrintableText(change.reason)); "
                            + "\(PrintableText(change.summary))")
                }
            }
            if json { list.finish() }
        }
    }

    /// `trust approve`.
    struct Approve: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "approve",
            abstract: "Apply a held change as it was fetched (its content is checked again; the guard rails are not).")

        @OptionGroup var database: DatabaseOptions
        @OptionGroup var trust: TrustConfigOption
        @OptionGroup var anchor: TrustAnchorKeyOption
        @Argument(help: "The change's number (trust pending).") var id: Int64

        func run(on store: any ServerStore) async throws {
            let follower = TrustFollower(store: store, anchorKey: try anchor.key())
            let outcome = try await follower.approve(id, sources: trust.sources())
            say(PrintableText(outcome.line).description)
        }
    }

    /// `trust reject`.
    struct Reject: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "reject", abstract: "Refuse a held change for good: the same content is never held again.")

        @OptionGroup var database: DatabaseOptions
        @Argument(help: "The change's number (trust pending).") var id: Int64

        func run(on store: any ServerStore) async throws {
            let outcome = try await TrustFollower(store: store, anchorKey: nil).reject(id)
            say(PrintableText(outcome.line).description)
        }
    }
}
