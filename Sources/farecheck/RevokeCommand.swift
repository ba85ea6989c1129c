import ArgumentParser
import CommandLineSupport
import FareCore
import Foundation
import TicketFormats
import TrustStore

/// `farecheck revoke`: record a revoked ticket or key.
struct RevokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "revoke",
        abstract: """
            Revoke a ticket (--issuer and --ticket-id or --ticket-key) or a key (--key), or import a published \
            blocklist (--vdv-blocklist, --dtvg-blocklist).
            """,
        discussion: """
            A revoked ticket, or any ticket signed with a revoked key, then verifies as `revoked`. FC1 ticket \
            ids are hex, as `verify` prints them; a UIC ticket can be named by its U_HEAD ticket key as text \
            (--ticket-key RPEX4F-4) with its RICS issuer code (--issuer 0080). A VDV-KA ticket is named by its \
            selling (KVP) organisation and entitlement number, as `verify` shows them \
            (--vdv-org 57 --entitlement 2099643).

            The Deutschland-Ticket blocklists: --vdv-blocklist FILE.db (the VDV-KA blocklist, SQLite) or \
            --dtvg-blocklist FILE.zip (the DTVG UIC blocklist, blacklistuic.csv in a zip), with the list's version \
            (--list-version, or its version file with --version-file). A newer version replaces the list imported \
            before, in one transaction; the same version again changes nothing; an older one is refused unless \
            --force. A bad file is refused, naming the row or line, and the store is left as it was. \
            --blocklists shows the lists the store holds.

            Exit status: 0 done (also: this version is held already), 2 refused or failed.
            """
    )

    @Option(help: "The issuer of the ticket (or of the key, when its id is not in the store).") var issuer: String?
    @Option(name: .customLong("ticket-id"), help: "The ticket id in hex (as `verify` prints it).") var ticketID: String?
    @Option(name: .customLong("ticket-key"), help: "The ticket id as text (a UIC U_HEAD ticket key).") var ticketKey:
        String?
    @Option(help: "The key id (hex for FC1 keys).") var key: String?
    @Option(name: .customLong("vdv-org"), help: "A VDV-KA ticket's selling (KVP) organisation number.")
    var vdvOrganisation: UInt32?
    @Option(help: "A VDV-KA ticket's entitlement number (with --vdv-org).") var entitlement: UInt32?
    @Option(help: "Why, shown to the inspector.") var reason: String?
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
    @Flag(help: "Import the list even when the store holds this version or a newer one.") var force = false
    @Flag(help: "Show the blocklists the store holds (list, origin, version, entries).") var blocklists = false
    @Flag(help: "Make a new store when there is none at --db (else a path with no store is refused).")
    var create = false
    @OptionGroup var store: StoreOptions
    @OptionGroup var progressOptions: ProgressOptions

    /// The blocklist to import and its file, when one is named.
    private var blocklistFile: (BlocklistKind, String)? {
        if let vdvBlocklist { return (.vdvKA, vdvBlocklist) }
        if let dtvgBlocklist { return (.dtvgUIC, dtvgBlocklist) }
        return nil
    }

    func validate() throws {
        let ticketOrKey =
            [issuer, ticketID, ticketKey, key, reason].contains { $0 != nil }
            || vdvOrganisation != nil || entitlement != nil
        if blocklists {
            guard !ticketOrKey, blocklistFile == nil, listVersion == nil, versionFile == nil, !force else {
                throw ValidationError("--blocklists shows the lists; it takes no other option but --db")
            }
            if create { throw ValidationError("--create goes with a revocation or a blocklist import") }
            return
        }
        if vdvBlocklist != nil || dtvgBlocklist != nil || listVersion != nil || versionFile != nil || force {
            guard (vdvBlocklist == nil) != (dtvgBlocklist == nil) else {
                throw ValidationError("import one list at a time: --vdv-blocklist FILE or --dtvg-blocklist FILE")
            }
            guard (listVersion == nil) != (versionFile == nil) else {
                throw ValidationError("give the list's version: --list-version VERSION or --version-file FILE")
            }
            guard !ticketOrKey else {
                throw ValidationError("a blocklist import names no ticket, key or reason")
            }
            return
        }
        if vdvOrganisation != nil || entitlement != nil {
            guard vdvOrganisation != nil, entitlement != nil, issuer == nil, ticketID == nil, ticketKey == nil,
                key == nil
            else {
                throw ValidationError("a VDV-KA ticket is named by --vdv-org and --entitlement, together and alone")
            }
            return
        }
        let targets = [ticketID, ticketKey, key].compactMap { $0 }.count
        guard targets == 1 else {
            throw ValidationError("give one of --ticket-id or --ticket-key (with --issuer), or --key")
        }
        if key == nil, issuer == nil { throw ValidationError("revoking a ticket needs --issuer") }
    }

    /// Issuers are stored as tickets are matched: a UIC RICS code without leading zeros (`80` = `0080`).
    private var storedIssuer: String? {
        issuer.map(UICKeyList.storedIssuer)
    }

    func run() throws {
        let trustStore = try store.open(ifMissing: create ? .create : .refuse, offeringCreate: !blocklists)
        do {
            if blocklists {
                try showBlocklists(trustStore)
            } else if let (list, path) = blocklistFile {
                try importBlocklist(list, path: path, into: trustStore)
            } else if let vdvOrganisation, let entitlement {
                let bytes = VDVEntitlement.ticketID(entitlementNumber: entitlement)
                try trustStore.revokeTicket(
                    TicketRevocationRecord(
                        issuer: IssuerID(String(vdvOrganisation)), ticketID: TicketID(bytes), reason: reason))
                printLine("revoked VDV entitlement \(entitlement) of organisation \(vdvOrganisation)")
            } else if let issuer = storedIssuer, ticketID != nil || ticketKey != nil {
                let bytes: [UInt8]
                if let ticketKey {
                    bytes = Array(ticketKey.utf8)
                } else {
                    guard let parsed = ticketID.flatMap({ [UInt8](hex: $0) }), !parsed.isEmpty else {
                        throw ValidationError("--ticket-id must be hex")
                    }
                    bytes = parsed
                }
                try trustStore.revokeTicket(
                    TicketRevocationRecord(issuer: IssuerID(issuer), ticketID: TicketID(bytes), reason: reason))
                printLine("revoked ticket \(bytes.hexString) of \(issuer)")
            } else if let key {
                let isUIC = issuer.map(UICKeyList.isRICSCode) ?? false
                let keyID = isUIC ? UICKeyList.normalizedCode(key) : key.lowercased()
                let known = try trustStore.keys(withID: keyID, issuer: storedIssuer)
                let fallbackFamily: KeyFamily = isUIC ? .uic : .fc1
                let targets =
                    known.isEmpty
                    ? storedIssuer.map { [(IssuerID($0), fallbackFamily)] } ?? [] : known.map { ($0.issuer, $0.family) }
                guard !targets.isEmpty else {
                    throw CommandFailure.exit("key \(key) is not in the store; give --issuer to revoke it anyway")
                }
                for (owner, family) in targets {
                    try trustStore.revokeKey(
                        KeyRevocationRecord(family: family, issuer: owner, keyID: KeyID(keyID), reason: reason))
                    printLine("revoked \(family.storeName) key \(keyID) of \(owner)")
                }
            }
        } catch let error as StoreError {
            throw CommandFailure.exit(error.description)
        }
    }

    /// Imports a published blocklist file into the store, streaming its entries into one transaction.
    private func importBlocklist(_ list: BlocklistKind, path: String, into trustStore: TrustStore) throws {
        let version: BlocklistVersion
        do {
            let text: String
            if let listVersion {
                text = listVersion
            } else {
                guard let versionFile, let data = FileManager.default.contents(atPath: versionFile) else {
                    throw CommandFailure.exit("cannot read the version file \(versionFile ?? "")")
                }
                text = String(decoding: data, as: UTF8.self)
            }
            version = try BlocklistVersion(parsing: text, for: list)
        } catch let error as BlocklistVersionError {
            throw CommandFailure.exit("\(error.message)")
        }
        let progress = progressOptions.reporter(list.displayName)
        let unit = list == .vdvKA ? "rows read" : "bytes read"
        var counts: (rows: Int, superseded: Int) = (0, 0)
        let outcome: BlocklistImportOutcome
        do {
            outcome = try trustStore.importBlocklist(list, version: version, force: force) { add in
                counts = try BlocklistFile.read(
                    list, path: path, progress: { done, total in progress.step(done: done, of: total, unit) },
                    entry: add)
            }
        } catch {
            progress.abandon()
            guard error.code == .invalidRequest else { throw error }
            throw CommandFailure.exit("\(path): \(error.message); the store is unchanged")
        }
        progress.finish(count: counts.rows, "rows")
        switch outcome {
        case .unchanged(let held):
            printLine("\(list.displayName) version \(held) is imported already; nothing changed")
        case .imported(let entries, let replaced):
            var line = "imported the \(list.displayName) version \(version): \(entries) entries"
            if counts.superseded > 0 { line += " (\(counts.superseded) lower instances left out)" }
            if let replaced { line += ", replacing version \(replaced)" }
            printLine(line)
        }
    }

    /// The blocklists the store holds, one line each.
    private func showBlocklists(_ trustStore: TrustStore) throws {
        let lists = try trustStore.blocklists()
        if lists.isEmpty { printLine("no blocklists") }
        for status in lists {
            printLine(
                "\(status.list)\t\(status.origin)\tversion \(status.version)\t\(status.entryCount) entries\t"
                    + "imported \(status.importedAt.formatted(.iso8601))")
        }
    }
}
