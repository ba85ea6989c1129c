import ArgumentParser
import CommandLineSupport
import FareCore
import Foundation
import TicketFormats
import TrustStore
import ValidationAPI
import ValidationServer

/// What `revoke` and `unrevoke` name: a ticket by issuer and id, a VDV-KA ticket by its organisation and
/// entitlement number, or a key by format, issuer and kid.
struct RevocationTarget: ParsableArguments {
    @Option(help: "The issuer of the ticket or key.")
    var issuer: String?

    @Option(name: .customLong("ticket-id"), help: "The ticket id, hex (as `farecheck verify` prints it).")
    var ticketID: String?

    @Option(help: "A key id instead of a ticket: revokes every ticket the key signed.")
    var key: String?

    @Option(help: "The key's family, with --key: fc1, uic, vdv or rsp6.")
    var format = "fc1"

    @Option(
        name: .customLong("vdv-org"),
        help: "A VDV-KA ticket's selling (KVP) organisation number, with --entitlement (instead of --issuer).")
    var vdvOrganisation: UInt32?

    @Option(help: "A VDV-KA ticket's entitlement number, with --vdv-org (as `farecheck verify` shows it).")
    var entitlement: UInt32?

    enum Target {
        case ticket(TicketReference)
        case key(KeyReference)
    }

    func target() throws(ServerError) -> Target {
        if vdvOrganisation != nil || entitlement != nil {
            // Named as validators match VDV-KA tickets: the KVP organisation in decimal as the issuer, the
            // entitlement number's four bytes as the ticket id (as `farecheck revoke --vdv-org` stores it).
            guard let vdvOrganisation, let entitlement, issuer == nil, ticketID == nil, key == nil else {
                throw ServerError(
                    code: .invalidInput,
                    message: "A VDV-KA ticket is named by --vdv-org and --entitlement, together and alone.")
            }
            return .ticket(
                TicketReference(
                    issuer: IssuerID(String(vdvOrganisation)),
                    ticketID: TicketID(VDVEntitlement.ticketID(entitlementNumber: entitlement))))
        }
        guard let issuer else {
            throw ServerError(
                code: .invalidInput,
                message: "Name the issuer (--issuer), or a VDV-KA ticket by --vdv-org and --entitlement.")
        }
        switch (ticketID, key) {
        case (.some(let hex), .none):
            guard let bytes = [UInt8](hex: hex), !bytes.isEmpty else {
                throw ServerError(
                    code: .invalidInput, message: "--ticket-id \(hex): expected hex, e.g. 9f86d081884c7d65.")
            }
            return .ticket(TicketReference(issuer: IssuerID(issuer), ticketID: TicketID(bytes)))
        case (.none, .some(let keyID)):
            return .key(
                KeyReference(format: try Keys.Add.wireFormat(format), issuer: IssuerID(issuer), keyID: KeyID(keyID)))
        default:
            throw ServerError(
                code: .invalidInput, message: "Name either a ticket (--ticket-id HEX) or a key (--key KID).")
        }
    }
}

/// `revoke`: adds a ticket or key to the revocation list validators sync.
struct Revoke: StoreCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: """
            Revoke a ticket (--issuer I --ticket-id HEX, or --vdv-org ORG --entitlement N for VDV-KA) or an issuer \
            key (--issuer I --key KID --format F), or import a published blocklist (--vdv-blocklist FILE.db, \
            --dtvg-blocklist FILE.zip).
            """,
        discussion: """
            Validators learn it at their next sync; online checks see it at once.

            A blocklist (the VDV-KA blocklist, an SQLite file; the DTVG UIC blocklist, a zip holding \
            blacklistuic.csv) is imported with its version (--list-version, or the list's version file with \
            --version-file): a newer version replaces the one held, and validators receive the difference \
            (entries removed and added) in their revocation deltas. The same version again changes nothing; an \
            older one is refused unless --force. A bad file is refused whole, with the row or line named.
            """)

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var what: RevocationTarget
    @OptionGroup var blocklist: BlocklistImportOptions
    @OptionGroup var progressOptions: ProgressOptions

    @Option(help: "Why, shown to inspectors.")
    var reason: String?

    func run(on store: any ServerStore) async throws {
        if let (list, path) = try blocklist.file() {
            guard what.issuer == nil, what.ticketID == nil, what.key == nil, what.vdvOrganisation == nil,
                what.entitlement == nil, reason == nil
            else {
                fail("A blocklist import names no ticket, key or reason: give the list file and its version alone.")
            }
            try await importBlocklist(list, path: path, into: store)
            return
        }
        let now = Date(timeIntervalSince1970: Date().timeIntervalSince1970.rounded(.down))
        switch try what.target() {
        case .ticket(let ticket):
            try await store.revokeTicket(
                RevokedTicket(issuer: ticket.issuer, ticketID: ticket.ticketID, reason: reason, revokedAt: now))
            say("revoked ticket \(ticket.ticketID.hexString) of \(ticket.issuer)")
        case .key(let key):
            try await store.revokeKey(
                RevokedKey(format: key.format, issuer: key.issuer, keyID: key.keyID, reason: reason, revokedAt: now))
            say("revoked \(key.format) key \(key.keyID) of \(key.issuer)")
        }
    }

    /// Reads the list file whole (checked, in memory: a server imports it in one transaction), then imports it.
    private func importBlocklist(_ list: BlocklistKind, path: String, into store: any ServerStore) async throws {
        let version = try blocklist.version(list)
        var entries: [BlocklistEntry] = []
        let counts: (rows: Int, superseded: Int)
        let progress = progressOptions.reporter(list.displayName)
        let unit = list == .vdvKA ? "rows read" : "bytes read"
        do {
            counts = try BlocklistFile.read(
                list, path: path, progress: { done, total in progress.step(done: done, of: total, unit) },
                entry: { entry, _ in entries.append(entry) })
        } catch let error as FormatError {
            progress.abandon()
            fail("\(path): \(error.message); nothing changed.")
        }
        // One transaction of every entry (millions): said, so that the wait is not silent.
        progress.step("storing \(ProgressReporter.grouped(entries.count)) entries in one transaction")
        let outcome: ServerBlocklistImport
        do {
            outcome = try await store.importBlocklist(
                list, version: version, entries: entries, force: blocklist.force, at: Date())
        } catch {
            progress.abandon()
            throw error
        }
        progress.finish(count: counts.rows, "rows")
        switch outcome {
        case .unchanged(let held):
            say("\(list.displayName) version \(held) is imported already; nothing changed")
        case .imported(let added, let removed, let replaced):
            let superseded = counts.superseded > 0 ? " (\(counts.superseded) lower instances left out)" : ""
            let was = replaced.map { ", replacing version \($0)" } ?? ""
            say(
                "imported the \(list.displayName) version \(version): \(entries.count) entries\(superseded)\(was); "
                    + "\(added) added or changed, \(removed) removed for validators")
        }
    }
}

/// The published blocklist files `revoke` imports, and their versions.
struct BlocklistImportOptions: ParsableArguments {
    @Option(name: .customLong("vdv-blocklist"), help: "Import the VDV-KA blocklist (SQLite, table blacklist).")
    var vdvBlocklist: String?

    @Option(name: .customLong("dtvg-blocklist"), help: "Import the DTVG UIC blocklist (zip holding blacklistuic.csv).")
    var dtvgBlocklist: String?

    @Option(
        name: .customLong("list-version"),
        help: "The list's version: VDV-KA an ISO 8601 timestamp (2025-06-01T03:00:00Z), DTVG a number.")
    var listVersion: String?

    @Option(
        name: .customLong("version-file"),
        help: "The list's version file instead (VDV-KA version.txt; DTVG versionuic.txt, {\"blacklistId\": N}).")
    var versionFile: String?

    @Flag(help: "Import even when the version held is the same or newer.")
    var force = false

    /// The list to import and its file, or `nil` when none is named.
    func file() throws(ServerError) -> (BlocklistKind, String)? {
        switch (vdvBlocklist, dtvgBlocklist) {
        case (nil, nil):
            guard listVersion == nil, versionFile == nil, !force else {
                throw ServerError(
                    code: .invalidInput,
                    message: "--list-version, --version-file and --force go with --vdv-blocklist or --dtvg-blocklist.")
            }
            return nil
        case (let path?, nil): return (.vdvKA, path)
        case (nil, let path?): return (.dtvgUIC, path)
        default:
            throw ServerError(
                code: .invalidInput, message: "Import one list at a time: --vdv-blocklist or --dtvg-blocklist.")
        }
    }

    /// The version given, read as `list`'s versions are.
    func version(_ list: BlocklistKind) throws(ServerError) -> BlocklistVersion {
        let text: String
        switch (listVersion, versionFile) {
        case (let given?, nil):
            text = given
        case (nil, let path?):
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ServerError(code: .invalidInput, message: "Cannot read the version file \(path).")
            }
            text = String(decoding: data, as: UTF8.self)
        default:
            throw ServerError(
                code: .invalidInput,
                message: "Give the list's version: --list-version VERSION or --version-file FILE (one of them).")
        }
        do {
            return try BlocklistVersion(parsing: text, for: list)
        } catch {
            throw ServerError(code: .invalidInput, message: "\(error.message).")
        }
    }
}

/// `unrevoke`: lifts a revocation.
struct Unrevoke: StoreCommand {
    static let configuration = CommandConfiguration(
        commandName: "unrevoke",
        abstract: "Lift the revocation of a ticket or key (same options as revoke).")

    @OptionGroup var database: DatabaseOptions
    @OptionGroup var what: RevocationTarget

    func run(on store: any ServerStore) async throws {
        switch try what.target() {
        case .ticket(let ticket):
            guard try await store.unrevokeTicket(ticket) else {
                fail("Ticket \(ticket.ticketID.hexString) of \(ticket.issuer) is not revoked.")
            }
            say("ticket \(ticket.ticketID.hexString) of \(ticket.issuer) is no longer revoked")
        case .key(let key):
            guard try await store.unrevokeKey(key) else {
                fail("The \(key.format) key \(key.keyID) of \(key.issuer) is not revoked.")
            }
            say("\(key.format) key \(key.keyID) of \(key.issuer) is no longer revoked")
        }
    }
}

/// `revocations`: the list and its change log.
struct Revocations: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revocations",
        abstract: "Show revocations, or prune their change log.",
        subcommands: [List.self, Prune.self]
    )

    /// `revocations list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "Print what a validator with the given cursor would receive (default: everything), as JSON.")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "The cursor (change number) a validator holds; 0 prints a full snapshot.")
        var cursor: Int64 = 0

        func run(on store: any ServerStore) async throws {
            let delta = try await store.revocationDelta(since: cursor)
            let encoder = WireFormat.encoder()
            encoder.outputFormatting.insert(.prettyPrinted)
            say(terminalSafeJSON(String(decoding: try encoder.encode(delta), as: UTF8.self)))
        }
    }

    /// `revocations prune --keep N`.
    struct Prune: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Drop all but the newest N logged changes; validators with older cursors get a full snapshot.")

        @OptionGroup var database: DatabaseOptions

        @Option(help: "How many of the newest changes to keep.")
        var keep: Int

        func run(on store: any ServerStore) async throws {
            let dropped = try await store.pruneRevocationChanges(keepingLast: keep)
            say("dropped \(dropped) logged changes")
        }
    }
}

/// `inspections`: what validators handed in.
struct Inspections: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspections",
        abstract: "List the inspection records validators uploaded, or forget old ones.",
        subcommands: [List.self, Prune.self]
    )

    /// `inspections prune --older-than DAYS`.
    struct Prune: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "prune",
            abstract: "Forget the inspections made and received more than DAYS days ago.",
            discussion: """
                Inspection records name tickets, devices and inspectors: keep them no longer than the agency's \
                retention period. A record goes when both its time (the device's clock) and its arrival (the \
                server's) are older than DAYS days, so that a device whose clock is wrong cannot have its records \
                forgotten early. The operator report has nothing for the days forgotten.
                """)

        @OptionGroup var database: DatabaseOptions

        @OptionGroup var age: PruneAge

        func validate() throws {
            try age.require(atLeast: 1, because: "0 would forget every record received so far")
        }

        func run(on store: any ServerStore) async throws {
            let before = age.horizon
            let pruned = try await store.pruneInspections(before: before)
            say("forgot \(pruned) inspections made and received before \(before.formatted(.iso8601))")
        }
    }

    /// `inspections list`.
    struct List: StoreCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List inspections, newest first.")

        @OptionGroup var database: DatabaseOptions

        @Flag(help: "One JSON array: each record as uploaded, with deviceId and receivedAt (times RFC 3339).")
        var json = false

        @Option(help: "At most this many records.")
        var limit = 1000

        func run(on store: any ServerStore) async throws {
            let list = JSONList()
            defer { if json { list.finish() } }
            for stored in try await store.inspections(limit: max(0, limit)) {
                let record = stored.record
                if json {
                    let encoded = try WireFormat.encode(record)
                    guard var object = try JSONSerialization.jsonObject(with: Data(encoded)) as? [String: Any] else {
                        continue
                    }
                    object["deviceId"] = stored.deviceID
                    object["receivedAt"] = stored.receivedAt.formatted(.iso8601)
                    // Unix milliseconds on the wire; RFC 3339 like every other time in the output.
                    object["inspectedAt"] = Date(unixMilliseconds: record.inspectedAt).formatted(
                        Date.ISO8601FormatStyle(includingFractionalSeconds: true))
                    list.append(object)
                } else {
                    // Every field but the date came from a device: escaped, so that none can act on the terminal
                    // or pass for a column or a line of its own.
                    let when = Date(unixMilliseconds: record.inspectedAt).formatted(.iso8601)
                    let ticket = record.ticketID.map { "\(PrintableText(record.issuer?.rawValue ?? "?"))/\($0)" } ?? "-"
                    say(
                        "\(when)\t\(PrintableText(stored.deviceID))\t\(PrintableText(record.verdict.text))\t\(ticket)\t"
                            + "\(PrintableText(record.id))")
                }
            }
        }
    }
}

extension Date {
    init(unixMilliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(unixMilliseconds) / 1000)
    }
}
